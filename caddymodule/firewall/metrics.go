package firewall

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/promptwall/promptwall/engine"
)

// metrics are the firewall's Prometheus collectors. They are created once
// per process and registered into each config's registry, so counts go on
// across config reloads and several prompt_firewall handlers in one config
// share them. No label ever holds request text: phases, verdicts, actions
// and rule ids are all bounded sets, and so are hosts (hostLabels).
type metrics struct {
	requests     *prometheus.CounterVec
	matches      *prometheus.CounterVec
	scanDuration *prometheus.HistogramVec
	scannedBytes *prometheus.CounterVec
	cachedTexts  prometheus.Counter
	resumedBytes prometheus.Counter
}

// A phase is what a count is of: a client's request or the upstream's
// response to it. Every series of requests_total, matches_total,
// scan_duration_seconds and scanned_bytes_total carries one, so that one
// request and its response are two counts, never mixed in one.
type phase string

const (
	phaseRequest  phase = "request"
	phaseResponse phase = "response"
)

// otherHost is the host label of a request whose host no host matcher of
// its server names exactly, as in Caddy's own per-host metrics.
const otherHost = "_other"

var (
	metricsOnce sync.Once
	theMetrics  *metrics
)

func newMetrics() *metrics {
	const ns, sub = "promptwall", "firewall"
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "requests_total",
			Help:      "Requests and responses seen by prompt_firewall, by phase (request, response), host (one its server's host matchers name, else _other), verdict (safe, suspicious, malicious; none when not scanned) and action (pass, block, sanitize, log, refuse).",
		}, []string{"phase", "host", "verdict", "action"}),
		matches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "matches_total",
			Help:      "Rule matches found in scanned texts, by phase (request, response), host and rule id.",
		}, []string{"phase", "host", "rule"}),
		scanDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "scan_duration_seconds",
			Help:      "Time to find and scan the texts of one request body (phase request), or spent framing, scanning and forwarding one response's events, summed over the response and without the waits for the upstream (phase response).",
			// 25µs to about 6.5s: a chat turn scans in microseconds, a
			// long-context body of megabytes in milliseconds.
			Buckets: prometheus.ExponentialBuckets(25e-6, 4, 10),
		}, []string{"phase"}),
		scannedBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "scanned_bytes_total",
			Help:      "Bytes of text scanned: of requests (phase request), of the model's answers in responses (phase response).",
		}, []string{"phase"}),
		cachedTexts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "cached_texts_total",
			Help:      "Texts not scanned again because the same client sent them before and a scan found no match in them (the safe-text cache).",
		}),
		resumedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "resumed_bytes_total",
			Help:      "Bytes of request bodies not parsed again: whole messages of a conversation the same client sent before, in which no text had a match (the safe-text cache).",
		}),
	}
	return m
}

// registerMetrics registers the process-wide collectors into a config's
// registry. Registering the same collector twice in one registry (two
// handlers in one config) is not an error.
func registerMetrics(reg *prometheus.Registry) (*metrics, error) {
	metricsOnce.Do(func() { theMetrics = newMetrics() })
	m := theMetrics
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.matches, m.scanDuration, m.scannedBytes, m.cachedTexts, m.resumedBytes} {
		if err := reg.Register(c); err != nil {
			if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok && are.ExistingCollector == c {
				continue
			}
			return nil, err
		}
	}
	return m, nil
}

// hostSeries are the series of one value of the host label.
type hostSeries struct {
	host     string
	safePass prometheus.Counter // requests{request, host, safe, pass}: most requests, without a label lookup
}

func (m *metrics) forHost(host string) *hostSeries {
	return &hostSeries{host: host, safePass: m.requests.WithLabelValues(string(phaseRequest), host, string(engine.Safe), actionPass)}
}

// hostLabels are the values of the host label one handler gives: the
// hosts its server's host matchers name exactly. Any other host a request
// carries (a client chooses it) is otherHost, so the label's values are
// bounded by the config.
type hostLabels struct {
	known map[string]*hostSeries
	other *hostSeries
}

// newHostLabels reads the exact hosts of the top-level routes of srv (nil
// outside an HTTP server): every Caddyfile site address is one. Wildcards
// and placeholders are left out, as Caddy leaves them out of its own
// per-host metrics: they would let a client choose the value.
func newHostLabels(m *metrics, srv *caddyhttp.Server) *hostLabels {
	hl := &hostLabels{known: map[string]*hostSeries{}, other: m.forHost(otherHost)}
	if srv == nil {
		return hl
	}
	for _, route := range srv.Routes {
		for _, set := range route.MatcherSets {
			for _, matcher := range set {
				hm, ok := matcher.(*caddyhttp.MatchHost)
				if !ok {
					continue
				}
				for _, h := range *hm {
					if h = strings.ToLower(h); !strings.ContainsAny(h, "{*") && hl.known[h] == nil {
						hl.known[h] = m.forHost(h)
					}
				}
			}
		}
	}
	return hl
}

// of returns the series of a request's host: its Host without the port,
// compared as Caddy's host matcher compares it.
func (hl *hostLabels) of(r *http.Request) *hostSeries {
	if len(hl.known) == 0 {
		return hl.other
	}
	h := r.Host
	if strings.HasPrefix(h, "[") {
		// An IPv6 literal, with or without a port.
		if i := strings.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	if hs := hl.known[h]; hs != nil {
		return hs
	}
	if hs := hl.known[strings.ToLower(h)]; hs != nil {
		return hs
	}
	return hl.other
}

// request counts one request or response of phase p with its verdict and
// the action taken.
func (m *metrics) request(p phase, hs *hostSeries, verdict engine.Verdict, action string) {
	if p == phaseRequest && verdict == engine.Safe && action == actionPass {
		hs.safePass.Inc()
		return
	}
	m.requests.WithLabelValues(string(p), hs.host, string(verdict), action).Inc()
}

// scanned records one scan of phase p: its time and bytes.
func (m *metrics) scanned(p phase, d time.Duration, bytes int64) {
	m.scanDuration.WithLabelValues(string(p)).Observe(d.Seconds())
	m.scannedBytes.WithLabelValues(string(p)).Add(float64(bytes))
}

// match counts one match of rule in phase p.
func (m *metrics) match(p phase, hs *hostSeries, rule string) {
	m.matches.WithLabelValues(string(p), hs.host, rule).Inc()
}

// observeScan records the scan of a body of phase p: a request's, or an MCP server's message.
func (m *metrics) observeScan(p phase, hs *hostSeries, d time.Duration, o *outcome) {
	m.scanned(p, d, int64(o.bytes))
	if o.cached > 0 {
		m.cachedTexts.Add(float64(o.cached))
	}
	if o.resumed > 0 {
		m.resumedBytes.Add(float64(o.resumed))
	}
	for _, fl := range o.flagged {
		for _, mt := range fl.res.Matches {
			m.match(p, hs, mt.Rule)
		}
	}
}
