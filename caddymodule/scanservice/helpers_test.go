package scanservice

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/promptwall/promptwall/caddymodule/stores"
	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/x402"
)

// key makes a deterministic ed25519 key and its base58 address.
func key(seed string) (ed25519.PrivateKey, string) {
	s := sha256.Sum256([]byte(seed))
	k := ed25519.NewKeyFromSeed(s[:])
	return k, x402.Base58Encode(k.Public().(ed25519.PublicKey))
}

var (
	payerKey, payerAddr       = key("payer")
	merchantKey, merchantAddr = key("merchant")
	feePayerKey, feePayerAddr = key("fee payer")
	otherKey, otherAddr       = key("somebody else")
	_, _                      = merchantKey, otherKey
)

// clock is the handler's injected time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testHandler is a provisioned handler with its clock, logs and store path.
type testHandler struct {
	*Handler
	clock  *clock
	logs   *observer.ObservedLogs
	dbPath string
}

// newTestHandler provisions h as Caddy would, with the store in a
// temporary directory, a fake clock at noon UTC and logs captured.
func newTestHandler(t testing.TB, h *Handler) *testHandler {
	t.Helper()
	dbPath := filepath.Join(t.TempDir(), "scan.db")
	if h.StoreRaw == nil {
		h.StoreRaw = sqliteAt(dbPath)
	}
	clk := &clock{t: time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)}
	h.now = clk.Now
	core, logs := observer.New(zap.DebugLevel)
	h.logger = zap.New(core)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	if err := h.Provision(ctx); err != nil {
		cancel()
		t.Fatalf("provision: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		h.Cleanup()
	})
	if err := h.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	return &testHandler{Handler: h, clock: clk, logs: logs, dbPath: dbPath}
}

// sqliteAt is the store config of a SQLite file at path.
func sqliteAt(path string) json.RawMessage {
	return caddyconfig.JSONModuleObject(stores.SQLite{Path: path}, "driver", "sqlite", nil)
}

// nextHandler marks requests that were passed on.
var nextHandler = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	w.WriteHeader(http.StatusTeapot)
	return nil
})

// do sends one request through the handler.
func (th *testHandler) do(t *testing.T, method, target, body string, hdr http.Header) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	for k, vs := range hdr {
		r.Header[k] = vs
	}
	w := httptest.NewRecorder()
	if err := th.ServeHTTP(w, r, nextHandler); err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
	return w
}

// errorCode is the code of an {"error": {"code"}} body, or "".
func errorCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e apiError
	json.Unmarshal(w.Body.Bytes(), &e)
	return e.Error.Code
}

