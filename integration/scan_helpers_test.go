package integration

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/promptwall/promptwall/x402"
	"github.com/promptwall/promptwall/x402/x402test"
)

// localnet is the local chain and facilitator of integration/x402node
// (x402test runs it), with the helpers these tests use.
type localnet struct{ *x402test.Localnet }

func startLocalnet(t *testing.T) *localnet { return &localnet{x402test.StartLocalnet(t)} }

// payResult is pay.mjs's one JSON line, decoded.
type payResult struct {
	Status           int
	Body             string
	PaymentResponse  *x402.SettleResponse
	PaymentSignature string
	Error            string
}

// pay pays for one POST of body to url with the real @x402/fetch client.
func (ln *localnet) pay(t *testing.T, url, secret string, body any) payResult {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	r := ln.Pay(t, url, secret, string(b))
	out := payResult{Status: r.Status, Body: r.Body}
	if len(r.PaymentResponse) > 0 && string(r.PaymentResponse) != "null" {
		out.PaymentResponse = new(x402.SettleResponse)
		if err := json.Unmarshal(r.PaymentResponse, out.PaymentResponse); err != nil {
			t.Fatalf("pay.mjs paymentResponse %s: %v", r.PaymentResponse, err)
		}
	}
	if r.PaymentSignature != nil {
		out.PaymentSignature = *r.PaymentSignature
	}
	if r.Error != nil {
		out.Error = *r.Error
	}
	return out
}

// balance is a token account's balance in atomic units, over JSON-RPC.
func (ln *localnet) balance(t *testing.T, account string) uint64 {
	return ln.TokenBalance(t, account)
}

// facilitatorSwitch is a reverse proxy in front of a facilitator whose
// paths can be cut off: a cut path's connection is dropped without an
// answer, as a crashed or unreachable facilitator would.
type facilitatorSwitch struct {
	URL  string
	down sync.Map // path -> bool
}

