package integration

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// a client that hangs up while its payment settles, and retries with
// the same payment, is refused as duplicate: paid, and never given its scan.
func TestScanReliabilityHangUpDuringSettlement(t *testing.T) {
	for _, hangAfter := range []time.Duration{100 * time.Millisecond, 250 * time.Millisecond} {
		t.Run(fmt.Sprint("hang up after ", hangAfter), func(t *testing.T) {
			fac := startCountingFacilitator(t)
			fac.delay.Store(int64(300 * time.Millisecond))
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			dbPath := filepath.Join(t.TempDir(), "scan.db")
			startCaddy(t, paidConfig("", addr, newGoPayer("hangup merchant").addr, fac.URL, dbPath, ""), nil, addr)
			url := "http://" + addr + "/scan"
			offer := fetchOffer(t, url)
			h := newGoPayer("hangup payer").header(t, offer, "hangup")
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(scanText))
			req.Header.Set("PAYMENT-SIGNATURE", h)
			if _, err := (&http.Client{Timeout: hangAfter}).Do(req); err == nil {
				t.Fatal("the client did not hang up")
			}
			time.Sleep(time.Second) // the settlement finishes; delivery marks are written
			st, hdr, b, err := rawPost(url, scanText, map[string]string{"PAYMENT-SIGNATURE": h})
			if err != nil || st != 200 {
				t.Fatalf("retry after hanging up: %d %q %v %.200s; want the scan (settled: %t)", st, offerError(hdr), err, b, fac.wasSettled(headerKey(t, h)))
			}
			st, hdr, _, _ = rawPost(url, scanText, map[string]string{"PAYMENT-SIGNATURE": h})
			if st != 402 || offerError(hdr) != x402.ReasonDuplicateSettlement {
				t.Fatalf("second retry: %d, want 402 duplicate", st)
			}
		})
	}
}
