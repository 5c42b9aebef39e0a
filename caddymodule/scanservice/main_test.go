package scanservice

import (
	"fmt"
	"os"
	"testing"

	"github.com/promptwall/promptwall/caddymodule/enginepool"
	"github.com/promptwall/promptwall/store/pgtest"
)

// TestMain holds one reference to the embedded rulebook's engine for the
// whole run, so handlers provisioned and cleaned up test after test share
// one compiled engine instead of compiling it each time, and stops the
// private PostgreSQL a test may have started.
func TestMain(m *testing.M) {
	h, err := enginepool.Load("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	h.Release()
	pgtest.StopShared()
	os.Exit(code)
}
