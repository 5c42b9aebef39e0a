package main

// scanload servers: configurations of one or several servers sharing a
// store, side by side, with what their store costs them.

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// opBound is the target a store operation must stay under at p99; it is
// a bucket bound of promptwall_scan_store_seconds, so the share of
// operations under it is exact.
const opBound = 0.005

// endpointOf is the endpoint label of a kind's requests.
var endpointOf = map[string]string{kindPaid: "scan", kindPrecheck: "precheck"}

func servers(args []string) error {
	fs := flag.NewFlagSet("servers", flag.ExitOnError)
	var serverFlags, adminFlags, pidFlags, configFlags, sharedFlags namedValues
	fs.Var(&serverFlags, "server", "name=URL of a prompt_scan site (repeat)")
	fs.Var(&adminFlags, "admin", "name=URL of a server's admin API, for its /metrics")
	fs.Var(&pidFlags, "pid", "name=PID of a server's process, for its CPU time")
	fs.Var(&configFlags, "config", "label=name,name,...: a configuration, the servers its clients are spread over (repeat; in table order)")
	fs.Var(&sharedFlags, "shared-pid", "label=PID: a process every configuration of that label uses (its database), charged with their CPU time too")
	set := addSettings(fs, 64)
	fs.Parse(args)
	if len(configFlags.names) < 1 {
		return fmt.Errorf("need at least one -config")
	}
	pids, err := pidsOf("pid", pidFlags)
	if err != nil {
		return err
	}
	shared, err := pidsOf("shared-pid", sharedFlags)
	if err != nil {
		return err
	}
	l, err := set.loader()
	if err != nil {
		return err
	}
	targets := map[string]*target{}
	for i, name := range serverFlags.names {
		u, err := loopbackURL(serverFlags.values[i])
		if err != nil {
			return err
		}
		targets[name] = newTarget(name, u, *set.conc)
	}
	for i, name := range adminFlags.names {
		t, ok := targets[name]
		if !ok {
			return fmt.Errorf("-admin %s: no -server %s", name, name)
		}
		if t.admin, err = loopbackURL(adminFlags.values[i]); err != nil {
			return err
		}
	}
	var gs []*group
	for i, label := range configFlags.names {
		g := &group{name: label}
		for _, name := range strings.Split(configFlags.values[i], ",") {
			t, ok := targets[name]
			if !ok {
				return fmt.Errorf("-config %s: no -server %s", label, name)
			}
			g.servers = append(g.servers, t)
			if p := pids[name]; p > 0 {
				g.pids = append(g.pids, p)
			}
		}
		if p := shared[label]; p > 0 {
			g.shared = append(g.shared, p)
		}
		if err := l.fetchOffer(g); err != nil {
			return err
		}
		gs = append(gs, g)
	}
	return l.measureAll(set, gs, "configuration", func(kinds []kindN, results map[string][][]round) {
		printServers(gs, kinds, *set.conc, l.pace, results)
		printOps(gs, kinds, results)
	})
}

// printServers prints a row per configuration and kind, of its best run
// (by rate; of a paced kind, the run of the median p99): the rate, the rate per CPU second of its servers and
// database, the client-side latency, the store time of a request and its
// share of the latency, and the store operations' p99 and share under
// opBound.
func printServers(gs []*group, kinds []kindN, conc int, paced map[string]float64, results map[string][][]round) {
	fmt.Printf("%-9s %7s %7s %-8s %8s %9s %8s %8s %8s %8s %6s %6s %8s %8s\n", "config", "servers", "clients", "kind",
		"rate/s", "/cpu-s", "p50", "p99", "store50", "store99", "sh50", "sh99", "op-p99", "op<=5ms")
	for _, k := range kinds {
		for i, g := range gs {
			best := pick(results[k.name][i], paced[k.name] > 0)
			perCPU := "-"
			if best.cpu > 0 {
				perCPU = fmt.Sprintf("%.0f", float64(best.n)/best.cpu.Seconds())
			}
			s50, s99, sh50, sh99, op99, under := "-", "-", "-", "-", "-", "-"
			if best.store != nil {
				req := best.store.requests[endpointOf[k.name]]
				if q := req.quantile(0.5); q >= 0 {
					s50, sh50 = ms(q), percent(float64(q)/float64(best.p50))
				}
				if q := req.quantile(0.99); q >= 0 {
					s99, sh99 = ms(q), percent(float64(q)/float64(best.p99))
				}
				all := best.store.allOps()
				if q := all.quantile(0.99); q >= 0 {
					op99, under = ms(q), fmt.Sprintf("%.2f%%", 100*all.under(opBound))
				}
			}
			fmt.Printf("%-9s %7d %7d %-8s %8.1f %9s %8s %8s %8s %8s %6s %6s %8s %8s\n", g.name, len(g.servers), conc, k.name,
				best.rate, perCPU, ms(best.p50), ms(best.p99), s50, s99, sh50, sh99, op99, under)
		}
	}
}

// printOps prints, per configuration and kind, each store operation's
// count, p50 and p99 over all measured runs.
func printOps(gs []*group, kinds []kindN, results map[string][][]round) {
	fmt.Println("store operations over all measured runs (op: count p50 p99), and the CPU time a request cost:")
	for _, k := range kinds {
		for i, g := range gs {
			sum := map[string]*hist{}
			for _, r := range results[k.name][i] {
				if r.store == nil {
					continue
				}
				for op, h := range r.store.ops {
					if sum[op] == nil {
						sum[op] = newHist()
					}
					sum[op].add(h, 1)
				}
			}
			var parts []string
			for _, op := range slices.Sorted(maps.Keys(sum)) {
				h := sum[op]
				if h.count < 0.5 {
					continue
				}
				parts = append(parts, fmt.Sprintf("%s: %.0f %s %s", op, h.count, ms(h.quantile(0.5)), ms(h.quantile(0.99))))
			}
			var n int
			var cpu, shared time.Duration
			for _, r := range results[k.name][i] {
				n, cpu, shared = n+r.n, cpu+r.cpu, shared+r.sharedCPU
			}
			if n > 0 && cpu > 0 {
				parts = append(parts, fmt.Sprintf("CPU a request %s servers + %s shared",
					us((cpu-shared)/time.Duration(n)), us(shared/time.Duration(n))))
			}
			if len(parts) > 0 {
				fmt.Printf("  %s x%d %s: %s\n", g.name, len(g.servers), k.name, strings.Join(parts, "; "))
			}
		}
	}
}

func percent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

// pick is the run with the best rate, or when paced (all runs at about
// one rate), the run of the median p99 latency.
func pick(runs []round, paced bool) round {
	if len(runs) == 0 {
		return round{}
	}
	if paced {
		rs := slices.Clone(runs)
		slices.SortFunc(rs, func(a, b round) int { return cmp.Compare(a.p99, b.p99) })
		return rs[len(rs)/2]
	}
	return slices.MaxFunc(runs, func(a, b round) int { return cmp.Compare(a.rate, b.rate) })
}

func us(d time.Duration) string { return fmt.Sprintf("%dµs", d.Microseconds()) }
