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
// from the folder PROMPTWALL_CORPORA names) in place of its prose. The
// real shapes are built from the same corpora (chatbody.Material): "agent"
// a 256 KiB agent conversation with tool definitions, tool calls and tool
// results of corpus text ("agent-4k" the same in 4 KiB), "256k-chat" a
// conversation of the corpus's messages in order. Each request's last user
// message carries a new stamp of eight letters (-repeat: none), so that
// each request is a new turn: its history is what earlier requests sent,
// its question is not. "resent" is a sequence instead: each connection is
// a client of its own (Authorization: Bearer sk-fwload-N) with a
// conversation of its own, and each request is its previous one with the
// answer to its last question and the next question added (chatbody.Resent,
// 200 to 312 KiB); a target's conversations go on from its warm-up through
// its rounds, so the first request of each, all new to the firewall, falls
// in the warm-up. "slide" is "resent" kept to 200-201 KiB: a
// sliding-window client, which drops its oldest turn with every request. The request headers are
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
	"github.com/promptwall/promptwall/engine"
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
	case "agent", "agent-4k", "256k-chat", "4k-chat":
		m, err := material()
		if err != nil {
			return nil, err
		}
		switch size {
		case "agent":
			return m.Agent(256<<10, 1), nil
		case "agent-4k":
			return m.Agent(4<<10, 1), nil
		case "4k-chat":
			// The corpus's first place where a conversation fills 3.5
			// KiB of the 4 (most answers alone are longer).
			for seed := uint64(0); ; seed++ {
				if b := m.Chat(4<<10, seed); len(b) >= 3584 || seed == uint64(len(m.Messages)) {
					return b, nil
				}
			}
		}
		return m.Chat(256<<10, 0), nil
	case "resent", "slide":
		// A sequence: fwload body resent prints its first request.
		c, err := conversation(0, 1, resentHigh(size))
		if err != nil {
			return nil, err
		}
		return c.Next(nil), nil
	}
	return nil, fmt.Errorf("unknown size %q (%s)", size, sizeNames)
}

const sizeNames = "4k, 256k, 256k-doc, 4k-chat, agent, agent-4k, 256k-chat, resent or slide"

// material is the published corpora's, read once, without the texts the
// rulebook calls malicious (its false positives in the benign corpora),
// which the firewall would refuse: every request of a load is served.
var material = sync.OnceValues(func() (*chatbody.Material, error) {
	m, err := chatbody.LoadMaterial(chatbody.Corpora())
	if err != nil {
		return nil, err
	}
	e := engine.Default()
	return m.Without(func(s string) bool { return e.ScanString(s).Verdict == engine.Malicious }), nil
})

// Bounds of the resent conversations: they grow from resentLo to
// resentHi, one turn a request, then are trimmed back (chatbody.Resent).
// "slide" trims back from slideHi: with every request.
const resentLo, resentHi, slideHi = 200 << 10, 312 << 10, 201 << 10

// resentHigh is the upper bound of size's conversations.
func resentHigh(size string) int {
	if size == "slide" {
		return slideHi
	}
	return resentHi
}

// conversation returns connection c's conversation (of conns), trimmed
// when it would pass hi: each starts at its own place in the corpus.
func conversation(c, conns, hi int) (*chatbody.Conversation, error) {
	m, err := material()
	if err != nil {
		return nil, err
	}
	pairs := len(m.Messages) / 2
	return m.Resent(resentLo, hi, uint64(c*pairs/conns)), nil
}

// A feed gives a run's connections their requests.
type feed interface {
	// conn returns connection c's headers and the function that returns
	// the body of its next request (valid until the next call).
	conn(c int) (http.Header, func() []byte)
}

// fixed sends one body, stamped each request unless stampAt is -1.
type fixed struct {
	body    []byte
	stampAt int
	hdr     http.Header
}

