// Command streamload measures what prompt_firewall's response scanning adds
// to a streamed answer. bench/response-stream.sh runs it against one caddy;
// see bench/README.md.
//
//	streamload -upstream 127.0.0.1:19500 -target plain=URL -target request=URL \
//	    -target log=URL -target hold=URL -holding hold [-api openai,anthropic] \
//	    [-mode paced,fast] [-streams 16] [-d 20s] [-gap 10ms-30ms] [-c 4] [-fast-d 3s] \
//	    [-rounds 3] [-answers 300] [-max-answer 3000] [-cpu-pid PID]
//
// It serves the fake upstream itself (so that its send times and the
// client's arrival times are read from one clock) and loads the targets,
// each a caddy site in front of that upstream, in alternating rounds.
//
// The answers are the published benign chat corpus's assistant messages
// (PROMPTWALL_CORPORA, default bench/corpora), each cut into token-sized
// deltas (GPT-2's pre-tokens, cut to at most 6 bytes) and sent as the
// API's SSE events after the user message before it was asked.
//
// paced: -streams concurrent streams per target, one event every -gap (a
// uniform draw, the same for every target), for -d a round. For each event
// it takes the arrival at the client minus the upstream's send time, and,
// at a -holding target, subtracts what the hold-back requires: the time from
// the event's send until the upstream sent the event that made its text
// final (computed offline by replaying the same events through
// engine.Stream, as the firewall's response writer does). Events are split
// into those whose own arrival made their text final (not held) and the
// rest.
//
// fast: -c concurrent closed-loop streams per target, each event sent as
// soon as the last was flushed, for -fast-d a round: caddy's CPU time (of
// -cpu-pid, from /proc) per KiB of model text and of SSE wire bytes.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/promptwall/promptwall/bench/chatbody"
	"github.com/promptwall/promptwall/engine"
)

type target struct{ name, url string }

type targets []target

func (t *targets) String() string { return fmt.Sprint(*t) }

func (t *targets) Set(v string) error {
	name, url, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want name=URL, got %q", v)
	}
	*t = append(*t, target{name, strings.TrimSuffix(url, "/")})
	return nil
}

type config struct {
	targets   targets
	holding   map[string]bool
	streams   int
	d         time.Duration
	lo, hi    time.Duration
	conns     int
	fastD     time.Duration
	rounds    int
	cpuPid    int
	upstream  *upstream
	baseline  string // the target others are compared with: the first
	reference string // the fast mode's second baseline: "request" when given
}

func main() {
	var c config
	up := flag.String("upstream", "127.0.0.1:19500", "address the fake upstream listens on")
	flag.Var(&c.targets, "target", "name=URL of a caddy site in front of the upstream (repeat; the first is the baseline)")
	holding := flag.String("holding", "", "comma-separated targets that hold events (response_on_* sanitize or block)")
	apis := flag.String("api", "openai", "comma-separated APIs: openai (Chat Completions), anthropic (Messages)")
	modes := flag.String("mode", "paced,fast", "comma-separated: paced, fast")
	flag.IntVar(&c.streams, "streams", 16, "paced: concurrent streams per target")
	flag.DurationVar(&c.d, "d", 20*time.Second, "paced: time a round starts streams for")
	gap := flag.String("gap", "10ms-30ms", "paced: the pause before each event, uniform in this range")
	flag.IntVar(&c.conns, "c", 4, "fast: concurrent streams per target")
	flag.DurationVar(&c.fastD, "fast-d", 3*time.Second, "fast: round duration")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds per target and mode")
	nAnswers := flag.Int("answers", 300, "answers taken from the corpus, spread over it")
	maxAnswer := flag.Int("max-answer", 3000, "longest answer taken, in bytes")
	flag.IntVar(&c.cpuPid, "cpu-pid", 0, "caddy's pid, for its CPU time")
	flag.Parse()
	if len(c.targets) == 0 {
		fail(fmt.Errorf("no -target"))
	}
	c.holding = map[string]bool{}
	for _, h := range strings.Split(*holding, ",") {
		if h != "" {
			c.holding[h] = true
		}
	}
	lo, hi, ok := strings.Cut(*gap, "-")
	var err error
	if c.lo, err = time.ParseDuration(lo); err == nil && ok {
		c.hi, err = time.ParseDuration(hi)
	}
	if err != nil || !ok || c.hi < c.lo {
		fail(fmt.Errorf("-gap %q: want lo-hi, such as 10ms-30ms", *gap))
	}
	c.baseline = c.targets[0].name
	for _, t := range c.targets {
		if t.name == "request" {
			c.reference = t.name
		}
	}

	answers, skipped, err := loadAnswers(chatbody.Corpora(), *nAnswers, *maxAnswer)
	if err != nil {
		fail(err)
	}
	c.upstream = &upstream{}
	ln, err := net.Listen("tcp", *up)
	if err != nil {
		fail(err)
	}
	go http.Serve(ln, c.upstream)
	for _, t := range c.targets {
		waitFor(t.url)
	}

	e := engine.Default()
	for _, api := range strings.Split(*apis, ",") {
		streams := make([]*stream, len(answers))
		text, events := 0, 0
		for i, a := range answers {
			if streams[i], err = newStream(api, a, e); err != nil {
				fail(err)
			}
			text += streams[i].text
			events += len(streams[i].events)
		}
		fmt.Printf("\n%s: %d answers of the benign chat corpus (%d left out: a flagged question or a malicious answer), %.1f KiB of text in %d events, %.1f bytes of text an event\n",
			api, len(answers), skipped, float64(text)/1024, events, float64(text)/float64(events))
		for _, mode := range strings.Split(*modes, ",") {
			switch mode {
			case "paced":
				c.paced(api, streams)
			case "fast":
				c.fast(api, streams)
			default:
				fail(fmt.Errorf("unknown mode %q", mode))
			}
		}
	}
}

func waitFor(url string) {
	host := strings.TrimPrefix(url, "http://")
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", host); err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	fail(fmt.Errorf("%s does not answer", url))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "streamload:", err)
	os.Exit(1)
}

// order returns the targets in round r's order: rotated, so that each
// target follows each other one in turn.
func (c *config) order(r int) []target {
	n := len(c.targets)
	out := make([]target, n)
	for i := range out {
		out[i] = c.targets[(i+r)%n]
	}
	return out
}
