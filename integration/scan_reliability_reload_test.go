package integration

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// TestScanReliabilityReloadUnderLoad reloads a changed config through the
// admin API (POST /load) six times while paid scans, whose settlement
// takes 200 ms, and pre-checks run. Nothing panics; each client retries a
// payment whose answer it did not get with the same header; in the end
// every payment that settled has exactly one ledger row and its scan was
// given, and none is refused as used without its scan. The reloads change
// the pre-check limit, or take the service out of the config and put it
// back (its store is closed and opened again meanwhile).
func TestScanReliabilityReloadUnderLoad(t *testing.T) {
	for _, removed := range []bool{false, true} {
		name := "limit changed"
		if removed {
			name = "service removed and back"
		}
		t.Run(name, func(t *testing.T) { reloadUnderLoad(t, removed) })
	}
}

func reloadUnderLoad(t *testing.T, removed bool) {
	fac := startCountingFacilitator(t)
	fac.delay.Store(int64(200 * time.Millisecond))
	merchant := newGoPayer("reload merchant")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dbPath := filepath.Join(t.TempDir(), "scan.db")
	config := func(limit int) string {
		return paidConfig(admin, addr, merchant.addr, fac.URL, dbPath,
			fmt.Sprintf("precheck_daily_limit %d\n\t\tprecheck_interval none\n\t\tprecheck_address_daily_limit unlimited", limit))
	}
	reloaded := func(i int) string {
		if removed && i%2 == 0 {
			return fmt.Sprintf("{\n\tadmin %s\n}\n\nhttp://%s {\n\trespond \"away\" 404\n}\n", admin, addr)
		}
		return config(1000 - i - 1)
	}
	srv := startCaddy(t, config(1000), nil, addr)
	url := "http://" + addr + "/scan"
	offer := fetchOffer(t, url)

	var (
		mu        sync.Mutex
		headers   = map[string]string{} // payer -> header
		given     = map[string]int{}    // payer -> 200s
		bad       []string
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		prechecks atomic.Int64
	)
	for w := range 4 {
		wg.Go(func() {
			client := &http.Client{Timeout: 30 * time.Second}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := newGoPayer(fmt.Sprintf("reload payer %d/%d", w, i))
				h := p.header(t, offer, "reload")
				mu.Lock()
				headers[p.addr] = h
				mu.Unlock()
				for try := 0; try < 60; try++ {
					st, hdr, err := postWith(client, url, scanText, h)
					if err == nil && st == 200 {
						mu.Lock()
						given[p.addr]++
						mu.Unlock()
						break
					}
					if err == nil && st == 402 {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("payer %s: 402 %q before its scan", p.addr, offerError(hdr)))
						mu.Unlock()
						break
					}
					if err == nil && st != 409 && st != 500 && st != 503 && !(removed && st == 404) {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("payer %s: %d", p.addr, st))
						mu.Unlock()
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	wg.Go(func() {
		client := &http.Client{Timeout: 30 * time.Second}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := jsonBody(t, map[string]string{"text": "hello", "caller": newGoPayer(fmt.Sprint("reload caller ", i)).addr}) // each within its day's limit
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/precheck", strings.NewReader(string(body)))
			resp, err := client.Do(req)
			if err != nil {
				continue // a connection the old server closed
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			prechecks.Add(1)
			if resp.StatusCode != 200 && resp.StatusCode != 503 && !(removed && resp.StatusCode == 404) {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("pre-check during reloads: %d", resp.StatusCode))
				mu.Unlock()
			}
		}
	})

	for i := range 6 {
		time.Sleep(400 * time.Millisecond)
		req, _ := http.NewRequest(http.MethodPost, "http://"+admin+"/load", strings.NewReader(reloaded(i)))
		req.Header.Set("Content-Type", "text/caddyfile")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("reload %d: %d %s", i, resp.StatusCode, b)
		}
	}
	time.Sleep(400 * time.Millisecond)
	close(stop)
	wg.Wait()
	time.Sleep(500 * time.Millisecond) // delivery marks
	srv.Stop()

	for _, b := range bad {
		t.Error(b)
	}
	rows := ledgerPayers(t, dbPath)
	for payer, h := range headers {
		settled := fac.wasSettled(headerKey(t, h))
		if settled != (rows[payer] == 1) || rows[payer] > 1 || settled != (given[payer] == 1) {
			t.Errorf("payer %s: settled %t, %d ledger rows, scan given %d times", payer, settled, rows[payer], given[payer])
		}
	}
	log := srv.Log()
	if l := logLines(log, "panic"); len(l) > 0 {
		t.Fatalf("panics in the log: %v", l)
	}
	if n := len(logLines(log, `"msg":"load complete"`)); n < 6 {
		t.Fatalf("%d reloads in the log, want 6", n)
	}
	t.Logf("%d paid scans and %d pre-checks across 6 reloads", len(rows), prechecks.Load())
	if len(rows) < 20 {
		t.Fatalf("only %d paid scans across the reloads: the test proves little", len(rows))
	}
}

// postWith posts a paid scan with client.
func postWith(client *http.Client, url string, body []byte, payment string) (int, http.Header, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set(x402.HeaderPaymentSignature, payment)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, resp.Header, nil
}