func (f fixed) conn(int) (http.Header, func() []byte) {
	if f.stampAt < 0 {
		return f.hdr, func() []byte { return f.body }
	}
	body := bytes.Clone(f.body) // this connection's, stamped in place
	return f.hdr, func() []byte {
		chatbody.Stamp(body, f.stampAt, stamps.Add(1))
		return body
	}
}

// resent gives each connection a conversation of its own, resent with one
// more turn each request, from a client of its own (its own Authorization,
// which is part of the firewall's per-client cache key). A target's
// conversations go on from round to round; each target has its own.
type resent struct {
	convs []*chatbody.Conversation
	bufs  [][]byte
	hdr   http.Header
}

func newResent(conns, hi int, hdr http.Header) (*resent, error) {
	r := &resent{convs: make([]*chatbody.Conversation, conns), bufs: make([][]byte, conns), hdr: hdr}
	for c := range conns {
		var err error
		if r.convs[c], err = conversation(c, conns, hi); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *resent) conn(c int) (http.Header, func() []byte) {
	hdr := r.hdr.Clone()
	hdr.Set("Authorization", fmt.Sprintf("Bearer sk-fwload-%d", c))
	return hdr, func() []byte {
		r.bufs[c] = r.convs[c].Next(r.bufs[c])
		return r.bufs[c]
	}
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
	bytes         int64         // of the measured requests' bodies
}

func load(args []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	var ts targets
	fs.Var(&ts, "target", "name=URL to load (repeat); the first is the baseline")
	sizes := fs.String("size", "4k,256k", "comma-separated bodies: "+sizeNames+" (see the package documentation)")
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
		// One feed per target: a resent conversation goes on where that
		// target's last round left it.
		feeds := make([]feed, len(ts))
		var b []byte
		if size == "resent" || size == "slide" {
			fmt.Printf("%s: each connection a client with its own conversation, one turn more each request (no stamps)\n", size)
			for i := range ts {
				r, err := newResent(*conns, resentHigh(size), hdr)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				feeds[i] = r
			}
		} else {
			var err error
			if b, err = body(size); err != nil {
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
			for i := range ts {
				feeds[i] = fixed{b, stampAt, hdr}
			}
		}
		results := make([][]stats, len(ts))
		for i, t := range ts {
			run(t.url, feeds[i], *conns, *warm)
		}
		for r := 0; r < *rounds; r++ {
			for i, t := range ts {
				pid := *cpuPID
				if p, ok := pids[t.name]; ok {
					pid = p
				}
				c0 := proccpu.Of(pid)
				st := run(t.url, feeds[i], *conns, *dur)
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
			if b != nil {
				fmt.Printf(" (body %d bytes)\n", len(b))
			} else {
				var sent, n int64
				for r := range *rounds {
					sent, n = sent+results[i][r].bytes+results[0][r].bytes, n+int64(results[i][r].n+results[0][r].n)
				}
				fmt.Printf(" (bodies %d-%d KiB, mean %d bytes)\n", resentLo>>10, resentHigh(size)>>10, sent/max(n, 1))
			}
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

// run loads url from conns connections for d, each with its requests
// from f.
func run(url string, f feed, conns int, d time.Duration) stats {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var errs, sent atomic.Int64
	var firstErr sync.Once
	report := func(what string) {
		firstErr.Do(func() { fmt.Fprintf(os.Stderr, "%s: first error: %s\n", url, what) })
	}
	lat := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < conns; c++ {
		hdr, next := f.conn(c)
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for ctx.Err() == nil {
				body := next()
				t0 := time.Now()
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
					sent.Add(int64(len(body)))
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
	s := stats{errors: errs.Load(), n: len(all), bytes: sent.Load()}
	if len(all) == 0 {
		return s
	}
	s.rps = float64(len(all)) / elapsed.Seconds()
	s.p50 = all[len(all)/2]
	s.p99 = all[len(all)*99/100]
	s.max = all[len(all)-1]
	return s
}
