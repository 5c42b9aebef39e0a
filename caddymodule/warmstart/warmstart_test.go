package warmstart

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/promptwall/promptwall/promptscan"
)

func TestWarmOnlyForPromptScan(t *testing.T) {
	compiled := make(chan bool, 1)
	defer func(c func()) { compile = c }(compile)
	compile = func() { compiled <- true }
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	for _, tc := range []struct {
		args        []string
		warm, build bool
	}{
		{[]string{"caddy", "run", "--config", "Caddyfile"}, false, false},
		{[]string{"caddy"}, false, false},
		{[]string{"caddy", "version", "prompt-scan"}, false, false},
		{[]string{"caddy", "prompt-scan", "--jsonl"}, true, true},
		{[]string{"caddy", "prompt-scan", "a.txt", "--", "--rulebook"}, true, true},
		{[]string{"caddy", "prompt-scan", "--rulebook", "r.json", "--jsonl"}, true, false},
		{[]string{"caddy", "prompt-scan", "--rulebook=r.json"}, true, false},
		{[]string{"caddy", "prompt-scan", "-rulebook=r.json"}, true, false},
	} {
		debug.SetGCPercent(100)
		if got := warm(tc.args); got != tc.warm {
			t.Errorf("%q: warm %v, want %v", tc.args, got, tc.warm)
		}
		percent := debug.SetGCPercent(100)
		if want := map[bool]int{false: 100, true: promptscan.GCPercent}[tc.warm]; percent != want {
			t.Errorf("%q: GC percent %d, want %d", tc.args, percent, want)
		}
		if tc.build {
			select {
			case <-compiled:
			case <-time.After(10 * time.Second):
				t.Errorf("%q: did not compile the embedded rulebook", tc.args)
			}
		} else {
			time.Sleep(10 * time.Millisecond) // a goroutine started would have run
			select {
			case <-compiled:
				t.Errorf("%q: compiled the embedded rulebook", tc.args)
			default:
			}
		}
	}
}
