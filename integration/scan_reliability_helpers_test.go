package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// The reliability suite (scan_reliability_*_test.go) drives the real
// server binary with hostile input, load and faults. Payments are real
// signed transactions built in Go and settled by a Go facilitator that
// counts, per transaction, what it settled: the suite's invariants are
// stated against that count and the ledger the server wrote.

// countingFacilitator is a goFacilitator that remembers which payments it
// settled (by the payment key, the hex sha256 of the transaction message)
// and can be slowed down, to widen the windows a fault needs.
type countingFacilitator struct {
	*goFacilitator
	URL      string
	delay    atomic.Int64 // added before each /settle answer, in ns
	verifies atomic.Int64
	received lockedBuffer // every request body
	mu       sync.Mutex
	settled  map[string]int // payment key -> successful /settle calls
}

func startCountingFacilitator(t *testing.T) *countingFacilitator {
	t.Helper()
	f := &countingFacilitator{goFacilitator: startGoFacilitator(t), settled: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *countingFacilitator) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.received.Write(body)
	if r.URL.Path == "/verify" {
		f.verifies.Add(1)
	}
	if r.URL.Path != "/settle" {
		f.goFacilitator.serve(w, r)
		return
	}
	time.Sleep(time.Duration(f.delay.Load()))
	rec := httptest.NewRecorder()
	f.goFacilitator.serve(rec, r)
	var sr struct {
		Success bool `json:"success"`
	}
	if json.Unmarshal(rec.Body.Bytes(), &sr) == nil && sr.Success {
		var req struct {
			PaymentPayload struct {
				Payload struct {
					Transaction string `json:"transaction"`
				} `json:"payload"`
			} `json:"paymentPayload"`
		}
		json.Unmarshal(body, &req)
		if k := txKey(req.PaymentPayload.Payload.Transaction); k != "" {
			f.mu.Lock()
			f.settled[k]++
			f.mu.Unlock()
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// settledKeys is how many distinct payments settled.
func (f *countingFacilitator) settledKeys() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.settled)
}

func (f *countingFacilitator) wasSettled(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.settled[key] > 0
}

// settles is how many /settle calls succeeded for the payment key.
func (f *countingFacilitator) settles(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.settled[key]
}

// settleAgain asks the facilitator itself to settle a used payment header
// once more and reports whether it said success: a facilitator that does
// is what a server must not rely on to refuse a replay.
func (f *countingFacilitator) settleAgain(t testing.TB, h string) bool {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Accepted json.RawMessage `json:"accepted"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]json.RawMessage{"paymentPayload": raw, "paymentRequirements": p.Accepted})
	resp, err := http.Post(f.URL+"/settle", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sr struct {
		Success bool `json:"success"`
	}
	return json.NewDecoder(resp.Body).Decode(&sr) == nil && sr.Success
}

// txKey is the payment key of a base64 wire transaction, "" if unreadable.
func txKey(b64 string) string {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return ""
	}
	tx, err := x402.ParseTransaction(raw)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(tx.MessageBytes)
	return hex.EncodeToString(sum[:])
}

// headerKey is the payment key of a PAYMENT-SIGNATURE header.
func headerKey(t testing.TB, h string) string {
	t.Helper()
	p, err := x402.DecodePaymentHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	return txKey(p.Payload.Transaction)
}

// paidConfig is a Caddyfile of one paid prompt_scan site on addr, its
// store the SQLite file dbPath.
func paidConfig(admin, addr, payTo, facilitator, dbPath, extra string) string {
	return paidConfigStore(admin, addr, payTo, facilitator, fmt.Sprintf(`store sqlite "%s"`, dbPath), extra)
}

// paidConfigStore is paidConfig with the store line given.
func paidConfigStore(admin, addr, payTo, facilitator, storeLine, extra string) string {
	if admin == "" {
		admin = "admin off"
	} else {
		admin = "admin " + admin
	}
	return fmt.Sprintf(`{
	%s
}

http://%s {
	prompt_scan {
		pay_to %s
		facilitator %s {
			settle_timeout 5s
		}
		%s
		%s
	}
}
`, admin, addr, payTo, facilitator, storeLine, extra)
}

// paidStore is the store the servers of a test share: the Caddyfile line
// naming it, and its ledger as rows per payer.
type paidStore struct {
	line   string
	payers func(t *testing.T) map[string]int
}

// sqliteStore is a fresh SQLite file, which servers on one machine share.
func sqliteStore(t *testing.T) paidStore {
	dbPath := filepath.Join(t.TempDir(), "scan.db")
	return paidStore{fmt.Sprintf(`store sqlite "%s"`, dbPath), func(t *testing.T) map[string]int { return ledgerPayers(t, dbPath) }}
}

// fetchOffer asks url for its 402 and decodes the offer.
func fetchOffer(t *testing.T, url string) *x402.PaymentRequired {
	t.Helper()
	status, hdr, b := scanPost(t, url, []byte(`{"text":"offer"}`), nil)
	offer, err := x402.DecodePaymentRequired(hdr.Get("PAYMENT-REQUIRED"))
	if status != 402 || err != nil {
		t.Fatalf("offer from %s: %d %v %s", url, status, err, b)
	}
	return offer
}

// rawPost sends one request and never fails the test on a transport error.
func rawPost(url string, body []byte, hdr map[string]string) (int, http.Header, []byte, error) {
	return rawPostHdr(url, body, hdr)
}

// rawPostHdr is rawPost where an empty header value removes the header.
func rawPostHdr(url string, body []byte, hdr map[string]string) (int, http.Header, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// errorCode is the code of an {"error": {"code": ...}} body, or "".
func errorCode(b []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(b, &e)
	return e.Error.Code
}

// givesResult reports whether an answer body is a scan result: an object
// with a verdict at its top. (A 402 names the field too, in the bazaar
// description of the result it offers.)
func givesResult(b []byte) bool {
	var r struct {
		Verdict *string `json:"verdict"`
	}
	return json.Unmarshal(b, &r) == nil && r.Verdict != nil
}

// offerError is the error of the PAYMENT-REQUIRED header, or "".
func offerError(h http.Header) string {
	pr, err := x402.DecodePaymentRequired(h.Get("PAYMENT-REQUIRED"))
	if err != nil {
		return ""
	}
	return pr.Error
}

// startCaddyIn runs caddy with the Caddyfile in a fresh directory, its
// command line prefixed by prefix (for example unshare and mount), and does
// not wait for it to listen.
func startCaddyIn(t *testing.T, caddyfile string, prefix ...string) *server {
	t.Helper()
	return launchCaddy(t, caddyfile, nil, prefix)
}

// exited waits up to d for the process to end and reports whether it did.
func (s *server) exited(d time.Duration) bool {
	select {
	case <-s.done:
		return true
	case <-time.After(d):
		return false
	}
}

// inTmpfs is a command prefix that runs the rest in a private mount
// namespace with a tmpfs of size (e.g. "2m") at dir, mounted with opts
// (e.g. "ro"), so that a disk can be full or read-only for the server alone.
func inTmpfs(dir, size, opts string) []string {
	o := "size=" + size
	if opts != "" {
		o += "," + opts
	}
	return []string{"unshare", "-rm", "sh", "-c",
		`mount -t tmpfs -o "$0" tmpfs "$1" && shift && exec "$@"`, o, dir}
}

// readOnlyBind is a command prefix that runs the rest in a private mount
// namespace where dir is bound read-only onto itself.
func readOnlyBind(dir string) []string {
	return []string{"unshare", "-rm", "sh", "-c",
		`mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"`, dir}
}

// logLines are the lines of log that hold all of subs.
func logLines(log string, subs ...string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		all := true
		for _, s := range subs {
			if !strings.Contains(l, s) {
				all = false
				break
			}
		}
		if all && l != "" {
			out = append(out, l)
		}
	}
	return out
}

// ledgerPayers counts ledger rows per payer.
func ledgerPayers(t *testing.T, dbPath string) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, r := range readLedger(t, dbPath) {
		m[r.Payer]++
	}
	return m
}
