package main

// The store's own timing, as the servers measure it: prompt_scan's
// promptwall_scan_store_seconds{op} (each store operation) and
// promptwall_scan_request_store_seconds{endpoint} (each request's store
// time), read from each server's admin /metrics before and after a round.

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	metricOps      = "promptwall_scan_store_seconds"
	metricRequests = "promptwall_scan_request_store_seconds"
)

// hist is a Prometheus histogram: cumulative counts by upper bound.
type hist struct {
	le     map[float64]float64 // upper bound (+Inf included) -> observations <= it
	count  float64
	sum    float64
	bounds []float64 // the keys of le, ascending; set by sorted
}

func newHist() *hist { return &hist{le: map[float64]float64{}} }

func (h *hist) add(o *hist, sign float64) {
	for b, c := range o.le {
		h.le[b] += sign * c
	}
	h.count += sign * o.count
	h.sum += sign * o.sum
	h.bounds = nil
}

func (h *hist) sorted() []float64 {
	if h.bounds == nil {
		for b := range h.le {
			h.bounds = append(h.bounds, b)
		}
		slices.Sort(h.bounds)
	}
	return h.bounds
}

// quantile estimates the q-quantile as Prometheus's histogram_quantile
// does, linearly within the bucket it falls in; -1 without observations.
// In the +Inf bucket it returns the largest finite bound.
func (h *hist) quantile(q float64) time.Duration {
	if h == nil || h.count <= 0 {
		return -1
	}
	rank := q * h.count
	lo, below := 0.0, 0.0
	for _, b := range h.sorted() {
		c := h.le[b]
		if c >= rank {
			if math.IsInf(b, 1) {
				return seconds(lo)
			}
			if c == below {
				return seconds(b)
			}
			return seconds(lo + (b-lo)*(rank-below)/(c-below))
		}
		lo, below = b, c
	}
	return seconds(lo)
}

// under is the share of observations at most bound, exact when bound is a
// bucket's bound; -1 without observations.
func (h *hist) under(bound float64) float64 {
	if h == nil || h.count <= 0 {
		return -1
	}
	return h.le[bound] / h.count
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// storeTimes is what a group's servers measured of their store.
type storeTimes struct {
	ops      map[string]*hist // by op, summed over the servers
	requests map[string]*hist // by endpoint, summed over the servers
}

func (s *storeTimes) minus(o *storeTimes) *storeTimes {
	d := &storeTimes{ops: map[string]*hist{}, requests: map[string]*hist{}}
	for _, pair := range []struct{ to, a, b map[string]*hist }{{d.ops, s.ops, o.ops}, {d.requests, s.requests, o.requests}} {
		for k, h := range pair.a {
			x := newHist()
			x.add(h, 1)
			if p, ok := pair.b[k]; ok {
				x.add(p, -1)
			}
			pair.to[k] = x
		}
	}
	return d
}

// allOps is every operation's histogram in one.
func (s *storeTimes) allOps() *hist {
	all := newHist()
	for _, h := range s.ops {
		all.add(h, 1)
	}
	return all
}

// scrapeStore reads the store's histograms from every server of g, summed;
// nil when a server has no admin API to read them from.
func scrapeStore(g *group) (*storeTimes, error) {
	st := &storeTimes{ops: map[string]*hist{}, requests: map[string]*hist{}}
	for _, t := range g.servers {
		if t.admin == "" {
			return nil, nil
		}
		if err := st.scrape(t.admin + "/metrics"); err != nil {
			return nil, fmt.Errorf("%s: %v", t.name, err)
		}
	}
	if len(st.ops) == 0 {
		return nil, fmt.Errorf("%s: the servers' /metrics have no %s", g.name, metricOps)
	}
	return st, nil
}

func (st *storeTimes) scrape(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var into map[string]*hist
		var label, rest string
		switch {
		case strings.HasPrefix(line, metricOps+"_"):
			into, label, rest = st.ops, "op", line[len(metricOps)+1:]
		case strings.HasPrefix(line, metricRequests+"_"):
			into, label, rest = st.requests, "endpoint", line[len(metricRequests)+1:]
		default:
			continue
		}
		if err := parseSample(into, label, rest); err != nil {
			return fmt.Errorf("%s: %q: %v", url, line, err)
		}
	}
	return sc.Err()
}

// parseSample adds one line of a histogram in the text exposition format,
// from after "name_" (bucket{...,le="b"} v, sum{...} v, count{...} v), to
// the histogram of its label's value. The labels of these two metrics are
// fixed names: no value holds a comma, a quote or a backslash.
func parseSample(into map[string]*hist, label, rest string) error {
	suffix, rest, ok := strings.Cut(rest, "{")
	if !ok {
		return fmt.Errorf("no labels")
	}
	labels, value, ok := strings.Cut(rest, "} ")
	if !ok {
		return fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
	if err != nil {
		return err
	}
	lv := map[string]string{}
	for _, kv := range strings.Split(labels, ",") {
		k, q, _ := strings.Cut(kv, "=")
		lv[k] = strings.Trim(q, `"`)
	}
	h := into[lv[label]]
	if h == nil {
		h = newHist()
		into[lv[label]] = h
	}
	switch suffix {
	case "bucket":
		b, err := strconv.ParseFloat(lv["le"], 64)
		if err != nil {
			return err
		}
		h.le[b] += v
	case "sum":
		h.sum += v
	case "count":
		h.count += v
	}
	return nil
}
