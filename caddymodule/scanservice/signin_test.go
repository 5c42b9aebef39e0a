package scanservice

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/x402"
)

// identityAddr is the address whose key is the curve's identity point.
var identityAddr = x402.Base58Encode(identityPoint())

func identityPoint() []byte { b := make([]byte, 32); b[0] = 1; return b }

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

const testOrigin = "https://scan.example.com"

// signInHandler has sign-in on, a wallet limit of 2 and an address bound
// of 1, so an address is full after one unproven pre-check.
func signInHandler(t *testing.T) *testHandler {
	return newTestHandler(t, &Handler{Free: true, PrecheckDailyLimit: 2, PrecheckAddressDailyLimit: 1,
		PrecheckSignIn: &SignInConfig{Origin: testOrigin, Secret: "a test secret of enough bytes"}})
}

// getChallenge asks GET /precheck for a challenge.
func (th *testHandler) getChallenge(t *testing.T) signInChallenge {
	t.Helper()
	w := th.do(t, "GET", "/precheck", "", nil)
	if w.Code != 200 {
		t.Fatalf("GET /precheck: %d %s", w.Code, w.Body)
	}
	var doc struct {
		Extensions map[string]signInChallenge `json:"extensions"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	c, ok := doc.Extensions["sign-in-with-x"]
	if !ok {
		t.Fatalf("no sign-in-with-x extension: %s", w.Body)
	}
	return c
}

// proofFor is what x402's client makes of challenge c for wallet k: the
// info echoed, the chain, the address and the signature of the SIWS text.
// edit changes the proof before it is signed, sign after.
func proofFor(c signInChallenge, k ed25519.PrivateKey, edit, after func(*signInProof)) string {
	p := signInProof{
		Domain: c.Info.Domain, Address: x402.Base58Encode(k.Public().(ed25519.PublicKey)), Statement: c.Info.Statement,
		URI: c.Info.URI, Version: c.Info.Version, ChainID: c.SupportedChains[0].ChainID, Type: c.SupportedChains[0].Type,
		Nonce: c.Info.Nonce, IssuedAt: c.Info.IssuedAt, ExpirationTime: c.Info.ExpirationTime, RequestID: c.Info.RequestID,
	}
	if edit != nil {
		edit(&p)
	}
	p.Signature = x402.Base58Encode(ed25519.Sign(k, []byte(p.message())))
	if after != nil {
		after(&p)
	}
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}

// provenPrecheck sends a pre-check for caller from addr with a proof.
func (th *testHandler) provenPrecheck(caller, addr, proof string) *httptest.ResponseRecorder {
	b, _ := json.Marshal(map[string]string{"text": "hello", "caller": caller})
	r := httptest.NewRequest("POST", "/precheck", strings.NewReader(string(b)))
	r.RemoteAddr = net.JoinHostPort(addr, "4711")
	if proof != "" {
		r.Header.Set("SIGN-IN-WITH-X", proof)
	}
	w := httptest.NewRecorder()
	th.ServeHTTP(w, r, nextHandler)
	return w
}

func TestSignInChallenge(t *testing.T) {
	th := signInHandler(t)
	c := th.getChallenge(t)
	want := signInInfo{Domain: "scan.example.com", URI: testOrigin + "/precheck", Version: "1",
		IssuedAt: "2026-03-14T12:00:00.000Z", ExpirationTime: "2026-03-14T12:05:00.000Z", Statement: signInStatement}
	got := c.Info
	if len(got.Nonce) != 32 || strings.Trim(got.Nonce, "0123456789abcdef") != "" || len(got.RequestID) != 16 {
		t.Fatalf("nonce %q, requestId %q: want 32 and 16 hex characters", got.Nonce, got.RequestID)
	}
	got.Nonce, got.RequestID = "", ""
	if got != want {
		t.Fatalf("info %+v, want %+v", got, want)
	}
	if len(c.SupportedChains) != 1 || c.SupportedChains[0] != (signInChain{x402.Mainnet.CAIP2, "ed25519", "siws"}) {
		t.Fatalf("supportedChains %+v", c.SupportedChains)
	}
	if again := th.getChallenge(t); again.Info.Nonce == c.Info.Nonce {
		t.Fatal("two challenges of one instant share a nonce")
	}
	if w := th.do(t, "OPTIONS", "/precheck", "", nil); w.Code != 204 || w.Header().Get("Allow") != "GET, HEAD, POST, OPTIONS" {
		t.Fatalf("OPTIONS /precheck with sign-in: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if w := th.do(t, "PUT", "/precheck", "", nil); w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("PUT /precheck: %d", w.Code)
	}
	// Without sign-in, GET stays refused.
	plain := newTestHandler(t, &Handler{Free: true})
	if w := plain.do(t, "GET", "/precheck", "", nil); w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /precheck without sign-in: %d", w.Code)
	}
}

// TestSignInFlow: a proven wallet is not held to a full address's bound
// nor to what strangers spent in its name; each challenge is used once;
// a proof refused by the wallet's limits is not used up.
func TestSignInFlow(t *testing.T) {
	th := signInHandler(t)
	const office = "203.0.113.7"
	start := th.clock.Now()
	at := func(d time.Duration) { th.clock.set(start.Add(d)) }

	if w := th.precheckFrom(mintedWallet(1), office, ""); w.Code != 200 {
		t.Fatalf("first unproven: %d %s", w.Code, w.Body)
	}
	w := th.precheckFrom(mintedWallet(2), office, "")
	if w.Code != 429 || refusedLimit(w) != "address_daily_limit" || !strings.Contains(w.Body.String(), "sign-in-with-x") {
		t.Fatalf("address full: %d %s, want 429 pointing at sign-in", w.Code, w.Body)
	}
	// A stranger spends the payer's unproven day from elsewhere.
	for i, addr := range []string{"198.51.100.1", "198.51.100.2"} {
		at(time.Duration(i) * 10 * time.Second)
		if w := th.precheckFrom(payerAddr, addr, ""); w.Code != 200 {
			t.Fatalf("stranger's pre-check %d naming the payer: %d %s", i, w.Code, w.Body)
		}
	}
	at(30 * time.Second)
	if w := th.precheckFrom(payerAddr, "198.51.100.3", ""); w.Code != 429 || refusedLimit(w) != "daily_limit" {
		t.Fatalf("payer's unproven day: %d %s", w.Code, w.Body)
	}

	c1 := th.getChallenge(t)
	p1 := proofFor(c1, payerKey, nil, nil)
	steps := []struct {
		name   string
		at     time.Duration
		proof  string
		status int
		limit  string
	}{
		{"proven from the full office", 31 * time.Second, p1, 200, ""},
		{"the same proof again", 40 * time.Second, p1, 401, ""},
	}
	for _, st := range steps {
		at(st.at)
		w := th.provenPrecheck(payerAddr, office, st.proof)
		if w.Code != st.status || refusedLimit(w) != st.limit {
			t.Fatalf("%s: %d %s", st.name, w.Code, w.Body)
		}
	}
	// A fresh proof too soon after: the wallet's interval, and the proof
	// stays good for when the wait is over.
	at(33 * time.Second)
	p2 := proofFor(th.getChallenge(t), payerKey, nil, nil)
	if w := th.provenPrecheck(payerAddr, office, p2); w.Code != 429 || refusedLimit(w) != "interval" {
		t.Fatalf("proven, too soon: %d %s", w.Code, w.Body)
	}
	at(36 * time.Second)
	if w := th.provenPrecheck(payerAddr, office, p2); w.Code != 200 {
		t.Fatalf("the proof refused by the interval, after it: %d %s", w.Code, w.Body)
	}
	at(50 * time.Second)
	w = th.provenPrecheck(payerAddr, office, proofFor(th.getChallenge(t), payerKey, nil, nil))
	if w.Code != 429 || refusedLimit(w) != "daily_limit" {
		t.Fatalf("third proven of the day with limit 2: %d %s", w.Code, w.Body)
	}
	// Replays are refused across midnight too, while the challenge lives.
	at(12*time.Hour - 2*time.Minute)
	late := proofFor(th.getChallenge(t), otherKey, nil, nil)
	if w := th.provenPrecheck(otherAddr, office, late); w.Code != 200 {
		t.Fatalf("late proof: %d %s", w.Code, w.Body)
	}
	at(12*time.Hour + time.Minute)
	if w := th.provenPrecheck(otherAddr, office, late); w.Code != 401 || errorCode(t, w) != "invalid_sign_in" {
		t.Fatalf("late proof replayed after midnight: %d %s", w.Code, w.Body)
	}
}

// TestSignInRefused: every bad proof is answered 401 invalid_sign_in and
// charges nothing: after all of them, a good proof for the wallet passes
// at once, which its interval would refuse had any been charged.
func TestSignInRefused(t *testing.T) {
	th := signInHandler(t)
	c := th.getChallenge(t)
	start := th.clock.Now()
	pf := func(edit, after func(*signInProof)) string { return proofFor(c, payerKey, edit, after) }
	for _, tc := range []struct {
		name   string
		caller string
		at     time.Duration
		proof  string
		want   string
	}{
		{"other domain", payerAddr, 0, pf(func(p *signInProof) { p.Domain = "evil.example" }, nil), "domain"},
		{"uri of another origin", payerAddr, 0, pf(func(p *signInProof) { p.URI = "https://evil.example/precheck" }, nil), "uri"},
		{"uri over http", payerAddr, 0, pf(func(p *signInProof) { p.URI = "http://scan.example.com/precheck" }, nil), "uri"},
		{"version", payerAddr, 0, pf(func(p *signInProof) { p.Version = "2" }, nil), "version"},
		{"other chain", payerAddr, 0, pf(func(p *signInProof) { p.ChainID = x402.Devnet.CAIP2 }, nil), "ed25519"},
		{"evm type", payerAddr, 0, pf(func(p *signInProof) { p.Type = "eip191" }, nil), "ed25519"},
		{"made-up nonce", payerAddr, 0, pf(func(p *signInProof) { p.Nonce = strings.Repeat("ab", 16) }, nil), "nonce"},
		{"longer validity", payerAddr, 0, pf(func(p *signInProof) { p.ExpirationTime = "2026-03-15T12:00:00.000Z" }, nil), "nonce"},
		{"other request id", payerAddr, 0, pf(func(p *signInProof) { p.RequestID = "0000000000000000" }, nil), "nonce"},
		{"expired", payerAddr, signInLifetime, pf(nil, nil), "expired"},
		{"before it was issued", payerAddr, -time.Millisecond, pf(nil, nil), "expired"},
		{"not before", payerAddr, 0, pf(func(p *signInProof) { p.NotBefore = "2026-03-14T12:01:00Z" }, nil), "not valid yet"},
		{"signed by another wallet", payerAddr, 0, pf(nil, func(p *signInProof) {
			p.Signature = x402.Base58Encode(ed25519.Sign(otherKey, []byte(p.message())))
		}), "signature"},
		{"statement changed after signing", payerAddr, 0, pf(nil, func(p *signInProof) { p.Statement = "something else" }), "signature"},
		{"resources added after signing", payerAddr, 0, pf(nil, func(p *signInProof) { p.Resources = []string{"x"} }), "signature"},
		{"signature not base58", payerAddr, 0, pf(nil, func(p *signInProof) { p.Signature = "0OIl" }), "signature"},
		{"short signature", payerAddr, 0, pf(nil, func(p *signInProof) { p.Signature = p.Signature[:40] }), "signature"},
		{"address not a wallet", payerAddr, 0, pf(nil, func(p *signInProof) { p.Address = "0x857b06519E91e3A54538791bDbb0E22373e36b66" }), "address"},
		{"the identity point's signature fits every message", identityAddr, 0, pf(nil, func(p *signInProof) {
			p.Address = identityAddr
			p.Signature = x402.Base58Encode(append(identityPoint(), make([]byte, 32)...))
		}), "not a wallet's key"},
		{"proof for another wallet than caller", otherAddr, 0, pf(nil, nil), "another wallet"},
		{"not base64", payerAddr, 0, "{not base64}", "base64"},
		{"not JSON", payerAddr, 0, base64.StdEncoding.EncodeToString([]byte("[1,2")), "JSON"},
		{"too large", payerAddr, 0, strings.Repeat("A", maxSignInHeader+4), "over"},
	} {
		th.clock.set(start.Add(tc.at))
		w := th.provenPrecheck(tc.caller, "203.0.113.7", tc.proof)
		if w.Code != 401 || errorCode(t, w) != "invalid_sign_in" || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want 401 invalid_sign_in saying %q", tc.name, w.Code, w.Body, tc.want)
		}
	}
	th.clock.set(start.Add(time.Second))
	if w := th.provenPrecheck(payerAddr, "203.0.113.7", pf(nil, nil)); w.Code != 200 {
		t.Fatalf("good proof after the bad ones: %d %s", w.Code, w.Body)
	}
	// URL-safe base64 without padding is read as well.
	th.clock.set(start.Add(time.Minute))
	p := proofFor(th.getChallenge(t), otherKey, nil, nil)
	raw, _ := base64.StdEncoding.DecodeString(p)
	if w := th.provenPrecheck(otherAddr, "203.0.113.7", base64.RawURLEncoding.EncodeToString(raw)); w.Code != 200 {
		t.Fatalf("unpadded url-safe base64: %d %s", w.Code, w.Body)
	}
}

func TestSignInConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  SignInConfig
		want string
	}{
		{"no origin", SignInConfig{}, "is not an origin"},
		{"a path", SignInConfig{Origin: "https://scan.example.com/v1"}, "is not an origin"},
		{"other scheme", SignInConfig{Origin: "ftp://scan.example.com"}, "is not an origin"},
		{"short secret", SignInConfig{Origin: testOrigin, Secret: "short"}, "at least 16 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Handler{Free: true, PrecheckSignIn: &tc.cfg}
			_, err := newSignIn(h.PrecheckSignIn, x402.Mainnet, caddy.NewReplacer())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// FuzzSignInProof: no header makes verify panic, and none passes without
// the wallet's key.
func FuzzSignInProof(f *testing.F) {
	s := &signIn{origin: mustURL(testOrigin), key: []byte("fuzz key of sixteen+ bytes"), chainID: x402.Mainnet.CAIP2}
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	c := s.challenge("/precheck", now)
	f.Add(proofFor(c, payerKey, nil, func(p *signInProof) { p.Signature = "1" }))
	f.Add(proofFor(c, payerKey, func(p *signInProof) { p.Resources = []string{"a", "b"} }, func(p *signInProof) { p.Address = "" }))
	f.Add("e30=")
	f.Fuzz(func(t *testing.T, header string) {
		if p, err := s.verify(header, now); err == nil {
			t.Fatalf("verified without a signature by the key: %+v", p)
		}
	})
}

// TestSignInX402Client: a proof made by x402's own client library for one
// of our challenges is accepted (testdata/signin holds it, and says how it
// was made), so the SIWS text is the one x402 clients sign.
func TestSignInX402Client(t *testing.T) {
	raw, err := os.ReadFile("testdata/signin/x402-client-2.27.0.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Challenge signInChallenge `json:"challenge"`
		Address   string          `json:"address"`
		Header    string          `json:"header"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	th := signInHandler(t)
	if v.Address != payerAddr {
		t.Fatalf("vector wallet %s, want the payer %s", v.Address, payerAddr)
	}
	c := v.Challenge.Info
	if want := th.signIn.nonce(c.IssuedAt, c.ExpirationTime, c.RequestID); c.Nonce != want {
		t.Fatalf("the vector's challenge is not this secret's: nonce %s, want %s", c.Nonce, want)
	}
	th.clock.Add(time.Minute)
	if w := th.provenPrecheck(payerAddr, "203.0.113.7", v.Header); w.Code != 200 {
		t.Fatalf("x402 client's proof: %d %s", w.Code, w.Body)
	}
	if w := th.provenPrecheck(payerAddr, "203.0.113.7", v.Header); w.Code != 401 {
		t.Fatalf("x402 client's proof replayed: %d %s", w.Code, w.Body)
	}
}
