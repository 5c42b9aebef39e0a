package firewall

import (
	"time"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/rulebook"
)

// A response's metrics: it counts once in requests_total (phase response) when it ends,
// is blocked or is refused, with the verdict of every match found in it whatever their
// actions, its matches in matches_total, its text in scanned_bytes_total and the time the
// firewall spent on it in scan_duration_seconds.

// saw notes a final match of the response, for the metrics.
func (rw *respWriter) saw(m *engine.Match) {
	rw.rules = append(rw.rules, m.Rule)
	if m.Severity == rulebook.Malicious {
		rw.verdict = engine.Malicious
	} else if rw.verdict != engine.Malicious {
		rw.verdict = engine.Suspicious
	}
}

// pause ends the current call's share of the time spent on the response.
func (rw *respWriter) pause() {
	if !rw.since.IsZero() {
		rw.busy += time.Since(rw.since)
		rw.since = time.Time{}
	}
}

// count records the response once, with the action taken: pass for one forwarded
// unscanned (an error or bodiless status, verdict none), refuse (verdict none, as for a
// request) for one that could not be scanned.
func (rw *respWriter) count(action string) {
	if rw.counted {
		return
	}
	rw.counted = true
	m, hs := rw.f.metrics, rw.f.hosts.of(rw.r)
	verdict := rw.verdict
	switch {
	case rw.pass || action == actionRefuse:
		verdict = "none"
	case verdict == "":
		verdict = engine.Safe
	}
	m.request(phaseResponse, hs, verdict, action)
	if rw.pass {
		return
	}
	rw.pause()
	m.scanned(phaseResponse, rw.busy, rw.text+rw.wholeN)
	for _, r := range rw.rules {
		m.match(phaseResponse, hs, r)
	}
	rw.rules = nil
}
