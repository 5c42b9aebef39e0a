package x402

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// chainFixture is a payment as the server holds it, the same transaction
// as landed (co-signed by the fee payer), and another payment of the payer.
type chainFixture struct {
	tx        *Transaction
	source    PublicKey
	landed    []byte
	landedSig string
	other     []byte
	otherSig  string
}

func newChainFixture(t *testing.T) chainFixture {
	p := newPayment(t)
	wire := p.wire() // one compilation: the key order may differ between two
	tx, err := ParseTransaction(wire)
	if err != nil {
		t.Fatal(err)
	}
	var fx chainFixture
	fx.tx = tx
	fx.source = tx.Message.AccountKeys[tx.Message.Instructions[2].Accounts[0]]
	fx.landed, fx.landedSig = coSign(t, wire, p.feePayer.priv)
	p.ixs[3] = memoIx("another payment of the same payer")
	fx.other, fx.otherSig = coSign(t, p.wire(), p.feePayer.priv)
	return fx
}

// coSign fills the fee payer's slot (signature 0) as the facilitator does
// and returns the transaction with its id.
func coSign(t *testing.T, wire []byte, feePayer ed25519.PrivateKey) ([]byte, string) {
	tx, err := ParseTransaction(wire)
	if err != nil {
		t.Fatal(err)
	}
	sig := ed25519.Sign(feePayer, tx.MessageBytes)
	out := append([]byte{byte(len(tx.Signatures))}, sig...)
	out = append(out, wire[1+64:]...)
	return out, Base58Encode(sig)
}

