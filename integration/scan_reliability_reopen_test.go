package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// once the store file was deleted, a config reload does not reopen
// it: the reloaded config shares the pooled store of the old one, and the
// service answers 503 until the process is restarted.
func TestScanReliabilityReloadReopensDeletedStore(t *testing.T) {
	fac := startCountingFacilitator(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	dbPath := filepath.Join(t.TempDir(), "scan.db")
	cfg := func(n int) string {
		return paidConfig(admin, addr, newGoPayer("m").addr, fac.URL, dbPath, fmt.Sprintf("precheck_daily_limit %d", n))
	}
	startCaddy(t, cfg(100), nil, addr)
	s := &paidSite{base: "http://" + addr}
	for _, p := range []string{dbPath, dbPath + "-wal", dbPath + "-shm"} {
		os.Remove(p)
	}
	if st, _ := s.precheck(t, "a"); st != 503 {
		t.Fatalf("after the delete: %d, want 503", st)
	}
	req, _ := http.NewRequest("POST", "http://"+admin+"/load", strings.NewReader(cfg(99)))
	req.Header.Set("Content-Type", "text/caddyfile")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if st, b := s.precheck(t, "b"); st != 200 {
		t.Fatalf("after a reload: %d %s, want 200 on a store opened anew", st, b)
	}
}
