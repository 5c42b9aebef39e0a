package x402

import (
	"bytes"
	"encoding/base64"
	"errors"
	"maps"
	"testing"
)

// wantReason asserts that err is an *Invalid with the given reason.
func wantReason(t *testing.T, err error, reason string) {
	t.Helper()
	var inv *Invalid
	if !errors.As(err, &inv) {
		t.Fatalf("got %v, want refusal %s", err, reason)
	}
	if inv.Reason != reason {
		t.Fatalf("refused with %s (%s), want %s", inv.Reason, inv.Detail, reason)
	}
}

func decodeRecorded(t *testing.T, r recorded) *PaymentPayload {
	t.Helper()
	p, err := DecodePaymentHeader(r.Header)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// withTx replaces the transaction of a decoded payload.
func withTx(p *PaymentPayload, wire []byte) *PaymentPayload {
	q := *p
	q.Payload.Transaction = base64.StdEncoding.EncodeToString(wire)
	return &q
}

func recordedWire(t *testing.T, p *PaymentPayload) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(p.Payload.Transaction)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRecordedHeadersPassLocalChecks(t *testing.T) {
	keys := map[string]bool{}
	for name, r := range loadRecorded(t) {
		p := decodeRecorded(t, r)
		req, err := Match(p.Accepted, []Requirements{r.Requirements})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c, err := CheckExactSVM(p, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Payer != r.Payer || c.Amount != 10000 || len(c.Key) != 64 {
			t.Fatalf("%s: checked %+v, payer should be %s", name, c, r.Payer)
		}
		if keys[c.Key] {
			t.Fatalf("%s: key %s seen for another payment", name, c.Key)
		}
		keys[c.Key] = true
	}
}

// The used-payment key covers the message only: the signatures the
// facilitator adds (or anyone alters) do not make a payment new.
func TestCheckedKeyIgnoresSignatures(t *testing.T) {
	r := loadRecorded(t)["paid"]
	p := decodeRecorded(t, r)
	c1, err := CheckExactSVM(p, r.Requirements)
	if err != nil {
		t.Fatal(err)
	}
	wire := recordedWire(t, p)
	wire[1] ^= 0xff // inside the fee payer's (unchecked) signature slot
	c2, err := CheckExactSVM(withTx(p, wire), r.Requirements)
	if err != nil {
		t.Fatal(err)
	}
	if c1.Key != c2.Key {
		t.Fatalf("key changed with the fee payer signature: %s vs %s", c1.Key, c2.Key)
	}
}

// A recorded header checked against requirements it did not pay: what a
// client replaying a header from another seller or price would send.
func TestRecordedHeaderAgainstOtherRequirements(t *testing.T) {
	recs := loadRecorded(t)
	r := recs["paid"]
	p := decodeRecorded(t, r)
	other := newWallet(t).pub.String()
	cases := []struct {
		name   string
		change func(*Requirements)
		reason string
	}{
		{"amount", func(q *Requirements) { q.Amount = "20000" }, ReasonAmountMismatch},
		{"amount one unit less", func(q *Requirements) { q.Amount = "9999" }, ReasonAmountMismatch},
		{"payTo", func(q *Requirements) { q.PayTo = other }, ReasonRecipientMismatch},
		{"fee payer", func(q *Requirements) { q.Extra = map[string]any{"feePayer": other} }, ReasonFeePayerMismatch},
		{"no fee payer", func(q *Requirements) { q.Extra = nil }, ReasonMissingFeePayer},
		{"memo expected", func(q *Requirements) {
			q.Extra = map[string]any{"feePayer": r.Requirements.FeePayer(), "memo": "order-1"}
		}, ReasonMemoMismatch},
		{"network", func(q *Requirements) { *q = devnetCopy(*q) }, ReasonNetworkMismatch},
		{"scheme", func(q *Requirements) { q.Scheme = "upto" }, ReasonUnsupportedScheme},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := r.Requirements
			q.Extra = maps.Clone(q.Extra)
			c.change(&q)
			_, err := CheckExactSVM(p, q)
			wantReason(t, err, c.reason)
		})
	}
	// The memo entry paid with extra.memo: another memo does not match.
	m := recs["memo"]
	q := m.Requirements
	q.Extra = map[string]any{"feePayer": q.FeePayer(), "memo": "promptwall-scan-43"}
	_, err := CheckExactSVM(decodeRecorded(t, m), q)
	wantReason(t, err, ReasonMemoMismatch)
}

