// Command scanload measures the throughput of prompt_scan's free
// pre-checks and paid scans, for two builds at once. bench/scan-load.sh
// runs it; see there.
//
//	scanload facilitator -addr 127.0.0.1:19300
//	    a Go x402 facilitator: /verify and /settle succeed for every
//	    payment that passes x402.CheckExactSVM, settling it at once
//	    (no chain); /stats counts what it settled.
//	scanload address SEED
//	    prints the wallet address made from SEED (the script's pay_to).
//	scanload load -facilitator URL -target old=URL -target new=URL [-target-pid name=PID]... [-corpora DIR] [-c 8] [-runs 3] [-paid 1000] [-prechecks 3000]
//	    closed-loop load: c clients send requests back to back. Each run
//	    sends, to each target in turn (the order alternating from run to
//	    run), -paid paid scans, each by a fresh wallet with a payment of its
//	    own (real signed Solana transactions, built before the clock
//	    starts; the 402 offer is fetched once), then -prechecks pre-checks,
//	    each from a made-up wallet of its own. Prints per target and kind
//	    the best run's rate, p50 and p99 latency and server CPU per request,
//	    and the ratio of the last target's best rate to the first's.
//	scanload servers -facilitator URL -server NAME=URL [-admin NAME=URL] [-pid NAME=PID]... -config LABEL=NAME,NAME... [-shared-pid LABEL=PID] [load's other flags] [-paid-rate R] [-precheck-rate R]
//	    the same rounds against configurations of one or several servers
//	    sharing a store, the clients spread round robin over a
//	    configuration's servers: per configuration and kind the rate, the
//	    rate per CPU second of its servers and shared processes, latency,
//	    and the store's time from the servers' own histograms (admin
//	    /metrics). bench/scan-servers.sh runs it.
//
// Every answer is checked: a 200 with a verdict (and for a paid scan a
// PAYMENT-RESPONSE of a settled payment); the same text gets the same
// verdict from every target and endpoint; and at the end the facilitator
// must have settled exactly as many payments as paid scans were answered.
// Anything else stops the load with exit status 1. The texts are the
// published corpora's (attacks and benign prompts, alternately), from the
// folder -corpora names. Loopback only.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: scanload facilitator|address|load|servers [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "facilitator":
		serveFacilitator(os.Args[2:])
	case "address":
		// scanload address SEED: the wallet address made from SEED, e.g.
		// for pay_to.
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: scanload address SEED")
			os.Exit(2)
		}
		fmt.Println(newWallet(os.Args[2]).addr)
	case "load", "servers":
		run := load
		if os.Args[1] == "servers" {
			run = servers
		}
		if err := run(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: scanload facilitator|address|load|servers [flags]")
		os.Exit(2)
	}
}

// namedValues collects repeated name=value flags in order.
type namedValues struct{ names, values []string }

func (n *namedValues) String() string { return fmt.Sprint(n.names, n.values) }
func (n *namedValues) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", s)
	}
	n.names, n.values = append(n.names, name), append(n.values, v)
	return nil
}

// settings are the flags of both load and servers.
type settings struct {
	facURL, corpora                      *string
	perFile, conc, runs, paid, prechecks *int
	paidRate, precheckRate               *float64
}

func addSettings(fs *flag.FlagSet, conc int) *settings {
	return &settings{
		facURL:       fs.String("facilitator", "", "URL of the scanload facilitator the servers use, to check its settlements"),
		corpora:      fs.String("corpora", "", "folder of the published corpora (injection_jailbreak.jsonl, benign_prompts.jsonl)"),
		perFile:      fs.Int("texts", 100, "texts taken from each corpus file"),
		conc:         fs.Int("c", conc, "concurrent clients"),
		runs:         fs.Int("runs", 3, "runs; the best of them is reported"),
		paid:         fs.Int("paid", 1000, "paid scans per run and target"),
		prechecks:    fs.Int("prechecks", 3000, "pre-checks per run and target"),
		paidRate:     fs.Float64("paid-rate", 0, "paid scans a second a round sends, however fast they are answered (0: each client sends when answered)"),
		precheckRate: fs.Float64("precheck-rate", 0, "pre-checks a second a round sends (0: each client sends when answered)"),
	}
}