func newFacilitatorSwitch(t *testing.T, target string) *facilitatorSwitch {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	fs := &facilitatorSwitch{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, ok := fs.down.Load(r.URL.Path); ok && v.(bool) {
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		proxy.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	fs.URL = "http://" + l.Addr().String()
	return fs
}

func (fs *facilitatorSwitch) set(path string, down bool) { fs.down.Store(path, down) }

// scanPost posts body to url with optional headers and returns status,
// headers and body.
func scanPost(t *testing.T, url string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{Timeout: 90 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func jsonBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ledgerRow is a row of the ledger table as an operator reads it.
type ledgerRow struct {
	Payer, Time, Verdict, Counts string
	Price                        int64
}

// readLedger opens the SQLite file the server wrote, with the driver alone.
func readLedger(t *testing.T, path string) []ledgerRow {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no store at %s: %v", path, err)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT payer, time, price, verdict, category_counts FROM ledger ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []ledgerRow
	for rows.Next() {
		var r ledgerRow
		if err := rows.Scan(&r.Payer, &r.Time, &r.Price, &r.Verdict, &r.Counts); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// filesHolding lists the files under dir whose bytes contain needle.
func filesHolding(t *testing.T, dir, needle string) (hits []string, scanned int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		scanned++
		if bytes.Contains(b, []byte(needle)) {
			hits = append(hits, p)
		}
		return nil
	})
	return hits, scanned
}

// --- Go-built payments, for tests that need many of them fast -----------

// goPayer signs payments as @x402/svm does: a v0 transaction
// [SetComputeUnitLimit, SetComputeUnitPrice, TransferChecked, Memo], fee
// payer slot empty, the payer's signature over the message.
type goPayer struct {
	key  ed25519.PrivateKey
	addr string
}

func newGoPayer(seed string) goPayer {
	s := sha256.Sum256([]byte(seed))
	k := ed25519.NewKeyFromSeed(s[:])
	return goPayer{k, x402.Base58Encode(k.Public().(ed25519.PublicKey))}
}

// header builds the PAYMENT-SIGNATURE header paying offer's first
// requirements, made unique by memo.
func (p goPayer) header(t testing.TB, offer *x402.PaymentRequired, memo string) string {
	req := offer.Accepts[0]
	var amount uint64
	fmt.Sscan(req.Amount, &amount)
	mint, _ := x402.ParsePublicKey(req.Asset)
	payTo, _ := x402.ParsePublicKey(req.PayTo)
	feePayer, _ := x402.ParsePublicKey(req.FeePayer())
	var authority x402.PublicKey
	copy(authority[:], p.key.Public().(ed25519.PublicKey))
	source, err := x402.AssociatedTokenAddress(authority, x402.TokenProgram, mint)
	if err != nil {
		t.Fatal(err)
	}
	dest, err := x402.AssociatedTokenAddress(payTo, x402.TokenProgram, mint)
	if err != nil {
		t.Fatal(err)
	}
	keys := []x402.PublicKey{feePayer, authority, source, dest, x402.ComputeBudgetProgram, x402.TokenProgram, mint, x402.MemoProgram}
	m := []byte{0x80, 2, 1, 4, byte(len(keys))}
	for _, k := range keys {
		m = append(m, k[:]...)
	}
	blockhash := sha256.Sum256([]byte("blockhash"))
	m = append(m, blockhash[:]...)
	type ix struct {
		prog     byte
		accounts []byte
		data     []byte
	}
	ixs := []ix{
		{4, nil, binary.LittleEndian.AppendUint32([]byte{2}, 20000)},
		{4, nil, binary.LittleEndian.AppendUint64([]byte{3}, 1)},
		{5, []byte{2, 6, 3, 1}, append(binary.LittleEndian.AppendUint64([]byte{12}, amount), 6)},
		{7, nil, []byte(memo)},
	}
	m = append(m, byte(len(ixs)))
	for _, x := range ixs {
		m = append(m, x.prog, byte(len(x.accounts)))
		m = append(m, x.accounts...)
		m = append(m, byte(len(x.data)))
		m = append(m, x.data...)
	}
	m = append(m, 0)
	tx := append([]byte{2}, make([]byte, 64)...)
	tx = append(tx, ed25519.Sign(p.key, m)...)
	tx = append(tx, m...)
	b, _ := json.Marshal(map[string]any{
		"x402Version": 2, "resource": offer.Resource, "accepted": req,
		"payload": map[string]string{"transaction": base64.StdEncoding.EncodeToString(tx)},
	})
	return base64.StdEncoding.EncodeToString(b)
}

// goFacilitator answers /supported, and /verify and /settle with success
// for every payment that passes the real local checks, co-signing as fee
// payer. It stands in for the chain where a test needs hundreds of
// payments in seconds.
type goFacilitator struct {
	URL      string
	feePayer ed25519.PrivateKey
	FeeAddr  string
	settled  atomic.Int64
}

func startGoFacilitator(t *testing.T) *goFacilitator {
	t.Helper()
	fp := newGoPayer("go facilitator fee payer")
	f := &goFacilitator{feePayer: fp.key, FeeAddr: fp.addr}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(f.serve)}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	f.URL = "http://" + l.Addr().String()
	return f
}

func (f *goFacilitator) serve(w http.ResponseWriter, r *http.Request) {
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	if r.URL.Path == "/supported" {
		reply(map[string]any{"kinds": []any{map[string]any{"x402Version": 2, "scheme": "exact",
			"network": x402.Mainnet.CAIP2, "extra": map[string]any{"feePayer": f.FeeAddr}}}})
		return
	}
	var body struct {
		PaymentPayload      json.RawMessage   `json:"paymentPayload"`
		PaymentRequirements x402.Requirements `json:"paymentRequirements"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	p, err := x402.DecodePaymentHeader(base64.StdEncoding.EncodeToString(body.PaymentPayload))
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	c, err := x402.CheckExactSVM(p, body.PaymentRequirements)
	switch r.URL.Path {
	case "/verify":
		if err != nil {
			reply(map[string]any{"isValid": false, "invalidReason": err.Error()})
			return
		}
		reply(map[string]any{"isValid": true, "payer": c.Payer})
	case "/settle":
		if err != nil {
			reply(map[string]any{"success": false, "errorReason": err.Error(), "transaction": "", "network": x402.Mainnet.CAIP2})
			return
		}
		raw, _ := base64.StdEncoding.DecodeString(p.Payload.Transaction)
		tx, _ := x402.ParseTransaction(raw)
		f.settled.Add(1)
		reply(map[string]any{"success": true, "payer": c.Payer, "network": x402.Mainnet.CAIP2,
			"transaction": x402.Base58Encode(ed25519.Sign(f.feePayer, tx.MessageBytes))})
	default:
		http.NotFound(w, r)
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// scanClient posts paid scans without failing the test on transport
// errors: the crash test expects them once the server is killed.
type scanClient struct{ c *http.Client }

func newScanClient() *scanClient { return &scanClient{&http.Client{Timeout: 30 * time.Second}} }

// post returns the status once the whole answer was received: only then
// does a 200 count as acknowledged.
func (s *scanClient) post(url string, body []byte, payment string) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("PAYMENT-SIGNATURE", payment)
	resp, err := s.c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode == http.StatusOK && !bytes.Contains(b, []byte(`"verdict"`)) {
		return 0, fmt.Errorf("200 without a result: %s", b)
	}
	return resp.StatusCode, nil
}