func devnetCopy(q Requirements) Requirements {
	q.Network = Devnet.CAIP2
	q.Asset = Devnet.USDCMint
	return q
}

// The requirements hold the server's configuration: a fault there is a
// plain error, not a refusal of the client's payment.
func TestCheckRefusesUnusableRequirements(t *testing.T) {
	r := loadRecorded(t)["paid"]
	p := decodeRecorded(t, r)
	for name, change := range map[string]func(*Requirements){
		"asset not USDC":  func(q *Requirements) { q.Asset = Devnet.USDCMint },
		"bad payTo":       func(q *Requirements) { q.PayTo = "merchant" },
		"bad amount":      func(q *Requirements) { q.Amount = "0.01" },
		"unknown network": func(q *Requirements) { q.Network = "eip155:8453" },
	} {
		q := r.Requirements
		change(&q)
		pp := *p
		pp.Accepted.Network = q.Network
		_, err := CheckExactSVM(&pp, q)
		var inv *Invalid
		if err == nil || errors.As(err, &inv) {
			t.Errorf("%s: got %v, want a configuration error", name, err)
		}
	}
	if _, err := CheckExactSVM(nil, r.Requirements); err == nil {
		t.Error("nil payload accepted")
	}
}

// Altering the signed bytes of a recorded transaction breaks the payer's
// signature; the other alterations are refused before signatures are read.
func TestTamperedRecordedTransaction(t *testing.T) {
	r := loadRecorded(t)["paid"]
	p := decodeRecorded(t, r)
	orig := recordedWire(t, p)
	tx, err := ParseTransaction(orig)
	if err != nil {
		t.Fatal(err)
	}
	msgOff := len(orig) - len(tx.MessageBytes)
	mutate := func(f func(w []byte) []byte) *PaymentPayload {
		w := append([]byte(nil), orig...)
		return withTx(p, f(w))
	}
	t.Run("payer signature bit", func(t *testing.T) {
		_, err := CheckExactSVM(mutate(func(w []byte) []byte { w[1+64+5] ^= 0x01; return w }), r.Requirements)
		wantReason(t, err, ReasonSignatureInvalid)
	})
	t.Run("amount in the signed message", func(t *testing.T) {
		// The transfer's amount is the only u64 10000 in the message.
		i := indexAmount(t, tx.MessageBytes, 10000)
		_, err := CheckExactSVM(mutate(func(w []byte) []byte { w[msgOff+i] = 0x20; return w }), r.Requirements)
		wantReason(t, err, ReasonSignatureInvalid)
	})
	t.Run("blockhash", func(t *testing.T) {
		i := len(tx.MessageBytes) - len(tail(tx.Message)) - 32
		_, err := CheckExactSVM(mutate(func(w []byte) []byte { w[msgOff+i] ^= 0x80; return w }), r.Requirements)
		wantReason(t, err, ReasonSignatureInvalid)
	})
	keyOffset := func(k PublicKey) int {
		i := bytes.Index(tx.MessageBytes, k[:])
		if i < 0 {
			t.Fatalf("key %s not in the message", k)
		}
		return msgOff + i
	}
	replaceKey := func(w []byte, at int) []byte { other := newWallet(t).pub; copy(w[at:at+32], other[:]); return w }
	t.Run("mint key in the signed message", func(t *testing.T) {
		at := keyOffset(mustPublicKey(Mainnet.USDCMint))
		_, err := CheckExactSVM(mutate(func(w []byte) []byte { return replaceKey(w, at) }), r.Requirements)
		wantReason(t, err, ReasonSignatureInvalid)
	})
	t.Run("destination key in the signed message", func(t *testing.T) {
		ata, err := AssociatedTokenAddress(mustPublicKey(r.Requirements.PayTo), TokenProgram, mustPublicKey(Mainnet.USDCMint))
		if err != nil {
			t.Fatal(err)
		}
		at := keyOffset(ata)
		_, err = CheckExactSVM(mutate(func(w []byte) []byte { return replaceKey(w, at) }), r.Requirements)
		wantReason(t, err, ReasonSignatureInvalid)
	})
	t.Run("fee payer key replaced", func(t *testing.T) {
		at := keyOffset(mustPublicKey(r.Requirements.FeePayer()))
		_, err := CheckExactSVM(mutate(func(w []byte) []byte { return replaceKey(w, at) }), r.Requirements)
		wantReason(t, err, ReasonFeePayerMismatch)
	})
	t.Run("extra instruction", func(t *testing.T) {
		extra := reencode(t, tx, func(m *Message) {
			m.Instructions = append(m.Instructions, Instruction{ProgramIDIndex: m.Instructions[3].ProgramIDIndex, Data: []byte("more")})
		})
		_, err := CheckExactSVM(withTx(p, extra), r.Requirements)
		wantReason(t, err, ReasonSignatureInvalid)
	})
	t.Run("lookup table", func(t *testing.T) {
		w := reencode(t, tx, func(m *Message) {
			m.AddressTableLookups = []AddressTableLookup{{TableKey: newWallet(t).pub, ReadonlyIndexes: []uint8{0}}}
		})
		_, err := CheckExactSVM(withTx(p, w), r.Requirements)
		wantReason(t, err, ReasonLookupTables)
	})
	t.Run("trailing byte", func(t *testing.T) {
		_, err := CheckExactSVM(mutate(func(w []byte) []byte { return append(w, 0) }), r.Requirements)
		wantReason(t, err, ReasonCouldNotBeDecoded)
	})
	t.Run("not base64", func(t *testing.T) {
		q := *p
		q.Payload.Transaction = "!!" + q.Payload.Transaction
		_, err := CheckExactSVM(&q, r.Requirements)
		wantReason(t, err, ReasonCouldNotBeDecoded)
	})
	t.Run("truncated at every length", func(t *testing.T) {
		for n := 0; n < len(orig); n++ {
			_, err := CheckExactSVM(withTx(p, orig[:n]), r.Requirements)
			var inv *Invalid
			if !errors.As(err, &inv) || inv.Reason != ReasonCouldNotBeDecoded {
				t.Fatalf("truncated to %d of %d bytes: %v", n, len(orig), err)
			}
		}
	})
}

