package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// TestScanReliabilitySIGKILLReconciles kills the server with SIGKILL while
// eight clients pay for scans and the facilitator takes 50 ms per
// settlement, so payments are caught at every step. The facilitator goes
// on settling what it was asked to after the server died. Restarted on the
// same store, with no client retrying, reconciliation alone writes the one
// ledger row of every payment that settled; then each client retries the
// payments it had no answer for and gets each scan, and a payment whose
// scan was acknowledged is given again only if its delivery mark was not
// written yet (it was answered in the last 800 ms before the kill).
func TestScanReliabilitySIGKILLReconciles(t *testing.T) {
	fac := startCountingFacilitator(t)
	fac.delay.Store(int64(50 * time.Millisecond))
	merchant := newGoPayer("kill merchant")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dbPath := filepath.Join(t.TempDir(), "scan.db")
	cfg := fmt.Sprintf(`{
	admin off
}

http://%s {
	prompt_scan {
		pay_to %s
		facilitator %s {
			settle_timeout 1s
		}
		store sqlite "%s"
	}
}
`, addr, merchant.addr, fac.URL, dbPath)
	srv := startCaddy(t, cfg, nil, addr)
	url := "http://" + addr + "/scan"
	offer := fetchOffer(t, url)

	var (
		mu      sync.Mutex
		sent    = map[string]string{}    // payer -> header
		acked   = map[string]time.Time{} // payer -> when its scan was received
		stopped = make(chan struct{})
		wg      sync.WaitGroup
	)
	const workers = 8
	for w := range workers {
		wg.Go(func() {
			client := newScanClient()
			for i := 0; ; i++ {
				select {
				case <-stopped:
					return
				default:
				}
				p := newGoPayer(fmt.Sprintf("kill payer %d/%d", w, i))
				h := p.header(t, offer, "kill")
				mu.Lock()
				sent[p.addr] = h
				mu.Unlock()
				code, err := client.post(url, scanText, h)
				if err != nil {
					return
				}
				if code != 200 {
					t.Errorf("paid scan answered %d", code)
					return
				}
				mu.Lock()
				acked[p.addr] = time.Now()
				mu.Unlock()
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 80 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	killed := time.Now()
	srv.Kill()
	close(stopped)
	wg.Wait()
	time.Sleep(200 * time.Millisecond) // the facilitator finishes what it was sent

	rows := ledgerPayers(t, dbPath)
	inFlight := 0
	for payer, h := range sent {
		if rows[payer] > 1 {
			t.Errorf("payer %s has %d ledger rows", payer, rows[payer])
		}
		if !acked[payer].IsZero() && rows[payer] != 1 {
			t.Errorf("payer %s had its scan and has no ledger row", payer)
		}
		if acked[payer].IsZero() && fac.wasSettled(headerKey(t, h)) && rows[payer] == 0 {
			inFlight++
		}
	}
	t.Logf("at the kill: %d paid scans acknowledged, %d sent, %d settled without a row", len(acked), len(sent), inFlight)
	if len(acked) < 40 || inFlight == 0 {
		t.Fatal("the kill caught no payment between settlement and its row: the test proves little")
	}

	// Reconciliation alone: no client retries yet.
	srv2 := startCaddy(t, cfg, nil, addr)
	var missing []string
	for end := time.Now().Add(45 * time.Second); ; {
		rows = ledgerPayers(t, dbPath)
		missing = missing[:0]
		for payer, h := range sent {
			if fac.wasSettled(headerKey(t, h)) && rows[payer] != 1 {
				missing = append(missing, payer)
			}
		}
		if len(missing) == 0 || time.Now().After(end) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(missing) > 0 {
		t.Fatalf("%d settled payments still have no ledger row after reconciliation: %v", len(missing), missing)
	}

	// The clients retry what they had no answer for, then replay the rest.
	again := 0
	for payer, h := range sent {
		var st int
		var hdr http.Header
		for try := 0; try < 30; try++ {
			var err error
			st, hdr, _, err = rawPost(url, scanText, map[string]string{"PAYMENT-SIGNATURE": h})
			if err != nil {
				t.Fatal(err)
			}
			if st != 409 && st != 503 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		switch {
		case acked[payer].IsZero():
			if st != 200 {
				t.Errorf("payer %s, no answer before the kill: the retry got %d %q, want its scan", payer, st, offerError(hdr))
			}
		case st == 200:
			// Its delivery mark was not written yet: the mark waits
			// deliveryGrace (200 ms) after the answer, on a 200 ms tick.
			again++
			if ago := killed.Sub(acked[payer]); ago > 800*time.Millisecond {
				t.Errorf("payer %s, acknowledged %v before the kill, was given its scan again", payer, ago.Round(time.Millisecond))
			}
		case st != 402 || offerError(hdr) != x402.ReasonDuplicateSettlement:
			t.Errorf("payer %s, replay of an acknowledged scan: %d %q", payer, st, offerError(hdr))
		}
	}
	t.Logf("%d acknowledged scans given again after the restart (their marks were not written yet)", again)
	time.Sleep(500 * time.Millisecond)
	srv2.Stop()
	rows = ledgerPayers(t, dbPath)
	for payer := range sent {
		if rows[payer] != 1 {
			t.Errorf("payer %s: %d ledger rows in the end, want 1", payer, rows[payer])
		}
	}
}

// TestScanReliabilitySIGKILLOneOfTwo runs two servers on one SQLite file
// behind a client-side balancer, kills one with SIGKILL under load, and has
// the clients retry what the dead one left unanswered on the survivor, as a
// load balancer would: each of those payments gets its scan there, and
// every payment has exactly one ledger row.
func TestScanReliabilitySIGKILLOneOfTwo(t *testing.T) {
	fac := startCountingFacilitator(t)
	fac.delay.Store(int64(50 * time.Millisecond))
	merchant := newGoPayer("two kill merchant")
	dbPath := filepath.Join(t.TempDir(), "scan.db")
	var srvs []*server
	var urls []string
	for range 2 {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		srvs = append(srvs, startCaddy(t, paidConfig("", addr, merchant.addr, fac.URL, dbPath, ""), nil, addr))
		urls = append(urls, "http://"+addr+"/scan")
	}
	offer := fetchOffer(t, urls[0])
	var (
		mu      sync.Mutex
		sent    = map[string]string{} // payer -> header, of payments sent to the first server
		acked   = map[string]bool{}
		stopped = make(chan struct{})
		wg      sync.WaitGroup
	)
	for w := range 8 {
		wg.Go(func() {
			client := newScanClient()
			for i := 0; ; i++ {
				select {
				case <-stopped:
					return
				default:
				}
				p := newGoPayer(fmt.Sprintf("two kill payer %d/%d", w, i))
				h := p.header(t, offer, "two kill")
				to := w % 2
				mu.Lock()
				if to == 0 {
					sent[p.addr] = h
				}
				mu.Unlock()
				code, err := client.post(urls[to], scanText, h)
				if err != nil {
					if to == 0 {
						return // the first server is gone
					}
					t.Errorf("the survivor: %v", err)
					return
				}
				mu.Lock()
				if code == 200 {
					acked[p.addr] = true
				} else {
					t.Errorf("paid scan answered %d", code)
				}
				mu.Unlock()
			}
		})
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 80 || time.Now().After(end) {
			break
		}
	}
	srvs[0].Kill()
	time.Sleep(300 * time.Millisecond) // the survivor goes on serving
	close(stopped)
	wg.Wait()

	unanswered := 0
	for payer, h := range sent {
		if acked[payer] {
			continue
		}
		unanswered++
		var st int
		for try := 0; try < 30; try++ {
			var err error
			if st, _, _, err = rawPost(urls[1], scanText, map[string]string{"PAYMENT-SIGNATURE": h}); err != nil {
				t.Fatal(err)
			}
			if st != 409 && st != 503 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if st != 200 {
			t.Errorf("payer %s, unanswered by the dead server: the survivor answered %d, want its scan", payer, st)
		}
	}
	time.Sleep(500 * time.Millisecond)
	srvs[1].Stop()
	rows := ledgerPayers(t, dbPath)
	for payer := range acked {
		if rows[payer] != 1 {
			t.Errorf("payer %s had its scan and has %d ledger rows", payer, rows[payer])
		}
	}
	for payer := range sent {
		if rows[payer] != 1 {
			t.Errorf("payer %s: %d ledger rows, want 1", payer, rows[payer])
		}
	}
	t.Logf("%d scans acknowledged, %d left unanswered by the dead server and retried on the survivor", len(acked), unanswered)
	if unanswered == 0 {
		t.Fatal("the kill left no payment unanswered: the test proves little")
	}
}

// TestScanReliabilityGracefulStop stops the server (SIGINT) while paid
// scans wait on their settlement: the server finishes each before it
// exits, so every one gets its scan and its row.
func TestScanReliabilityGracefulStop(t *testing.T) {
	for _, delay := range []time.Duration{300 * time.Millisecond, 1500 * time.Millisecond} {
		t.Run(fmt.Sprint("settling for ", delay), func(t *testing.T) {
			fac := startCountingFacilitator(t)
			fac.delay.Store(int64(delay))
			dbPath := filepath.Join(t.TempDir(), "scan.db")
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			srv := startCaddy(t, paidConfig("", addr, newGoPayer("stop merchant").addr, fac.URL, dbPath, ""), nil, addr)
			url := "http://" + addr + "/scan"
			offer := fetchOffer(t, url)
			var mu sync.Mutex
			got := map[string]int{}
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					h := newGoPayer(fmt.Sprint("stop payer ", w)).header(t, offer, "stop")
					st, _, _, err := rawPost(url, scanText, map[string]string{"PAYMENT-SIGNATURE": h})
					mu.Lock()
					got[fmt.Sprint(st, " ", err)]++
					mu.Unlock()
				})
			}
			time.Sleep(delay / 3)
			srv.cmd.Process.Signal(os.Interrupt)
			wg.Wait()
			if !srv.exited(10 * time.Second) {
				t.Fatal("the server did not stop")
			}
			if got["200 <nil>"] != 8 {
				t.Fatalf("answers %v, want 8 scans", got)
			}
			if rows := len(readLedger(t, dbPath)); rows != 8 || fac.settledKeys() != 8 {
				t.Fatalf("%d ledger rows, %d settled; want 8 and 8", rows, fac.settledKeys())
			}
		})
	}
}
