package integration

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/promptwall/promptwall/x402"
)

// TestScanReliabilityFacilitatorAnswers has the facilitator answer /settle
// badly once (an error status, a body that is not JSON or too big, a
// success without a transaction, a refusal), then behave, while the client
// retries with the same payment. No bad answer gives a result; afterwards
// the payment either gets its scan once with one ledger row, or, when the
// facilitator refused it after it may have been sent, stays used with no
// row. Nothing is settled without its row.
func TestScanReliabilityFacilitatorAnswers(t *testing.T) {
	fac := startCountingFacilitator(t)
	var bad atomic.Pointer[func(w http.ResponseWriter)]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := bad.Load(); f != nil && r.URL.Path == "/settle" {
			(*f)(w)
			return
		}
		fac.serve(w, r)
	}))
	t.Cleanup(front.Close)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dbPath := filepath.Join(t.TempDir(), "scan.db")
	srv := startCaddy(t, paidConfig("", addr, newGoPayer("facilitator merchant").addr, front.URL, dbPath, ""), nil, addr)
	url := "http://" + addr + "/scan"
	offer := fetchOffer(t, url)
	reply := func(status int, body string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(body))
		}
	}
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter)
		first  int
		final  int // after the facilitator behaves again
	}{
		{"HTTP 500", reply(500, `{"error":"boom"}`), 503, 200},
		{"HTTP 502 without a body", reply(502, ``), 503, 200},
		{"not JSON", reply(200, `<html>oops</html>`), 503, 200},
		{"8 MiB of JSON", reply(200, `{"success":true,"x":"`+strings.Repeat("a", 8<<20)+`"}`), 503, 200},
		{"success without a transaction", reply(200, `{"success":true,"network":"`+x402.Mainnet.CAIP2+`"}`), 503, 200},
		{"pending", reply(200, `{"success":false,"errorReason":"settlement_pending"}`), 503, 200},
		{"refused before sending", reply(200, `{"success":false,"errorReason":"invalid_exact_svm_payload_amount_mismatch"}`), 402, 200},
		{"refused after it may have been sent", reply(200, `{"success":false,"errorReason":"invalid_exact_svm_transaction_failed"}`), 402, 402},
		{"an unknown refusal", reply(200, `{"success":false,"errorReason":"something_new"}`), 402, 402},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newGoPayer(fmt.Sprint("facilitator payer ", i))
			h := p.header(t, offer, "fac")
			bad.Store(&c.answer)
			st, hdr, b, err := rawPost(url, scanText, map[string]string{"PAYMENT-SIGNATURE": h})
			bad.Store(nil)
			if err != nil || st != c.first || givesResult(b) {
				t.Fatalf("bad answer: %d %v %.200s, want %d and no result", st, err, b, c.first)
			}
			if st == 402 && hdr.Get("PAYMENT-RESPONSE") == "" {
				t.Error("a settlement failure without PAYMENT-RESPONSE")
			}
			for try := 0; try < 20; try++ {
				if st, hdr, b, err = rawPost(url, scanText, map[string]string{"PAYMENT-SIGNATURE": h}); err != nil || (st != 409 && st != 503) {
					break
				}
			}
			if err != nil || st != c.final {
				t.Fatalf("retry: %d %q %v %.200s, want %d", st, offerError(hdr), err, b, c.final)
			}
			if c.final == 402 && offerError(hdr) != x402.ReasonDuplicateSettlement {
				t.Fatalf("retry: %q, want duplicate_settlement", offerError(hdr))
			}
		})
	}
	srv.Stop()
	rows := ledgerPayers(t, dbPath)
	for i, c := range cases {
		p := newGoPayer(fmt.Sprint("facilitator payer ", i))
		want := 0
		if c.final == 200 {
			want = 1
		}
		settled := fac.wasSettled(headerKey(t, p.header(t, offer, "fac")))
		if rows[p.addr] != want || settled != (want == 1) {
			t.Errorf("%s: %d ledger rows, settled %t; want %d", c.name, rows[p.addr], settled, want)
		}
	}
}
