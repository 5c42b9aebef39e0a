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
//   - sets the GC percent to GCPercent.
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
)

func init() { warm(os.Args) }

// GCPercent is the GC percent of a prompt-scan run: the heap grows to 11
// times its live size before a collection. The initialization allocates
// some 9 MB of which little stays alive, compiling the engine 5 MB, and a
// batch keeps little alive between lines; at the default of 100, and even
// at 400, a run of a few MB of lines spends some 3 ms of its 55 to 85 ms
// on a collection that frees little (bench/compare.sh's corpora, 12 to 20
// interleaved runs each). A run's memory stays a few tens of MB.
const GCPercent = 1000

// compile is engine.Default, or a test's stand-in.
var compile = func() { engine.Default() }

// warm prepares the process when args are a prompt-scan command line and
// reports whether they were.
func warm(args []string) bool {
	if len(args) < 2 || args[1] != "prompt-scan" {
		return false
	}
	debug.SetGCPercent(GCPercent)
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
