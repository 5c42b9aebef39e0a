// Command fwload measures what prompt_firewall costs in front of
// reverse_proxy. bench/firewall-load.sh runs it; see there.
//
//	fwload upstream -addr 127.0.0.1:9100
//	    a fast fake LLM upstream: reads the whole body, answers a small
//	    chat.completion JSON.
//	fwload load -target plain=URL -target firewall=URL [-size 4k,256k] [-headers sdk] [-c 16] [-d 5s] [-rounds 3] [-repeat]
//	    closed-loop load: c connections each send POST requests back to back
//	    for d; targets are measured in alternating rounds so that both see
//	    the same machine; prints throughput and latency percentiles per
//	    target and size (median round), and the firewall/plain ratios:
//	    the median of the rounds' own ratios, and their range.
//	fwload verdicts -upstream ADDR -corpus FILE -target old=URL -target new=URL
//	    sends every body of a corpus through two firewall sites (in log
//	    mode, in front of its own upstream) and counts how their verdicts
//	    differ (bench/verdicts.sh).
//
// The request bodies are package chatbody's: "4k" is its 4 KiB multi-turn
// chat, "256k" its 256 KiB long-context message, "256k-doc" the same with
// a document of real messages (the published corpus's benign chat bodies,
// from the folder PROMPTWALL_CORPORA names) in place of its prose. Each
// request's last user message carries a new stamp of eight letters (-repeat:
// none), so that each request is a new turn: its history is what earlier
// requests sent, its question is not. The request headers are
// by default the ones the official openai npm client sends (-headers sdk),
// or only a Content-Type (-headers minimal). Loopback only; every run stops
// by itself.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"github.com/promptwall/promptwall/bench/proccpu"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptwall/promptwall/bench/chatbody"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fwload upstream|load [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "upstream":
		upstream(os.Args[2:])
	case "load":
		load(os.Args[2:])
	case "verdicts":
		verdicts(os.Args[2:])
	case "body":
		// fwload body 4k: print a benchmark body, to inspect or reuse.
		b, err := body(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Stdout.Write(b)
	default:
		fmt.Fprintln(os.Stderr, "usage: fwload upstream|load|verdicts|body [flags]")
		os.Exit(2)
	}
}

