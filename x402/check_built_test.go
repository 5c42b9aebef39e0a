package x402

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"
)

// Transactions built in Go with a payer key the test owns, so each fault
// below carries a valid payer signature and is refused for itself.

func TestBuiltPaymentPasses(t *testing.T) {
	p := newPayment(t)
	c, err := CheckExactSVM(p.payload(), p.req)
	if err != nil {
		t.Fatal(err)
	}
	if c.Payer != p.payer.pub.String() || c.Amount != 10000 {
		t.Fatalf("checked %+v", c)
	}
}

func TestBuiltPaymentVariantsAccepted(t *testing.T) {
	mint := mustPublicKey(Mainnet.USDCMint)
	cases := map[string]func(p *payment){
		"no optional instruction": func(p *payment) { p.ixs = p.ixs[:3] },
		"price at the limit":      func(p *payment) { p.ixs[1] = computePriceIx(MaxComputeUnitPrice) },
		"lighthouse and memos": func(p *payment) {
			p.ixs = append(p.ixs, testIx{program: LighthouseProgram, data: []byte{1}}, memoIx("x"), memoIx("y"))
		},
		"seven instructions":         func(p *payment) { p.ixs = append(p.ixs, memoIx("a"), memoIx("b"), memoIx("c")) },
		"compute limit at the bound": func(p *payment) { p.ixs[0] = computeLimitIx(MaxComputeUnitLimit) },
		"no memo without extra.memo": func(p *payment) { p.ixs[3] = lighthouseIx() },
		"phantom: three lighthouse after the memo": func(p *payment) {
			p.ixs = append(p.ixs, lighthouseIx(), lighthouseIx(), lighthouseIx())
		},
		"solflare: two lighthouse before the memo": func(p *payment) {
			p.ixs = append(p.ixs[:3], lighthouseIx(), lighthouseIx(), p.ixs[3])
		},
		"memo required among three lighthouse": func(p *payment) {
			p.req.Extra["memo"] = "order-7"
			p.ixs = append(p.ixs[:3], lighthouseIx(), memoIx("order-7"), lighthouseIx(), lighthouseIx())
		},
		"memo of 256 bytes required": func(p *payment) {
			m := strings.Repeat("é", MaxMemoBytes/2)
			p.req.Extra["memo"] = m
			p.ixs[3] = memoIx(m)
		},
		"token-2022": func(p *payment) {
			src, _ := AssociatedTokenAddress(p.payer.pub, Token2022Program, mint)
			dst, _ := AssociatedTokenAddress(p.payTo, Token2022Program, mint)
			p.ixs[2] = transferChecked(Token2022Program, src, mint, dst, p.payer.pub, 10000, 6)
		},
		"memo required and present": func(p *payment) {
			p.req.Extra["memo"] = "order-7"
			p.ixs[3] = memoIx("order-7")
		},
		"devnet": func(p *payment) {
			p.req = devnetCopy(p.req)
			dmint := mustPublicKey(Devnet.USDCMint)
			src, _ := AssociatedTokenAddress(p.payer.pub, TokenProgram, dmint)
			dst, _ := AssociatedTokenAddress(p.payTo, TokenProgram, dmint)
			p.ixs[2] = transferChecked(TokenProgram, src, dmint, dst, p.payer.pub, 10000, 6)
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			p := newPayment(t)
			change(p)
			if _, err := CheckExactSVM(p.payload(), p.req); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBuiltPaymentFaults(t *testing.T) {
	mint := mustPublicKey(Mainnet.USDCMint)
	transfer := func(p *payment, program, mint, dst, authority PublicKey, amount uint64, decimals byte) testIx {
		src, _ := AssociatedTokenAddress(authority, program, mint)
		return transferChecked(program, src, mint, dst, authority, amount, decimals)
	}
	dstOf := func(p *payment, program, mint PublicKey) PublicKey {
		d, _ := AssociatedTokenAddress(p.payTo, program, mint)
		return d
	}
	systemProgram := mustPublicKey("11111111111111111111111111111111")
	cases := []struct {
		name   string
		change func(p *payment)
		reason string
	}{
		{"other mint", func(p *payment) {
			other := newWallet(t).pub
			p.ixs[2] = transfer(p, TokenProgram, other, dstOf(p, TokenProgram, other), p.payer.pub, 10000, 6)
		}, ReasonMintMismatch},
		{"decimals", func(p *payment) {
			p.ixs[2] = transfer(p, TokenProgram, mint, dstOf(p, TokenProgram, mint), p.payer.pub, 10000, 9)
		}, ReasonDecimalsMismatch},
		{"amount", func(p *payment) {
			p.ixs[2] = transfer(p, TokenProgram, mint, dstOf(p, TokenProgram, mint), p.payer.pub, 9999, 6)
		}, ReasonAmountMismatch},
		{"destination is payTo itself, not its token account", func(p *payment) {
			p.ixs[2] = transfer(p, TokenProgram, mint, p.payTo, p.payer.pub, 10000, 6)
		}, ReasonRecipientMismatch},
		{"destination under the other token program", func(p *payment) {
			p.ixs[2] = transfer(p, Token2022Program, mint, dstOf(p, TokenProgram, mint), p.payer.pub, 10000, 6)
		}, ReasonRecipientMismatch},
		{"fee payer is the authority", func(p *payment) {
			p.ixs[2] = transfer(p, TokenProgram, mint, dstOf(p, TokenProgram, mint), p.feePayer.pub, 10000, 6)
		}, ReasonFeePayerTransferring},
		{"fee payer's account in the transfer", func(p *payment) {
			p.ixs[2].accounts[0].key = p.feePayer.pub
		}, ReasonFeePayerTransferring},
		{"fee payer's account in a memo", func(p *payment) {
			p.ixs[3].accounts = []accountMeta{{key: p.feePayer.pub, signer: true}}
		}, ReasonFeePayerTransferring},
		{"not TransferChecked", func(p *payment) { p.ixs[2].data = append([]byte{3}, p.ixs[2].data[1:9]...) }, ReasonNoTransferInstruction},
		{"transfer by another program", func(p *payment) { p.ixs[2].program = newWallet(t).pub }, ReasonNoTransferInstruction},
		{"multisig authority", func(p *payment) {
			p.ixs[2].accounts = append(p.ixs[2].accounts, accountMeta{key: newWallet(t).pub})
		}, ReasonNoTransferInstruction},
		{"authority does not sign", func(p *payment) { p.ixs[2].accounts[3].signer = false }, ReasonNoTransferInstruction},
		{"extra instruction fourth", func(p *payment) {
			p.ixs[3] = testIx{program: systemProgram, data: []byte{2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
				accounts: []accountMeta{{key: p.payer.pub, signer: true, writable: true}, {key: p.payTo, writable: true}}}
		}, ReasonUnknownFourth},
		{"extra instruction fifth", func(p *payment) { p.ixs = append(p.ixs, testIx{program: systemProgram, data: []byte{9}}) }, ReasonUnknownFifth},
		{"memo v1 program", func(p *payment) {
			p.ixs[3].program = mustPublicKey("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo")
		}, ReasonUnknownFourth},
		{"eight instructions", func(p *payment) { p.ixs = append(p.ixs, memoIx("a"), memoIx("b"), memoIx("c"), memoIx("d")) }, ReasonInstructionsLength},
		{"two instructions", func(p *payment) { p.ixs = p.ixs[1:3] }, ReasonInstructionsLength},
		{"no compute limit first", func(p *payment) { p.ixs[0], p.ixs[1] = p.ixs[1], p.ixs[0] }, ReasonComputeLimitInstruction},
		{"compute limit data short", func(p *payment) { p.ixs[0].data = p.ixs[0].data[:4] }, ReasonComputeLimitInstruction},
		{"no compute price second", func(p *payment) { p.ixs[1] = memoIx("price") }, ReasonComputePriceInstruction},
		{"price above the limit", func(p *payment) { p.ixs[1] = computePriceIx(MaxComputeUnitPrice + 1) }, ReasonComputePriceTooHigh},
		{"compute limit above the bound", func(p *payment) { p.ixs[0] = computeLimitIx(MaxComputeUnitLimit + 1) }, ReasonComputeLimitTooHigh},
		{"compute budget heap frame in an optional slot", func(p *payment) {
			p.ixs[3] = testIx{program: ComputeBudgetProgram, data: []byte{1, 0, 0, 4, 0}}
		}, ReasonUnknownFourth},
		{"a second compute price after the transfer", func(p *payment) { p.ixs = append(p.ixs, computePriceIx(1)) }, ReasonUnknownFifth},
		{"lighthouse first", func(p *payment) { p.ixs = append([]testIx{lighthouseIx()}, p.ixs[:3]...) }, ReasonComputeLimitInstruction},
		{"lighthouse between price and transfer", func(p *payment) {
			p.ixs = append(p.ixs[:2], lighthouseIx(), p.ixs[2], p.ixs[3])
		}, ReasonNoTransferInstruction},
		{"fee payer's account in a lighthouse instruction", func(p *payment) {
			l := lighthouseIx()
			l.accounts = []accountMeta{{key: p.feePayer.pub}}
			p.ixs = append(p.ixs, l)
		}, ReasonFeePayerTransferring},
		{"memo required, eight with lighthouse", func(p *payment) {
			p.req.Extra["memo"] = "order-7"
			p.ixs = append(p.ixs[:3], lighthouseIx(), lighthouseIx(), lighthouseIx(), lighthouseIx(), memoIx("order-7"))
		}, ReasonInstructionsLength},
		{"memo not UTF-8", func(p *payment) { p.ixs[3] = testIx{program: MemoProgram, data: []byte{0xff, 0xfe}} }, ReasonMemoNotUTF8},
		{"memo required, only a prefix", func(p *payment) { p.req.Extra["memo"] = "order-7"; p.ixs[3] = memoIx("order-") }, ReasonMemoMismatch},
		{"a third signer, validly signed", func(p *payment) {
			third := newWallet(t)
			p.ixs[3].accounts = []accountMeta{{key: third.pub, signer: true}}
			p.signers[third.pub] = third.priv
		}, ReasonExcessiveSigners},
		{"memo required, absent", func(p *payment) { p.req.Extra["memo"] = "order-7"; p.ixs = p.ixs[:3] }, ReasonMemoCount},
		{"memo required, twice", func(p *payment) {
			p.req.Extra["memo"] = "order-7"
			p.ixs[3] = memoIx("order-7")
			p.ixs = append(p.ixs, memoIx("order-7"))
		}, ReasonMemoCount},
		{"memo required, other", func(p *payment) { p.req.Extra["memo"] = "order-7"; p.ixs[3] = memoIx("order-8") }, ReasonMemoMismatch},
		{"lookup table, validly signed", func(p *payment) {
			p.lookups = []AddressTableLookup{{TableKey: newWallet(t).pub, WritableIndexes: []uint8{3}}}
		}, ReasonLookupTables},
		{"legacy message", func(p *payment) { p.legacy = true }, ReasonVersionUnsupported},
		{"fee payer is not account 0", func(p *payment) { p.feePayer = p.payer }, ReasonFeePayerMismatch},
		{"a second signer that did not sign", func(p *payment) {
			p.ixs[3].accounts = []accountMeta{{key: newWallet(t).pub, signer: true}}
		}, ReasonSignatureInvalid},
		{"payer signed with another key", func(p *payment) {
			p.signers = map[PublicKey]ed25519.PrivateKey{p.payer.pub: newWallet(t).priv}
		}, ReasonSignatureInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPayment(t)
			c.change(p)
			_, err := CheckExactSVM(p.payload(), p.req)
			wantReason(t, err, c.reason)
		})
	}
}

func lighthouseIx() testIx {
	return testIx{program: LighthouseProgram, data: []byte{0x10, 1, 2, 3}}
}

// A seller memo longer than the spec allows is the server's own fault: a
// configuration error, not a refusal of the client's payment.
func TestMemoTooLongIsConfiguration(t *testing.T) {
	p := newPayment(t)
	m := strings.Repeat("a", MaxMemoBytes+1)
	p.req.Extra["memo"] = m
	p.ixs[3] = memoIx(m)
	_, err := CheckExactSVM(p.payload(), p.req)
	if err == nil {
		t.Fatal("accepted a memo over 256 bytes")
	}
	if _, ok := errors.AsType[*Invalid](err); ok {
		t.Fatalf("reported as the payment's fault: %v", err)
	}
}