func TestFindPayment(t *testing.T) {
	fx := newChainFixture(t)
	received := time.Unix(1_800_000_000, 0)
	now := received.Add(10 * time.Minute).Unix()
	in := received.Add(5 * time.Second).Unix() // inside the search window
	old := received.Add(-time.Hour).Unix()     // before it
	fakeSig := func(i byte) string { var s [64]byte; s[0] = i; return Base58Encode(s[:]) }
	ours := fakeEntry{sig: fx.landedSig, blockTime: in, result: txResult(fx.landed, "null")}
	other := fakeEntry{sig: fx.otherSig, blockTime: in, result: txResult(fx.other, "null")}
	// unrelated is a transaction listed under sig that is another message.
	unrelated := func(i byte, at int64) fakeEntry {
		return fakeEntry{sig: fakeSig(i), blockTime: at, result: txResult(fx.other, "null")}
	}
	v1 := fakeEntry{sig: fakeSig(9), blockTime: in,
		rpcError: `{"code":-32015,"message":"Transaction version (1) is not supported by the requesting client"}`}
	failedErr := `{"InstructionError":[2,{"Custom":1}]}`
	// A body repeating our message after a broken signature section.
	broken := append([]byte{1}, fx.landed[65:]...)

	cases := []struct {
		name      string
		chain     fakeChain
		client    ChainClient
		tx        *Transaction
		account   *PublicKey
		noReceipt bool
		want      Fate
		wantErr   string // substring; empty: no error
		wantIs    error
		wantCalls map[string]int
	}{
		{name: "landed", chain: fakeChain{valid: true, history: []fakeEntry{other, ours}},
			want: Fate{State: PaymentLanded, Signature: fx.landedSig, Slot: 42, Succeeded: true}},
		{name: "landed after blockhash expiry", chain: fakeChain{history: []fakeEntry{ours}, blockTime: now},
			want:      Fate{State: PaymentLanded, Signature: fx.landedSig, Slot: 42, Succeeded: true},
			wantCalls: map[string]int{"getBlockTime": 0}},
		{name: "landed failed", chain: fakeChain{history: []fakeEntry{{sig: fx.landedSig, blockTime: in, result: txResult(fx.landed, failedErr)}}},
			want: Fate{State: PaymentLanded, Signature: fx.landedSig, Slot: 42, Err: json.RawMessage(failedErr)}},
		{name: "landed on a later page", client: ChainClient{PageSize: 2},
			chain:     fakeChain{history: []fakeEntry{unrelated(1, in), unrelated(2, in), unrelated(3, in), ours}},
			want:      Fate{State: PaymentLanded, Signature: fx.landedSig, Slot: 42, Succeeded: true},
			wantCalls: map[string]int{"getSignaturesForAddress": 2, "getTransaction": 4}},
		{name: "later version skipped", chain: fakeChain{history: []fakeEntry{v1, ours}},
			want: Fate{State: PaymentLanded, Signature: fx.landedSig, Slot: 42, Succeeded: true}},
		{name: "not found, blockhash expired", chain: fakeChain{history: []fakeEntry{other}, blockTime: now},
			want: Fate{State: PaymentNeverLanded}},
		{name: "not found, blockhash expired, empty history", chain: fakeChain{blockTime: now},
			want: Fate{State: PaymentNeverLanded}, wantCalls: map[string]int{"getTransaction": 0}},
		{name: "not found, finalized block predates receipt", chain: fakeChain{blockTime: received.Add(30 * time.Second).Unix()},
			want: Fate{State: PaymentPending}},
		{name: "not found, blockhash valid", chain: fakeChain{valid: true, history: []fakeEntry{other}},
			want: Fate{State: PaymentPending}, wantCalls: map[string]int{"getBlockTime": 0}},
		{name: "search stops at the window", client: ChainClient{PageSize: 2},
			chain: fakeChain{history: []fakeEntry{other, unrelated(1, old), unrelated(2, old), unrelated(3, old)}, blockTime: now},
			want:  Fate{State: PaymentNeverLanded}, wantCalls: map[string]int{"getSignaturesForAddress": 1, "getTransaction": 1}},
		{name: "search limit", client: ChainClient{PageSize: 1, MaxPages: 2},
			chain:  fakeChain{history: []fakeEntry{unrelated(1, in), unrelated(2, in), unrelated(3, in)}, blockTime: now},
			wantIs: ErrSearchLimit},

		{name: "blockhash RPC error", chain: fakeChain{override: map[string]string{
			"isBlockhashValid": `"error":{"code":-32005,"message":"Node is behind"}`}},
			wantErr: "error -32005: Node is behind"},
		{name: "node behind the blockhash slot", chain: fakeChain{override: map[string]string{
			"getSignaturesForAddress": `"error":{"code":-32016,"message":"Minimum context slot has not been reached"}`}},
			wantErr: "-32016"},
		{name: "listed but not found", chain: fakeChain{history: []fakeEntry{{sig: fx.landedSig, blockTime: in, result: "null"}}, blockTime: now},
			wantErr: "listed but not found"},
		{name: "block time unknown", chain: fakeChain{blockTime: now, override: map[string]string{"getBlockTime": `"result":null`}},
			wantErr: "does not know"},
		{name: "HTTP 503", chain: fakeChain{status: 503, body: map[string]string{"isBlockhashValid": "overloaded"}},
			wantErr: "HTTP 503"},
		{name: "HTTP 429 with a JSON-RPC error", chain: fakeChain{status: 429},
			wantErr: "HTTP 429"},

		{name: "hostile: wrong id", chain: fakeChain{body: map[string]string{
			"isBlockhashValid": `{"jsonrpc":"2.0","id":999999999,"result":{"context":{"slot":1},"value":false}}`}},
			wantErr: "not JSON-RPC 2.0"},
		{name: "hostile: not JSON", chain: fakeChain{body: map[string]string{"isBlockhashValid": `<html>`}},
			wantErr: "undecodable"},
		{name: "hostile: no result", chain: fakeChain{body: map[string]string{"isBlockhashValid": `{"jsonrpc":"2.0","id":{id}}`}},
			wantErr: "neither result nor error"},
		{name: "hostile: value missing", chain: fakeChain{override: map[string]string{"isBlockhashValid": `"result":{"context":{"slot":1}}`}},
			wantErr: "lacks context.slot or value"},
		{name: "hostile: value a string", chain: fakeChain{override: map[string]string{"isBlockhashValid": `"result":{"context":{"slot":1},"value":"false"}}`}},
			wantErr: "isBlockhashValid"},
		{name: "hostile: huge answer", chain: fakeChain{body: map[string]string{"isBlockhashValid": `{"jsonrpc":"2.0","id":{id},"result":"` + strings.Repeat("A", maxRPCBody) + `"}`}},
			wantErr: "larger than"},
		{name: "hostile: page is an object", chain: fakeChain{override: map[string]string{"getSignaturesForAddress": `"result":{}`}},
			wantErr: "getSignaturesForAddress"},
		{name: "hostile: page is null", chain: fakeChain{override: map[string]string{"getSignaturesForAddress": `"result":null`}},
			wantErr: "not a list"},
		{name: "hostile: page too long", client: ChainClient{PageSize: 1}, chain: fakeChain{override: map[string]string{
			"getSignaturesForAddress": fmt.Sprintf(`"result":[{"signature":%q,"slot":1},{"signature":%q,"slot":1}]`, fx.otherSig, fx.landedSig)}},
			wantErr: "asked for at most 1"},
		{name: "hostile: signature not base58", chain: fakeChain{override: map[string]string{
			"getSignaturesForAddress": `"result":[{"signature":"0OIl","slot":1}]`}},
			wantErr: "invalid base58"},
		{name: "hostile: short signature", chain: fakeChain{override: map[string]string{
			"getSignaturesForAddress": `"result":[{"signature":"1111","slot":1}]`}},
			wantErr: "want 64"},
		{name: "hostile: answers another transaction's id", chain: fakeChain{history: []fakeEntry{{sig: fx.otherSig, blockTime: in, result: txResult(fx.landed, "null")}}},
			wantErr: "answered transaction"},
		{name: "hostile: our message after broken signatures", chain: fakeChain{history: []fakeEntry{{sig: fx.landedSig, blockTime: in, result: txResult(broken, "null")}}},
			wantErr: "getTransaction"},
		{name: "hostile: no meta", chain: fakeChain{history: []fakeEntry{{sig: fx.landedSig, blockTime: in, result: fmt.Sprintf(`{"slot":1,"transaction":[%q,"base64"],"meta":null}`, base64.StdEncoding.EncodeToString(fx.landed))}}},
			wantErr: "lacks meta.err"},
		{name: "hostile: json encoding", chain: fakeChain{history: []fakeEntry{{sig: fx.landedSig, blockTime: in, result: `{"slot":1,"transaction":{"signatures":[]},"meta":{"err":null}}`}}},
			wantErr: "getTransaction"},
		{name: "hostile: oversized transaction", chain: fakeChain{history: []fakeEntry{{sig: fx.landedSig, blockTime: in, result: fmt.Sprintf(`{"slot":1,"transaction":[%q,"base64"],"meta":{"err":null}}`, strings.Repeat("AAAA", 500))}}},
			wantErr: "longer than"},
		{name: "hostile: bad base64", chain: fakeChain{history: []fakeEntry{{sig: fx.landedSig, blockTime: in, result: `{"slot":1,"transaction":["!!!!","base64"],"meta":{"err":null}}`}}},
			wantErr: "illegal base64"},

		{name: "no transaction", tx: &Transaction{}, wantErr: "no transaction"},
		{name: "no receipt time", noReceipt: true, wantErr: "no time of receipt"},
		{name: "account not in the transaction", account: &PublicKey{1}, wantErr: "does not reference"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			chain := tc.chain
			chain.t = t
			chain.calls = &callLog{}
			chain.slot = 1234
			srv := httptest.NewServer(&chain)
			defer srv.Close()
			c := tc.client
			c.URL = srv.URL
			c.ClockSlack = time.Minute
			tx, account, rec := fx.tx, fx.source, received
			if tc.tx != nil {
				tx = tc.tx
			}
			if tc.account != nil {
				account = *tc.account
			}
			if tc.noReceipt {
				rec = time.Time{}
			}
			got, err := c.FindPayment(context.Background(), tx, account, rec)
			switch {
			case tc.wantIs != nil:
				if !errors.Is(err, tc.wantIs) {
					t.Fatalf("error %v, want %v", err, tc.wantIs)
				}
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q (fate %+v)", err, tc.wantErr, got)
				}
			case err != nil:
				t.Fatal(err)
			}
			if err != nil && got.State != PaymentPending {
				t.Fatalf("an error came with a decision: %+v", got)
			}
			if string(got.Err) != string(tc.want.Err) || got.State != tc.want.State || got.Signature != tc.want.Signature ||
				got.Slot != tc.want.Slot || got.Succeeded != tc.want.Succeeded {
				t.Fatalf("fate %+v (err %s), want %+v (err %s)", got, got.Err, tc.want, tc.want.Err)
			}
			for m, n := range tc.wantCalls {
				if c := chain.count(m); c != n {
					t.Errorf("%d calls of %s, want %d", c, m, n)
				}
			}
		})
	}
}

func TestPaymentTransaction(t *testing.T) {
	p := newPayment(t)
	src, err := AssociatedTokenAddress(p.payer.pub, TokenProgram, mustPublicKey(Mainnet.USDCMint))
	if err != nil {
		t.Fatal(err)
	}
	short := newPayment(t)
	short.ixs = short.ixs[:2]
	otherProgram := newPayment(t)
	otherProgram.ixs[2].program = MemoProgram // the transfer's accounts, another program
	notBase64 := &PaymentPayload{}
	notBase64.Payload.Transaction = "!!"
	cases := []struct {
		name    string
		payload *PaymentPayload
		wantErr string
	}{
		{"payment", p.payload(), ""},
		{"no payload", nil, "no payload"},
		{"not base64", notBase64, "base64"},
		{"two instructions", payloadFor(t, short.req, short.wire()), "not a transfer"},
		{"another program", payloadFor(t, otherProgram.req, otherProgram.wire()), "not a token program"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tx, source, err := PaymentTransaction(tc.payload)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || tx != nil {
					t.Fatalf("got %v, %v; want an error containing %q", tx, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if source != src || !references(&tx.Message, source) {
				t.Fatalf("source %s, want the payer's token account %s", source, src)
			}
		})
	}
}