// loader checks the settings and reads the texts.
func (s *settings) loader() (*loader, error) {
	switch {
	case *s.facURL == "" || *s.corpora == "":
		return nil, fmt.Errorf("need -facilitator and -corpora")
	case *s.conc < 1 || *s.runs < 1 || *s.paid < 1 || *s.prechecks < 1 || *s.perFile < 1:
		return nil, fmt.Errorf("-c, -runs, -paid, -prechecks and -texts must be positive")
	case *s.paidRate < 0 || *s.precheckRate < 0:
		return nil, fmt.Errorf("-paid-rate and -precheck-rate must not be negative")
	}
	texts, err := loadTexts(*s.corpora, *s.perFile)
	if err != nil {
		return nil, err
	}
	return &loader{texts: texts, conc: *s.conc, verdicts: map[int]string{}, nonce: time.Now().UnixNano(),
		pace: map[string]float64{kindPaid: *s.paidRate, kindPrecheck: *s.precheckRate}}, nil
}

// kindN is a kind of request and how many a round sends.
type kindN struct {
	name string
	n    int
}

func (s *settings) kinds() []kindN {
	return []kindN{{kindPaid, *s.paid}, {kindPrecheck, *s.prechecks}}
}

// describe prints what a round sends.
func (s *settings) describe(l *loader, per string) {
	var bytes int
	for _, t := range l.texts {
		bytes += len(t.json)
	}
	fmt.Printf("clients %d, best of %d runs, per run and %s %d paid scans and %d pre-checks; %d corpus texts (half attacks), mean %d bytes of JSON\n",
		*s.conc, *s.runs, per, *s.paid, *s.prechecks, len(l.texts), bytes/len(l.texts))
	for _, k := range s.kinds() {
		if r := l.pace[k.name]; r > 0 {
			fmt.Printf("%s: paced at %g a second, latency counted from when each call was due\n", k.name, r)
		}
	}
}

// measure warms every group up with each kind, then runs rounds of each
// kind against every group in turn, the order alternating from run to
// run so that none always goes first. It returns kind -> group -> runs.
func (l *loader) measure(gs []*group, kinds []kindN, runs int) (map[string][][]round, error) {
	results := map[string][][]round{}
	// The warm-up is not measured: the connections, the store's first
	// pages, the server's first GCs.
	for _, k := range kinds {
		results[k.name] = make([][]round, len(gs))
		for _, g := range gs {
			if _, err := l.round(g, k.name, max(k.n/5, 1)); err != nil {
				return nil, err
			}
		}
	}
	for r := range runs {
		for _, k := range kinds {
			for j := range gs {
				i := j
				if r%2 == 1 {
					i = len(gs) - 1 - j
				}
				res, err := l.round(gs[i], k.name, k.n)
				if err != nil {
					return nil, err
				}
				results[k.name][i] = append(results[k.name][i], res)
			}
		}
	}
	return results, nil
}

// pidsOf parses name=PID flags.
func pidsOf(flagName string, v namedValues) (map[string]int, error) {
	pids := map[string]int{}
	for i, name := range v.names {
		p, err := strconv.Atoi(v.values[i])
		if err != nil || p <= 0 {
			return nil, fmt.Errorf("-%s %s=%s: not a process id", flagName, name, v.values[i])
		}
		pids[name] = p
	}
	return pids, nil
}

// loopbackURL is u without a trailing slash, if it is a loopback URL.
func loopbackURL(u string) (string, error) {
	u = strings.TrimRight(u, "/")
	if !isLoopback(u) {
		return "", fmt.Errorf("%s is not a loopback URL", u)
	}
	return u, nil
}

