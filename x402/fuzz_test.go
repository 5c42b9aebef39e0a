package x402

import (
	"encoding/base64"
	"errors"
	"testing"
)

// fuzzRequirements are requirements a recorded header paid, so that fuzzed
// inputs close to a real payment reach the deepest checks.
var fuzzRequirements = Requirements{
	Scheme: "exact", Network: Mainnet.CAIP2, Amount: "10000", Asset: Mainnet.USDCMint,
	PayTo: "AvPRoF6iXTXzvnZe1eV3KEzDGN8sUcPkMWjsi6i94zQq", MaxTimeoutSeconds: 60,
	Extra: map[string]any{"feePayer": "7HLzsTXgvKmzFnVoN6t2HrvLYWCFvDrepNLNTTRNjoB4"},
}

// FuzzDecodePaymentHeader feeds arbitrary headers through everything a
// server does with one before the network: decode, match, check. Nothing
// may panic; what decodes must be a version 2 payload with its raw JSON,
// and a payment identifier it yields must be well-formed.
// Seeds: testdata/fuzz/FuzzDecodePaymentHeader (real client headers and
// broken copies).
func FuzzDecodePaymentHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, h string) {
		p, err := DecodePaymentHeader(h)
		if err != nil {
			if p != nil {
				t.Fatal("payload returned with an error")
			}
			return
		}
		if p.X402Version != Version || len(p.Raw) == 0 || p.Payload.Transaction == "" {
			t.Fatalf("decoded an incomplete payload %+v", p)
		}
		if id, present, err := PaymentIdentifier(p); (err == nil && present) != (id != "") || (err == nil && present && checkPaymentID(id) != nil) {
			t.Fatalf("payment identifier %q present %v err %v", id, present, err)
		}
		if req, err := Match(p.Accepted, []Requirements{fuzzRequirements}); err == nil {
			checkNoPanic(t, p, req)
		}
		checkNoPanic(t, p, fuzzRequirements)
	})
}

// FuzzParseTransaction feeds arbitrary wire bytes to the transaction parser
// and the checks. A parsed transaction must be internally consistent; an
// unparsable one must be refused as undecodable by CheckExactSVM.
// Seeds: testdata/fuzz/FuzzParseTransaction (real client transactions and
// Go-built variants).
func FuzzParseTransaction(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		tx, perr := ParseTransaction(b)
		if perr == nil {
			m := tx.Message
			if len(tx.Signatures) != int(m.NumRequiredSignatures) || len(m.AccountKeys) < len(tx.Signatures) {
				t.Fatalf("inconsistent signatures: %d for %d required, %d keys", len(tx.Signatures), m.NumRequiredSignatures, len(m.AccountKeys))
			}
			for _, ix := range m.Instructions {
				if int(ix.ProgramIDIndex) >= len(m.AccountKeys) {
					t.Fatalf("program index %d of %d keys", ix.ProgramIDIndex, len(m.AccountKeys))
				}
			}
			if len(tx.MessageBytes) == 0 || &tx.MessageBytes[len(tx.MessageBytes)-1] != &b[len(b)-1] {
				t.Fatal("message bytes are not the tail of the transaction")
			}
		}
		p := &PaymentPayload{X402Version: Version, Accepted: fuzzRequirements}
		p.Payload.Transaction = base64.StdEncoding.EncodeToString(b)
		_, err := CheckExactSVM(p, fuzzRequirements)
		var inv *Invalid
		if err != nil && !errors.As(err, &inv) {
			t.Fatalf("a payload fault reported as a configuration error: %v", err)
		}
		if perr != nil && (inv == nil || inv.Reason != ReasonCouldNotBeDecoded) {
			t.Fatalf("unparsable transaction (%v) not refused as undecodable: %v", perr, err)
		}
	})
}

func checkNoPanic(t *testing.T, p *PaymentPayload, req Requirements) {
	c, err := CheckExactSVM(p, req)
	if err == nil && (c == nil || c.Payer == "" || len(c.Key) != 64) {
		t.Fatalf("accepted payment with incomplete result %+v", c)
	}
}

// The fuzz targets' requirements are the ones the recorded "paid" header
// satisfies; if the recording is redone, they must follow.
func TestFuzzRequirementsMatchRecording(t *testing.T) {
	r := loadRecorded(t)["paid"]
	p := decodeRecorded(t, r)
	if _, err := CheckExactSVM(p, fuzzRequirements); err != nil {
		t.Fatalf("fuzzRequirements do not fit testdata/payment-headers.json: %v", err)
	}
}
