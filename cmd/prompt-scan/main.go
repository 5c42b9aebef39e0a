// Command prompt-scan is `caddy prompt-scan` without Caddy: the same
// command (package promptscan), flags, help and exit statuses, in a binary
// that starts in about 15 ms, most of it compiling the rulebook, where
// Caddy's takes some 50: for scanning files or JSON lines in CI or a
// pipeline.
//
//	go build ./cmd/prompt-scan
//	./prompt-scan --jsonl < texts.jsonl
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/promptwall/promptwall/promptscan"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prompt-scan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // the help goes to stdout, an error's hint to stderr
	rulebook := fs.String("rulebook", "", promptscan.RulebookUsage)
	jsonl := fs.Bool("jsonl", false, promptscan.JSONLUsage)
	files, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(stdout, fs)
		return promptscan.ExitSafe
	}
	if err != nil {
		// flag has said what was wrong.
		fmt.Fprintf(stderr, "usage: prompt-scan %s (--help for more)\n", promptscan.Usage)
		return promptscan.ExitError
	}
	if *jsonl {
		// Set before the rulebook is compiled, which then runs without a
		// collection: 2 to 4 ms less of a run's start-up (bench/README.md).
		// Compiling it on another goroutine, as warmstart does while
		// Caddy initializes, gains nothing here: nothing is left to
		// overlap it with. Files keep the default: they stay alive whole.
		debug.SetGCPercent(promptscan.GCPercent)
	}
	code, err := promptscan.Run(*rulebook, *jsonl, files, stdin, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "prompt-scan:", err)
	}
	return code
}

// printHelp prints the help `caddy prompt-scan --help` prints, flags in
// cobra's --form.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  prompt-scan %s\n\nFlags:\n", strings.TrimSpace(promptscan.Long), promptscan.Usage)
	fmt.Fprintf(w, "  -h, --help              help for prompt-scan\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, _ := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "      %-18s  %s\n", strings.TrimSpace("--"+f.Name+" "+name), f.Usage)
	})
}

// parse parses flags anywhere among the arguments, as cobra does for
// `caddy prompt-scan` (flag alone stops at the first file), and returns
// the files; after "--" every argument is a file.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(files, rest...), nil
		}
		files, args = append(files, rest[0]), rest[1:]
	}
}