// ledger reads every ledger row.
func (th *testHandler) ledger(t *testing.T) []store.LedgerRow {
	t.Helper()
	rows, err := th.store.Ledger(context.Background(), time.Unix(0, 0), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// counterValue reads one counter of the process-wide metrics.
func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	c.Write(&m)
	return m.GetCounter().GetValue()
}

// payment builds a PAYMENT-SIGNATURE header the way @x402/svm does: a v0
// transaction [SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked,
// Memo] with the fee payer's signature slot empty and the payer's
// signature over the message. change may alter the parts before signing.
type paymentParts struct {
	accepted  x402.Requirements
	amount    uint64
	mint      x402.PublicKey
	payTo     x402.PublicKey
	feePayer  x402.PublicKey
	signer    ed25519.PrivateKey
	memo      string
	blockhash [32]byte
	badSig    bool
}

func payment(t *testing.T, offer x402.PaymentRequired, change func(*paymentParts)) string {
	t.Helper()
	req := offer.Accepts[0]
	amt, err := parseAmount(req.Amount)
	if err != nil {
		t.Fatal(err)
	}
	mint, _ := x402.ParsePublicKey(req.Asset)
	payTo, _ := x402.ParsePublicKey(req.PayTo)
	fp, _ := x402.ParsePublicKey(req.FeePayer())
	p := paymentParts{accepted: req, amount: amt, mint: mint, payTo: payTo, feePayer: fp, signer: payerKey,
		memo: memoFor(t.Name())}
	copy(p.blockhash[:], []byte("a recent blockhash, 32 bytes...."))
	if change != nil {
		change(&p)
	}
	tx := buildTransaction(t, p)
	payload := map[string]any{
		"x402Version": 2,
		"resource":    offer.Resource,
		"accepted":    p.accepted,
		"payload":     map[string]string{"transaction": base64.StdEncoding.EncodeToString(tx)},
	}
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func parseAmount(s string) (uint64, error) {
	var n uint64
	err := json.Unmarshal([]byte(s), &n)
	return n, err
}

func buildTransaction(t *testing.T, p paymentParts) []byte {
	t.Helper()
	var authority x402.PublicKey
	copy(authority[:], p.signer.Public().(ed25519.PublicKey))
	source, err := x402.AssociatedTokenAddress(authority, x402.TokenProgram, p.mint)
	if err != nil {
		t.Fatal(err)
	}
	dest, err := x402.AssociatedTokenAddress(p.payTo, x402.TokenProgram, p.mint)
	if err != nil {
		t.Fatal(err)
	}
	// Signers first (fee payer writable, authority read-only), then
	// writable non-signers, then read-only non-signers.
	keys := []x402.PublicKey{p.feePayer, authority, source, dest,
		x402.ComputeBudgetProgram, x402.TokenProgram, p.mint, x402.MemoProgram}
	var m []byte
	m = append(m, 0x80, 2, 1, 4)
	m = append(m, byte(len(keys)))
	for _, k := range keys {
		m = append(m, k[:]...)
	}
	m = append(m, p.blockhash[:]...)
	limit := binary.LittleEndian.AppendUint32([]byte{2}, 20000)
	price := binary.LittleEndian.AppendUint64([]byte{3}, 1)
	transfer := append(binary.LittleEndian.AppendUint64([]byte{12}, p.amount), 6)
	ixs := []struct {
		prog     byte
		accounts []byte
		data     []byte
	}{
		{4, nil, limit},
		{4, nil, price},
		{5, []byte{2, 6, 3, 1}, transfer},
		{7, nil, []byte(p.memo)},
	}
	m = append(m, byte(len(ixs)))
	for _, ix := range ixs {
		m = append(m, ix.prog, byte(len(ix.accounts)))
		m = append(m, ix.accounts...)
		m = append(m, byte(len(ix.data)))
		m = append(m, ix.data...)
	}
	m = append(m, 0) // no address table lookups
	sig := ed25519.Sign(p.signer, m)
	if p.badSig {
		sig[0] ^= 1
	}
	tx := []byte{2}
	tx = append(tx, make([]byte, 64)...) // the fee payer signs later
	tx = append(tx, sig...)
	return append(tx, m...)
}

// fakeFacilitator is a facilitator in Go for unit tests: /supported
// announces feePayerAddr; /verify runs the real local checks; /settle
// co-signs as fee payer and reports the transaction signature, and
// remembers what it settled as a real one does for a while. Replies can
// be overridden per test.
type fakeFacilitator struct {
	*httptest.Server
	mu        sync.Mutex
	calls     map[string]int
	verify    func(p *x402.PaymentPayload, req x402.Requirements) (int, any)
	settle    func(p *x402.PaymentPayload, req x402.Requirements) (int, any)
	settled   map[string]bool
	delay     time.Duration
	lastReqts x402.Requirements
}

func newFakeFacilitator(t *testing.T) *fakeFacilitator {
	f := &fakeFacilitator{calls: map[string]int{}, settled: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeFacilitator) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[path]
}

func (f *fakeFacilitator) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls[r.URL.Path]++
	delay := f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	if r.URL.Path == "/supported" {
		reply(200, map[string]any{"kinds": []map[string]any{
			{"x402Version": 2, "scheme": "exact", "network": x402.Mainnet.CAIP2, "extra": map[string]any{"feePayer": feePayerAddr}},
			{"x402Version": 2, "scheme": "exact", "network": x402.Devnet.CAIP2, "extra": map[string]any{"feePayer": feePayerAddr}},
		}})
		return
	}
	var body struct {
		X402Version         int               `json:"x402Version"`
		PaymentPayload      json.RawMessage   `json:"paymentPayload"`
		PaymentRequirements x402.Requirements `json:"paymentRequirements"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.X402Version != 2 {
		reply(400, map[string]string{"error": "bad request"})
		return
	}
	p, err := x402.DecodePaymentHeader(base64.StdEncoding.EncodeToString(body.PaymentPayload))
	if err != nil {
		reply(400, map[string]string{"error": err.Error()})
		return
	}
	f.mu.Lock()
	f.lastReqts = body.PaymentRequirements
	verify, settle := f.verify, f.settle
	f.mu.Unlock()
	switch r.URL.Path {
	case "/verify":
		if verify != nil {
			reply(verify(p, body.PaymentRequirements))
			return
		}
		c, err := x402.CheckExactSVM(p, body.PaymentRequirements)
		if err != nil {
			reply(200, map[string]any{"isValid": false, "invalidReason": reasonOf(err)})
			return
		}
		reply(200, map[string]any{"isValid": true, "payer": c.Payer})
	case "/settle":
		if settle != nil {
			reply(settle(p, body.PaymentRequirements))
			return
		}
		c, err := x402.CheckExactSVM(p, body.PaymentRequirements)
		if err != nil {
			reply(200, map[string]any{"success": false, "errorReason": reasonOf(err), "transaction": "", "network": body.PaymentRequirements.Network})
			return
		}
		f.mu.Lock()
		dup := f.settled[c.Key]
		f.settled[c.Key] = true
		f.mu.Unlock()
		if dup {
			reply(200, map[string]any{"success": false, "errorReason": "duplicate_settlement", "transaction": "", "network": body.PaymentRequirements.Network})
			return
		}
		raw, _ := base64.StdEncoding.DecodeString(p.Payload.Transaction)
		tx, _ := x402.ParseTransaction(raw)
		sig := ed25519.Sign(feePayerKey, tx.MessageBytes)
		reply(200, map[string]any{"success": true, "payer": c.Payer, "transaction": x402.Base58Encode(sig),
			"network": body.PaymentRequirements.Network})
	default:
		http.NotFound(w, r)
	}
}

// paidHandler is a handler that charges through f.
func paidHandler(t *testing.T, f *fakeFacilitator, change func(*Handler)) *testHandler {
	h := &Handler{PayTo: merchantAddr, Facilitator: &FacilitatorConfig{URL: f.URL}}
	if change != nil {
		change(h)
	}
	return newTestHandler(t, h)
}

// offerOf decodes the PAYMENT-REQUIRED header of a 402.
func offerOf(t *testing.T, w *httptest.ResponseRecorder) x402.PaymentRequired {
	t.Helper()
	if w.Code != http.StatusPaymentRequired {
		t.Fatalf("status %d, want 402; body %s", w.Code, w.Body)
	}
	pr, err := x402.DecodePaymentRequired(w.Header().Get("PAYMENT-REQUIRED"))
	if err != nil {
		t.Fatalf("PAYMENT-REQUIRED: %v", err)
	}
	return *pr
}

// provisionOnly provisions h and returns the error, cleaning up as Caddy
// does after a failed provision.
func provisionOnly(t *testing.T, h *Handler) error {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	h.logger = zap.NewNop()
	err := h.Provision(ctx)
	t.Cleanup(func() {
		cancel()
		h.Cleanup()
	})
	return err
}

// memoFor is a 32-hex-digit memo like the client's random one.
func memoFor(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
