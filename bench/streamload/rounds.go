package main

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/promptwall/promptwall/bench/proccpu"
)

// pacedStats are one target's paced figures over all rounds.
type pacedStats struct {
	notHeld    []time.Duration // arrival − send of events final on arrival
	heldExcess []time.Duration // arrival − send − hold of the others (hold 0 where the target holds nothing)
	holds      []time.Duration // the hold-back those required
	ttfb, hdr  []time.Duration // request sent → first body byte, → response headers
	streams    int
	events     int
	changed    int // streams whose bytes differ from the upstream's (sanitized)
	errs       int
	firstErr   error
}

// runRound runs streams on t from workers concurrent clients until d has
// passed (0: one stream a worker), the answers in the same order for every
// target of round r, and gives each result to take.
func (c *config) runRound(t target, r, workers int, d time.Duration, paced bool, streams []*stream, take func(*result)) {
	var next atomic.Int64
	next.Store(int64(r+1) * 7919)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1))
				s := streams[n%len(streams)]
				ru := &run{s: s, done: make(chan struct{})}
				if paced {
					ru.gaps = gaps(s, n, c.lo, c.hi)
				}
				res := fetch(c.upstream, t.url, ru, true)
				mu.Lock()
				take(res)
				mu.Unlock()
				if time.Since(start) >= d {
					return
				}
			}
		}()
	}
	wg.Wait()
}

func (c *config) paced(api string, streams []*stream) {
	fmt.Printf("paced: %d streams at a time per target, an event every %v-%v, %d rounds of %v per target\n",
		c.streams, c.lo, c.hi, c.rounds, c.d)
	stats := map[string]*pacedStats{}
	for _, t := range c.targets {
		stats[t.name] = &pacedStats{}
		c.runRound(t, -1, 2, 0, true, streams, func(*result) {}) // warm-up
	}
	for r := 0; r < c.rounds; r++ {
		for _, t := range c.order(r) {
			st, holds := stats[t.name], c.holding[t.name]
			c.runRound(t, r, c.streams, c.d, true, streams, func(res *result) {
				if res.err != nil {
					if st.errs++; st.firstErr == nil {
						st.firstErr = res.err
					}
					return
				}
				st.streams++
				if !res.unchanged() {
					st.changed++
				}
				st.ttfb = append(st.ttfb, res.first.Sub(res.start))
				st.hdr = append(st.hdr, res.header.Sub(res.start))
				ru := res.r
				for k, at := range res.arrivals {
					st.events++
					lat := at.Sub(ru.sent[k])
					by := ru.s.finalBy[k]
					if by == k {
						st.notHeld = append(st.notHeld, lat)
						continue
					}
					hold := time.Duration(0)
					if holds {
						final := ru.end
						if by < len(ru.sent) {
							final = ru.sent[by]
						}
						hold = final.Sub(ru.sent[k])
						st.holds = append(st.holds, hold)
					}
					st.heldExcess = append(st.heldExcess, lat-hold)
				}
			})
		}
	}

	fmt.Printf("%-16s %7s %7s %6s | %9s %9s | %9s %9s | %9s %9s | %9s %9s | %9s %9s | %s\n",
		"target", "streams", "events", "held", "ttfb-p50", "ttfb-p99", "hdr-p50", "hdr-p99",
		"nh-p50", "nh-p99", "hold-p50", "hold-p99", "beyond-p50", "beyond-p99", "changed/errors")
	for _, t := range c.targets {
		st := stats[t.name]
		fmt.Printf("%-16s %7d %7d %5.1f%% | %9s %9s | %9s %9s | %9s %9s | %9s %9s | %9s %9s | %d/%d\n",
			t.name, st.streams, st.events, 100*float64(len(st.heldExcess))/float64(max(1, st.events)),
			ms(q(st.ttfb, .5)), ms(q(st.ttfb, .99)), ms(q(st.hdr, .5)), ms(q(st.hdr, .99)),
			ms(q(st.notHeld, .5)), ms(q(st.notHeld, .99)), ms(q(st.holds, .5)), ms(q(st.holds, .99)),
			ms(q(st.heldExcess, .5)), ms(q(st.heldExcess, .99)), st.changed, st.errs)
		if st.firstErr != nil {
			fmt.Printf("  first error: %v\n", st.firstErr)
		}
	}
	base := stats[c.baseline]
	fmt.Printf("added over %s (quantile differences):\n", c.baseline)
	for _, t := range c.targets[1:] {
		st := stats[t.name]
		fmt.Printf("%-16s not held p50 %s p99 %s | held, beyond the hold p50 %s p99 %s | all events p99 %s | ttfb p50 %s p99 %s\n",
			t.name, msd(q(st.notHeld, .5)-q(base.notHeld, .5)), msd(q(st.notHeld, .99)-q(base.notHeld, .99)),
			msd(q(st.heldExcess, .5)-q(base.heldExcess, .5)), msd(q(st.heldExcess, .99)-q(base.heldExcess, .99)),
			msd(q(concat(st.notHeld, st.heldExcess), .99)-q(concat(base.notHeld, base.heldExcess), .99)),
			msd(q(st.ttfb, .5)-q(base.ttfb, .5)), msd(q(st.ttfb, .99)-q(base.ttfb, .99)))
	}
}

