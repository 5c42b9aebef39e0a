// Package warmstart shortens the start-up of `caddy prompt-scan`.
//
// A batch run of prompt-scan lasts about as long as the binary takes to
// start: Caddy's standard modules spend some 30 ms initializing their
// packages on one core (syntax highlighters, mostly), and compiling the
// rulebook takes about 9 ms more. This package is initialized before most
// of them (it needs only the engine), and when the process is
// `caddy prompt-scan` it
//
//   - compiles the embedded rulebook on another goroutine, which the second
//     core runs while the rest of the packages initialize, so the command
//     finds engine.Default ready (unless --rulebook names another one);
//   - lets the heap grow to five times its live size before a collection,
//     since the initialization allocates some 9 MB of which little stays
//     alive, and a short batch is better served by fewer collections.
//
// Any other command, `caddy run` included, is left exactly as it was.
package warmstart

import (
	"os"
	"runtime/debug"
	"strings"

	"github.com/promptwall/promptwall/engine"
)

func init() { warm(os.Args) }

// compile is engine.Default, or a test's stand-in.
var compile = func() { engine.Default() }

// warm prepares the process when args are a prompt-scan command line and
// reports whether they were.
func warm(args []string) bool {
	if len(args) < 2 || args[1] != "prompt-scan" {
		return false
	}
	debug.SetGCPercent(400)
	if !namesRulebook(args[2:]) {
		go compile()
	}
	return true
}

// namesRulebook reports whether the command's arguments give --rulebook
// (as one argument or two), so that the embedded one is not needed.
func namesRulebook(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--rulebook" || a == "-rulebook" || strings.HasPrefix(a, "--rulebook=") || strings.HasPrefix(a, "-rulebook=") {
			return true
		}
	}
	return false
}
