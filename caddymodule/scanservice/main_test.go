package scanservice

import (
	"fmt"
	"os"
	"testing"

	"github.com/promptwall/promptwall/caddymodule/enginepool"
)

// TestMain holds one reference to the embedded rulebook's engine for the
// whole run, so handlers provisioned and cleaned up test after test share
// one compiled engine instead of compiling it each time.
func TestMain(m *testing.M) {
	h, err := enginepool.Load("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	h.Release()
	os.Exit(code)
}
