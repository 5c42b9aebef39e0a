package firewall

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/promptwall/promptwall/engine"
)

// metrics are the firewall's Prometheus collectors. They are created once
// per process and registered into each config's registry, so counts go on
// across config reloads and several prompt_firewall handlers in one config
// share them. No label ever holds request text: verdicts, actions and rule
// ids are all bounded sets.
type metrics struct {
	requests     *prometheus.CounterVec
	matches      *prometheus.CounterVec
	scanDuration prometheus.Histogram
	scannedBytes prometheus.Counter
	cachedTexts  prometheus.Counter
	safePass     prometheus.Counter // requests{safe, pass}: most requests, without a label lookup
}

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
			Help:      "Requests seen by prompt_firewall, by verdict (safe, suspicious, malicious; none when not scanned) and action (pass, block, sanitize, log, refuse).",
		}, []string{"verdict", "action"}),
		matches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "matches_total",
			Help:      "Rule matches found in scanned request texts, by rule id.",
		}, []string{"rule"}),
		scanDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "scan_duration_seconds",
			Help:      "Time to find and scan the texts of one request body.",
			// 25µs to about 6.5s: a chat turn scans in microseconds, a
			// long-context body of megabytes in milliseconds.
			Buckets: prometheus.ExponentialBuckets(25e-6, 4, 10),
		}),
		scannedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "scanned_bytes_total",
			Help:      "Bytes of request text scanned.",
		}),
		cachedTexts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "cached_texts_total",
			Help:      "Texts not scanned again because the same client sent them before and a scan found no match in them (the safe-text cache).",
		}),
	}
	m.safePass = m.requests.WithLabelValues(string(engine.Safe), actionPass)
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
	for _, c := range []prometheus.Collector{m.requests, m.matches, m.scanDuration, m.scannedBytes, m.cachedTexts} {
		if err := reg.Register(c); err != nil {
			if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok && are.ExistingCollector == c {
				continue
			}
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) request(verdict engine.Verdict, action string) {
	if verdict == engine.Safe && action == actionPass {
		m.safePass.Inc()
		return
	}
	m.requests.WithLabelValues(string(verdict), action).Inc()
}

func (m *metrics) observeScan(d time.Duration, o *outcome) {
	m.scanDuration.Observe(d.Seconds())
	m.scannedBytes.Add(float64(o.bytes))
	if o.cached > 0 {
		m.cachedTexts.Add(float64(o.cached))
	}
	for _, fl := range o.flagged {
		for _, mt := range fl.res.Matches {
			m.matches.WithLabelValues(mt.Rule).Inc()
		}
	}
}