func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	var targetFlags, pidFlags namedValues
	fs.Var(&targetFlags, "target", "name=URL of a prompt_scan site (repeat); the ratio is the last's over the first's")
	fs.Var(&pidFlags, "target-pid", "name=PID: the server process of a target, for its CPU time per request (Linux /proc)")
	set := addSettings(fs, 8)
	fs.Parse(args)
	if len(targetFlags.names) < 1 {
		return fmt.Errorf("need at least one -target")
	}
	pids, err := pidsOf("target-pid", pidFlags)
	if err != nil {
		return err
	}
	l, err := set.loader()
	if err != nil {
		return err
	}
	var ts []*group
	for i, name := range targetFlags.names {
		u, err := loopbackURL(targetFlags.values[i])
		if err != nil {
			return err
		}
		g := &group{name: name, servers: []*target{newTarget(name, u, *set.conc)}}
		if p := pids[name]; p > 0 {
			g.pids = []int{p}
		}
		if err := l.fetchOffer(g); err != nil {
			return err
		}
		ts = append(ts, g)
	}
	return l.measureAll(set, ts, "binary", func(kinds []kindN, results map[string][][]round) {
		printTable(ts, kinds[0].name, kinds[1].name, results)
	})
}

// measureAll describes the load, measures gs, checks the facilitator's
// settlements against the paid scans answered, and prints the results
// with show, then what was checked. per names what a group is.
func (l *loader) measureAll(set *settings, gs []*group, per string, show func([]kindN, map[string][][]round)) error {
	set.describe(l, per)
	kinds := set.kinds()
	results, err := l.measure(gs, kinds, *set.runs)
	if err != nil {
		return err
	}
	settled, err := l.checkSettled(*set.facURL)
	if err != nil {
		return err
	}
	show(kinds, results)
	fmt.Printf("checked: every answer a 200 with a verdict, the same verdict for a text from every %s and endpoint; the facilitator settled %d payments, %d paid scans were answered with their scan\n",
		per, settled, l.paidOK)
	return nil
}

// round prepares n calls of kind for g and runs them.
func (l *loader) round(g *group, kind string, n int) (round, error) {
	calls, err := l.prepare(g, kind, n)
	if err != nil {
		return round{}, err
	}
	return l.run(g, kind, calls)
}

// checkSettled compares the facilitator's settlements with the paid scans
// answered: a payment taken without its scan, or a scan given without a
// payment, is a failure of the money path.
func (l *loader) checkSettled(facURL string) (int64, error) {
	resp, err := http.Get(strings.TrimRight(facURL, "/") + "/stats")
	if err != nil {
		return 0, fmt.Errorf("facilitator stats: %v", err)
	}
	defer resp.Body.Close()
	var st facilitatorStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, fmt.Errorf("facilitator stats: %v", err)
	}
	if st.Settled != l.paidOK || st.Refused != 0 {
		return 0, fmt.Errorf("the facilitator settled %d payments and refused %d, but %d paid scans were answered",
			st.Settled, st.Refused, l.paidOK)
	}
	return st.Settled, nil
}

func printTable(ts []*group, kindA, kindB string, results map[string][][]round) {
	fmt.Printf("%-9s %-10s %10s %10s %10s %15s\n", "kind", "binary", "rate/s", "p50", "p99", "server-cpu/req")
	for _, kind := range []string{kindA, kindB} {
		best := make([]round, len(ts))
		for i, t := range ts {
			for _, r := range results[kind][i] {
				if r.rate > best[i].rate {
					best[i] = r
				}
			}
			cpu := "-"
			if best[i].cpuPerReq > 0 {
				cpu = strconv.FormatFloat(float64(best[i].cpuPerReq)/1e3, 'f', 0, 64) + "µs"
			}
			fmt.Printf("%-9s %-10s %10.1f %10s %10s %15s\n", kind, t.name, best[i].rate, ms(best[i].p50), ms(best[i].p99), cpu)
		}
		if len(ts) < 2 {
			continue
		}
		last, first := len(ts)-1, 0
		lo, hi := 0.0, 0.0
		for r := range results[kind][first] {
			q := results[kind][last][r].rate / results[kind][first][r].rate
			if r == 0 || q < lo {
				lo = q
			}
			if r == 0 || q > hi {
				hi = q
			}
		}
		fmt.Printf("%-9s %-10s %9.3fx   (run by run %.3f-%.3f)\n", kind, ts[last].name+"/"+ts[first].name,
			best[last].rate/best[first].rate, lo, hi)
	}
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + "ms"
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