const answer = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`

func upstream(args []string) {
	fs := flag.NewFlagSet("upstream", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:9100", "listen address (loopback)")
	fs.Parse(args)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		io.WriteString(w, answer)
	})
	fmt.Fprintln(os.Stderr, "upstream on", *addr)
	if err := http.ListenAndServe(*addr, h); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func body(size string) ([]byte, error) {
	switch size {
	case "4k":
		return chatbody.Chat4K(), nil
	case "256k":
		return chatbody.LongContext256K(), nil
	case "256k-doc":
		// Real messages, from the published corpora.
		return chatbody.LongDocument256K(chatbody.Corpora())
	}
	return nil, fmt.Errorf("unknown size %q (4k, 256k or 256k-doc)", size)
}

type target struct{ name, url string }

type targets []target

func (t *targets) String() string { return fmt.Sprint(*t) }
func (t *targets) Set(s string) error {
	name, url, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want name=url, got %q", s)
	}
	*t = append(*t, target{name, url})
	return nil
}

// pidsOf maps target names to the process whose CPU time their rounds
// report (-target-pid), for a target another process serves.
type pidsOf map[string]int

func (p pidsOf) String() string { return fmt.Sprint(map[string]int(p)) }
func (p pidsOf) Set(s string) error {
	name, pid, ok := strings.Cut(s, "=")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil {
		return fmt.Errorf("want name=pid, got %q", s)
	}
	p[name] = n
	return nil
}

type stats struct {
	rps           float64
	p50, p99, max time.Duration
	errors        int64
	n             int
	cpuPerReq     time.Duration // of the -cpu-pid process; 0 if unknown
}

func load(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	var ts targets
	fs.Var(&ts, "target", "name=URL to load (repeat); the first is the baseline")
	sizes := fs.String("size", "4k,256k", "comma-separated body sizes: 4k, 256k, 256k-doc (real messages of the published corpora)")
	conns := fs.Int("c", 16, "concurrent connections")
	dur := fs.Duration("d", 5*time.Second, "duration of one round per target")
	rounds := fs.Int("rounds", 3, "rounds per target and size (the median round, and the median of the rounds' ratios, are reported)")
	warm := fs.Duration("warmup", time.Second, "warm-up per target and size, not measured")
	cpuPID := fs.Int("cpu-pid", 0, "also report this process's CPU time per request (Linux /proc), e.g. caddy's")
	pids := pidsOf{}
	fs.Var(pids, "target-pid", "name=pid: the process whose CPU time the target's rounds report, instead of -cpu-pid's (repeat)")
	headerSet := fs.String("headers", "sdk", "request headers: sdk (the openai npm client's) or minimal (Content-Type only)")
	repeat := fs.Bool("repeat", false, "send the same body every time; by default each request's last user message gets a new 8-letter stamp, as the next turn of a chat does")
	fs.Parse(args)
	hdr, ok := headerSets[*headerSet]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown -headers %q (sdk or minimal)\n", *headerSet)
		os.Exit(2)
	}
	if len(ts) < 1 {
		fmt.Fprintln(os.Stderr, "need at least one -target")
		os.Exit(2)
	}
	for _, t := range ts {
		if !isLoopback(t.url) {
			fmt.Fprintf(os.Stderr, "%s is not a loopback URL\n", t.url)
			os.Exit(2)
		}
	}
	bodies := "each request stamped"
	if *repeat {
		bodies = "repeated"
	}
	fmt.Printf("connections %d, round %s, rounds %d, headers %s, bodies %s\n", *conns, *dur, *rounds, *headerSet, bodies)
	fmt.Printf("%-6s %-10s %10s %10s %10s %10s %7s %12s\n", "size", "target", "req/s", "p50", "p99", "max", "errors", "server-cpu/req")
	for _, size := range strings.Split(*sizes, ",") {
		b, err := body(size)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		stampAt := -1
		if !*repeat {
			if stampAt = chatbody.StampAt(b); stampAt < 0 {
				fmt.Fprintf(os.Stderr, "the %s body has no place for a stamp\n", size)
				os.Exit(2)
			}
		}
		results := make([][]stats, len(ts))
		for _, t := range ts {
			run(t.url, b, stampAt, hdr, *conns, *warm)
		}
		for r := 0; r < *rounds; r++ {
			for i, t := range ts {
				pid := *cpuPID
				if p, ok := pids[t.name]; ok {
					pid = p
				}
				c0 := proccpu.Of(pid)
				st := run(t.url, b, stampAt, hdr, *conns, *dur)
				if c1 := proccpu.Of(pid); c0 >= 0 && c1 >= 0 && st.n > 0 {
					st.cpuPerReq = (c1 - c0) / time.Duration(st.n)
				}
				results[i] = append(results[i], st)
			}
		}
		for i, t := range ts {
			s := median(results[i])
			cpu := "-"
			if s.cpuPerReq > 0 {
				cpu = strconv.FormatFloat(float64(s.cpuPerReq)/1e3, 'f', 0, 64) + "µs"
			}
			fmt.Printf("%-6s %-10s %10.0f %10s %10s %10s %7d %12s\n", size, t.name, s.rps, round(s.p50), round(s.p99), round(s.max), s.errors, cpu)
		}
		// The ratios are taken round by round: a target and the baseline
		// measured seconds apart see much the same machine, while rounds
		// minutes apart may not, so pairing them cancels what drifts.
		for i := 1; i < len(ts); i++ {
			ratio := make([]float64, *rounds)
			p99 := make([]float64, *rounds)
			var cpu []float64
			for r := range *rounds {
				t, base := results[i][r], results[0][r]
				ratio[r] = t.rps / base.rps
				p99[r] = float64(t.p99-base.p99) / 1e6
				if t.cpuPerReq > 0 && base.cpuPerReq > 0 {
					cpu = append(cpu, float64(t.cpuPerReq-base.cpuPerReq)/1e3)
				}
			}
			lo, hi := slices.Min(ratio), slices.Max(ratio)
			fmt.Printf("%-6s %s/%s throughput %.3fx (rounds %.3f-%.3f), p99 %+.3f ms", size, ts[i].name, ts[0].name,
				medianOf(ratio), lo, hi, medianOf(p99))
			if len(cpu) == *rounds {
				fmt.Printf(", server CPU %+.0f µs/request", medianOf(cpu))
			}
			fmt.Printf(" (body %d bytes)\n", len(b))
		}
	}
}

func isLoopback(u string) bool {
	rest := strings.TrimPrefix(u, "http://")
	host := rest
	if i := strings.IndexAny(rest, ":/"); i >= 0 {
		host = rest[:i]
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// median picks the round with the median throughput (its latencies go with
// it), leaving s in round order.
func median(s []stats) stats {
	s = slices.Clone(s)
	sort.Slice(s, func(i, j int) bool { return s[i].rps < s[j].rps })
	return s[len(s)/2]
}

// medianOf returns the median of v (the mean of the middle two for an even
// count), leaving v as it was.
func medianOf(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func round(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) + "ms"
}

// stamps counts the stamps used, so that no two requests of a run, to
// whichever target, carry the same text.
var stamps atomic.Uint64

// headerSets are the request headers a load can send. "sdk" is what
// openai@6.49.0 (Node 20) sends with a chat completion, captured from the
// wire, less Host, Connection and Content-Length, which the HTTP client
// writes itself.
var headerSets = map[string]http.Header{
	"sdk": {
		"Accept":                      {"application/json"},
		"User-Agent":                  {"OpenAI/JS 6.49.0"},
		"X-Stainless-Retry-Count":     {"0"},
		"X-Stainless-Lang":            {"js"},
		"X-Stainless-Package-Version": {"6.49.0"},
		"X-Stainless-Os":              {"Linux"},
		"X-Stainless-Arch":            {"x64"},
		"X-Stainless-Runtime":         {"node"},
		"X-Stainless-Runtime-Version": {"v20.20.2"},
		"Authorization":               {"Bearer sk-fwload"},
		"Content-Type":                {"application/json"},
		"Accept-Language":             {"*"},
		"Sec-Fetch-Mode":              {"cors"},
		"Accept-Encoding":             {"gzip, deflate"},
	},
	"minimal": {"Content-Type": {"application/json"}},
}

// run loads url with body from conns connections for d. stampAt is where
// each request's body gets its stamp (chatbody.Stamp), or -1 to send the
// body as it is.
func run(url string, body []byte, stampAt int, hdr http.Header, conns int, d time.Duration) stats {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var errs atomic.Int64
	var firstErr sync.Once
	report := func(what string) {
		firstErr.Do(func() { fmt.Fprintf(os.Stderr, "%s: first error: %s\n", url, what) })
	}
	lat := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			body := body
			if stampAt >= 0 {
				body = bytes.Clone(body) // this connection's, stamped in place
			}
			for ctx.Err() == nil {
				t0 := time.Now()
				if stampAt >= 0 {
					chatbody.Stamp(body, stampAt, stamps.Add(1))
				}
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header = hdr.Clone()
				resp, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					report(err.Error())
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs.Add(1)
					report(resp.Status)
					continue
				}
				if ctx.Err() == nil {
					lat[c] = append(lat[c], time.Since(t0))
				}
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	s := stats{errors: errs.Load(), n: len(all)}
	if len(all) == 0 {
		return s
	}
	s.rps = float64(len(all)) / elapsed.Seconds()
	s.p50 = all[len(all)/2]
	s.p99 = all[len(all)*99/100]
	s.max = all[len(all)-1]
	return s
}
