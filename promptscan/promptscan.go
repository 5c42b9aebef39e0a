// Package promptscan is the prompt-scan command: it scans files, standard
// input or JSON lines with a rulebook and prints the results, its exit
// status the worst verdict. Two front ends run it, `caddy prompt-scan`
// (package caddymodule) and the standalone cmd/prompt-scan, which links
// no Caddy and so starts in a fraction of the time; both print the same
// help and exit with the same statuses.
package promptscan

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/rulebook"
)

// Exit statuses of the command: the worst verdict, or an error.
const (
	ExitSafe       = 0
	ExitSuspicious = 1
	ExitMalicious  = 2
	ExitError      = 3
)

// The command's help, which both front ends print.
const (
	Usage = "[--rulebook <file>] [--jsonl] [<file>...]"
	Short = "Scans texts for prompt injection with the promptwall rulebook"
	Long  = `
Scans texts with the published prompt-injection rulebook (or --rulebook),
exactly as the prompt_firewall and prompt_scan handlers do.

Without --jsonl, each file (or standard input when none is given) is one
text; the verdict, the matches with their UTF-16 positions and the sanitized
copy are printed. The exit status is the worst verdict: 0 safe, 1 suspicious,
2 malicious; 3 means an error.

With --jsonl, standard input holds JSON lines {"text": ...} or
{"text_base64": ...} (raw bytes) with any other fields; each output line is
the input's other fields plus "result" (verdict, matches, category_counts and
sanitized, or sanitized_base64 for text_base64 inputs), in order. A line that
cannot be scanned gets its other fields plus "error" {"line", "message"}, and
the run goes on. The exit status is the worst verdict of the lines, as for
files; 3 when a line could not be scanned (its verdict is unknown) or the
input failed.`
	RulebookUsage = "a custom rulebook file (default: the embedded v1)"
	JSONLUsage    = "read JSON lines from standard input and write one result line each"
)

// GCPercent is the GC percent of a --jsonl run: the heap grows to 11 times
// its live size before a collection. Compiling the engine allocates some
// 5 MB of which little stays alive, and a batch keeps little alive between
// lines; at the default of 100, and even at 400, a run of a few MB of
// lines spends some 3 ms of its 55 to 85 ms on a collection that frees
// little (bench/compare.sh's corpora, 12 to 20 interleaved runs each). A
// run's memory stays a few tens of MB.
const GCPercent = 1000

// Run runs the command: with the rulebook at rulebookPath (the embedded
// one if empty), over files (stdin if none), or over JSON lines from stdin
// when jsonl is set, writing to stdout. It returns the exit status and,
// with ExitError, what went wrong; the results written before an error
// stay written.
func Run(rulebookPath string, jsonl bool, files []string, stdin io.Reader, stdout io.Writer) (exit int, err error) {
	var eng *engine.Engine
	if rulebookPath == "" {
		eng = engine.Default()
	} else {
		rb, err := rulebook.Load(rulebookPath)
		if err != nil {
			return ExitError, err
		}
		if eng, err = engine.New(rb); err != nil {
			return ExitError, fmt.Errorf("compiling rulebook %s: %w", rulebookPath, err)
		}
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	defer out.Flush()
	if jsonl {
		if len(files) > 0 {
			return ExitError, errors.New("--jsonl reads standard input only")
		}
		// The front ends set this already at start-up; this covers the
		// command run any other way (in process, as the tests do).
		debug.SetGCPercent(GCPercent)
		worst, bad, err := scanJSONL(eng, stdin, out)
		switch {
		case err != nil:
			return ExitError, err
		case bad > 0:
			return ExitError, fmt.Errorf("%d line(s) could not be scanned; their answers say why", bad)
		}
		return worst.Rank(), nil
	}
	worst := engine.Safe
	if len(files) == 0 {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return ExitError, fmt.Errorf("reading standard input: %w", err)
		}
		worst = printResult(out, "", eng.Scan(data))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return ExitError, fmt.Errorf("reading %s: %w", f, err)
		}
		name := ""
		if len(files) > 1 {
			name = f
		}
		worst = worse(worst, printResult(out, name, eng.Scan(data)))
	}
	return worst.Rank(), nil
}

// printResult writes a result for people to read and returns its verdict.
func printResult(w *bufio.Writer, name string, r engine.Result) engine.Verdict {
	if name != "" {
		fmt.Fprintf(w, "== %s\n", name)
	}
	fmt.Fprintf(w, "verdict: %s\n", r.Verdict)
	if len(r.Matches) > 0 {
		fmt.Fprintf(w, "matches:\n")
		for _, m := range r.Matches {
			fmt.Fprintf(w, "  %-5s %-21s %-10s [%d, %d)  %s\n", m.Rule, m.Category, m.Severity, m.Start, m.End, strings.Join(m.Views, ", "))
		}
		fmt.Fprintf(w, "sanitized:\n%s\n", r.Sanitized)
	}
	return r.Verdict
}
