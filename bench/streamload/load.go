package main

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A run is one stream in flight: what the upstream is to send and, once
// done is closed, when it sent each event and when it ended the body.
type run struct {
	s    *stream
	gaps []time.Duration // before each event; nil: as fast as possible
	sent []time.Time
	end  time.Time
	done chan struct{}
}

// upstream is the fake LLM API: it answers the run a request names
// (X-Bench-Stream) with its events, flushed one by one, each at its time.
type upstream struct {
	runs sync.Map // id -> *run
	next atomic.Uint64
}

func (u *upstream) add(r *run) string {
	id := strconv.FormatUint(u.next.Add(1), 10)
	u.runs.Store(id, r)
	return id
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	v, ok := u.runs.LoadAndDelete(req.Header.Get("X-Bench-Stream"))
	if !ok {
		http.Error(w, "unknown stream", http.StatusNotFound)
		return
	}
	r := v.(*run)
	defer close(r.done)
	io.Copy(io.Discard, req.Body)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	r.sent = make([]time.Time, len(r.s.events))
	due := time.Now()
	for i, ev := range r.s.events {
		if r.gaps != nil {
			due = due.Add(r.gaps[i])
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
		r.sent[i] = time.Now()
		if _, err := w.Write(ev); err != nil {
			break
		}
		if err := rc.Flush(); err != nil {
			break
		}
	}
	r.end = time.Now()
}

// gaps returns the pauses before each event of stream number n: none before
// the first (the role event comes with the headers, as the APIs send it),
// then uniform in [lo, hi], the same for every site.
func gaps(s *stream, n int, lo, hi time.Duration) []time.Duration {
	g := make([]time.Duration, len(s.events))
	for i := 1; i < len(g); i++ {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%d", n, i)
		g[i] = lo + time.Duration(h.Sum64()%uint64(hi-lo+1))
	}
	return g
}

// result is what the client saw of one stream.
type result struct {
	r        *run
	start    time.Time
	header   time.Time
	first    time.Time // the first body byte
	arrivals []time.Time
	body     []byte
	err      error
}

var client = &http.Client{Transport: &http.Transport{
	DisableCompression:  true,
	MaxIdleConnsPerHost: 256,
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
}}

// fetch sends the request of r to base and reads the answer, noting when
// each event ("\n\n"-terminated: the events the upstream sends hold no blank
// line inside) arrived.
func fetch(u *upstream, base string, r *run, keepBody bool) *result {
	res := &result{r: r, arrivals: make([]time.Time, 0, len(r.s.events))}
	req, err := http.NewRequest("POST", base+r.s.path, bytes.NewReader(r.s.body))
	if err != nil {
		res.err = err
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer sk-bench")
	req.Header.Set("X-Api-Key", "sk-ant-bench")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("X-Bench-Stream", u.add(r))
	res.start = time.Now()
	resp, err := client.Do(req)
	if err != nil {
		res.err = err
		return res
	}
	defer resp.Body.Close()
	res.header = time.Now()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		res.err = fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
		return res
	}
	buf := make([]byte, 32<<10)
	var acc []byte
	scan := 0
	for {
		n, err := resp.Body.Read(buf)
		now := time.Now()
		if n > 0 {
			if res.first.IsZero() {
				res.first = now
			}
			acc = append(acc, buf[:n]...)
			for {
				i := bytes.Index(acc[scan:], []byte("\n\n"))
				if i < 0 {
					break
				}
				scan += i + 2
				res.arrivals = append(res.arrivals, now)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			res.err = err
			return res
		}
	}
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		res.err = errors.New("the upstream did not finish")
		return res
	}
	if keepBody {
		res.body = acc
	}
	if len(res.arrivals) != len(r.s.events) {
		res.err = fmt.Errorf("%d events arrived of %d", len(res.arrivals), len(r.s.events))
	}
	return res
}

// unchanged reports whether the client got the upstream's bytes exactly.
func (res *result) unchanged() bool {
	off := 0
	for _, ev := range res.r.s.events {
		if !bytes.HasPrefix(res.body[off:], ev) {
			return false
		}
		off += len(ev)
	}
	return off == len(res.body)
}