// indexAmount finds the little-endian u64 v in b.
func indexAmount(t *testing.T, b []byte, v uint64) int {
	t.Helper()
	for i := 0; i+8 <= len(b); i++ {
		var x uint64
		for j := 7; j >= 0; j-- {
			x = x<<8 | uint64(b[i+j])
		}
		if x == v {
			return i
		}
	}
	t.Fatalf("amount %d not in message", v)
	return 0
}

// tail is the encoding of what follows the blockhash in a message.
func tail(m Message) []byte {
	var out []byte
	out = append(out, compactU16(len(m.Instructions))...)
	for _, ix := range m.Instructions {
		out = append(out, ix.ProgramIDIndex)
		out = append(out, compactU16(len(ix.Accounts))...)
		out = append(out, ix.Accounts...)
		out = append(out, compactU16(len(ix.Data))...)
		out = append(out, ix.Data...)
	}
	if m.Version == 0 {
		out = append(out, compactU16(len(m.AddressTableLookups))...)
		for _, l := range m.AddressTableLookups {
			out = append(out, l.TableKey[:]...)
			out = append(out, compactU16(len(l.WritableIndexes))...)
			out = append(out, l.WritableIndexes...)
			out = append(out, compactU16(len(l.ReadonlyIndexes))...)
			out = append(out, l.ReadonlyIndexes...)
		}
	}
	return out
}

// reencode changes a parsed transaction and encodes it again, keeping the
// original signatures (which then no longer match).
func reencode(t *testing.T, tx *Transaction, change func(*Message)) []byte {
	t.Helper()
	m := tx.Message
	m.Instructions = append([]Instruction(nil), m.Instructions...)
	change(&m)
	var msg []byte
	if m.Version == 0 {
		msg = append(msg, 0x80)
	}
	msg = append(msg, m.NumRequiredSignatures, m.NumReadonlySignedAccounts, m.NumReadonlyUnsignedAccounts)
	msg = append(msg, compactU16(len(m.AccountKeys))...)
	for _, k := range m.AccountKeys {
		msg = append(msg, k[:]...)
	}
	msg = append(msg, m.RecentBlockhash[:]...)
	msg = append(msg, tail(m)...)
	out := compactU16(len(tx.Signatures))
	for _, s := range tx.Signatures {
		out = append(out, s[:]...)
	}
	out = append(out, msg...)
	if _, err := ParseTransaction(out); err != nil {
		t.Fatalf("re-encoded transaction does not parse: %v", err)
	}
	return out
}
