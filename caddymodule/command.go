package caddymodule

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/promptwall/promptwall/caddymodule/warmstart"
	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/jsonstr"
	"github.com/promptwall/promptwall/rulebook"
)

// Exit statuses of `caddy prompt-scan`.
const (
	exitSafe       = 0
	exitSuspicious = 1
	exitMalicious  = 2
	exitError      = 3
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "prompt-scan",
		Usage: "[--rulebook <file>] [--jsonl] [<file>...]",
		Short: "Scans texts for prompt injection with the promptwall rulebook",
		Long: `
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
input failed.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.Flags().String("rulebook", "", "a custom rulebook file (default: the embedded v1)")
			cmd.Flags().Bool("jsonl", false, "read JSON lines from standard input and write one result line each")
			// Caddy's wrapper maps exit status 1 to 0, and the verdict is the
			// exit status here, so the command exits by itself.
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				rb, _ := cmd.Flags().GetString("rulebook")
				jsonl, _ := cmd.Flags().GetBool("jsonl")
				code, err := runPromptScan(rb, jsonl, args, os.Stdin, os.Stdout)
				if err != nil {
					fmt.Fprintln(os.Stderr, "prompt-scan:", err)
				}
				os.Exit(code)
				return nil
			}
		},
	})
}

func runPromptScan(rulebookPath string, jsonl bool, files []string, stdin io.Reader, stdout io.Writer) (int, error) {
	var eng *engine.Engine
	if rulebookPath == "" {
		eng = engine.Default()
	} else {
		rb, err := rulebook.Load(rulebookPath)
		if err != nil {
			return exitError, err
		}
		if eng, err = engine.New(rb); err != nil {
			return exitError, fmt.Errorf("compiling rulebook %s: %w", rulebookPath, err)
		}
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	defer out.Flush()
	if jsonl {
		if len(files) > 0 {
			return exitError, errors.New("--jsonl reads standard input only")
		}
		// A batch over many lines keeps little alive between lines: fewer
		// collections cost less than the memory they would save. The warm
		// start sets this already when the process's own arguments are a
		// prompt-scan command line; this covers the command run any other
		// way (in process, as the tests do).
		debug.SetGCPercent(warmstart.GCPercent)
		worst, bad, err := scanJSONL(eng, stdin, out)
		switch {
		case err != nil:
			return exitError, err
		case bad > 0:
			return exitError, fmt.Errorf("%d line(s) could not be scanned; their answers say why", bad)
		}
		return worst.Rank(), nil
	}
	worst := engine.Safe
	if len(files) == 0 {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return exitError, fmt.Errorf("reading standard input: %w", err)
		}
		worst = printResult(out, "", eng.Scan(data))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return exitError, fmt.Errorf("reading %s: %w", f, err)
		}
		name := ""
		if len(files) > 1 {
			name = f
		}
		if v := printResult(out, name, eng.Scan(data)); v.Rank() > worst.Rank() {
			worst = v
		}
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

// scanJSONL answers one line per input line, in order. Each of the
// machine's cores runs a worker that takes the next batch of lines from the
// input itself (so no reader goroutine competes with the workers for the
// cores) and scans it; the answers are written in input order, and an error
// on a line is answered in its place. It returns the worst verdict and
// how many lines could not be scanned; an error reading the input or
// writing the answers stops the run after the answers before it.
func scanJSONL(eng *engine.Engine, in io.Reader, w *bufio.Writer) (engine.Verdict, int, error) {
	type result struct {
		out   []byte
		worst engine.Verdict
		bad   int
		err   error
	}
	workers := runtime.GOMAXPROCS(0)
	// order holds each batch's answer slot, in input order; a worker sends
	// it while it holds mu, so the order of the sends is the input's.
	order := make(chan chan result, 2*workers)
	stop := make(chan struct{})
	defer close(stop)
	// Buffers go round: a batch's lines back to the next batch once
	// answered, an answer back to the workers once written. Fresh memory
	// costs a page fault every 4 KiB, a good part of a short run.
	inBufs, outBufs := make(chan []byte, 2*workers+2), make(chan []byte, 2*workers+2)
	get := func(bufs chan []byte, n int) []byte {
		select {
		case b := <-bufs:
			if cap(b) >= n {
				return b[:0]
			}
		default:
		}
		return make([]byte, 0, n)
	}
	put := func(bufs chan []byte, b []byte) {
		select {
		case bufs <- b:
		default:
		}
	}

	var (
		mu     sync.Mutex // guards the input and what follows
		rd     = bufio.NewReaderSize(in, 64<<10)
		lineNo int
		ended  bool // the input is read to its end, or failed, or the run stopped
	)
	// next reads the next batch of about batchSize bytes of lines into
	// data, grown as needed: the lines (nil for a blank one, which keeps
	// its number and answers nothing), the first one's number and the read
	// error after them.
	next := func(data []byte) (_ []byte, lines [][]byte, first int, err error) {
		first = lineNo + 1
		var ends []int // end of each line in data; -1: blank
		// A batch also ends where the input has nothing more to give
		// without waiting: lines piped in one at a time are answered one
		// at a time, not when 64 KiB have come.
		for len(data) < batchSize && err == nil && (len(ends) == 0 || rd.Buffered() > 0) {
			start := len(data)
			data, err = readLine(rd, data)
			lineNo++
			if len(bytes.TrimSpace(data[start:])) > 0 {
				ends = append(ends, len(data))
			} else {
				data = data[:start]
				ends = append(ends, -1)
			}
		}
		lines = make([][]byte, len(ends))
		start := 0
		for k, end := range ends {
			if end >= 0 {
				lines[k] = data[start:end:end]
				start = end
			}
		}
		return data, lines, first, err
	}

	for range workers {
		go func() {
			var bufs lineBuffers
			for {
				mu.Lock()
				select {
				case <-stop:
					ended = true
				default:
				}
				if ended {
					mu.Unlock()
					return
				}
				data := get(inBufs, batchSize+batchSize/4)
				data, lines, first, rerr := next(data)
				if rerr != nil {
					ended = true
				}
				slot := make(chan result, 1)
				select {
				case order <- slot:
				case <-stop:
					ended = true
					mu.Unlock()
					return
				}
				if ended {
					close(order)
				}
				mu.Unlock()

				// An answer is the line's other fields and a result that
				// holds the sanitized text again: about twice the line.
				out := get(outBufs, 2*len(data)+1024)
				r := result{worst: engine.Safe}
				for k, line := range lines {
					var v engine.Verdict
					var ok bool
					if out, v, ok = bufs.scanLine(eng, line, first+k, out); !ok {
						r.bad++
					}
					r.worst = worse(r.worst, v)
				}
				if rerr != nil && rerr != io.EOF {
					r.err = fmt.Errorf("reading standard input: %w", rerr)
				}
				put(inBufs, data)
				r.out = out
				slot <- r
			}
		}()
	}

	worst, bad := engine.Safe, 0
	for slot := range order {
		r := <-slot
		if _, err := w.Write(r.out); err != nil {
			return worst, bad, err
		}
		if len(order) == 0 {
			// Nothing else is ready: what is answered goes out now.
			if err := w.Flush(); err != nil {
				return worst, bad, err
			}
		}
		put(outBufs, r.out)
		worst, bad = worse(worst, r.worst), bad+r.bad
		if r.err != nil {
			return worst, bad, r.err
		}
	}
	return worst, bad, nil
}

// worse is the worse of two verdicts.
func worse(a, b engine.Verdict) engine.Verdict {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// batchSize is about how many bytes of lines make a batch: small enough
// that the cores share the end of a run evenly, large enough that taking a
// batch costs little.
const batchSize = 64 << 10

func readLine(rd *bufio.Reader, dst []byte) ([]byte, error) {
	for {
		chunk, err := rd.ReadSlice('\n')
		dst = append(dst, chunk...)
		if err != bufio.ErrBufferFull {
			if n := len(dst); n > 0 && dst[n-1] == '\n' {
				dst = dst[:n-1]
			}
			return dst, err
		}
	}
}

// lineBuffers are the storage one line's work reuses from the last.
type lineBuffers struct {
	text        []byte // a decoded text that had escapes
	members     []member
	failedSplit bool // the last line was not a JSON object
	compact     bytes.Buffer
}

// scanLine appends the answer to input line n to out, and reports the
// verdict and whether the line could be scanned: a line that cannot is
// answered with its other fields and an error. A nil line (a blank one)
// has no answer.
func (b *lineBuffers) scanLine(eng *engine.Engine, line []byte, n int, out []byte) ([]byte, engine.Verdict, bool) {
	if line == nil {
		return out, engine.Safe, true
	}
	start := len(out)
	out, v, err := b.answer(eng, line, out)
	if err == nil {
		return out, v, true
	}
	out = out[:start]
	if b.failedSplit {
		out = append(out, '{') // not an object: no fields to keep
	} else {
		out = b.appendOthers(out)
	}
	out = append(out, `"error":{"line":`...)
	out = strconv.AppendInt(out, int64(n), 10)
	out = append(out, `,"message":`...)
	out = jsonstr.Append(out, err.Error(), false)
	return append(out, "}}\n"...), engine.Safe, false
}

// answer appends the answer to a line that is not blank.
func (b *lineBuffers) answer(eng *engine.Engine, line []byte, out []byte) ([]byte, engine.Verdict, error) {
	members, err := splitObject(line, b.members[:0], &b.text)
	b.failedSplit = err != nil
	if err != nil {
		return out, "", err
	}
	b.members = members
	var text, textLit []byte
	isB64, found, canonical := false, false, false
	for _, m := range members {
		if isText(m.key) {
			if len(m.value) == 0 || m.value[0] != '"' {
				return out, "", fmt.Errorf("%q must be a string", m.key)
			}
			text, textLit, canonical = m.text, m.value, m.canonical
			isB64, found = string(m.key) == "text_base64", true
		}
	}
	if isB64 {
		if text, err = base64.StdEncoding.DecodeString(string(text)); err != nil {
			return out, "", fmt.Errorf("text_base64: %w", err)
		}
	}
	if !found {
		return out, "", errors.New(`needs a "text" or "text_base64" string`)
	}
	res := eng.Scan(text)
	out = b.appendOthers(out)
	out = append(out, `"result":`...)
	if !isB64 && len(res.Matches) == 0 && canonical {
		// The sanitized copy is the text, and the line wrote it as the
		// answer would: copy the literal rather than encode it again.
		out = engine.AppendJSONQuoted(out, res, textLit)
	} else {
		out = engine.AppendJSON(out, res, isB64)
	}
	return append(out, "}\n"...), res.Verdict, nil
}

// appendOthers opens an answer with the line's fields but its text, each
// followed by a comma.
func (b *lineBuffers) appendOthers(out []byte) []byte {
	out = append(out, '{')
	for _, m := range b.members {
		if isText(m.key) {
			continue
		}
		out = append(out, m.rawKey...)
		out = append(out, ':')
		out = appendCompact(out, m.value, &b.compact)
		out = append(out, ',')
	}
	return out
}
