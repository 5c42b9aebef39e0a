package scanservice

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/promptwall/promptwall/caddymodule/stores"
	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/pgtest"
)

// recordingStore is a third party's backend, registered the way one would
// be: a SQLite file it counts the openings of.
type recordingStore struct {
	File string `json:"file,omitempty"`
}

var recordingOpens atomic.Int32

func init() { caddy.RegisterModule(recordingStore{}) }

func (recordingStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: stores.Namespace + ".recording", New: func() caddy.Module { return new(recordingStore) }}
}

func (r *recordingStore) StoreKey() string { return "recording:" + r.File }

func (r *recordingStore) OpenStore(ctx context.Context) (store.Store, error) {
	recordingOpens.Add(1)
	return store.OpenSQLite(ctx, r.File)
}

func (r *recordingStore) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	if !d.AllArgs(&r.File) {
		return d.ArgErr()
	}
	return nil
}

// parsed is a free handler from a Caddyfile prompt_scan block.
func parsed(t *testing.T, block string) *Handler {
	t.Helper()
	h := &Handler{}
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(block)); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestThirdPartyStore: a driver registered in promptwall.stores is named in
// the Caddyfile like the built-in ones, and is what the service counts in;
// two handlers on one of its databases share one open store.
func TestThirdPartyStore(t *testing.T) {
	file := filepath.Join(t.TempDir(), "third.db")
	block := fmt.Sprintf("prompt_scan {\n free\n precheck_interval none\n store recording %q\n}", file)
	if got := string(parsed(t, block).StoreRaw); got != fmt.Sprintf(`{"driver":"recording","file":%q}`, file) {
		t.Fatalf("store JSON %s", got)
	}
	before := recordingOpens.Load()
	a, b := newTestHandler(t, parsed(t, block)), newTestHandler(t, parsed(t, block))
	if n := recordingOpens.Load() - before; n != 1 {
		t.Fatalf("two handlers on one database opened it %d times, want once", n)
	}
	wallet := mintedWallet(1)
	for _, th := range []*testHandler{a, b, a} {
		if w := th.precheckFrom(wallet, "203.0.113.9", ""); w.Code != 200 {
			t.Fatalf("pre-check %d: %s", w.Code, w.Body)
		}
	}
	st, err := store.OpenSQLite(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, err := st.Precheck(context.Background(), wallet, a.clock.Now(), 0, 0)
	if err != nil || q.Used != 4 {
		t.Fatalf("the driver's file counts %d pre-checks (%v), want the 3 served + this one", q.Used, err)
	}
}

// TestPostgresStore: `store postgres {env.X}` reads the DSN from the
// environment when the config loads; two configs on one database share
// the quota, as two servers do.
func TestPostgresStore(t *testing.T) {
	t.Setenv("PROMPTWALL_TEST_DSN", pgtest.Shared(t).Database(t))
	block := "prompt_scan {\n free\n precheck_interval none\n precheck_daily_limit 3\n store postgres {env.PROMPTWALL_TEST_DSN}\n}"
	h := parsed(t, block)
	if !strings.Contains(string(h.StoreRaw), `"dsn":"{env.PROMPTWALL_TEST_DSN}"`) {
		t.Fatalf("the JSON should keep the placeholder, not the DSN: %s", h.StoreRaw)
	}
	a, b := newTestHandler(t, h), newTestHandler(t, parsed(t, block))
	wallet := mintedWallet(2)
	var codes []int
	for _, th := range []*testHandler{a, b, a, b} {
		codes = append(codes, th.precheckFrom(wallet, "203.0.113.9", "").Code)
	}
	if fmt.Sprint(codes) != "[200 200 200 429]" {
		t.Fatalf("pre-checks over two handlers on one database: %v, want 3 allowed then refused", codes)
	}
	q, err := a.store.Precheck(context.Background(), wallet, a.clock.Now().Add(time.Minute), 3, 0)
	if err != nil || q.Allowed || q.Used != 3 {
		t.Fatalf("the database counts %+v (%v), want 3 used", q, err)
	}
}

// TestSharedStoreSignInWarning: on a shared store, sign-in without a
// secret only works on the server that made the challenge; that is said.
func TestSharedStoreSignInWarning(t *testing.T) {
	t.Setenv("PROMPTWALL_TEST_DSN", pgtest.Shared(t).Database(t))
	for _, tc := range []struct {
		store, secret string
		warned        int
	}{
		{"postgres {env.PROMPTWALL_TEST_DSN}", "", 1},
		{"postgres {env.PROMPTWALL_TEST_DSN}", " secret 0123456789abcdef0123", 0},
		{fmt.Sprintf("sqlite %q", filepath.Join(t.TempDir(), "s.db")), "", 0},
	} {
		th := newTestHandler(t, parsed(t, fmt.Sprintf("prompt_scan {\n free\n precheck_sign_in https://scan.example%s\n store %s\n}", tc.secret, tc.store)))
		if n := th.logs.FilterMessageSnippet("precheck_sign_in has no secret").Len(); n != tc.warned {
			t.Errorf("store %s, secret %q: %d warnings, want %d", tc.store, tc.secret, n, tc.warned)
		}
	}
}