// fastRound is one target's round at full speed.
type fastRound struct {
	cpu              time.Duration
	wall             time.Duration
	streams, errs    int
	text, wire       int
	perText, perWire float64 // µs of caddy CPU per KiB
	changed          int
	firstErr         error
}

func (c *config) fast(api string, streams []*stream) {
	fmt.Printf("fast: %d streams at a time per target, events as fast as they go, %d rounds of %v per target\n",
		c.conns, c.rounds, c.fastD)
	rounds := map[string][]fastRound{}
	for _, t := range c.targets {
		c.runRound(t, -1, c.conns, time.Second/2, false, streams, func(*result) {}) // warm-up
	}
	for r := 0; r < c.rounds; r++ {
		for _, t := range c.order(r) {
			var fr fastRound
			cpu0, t0 := proccpu.Of(c.cpuPid), time.Now()
			c.runRound(t, r, c.conns, c.fastD, false, streams, func(res *result) {
				if res.err != nil {
					if fr.errs++; fr.firstErr == nil {
						fr.firstErr = res.err
					}
					return
				}
				fr.streams++
				fr.text += res.r.s.text
				fr.wire += res.r.s.wire
				if !res.unchanged() {
					fr.changed++
				}
			})
			fr.wall, fr.cpu = time.Since(t0), proccpu.Of(c.cpuPid)-cpu0
			fr.perText = float64(fr.cpu.Microseconds()) / (float64(fr.text) / 1024)
			fr.perWire = float64(fr.cpu.Microseconds()) / (float64(fr.wire) / 1024)
			rounds[t.name] = append(rounds[t.name], fr)
		}
	}
	fmt.Printf("%-16s %9s %9s %12s %12s %9s %s\n", "target", "streams/s", "text MB/s", "cpu µs/KiB text", "µs/KiB wire", "cpu/wall", "changed/errors")
	for _, t := range c.targets {
		rs := rounds[t.name]
		var st, tx, pt, pw, cw []float64
		changed, errs := 0, 0
		for _, fr := range rs {
			st = append(st, float64(fr.streams)/fr.wall.Seconds())
			tx = append(tx, float64(fr.text)/1e6/fr.wall.Seconds())
			pt = append(pt, fr.perText)
			pw = append(pw, fr.perWire)
			cw = append(cw, fr.cpu.Seconds()/fr.wall.Seconds())
			changed += fr.changed
			errs += fr.errs
		}
		fmt.Printf("%-16s %9.0f %9.2f %15.1f %12.2f %9.2f %d/%d\n", t.name, med(st), med(tx), med(pt), med(pw), med(cw), changed, errs)
		for _, fr := range rs {
			if fr.firstErr != nil {
				fmt.Printf("  first error: %v\n", fr.firstErr)
				break
			}
		}
	}
	for _, ref := range []string{c.baseline, c.reference} {
		if ref == "" {
			continue
		}
		fmt.Printf("CPU added over %s, µs per KiB of text / of wire (median of the rounds' differences, range):\n", ref)
		for _, t := range c.targets {
			if t.name == ref || t.name == c.baseline {
				continue
			}
			var dt, dw []float64
			for i, fr := range rounds[t.name] {
				dt = append(dt, fr.perText-rounds[ref][i].perText)
				dw = append(dw, fr.perWire-rounds[ref][i].perWire)
			}
			fmt.Printf("%-16s text %+.1f (%+.1f to %+.1f)   wire %+.2f (%+.2f to %+.2f)\n", t.name,
				med(dt), slices.Min(dt), slices.Max(dt), med(dw), slices.Min(dw), slices.Max(dw))
		}
	}
}

// q returns the q-quantile of ds (nearest rank), 0 for none.
func q(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func concat(a, b []time.Duration) []time.Duration { return append(slices.Clone(a), b...) }

func med(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func ms(d time.Duration) string  { return fmt.Sprintf("%.3fms", float64(d)/1e6) }
func msd(d time.Duration) string { return fmt.Sprintf("%+.3fms", float64(d)/1e6) }
