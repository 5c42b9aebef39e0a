package x402

import (
	"encoding/json"
	"testing"
)

// FuzzChainAnswers feeds arbitrary bodies through every parser of a Solana
// node's answers. Nothing may panic, and what parses must hold what the
// lookup relies on: bounded pages of 64-byte signatures, transactions no
// larger than Solana's limit, on-chain errors that are JSON.
func FuzzChainAnswers(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":5},"value":false}}`,
		`{"jsonrpc":"2.0","id":1,"result":1800000000}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32015,"message":"Transaction version (1) is not supported"}}`,
		`{"jsonrpc":"2.0","id":1,"result":[{"signature":"` + Base58Encode(make([]byte, 64)) +
			`","slot":7,"err":null,"memo":null,"blockTime":1700000000,"confirmationStatus":"finalized"}]}`,
		`{"jsonrpc":"2.0","id":1,"result":{"slot":42,"blockTime":1,"version":0,"transaction":["AQID","base64"],` +
			`"meta":{"err":{"InstructionError":[2,{"Custom":1}]},"fee":5000}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"slot":42,"transaction":["` + "AAAA" + `","base64"],"meta":{"err":null}}}`,
		`{"jsonrpc":"2.0","id":1}`,
		`[]`,
	} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, limit uint8) {
		res, err := parseEnvelope(body, 1)
		if err != nil {
			if res != nil {
				t.Fatal("result returned with an error")
			}
			return
		}
		if !json.Valid(res) {
			t.Fatalf("result %q is not JSON", res)
		}
		parseBlockhashValid(res)
		parseBlockTime(res)
		if page, err := parseSignaturePage(res, int(limit)); err == nil {
			if len(page) > int(limit) {
				t.Fatalf("%d entries with limit %d", len(page), limit)
			}
			for _, e := range page {
				if _, err := decodeSignature(e.Signature); err != nil {
					t.Fatalf("entry %q passed: %v", e.Signature, err)
				}
			}
		}
		ct, err := parseTransactionResult(res)
		if err != nil {
			if ct != nil {
				t.Fatal("transaction returned with an error")
			}
			return
		}
		if ct == nil {
			return
		}
		if len(ct.Wire) > MaxTransactionBytes {
			t.Fatalf("transaction of %d bytes", len(ct.Wire))
		}
		if ct.Err != nil && !json.Valid(ct.Err) {
			t.Fatalf("on-chain error %q is not JSON", ct.Err)
		}
		ParseTransaction(ct.Wire)
	})
}
