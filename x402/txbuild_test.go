package x402

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"os"
	"testing"
)

// This file builds Solana transactions in Go, the way the x402 client does,
// so that tests can cover faults that need a valid payer signature (a
// recorded header cannot be altered and re-signed without the payer's key).

type accountMeta struct {
	key              PublicKey
	signer, writable bool
}

type testIx struct {
	program  PublicKey
	accounts []accountMeta
	data     []byte
}

type wallet struct {
	pub  PublicKey
	priv ed25519.PrivateKey
}

func newWallet(t testing.TB) wallet {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return wallet{PublicKey(pub), priv}
}

// compactU16 encodes Solana's short vec length.
func compactU16(n int) []byte {
	var out []byte
	for {
		b := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// compileMessage lays out accounts as Solana does: fee payer, other writable
// signers, read-only signers, writable, read-only; it returns the message
// bytes (v0 unless legacy) and the account keys.
func compileMessage(feePayer PublicKey, ixs []testIx, legacy bool, lookups []AddressTableLookup) ([]byte, []PublicKey, uint8) {
	type flags struct{ signer, writable bool }
	order := []PublicKey{feePayer}
	f := map[PublicKey]*flags{feePayer: {true, true}}
	add := func(k PublicKey, signer, writable bool) {
		if g, ok := f[k]; ok {
			g.signer = g.signer || signer
			g.writable = g.writable || writable
			return
		}
		f[k] = &flags{signer, writable}
		order = append(order, k)
	}
	for _, ix := range ixs {
		for _, a := range ix.accounts {
			add(a.key, a.signer, a.writable)
		}
		add(ix.program, false, false)
	}
	var keys []PublicKey
	var nsig, nroSigned, nroUnsigned uint8
	for _, class := range []flags{{true, true}, {true, false}, {false, true}, {false, false}} {
		for _, k := range order {
			if *f[k] == class {
				keys = append(keys, k)
				if class.signer {
					nsig++
					if !class.writable {
						nroSigned++
					}
				} else if !class.writable {
					nroUnsigned++
				}
			}
		}
	}
	index := map[PublicKey]uint8{}
	for i, k := range keys {
		index[k] = uint8(i)
	}
	var m []byte
	if !legacy {
		m = append(m, 0x80)
	}
	m = append(m, nsig, nroSigned, nroUnsigned)
	m = append(m, compactU16(len(keys))...)
	for _, k := range keys {
		m = append(m, k[:]...)
	}
	blockhash := make([]byte, 32)
	rand.Read(blockhash)
	m = append(m, blockhash...)
	m = append(m, compactU16(len(ixs))...)
	for _, ix := range ixs {
		m = append(m, index[ix.program])
		m = append(m, compactU16(len(ix.accounts))...)
		for _, a := range ix.accounts {
			m = append(m, index[a.key])
		}
		m = append(m, compactU16(len(ix.data))...)
		m = append(m, ix.data...)
	}
	if !legacy {
		m = append(m, compactU16(len(lookups))...)
		for _, l := range lookups {
			m = append(m, l.TableKey[:]...)
			m = append(m, compactU16(len(l.WritableIndexes))...)
			m = append(m, l.WritableIndexes...)
			m = append(m, compactU16(len(l.ReadonlyIndexes))...)
			m = append(m, l.ReadonlyIndexes...)
		}
	}
	return m, keys, nsig
}

// signTx signs the message with every signer key known (the fee payer's slot
// stays zero, as the client leaves it) and returns the wire transaction.
func signTx(msg []byte, keys []PublicKey, nsig uint8, signers map[PublicKey]ed25519.PrivateKey) []byte {
	out := compactU16(int(nsig))
	for i := 0; i < int(nsig); i++ {
		sig := make([]byte, 64)
		if priv, ok := signers[keys[i]]; ok && i > 0 {
			sig = ed25519.Sign(priv, msg)
		}
		out = append(out, sig...)
	}
	return append(out, msg...)
}

func computeLimitIx(units uint32) testIx {
	d := []byte{2, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(d[1:], units)
	return testIx{program: ComputeBudgetProgram, data: d}
}

func computePriceIx(micro uint64) testIx {
	d := make([]byte, 9)
	d[0] = 3
	binary.LittleEndian.PutUint64(d[1:], micro)
	return testIx{program: ComputeBudgetProgram, data: d}
}

func transferChecked(program, source, mint, dest, authority PublicKey, amount uint64, decimals byte) testIx {
	d := make([]byte, 10)
	d[0] = 12
	binary.LittleEndian.PutUint64(d[1:9], amount)
	d[9] = decimals
	return testIx{program: program, data: d, accounts: []accountMeta{
		{key: source, writable: true}, {key: mint}, {key: dest, writable: true}, {key: authority, signer: true},
	}}
}

func memoIx(s string) testIx { return testIx{program: MemoProgram, data: []byte(s)} }

// payment is a client-like payment built in Go: change fields or ixs, then
// call payload.
type payment struct {
	t        testing.TB
	feePayer wallet
	payer    wallet
	payTo    PublicKey
	req      Requirements
	ixs      []testIx
	legacy   bool
	lookups  []AddressTableLookup
	signers  map[PublicKey]ed25519.PrivateKey
}

// newPayment builds the transaction the x402 client builds for req.
func newPayment(t testing.TB) *payment {
	p := &payment{t: t, feePayer: newWallet(t), payer: newWallet(t), payTo: newWallet(t).pub}
	req, err := Mainnet.Requirements("10000", p.payTo.String(), p.feePayer.pub.String())
	if err != nil {
		t.Fatal(err)
	}
	p.req = req
	mint := mustPublicKey(Mainnet.USDCMint)
	src, err := AssociatedTokenAddress(p.payer.pub, TokenProgram, mint)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := AssociatedTokenAddress(p.payTo, TokenProgram, mint)
	if err != nil {
		t.Fatal(err)
	}
	p.ixs = []testIx{
		computeLimitIx(20000),
		computePriceIx(1),
		transferChecked(TokenProgram, src, mint, dst, p.payer.pub, 10000, 6),
		memoIx("0123456789abcdef0123456789abcdef"),
	}
	p.signers = map[PublicKey]ed25519.PrivateKey{p.payer.pub: p.payer.priv}
	return p
}

func (p *payment) wire() []byte {
	msg, keys, nsig := compileMessage(p.feePayer.pub, p.ixs, p.legacy, p.lookups)
	return signTx(msg, keys, nsig, p.signers)
}

func (p *payment) payload() *PaymentPayload {
	return payloadFor(p.t, p.req, p.wire())
}

// payloadFor wraps a wire transaction in a payment payload accepting req,
// through the same encoding and decoding as a real header.
func payloadFor(t testing.TB, req Requirements, wire []byte) *PaymentPayload {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"x402Version": 2,
		"resource":    Resource{URL: "http://localhost/scan"},
		"accepted":    req,
		"payload":     map[string]string{"transaction": base64.StdEncoding.EncodeToString(wire)},
	})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := DecodePaymentHeader(base64.StdEncoding.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	return pp
}

// loadRecorded reads the headers the real npm client produced
// (TestRealClientPaysThroughLocalFacilitator -x402.record writes them).
func loadRecorded(t testing.TB) map[string]recorded {
	t.Helper()
	b, err := os.ReadFile("testdata/payment-headers.json")
	if err != nil {
		t.Fatal(err)
	}
	var recs []recorded
	if err := json.Unmarshal(b, &recs); err != nil {
		t.Fatal(err)
	}
	out := map[string]recorded{}
	for _, r := range recs {
		out[r.Name] = r
	}
	for _, name := range []string{"paid", "unfunded", "memo"} {
		if _, ok := out[name]; !ok {
			t.Fatalf("testdata/payment-headers.json has no %q entry", name)
		}
	}
	return out
}
