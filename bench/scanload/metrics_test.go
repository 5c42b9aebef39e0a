package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// exposition is two scrapes of a server's /metrics: the first before a
// round, the second after it.
var exposition = [2]string{`# HELP promptwall_scan_store_seconds Time of each store operation.
# TYPE promptwall_scan_store_seconds histogram
promptwall_scan_store_seconds_bucket{op="reserve",le="0.001"} 1
promptwall_scan_store_seconds_bucket{op="reserve",le="0.002"} 2
promptwall_scan_store_seconds_bucket{op="reserve",le="0.005"} 2
promptwall_scan_store_seconds_bucket{op="reserve",le="+Inf"} 2
promptwall_scan_store_seconds_sum{op="reserve"} 0.002
promptwall_scan_store_seconds_count{op="reserve"} 2
promptwall_scan_request_store_seconds_bucket{endpoint="scan",le="0.001"} 0
promptwall_scan_request_store_seconds_bucket{endpoint="scan",le="0.002"} 0
promptwall_scan_request_store_seconds_bucket{endpoint="scan",le="0.005"} 0
promptwall_scan_request_store_seconds_bucket{endpoint="scan",le="+Inf"} 0
promptwall_scan_request_store_seconds_sum{endpoint="scan"} 0
promptwall_scan_request_store_seconds_count{endpoint="scan"} 0
promptwall_scan_requests_total{code="200",endpoint="scan"} 2
`, `promptwall_scan_store_seconds_bucket{op="reserve",le="0.001"} 1
promptwall_scan_store_seconds_bucket{op="reserve",le="0.002"} 52
promptwall_scan_store_seconds_bucket{op="reserve",le="0.005"} 101
promptwall_scan_store_seconds_bucket{op="reserve",le="+Inf"} 102
promptwall_scan_store_seconds_sum{op="reserve"} 0.3
promptwall_scan_store_seconds_count{op="reserve"} 102
promptwall_scan_store_seconds_bucket{op="settle",le="0.001"} 100
promptwall_scan_store_seconds_bucket{op="settle",le="0.002"} 100
promptwall_scan_store_seconds_bucket{op="settle",le="0.005"} 100
promptwall_scan_store_seconds_bucket{op="settle",le="+Inf"} 100
promptwall_scan_store_seconds_sum{op="settle"} 0.05
promptwall_scan_store_seconds_count{op="settle"} 100
promptwall_scan_request_store_seconds_bucket{endpoint="scan",le="0.001"} 0
promptwall_scan_request_store_seconds_bucket{endpoint="scan",le="0.002"} 50
promptwall_scan_request_store_seconds_bucket{endpoint="scan",le="0.005"} 100
promptwall_scan_request_store_seconds_bucket{endpoint="scan",le="+Inf"} 100
promptwall_scan_request_store_seconds_sum{endpoint="scan"} 0.35
promptwall_scan_request_store_seconds_count{endpoint="scan"} 100
`}

// A round's store times are the second scrape less the first, over all
// servers, and their quantiles interpolate within a bucket.
func TestScrapeStore(t *testing.T) {
	scrape := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(exposition[scrape]))
	}))
	defer srv.Close()
	g := &group{name: "g", servers: []*target{{name: "a", admin: srv.URL}}}
	before, err := scrapeStore(g)
	if err != nil {
		t.Fatal(err)
	}
	scrape = 1
	after, err := scrapeStore(g)
	if err != nil {
		t.Fatal(err)
	}
	d := after.minus(before)
	reserve := d.ops["reserve"]
	if reserve.count != 100 || reserve.le[0.002] != 50 || reserve.le[0.005] != 99 {
		t.Fatalf("reserve in the round: %+v", reserve)
	}
	all := d.allOps()
	for _, tc := range []struct {
		name string
		h    *hist
		q    float64
		want time.Duration
	}{
		{"reserve p50: the top of (1ms, 2ms]", reserve, 0.5, 2 * time.Millisecond},
		{"reserve p99: the top of (2ms, 5ms]", reserve, 0.99, 5 * time.Millisecond},
		{"reserve p25: half way in (1ms, 2ms]", reserve, 0.25, 1500 * time.Microsecond},
		{"all ops p50: in the first bucket", all, 0.5, 1 * time.Millisecond},
		{"all ops p99.9: beyond the last finite bound", all, 0.999, 5 * time.Millisecond},
		{"requests p50", d.requests["scan"], 0.5, 2 * time.Millisecond},
		{"requests p75: half way in (2ms, 5ms]", d.requests["scan"], 0.75, 3500 * time.Microsecond},
	} {
		if got := tc.h.quantile(tc.q); (got - tc.want).Abs() > time.Microsecond {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if u := all.under(0.005); u != 199.0/200 {
		t.Errorf("share under 5ms: %g, want %g", u, 199.0/200)
	}
	if q := newHist().quantile(0.5); q != -1 {
		t.Errorf("quantile of nothing: %v, want -1", q)
	}
}

// A server without an admin API gives no store times, and one whose
// metrics lack the histogram is an error, not a table of zeros.
func TestScrapeStoreMissing(t *testing.T) {
	if st, err := scrapeStore(&group{servers: []*target{{name: "a"}}}); st != nil || err != nil {
		t.Errorf("without admin: %v, %v; want nil, nil", st, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("go_goroutines 7\n"))
	}))
	defer srv.Close()
	if _, err := scrapeStore(&group{servers: []*target{{name: "a", admin: srv.URL}}}); err == nil {
		t.Error("metrics without the store histogram: no error")
	}
}
