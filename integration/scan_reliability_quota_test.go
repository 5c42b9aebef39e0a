package integration

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestScanReliabilityQuotaRaces has one wallet fire many pre-checks at
// once, at one server and at two servers sharing one SQLite file: exactly
// the limit passes, every other request is a 429 naming the limit it ran
// into, refused bodies before the race cost nothing, and another wallet is
// not held back.
func TestScanReliabilityQuotaRaces(t *testing.T) {
	for _, c := range []struct {
		name     string
		servers  int
		limit    string // precheck_daily_limit
		interval string // precheck_interval
		requests int
		pass     int
		exceeded string
	}{
		{"daily limit, one server", 1, "7", "none", 60, 7, "daily_limit"},
		{"daily limit, two servers", 2, "7", "none", 60, 7, "daily_limit"},
		{"interval, one server", 1, "unlimited", "1h", 30, 1, "interval"},
		{"interval, two servers", 2, "unlimited", "1h", 30, 1, "interval"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "scan.db")
			var urls []string
			for range c.servers {
				addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
				startCaddy(t, fmt.Sprintf(`{
	admin off
}

http://%s {
	prompt_scan {
		free
		precheck_daily_limit %s
		precheck_interval %s
		store sqlite "%s"
	}
}
`, addr, c.limit, c.interval, dbPath), nil, addr)
				urls = append(urls, "http://"+addr+"/precheck")
			}
			caller := newGoPayer("quota caller " + c.name).addr
			for i := range 5 {
				bad := []byte(`{"text":5,"caller":"` + caller + `"}`)
				if st, _, b, err := rawPost(urls[i%len(urls)], bad, nil); st != 400 || err != nil {
					t.Fatalf("bad body: %d %v %s", st, err, b)
				}
			}
			body := jsonBody(t, map[string]string{"text": "hello", "caller": caller})
			var mu sync.Mutex
			got := map[string]int{}
			var wg sync.WaitGroup
			for i := range c.requests {
				wg.Go(func() {
					st, hdr, b, err := rawPost(urls[i%len(urls)], body, nil)
					key := fmt.Sprint(st)
					switch {
					case err != nil:
						key = err.Error()
					case st == 429:
						var e struct {
							Error struct {
								Limit      string `json:"limit"`
								RetryAfter int    `json:"retry_after"`
							} `json:"error"`
						}
						json.Unmarshal(b, &e)
						key = fmt.Sprintf("429 %s retry-after:%t", e.Error.Limit, e.Error.RetryAfter > 0 && hdr.Get("Retry-After") != "")
					}
					mu.Lock()
					got[key]++
					mu.Unlock()
				})
			}
			wg.Wait()
			refused := fmt.Sprintf("429 %s retry-after:true", c.exceeded)
			if got["200"] != c.pass || got[refused] != c.requests-c.pass {
				t.Fatalf("answers %v; want %d of 200 and %d of %q", got, c.pass, c.requests-c.pass, refused)
			}
			other := jsonBody(t, map[string]string{"text": "hello", "caller": newGoPayer("another quota caller").addr})
			if st, _, b, err := rawPost(urls[len(urls)-1], other, nil); st != 200 || err != nil {
				t.Fatalf("another wallet: %d %v %s", st, err, b)
			}
		})
	}
}
