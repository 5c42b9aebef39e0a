// Package warmstart shortens the start-up of `caddy prompt-scan`.
//
// A batch run of prompt-scan lasts not much longer than the binary takes to
// start: Caddy's standard modules spend some 30 ms initializing their
// packages on one core (syntax highlighters, mostly), and compiling the
// rulebook takes 5 ms more (warm; about twice that in a fresh process). Go
// initializes packages in the order of their import paths as their imports
// allow, so this package, which needs the engine and so regexp, comes after
// the highlighters, some 25 ms in, with about 10 ms of initialization left.
// When the process is `caddy prompt-scan` it
//
//   - compiles the embedded rulebook on another goroutine, which the second
//     core runs during the rest of the initialization, so the command
//     finds engine.Default ready or nearly (unless --rulebook names
//     another one);
//   - sets the GC percent to promptscan.GCPercent already, for the rest
//     of the initialization too (Caddy's allocates some 9 MB, little
//     of which stays alive).
//
// Starting earlier was measured and dropped: translating the patterns from
// a package without regexp, initialized in the first milliseconds, gave no
// shorter runs (the second core is not idle then: the collector's workers
// use it, and the initialization took longer by about what was gained).
//
// Any other command, `caddy run` included, is left exactly as it was.
package warmstart

import (
	"os"
	"runtime/debug"
	"strings"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/promptscan"
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
	debug.SetGCPercent(promptscan.GCPercent)
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
