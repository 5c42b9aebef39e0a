package scanservice

import (
	"errors"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the scan service's Prometheus collectors, created once per
// process and registered into each config's registry so counts go on
// across reloads. Labels are bounded sets (endpoint names, status codes,
// payment outcomes): never a text, a wallet or a transaction.
type metrics struct {
	requests *prometheus.CounterVec
	payments *prometheus.CounterVec
}

// Payment outcomes, the values of the outcome label.
const (
	outcomeRequired    = "required"    // 402 offer to a request without payment
	outcomeMalformed   = "malformed"   // PAYMENT-SIGNATURE not decodable (400)
	outcomeInvalid     = "invalid"     // refused by the local checks or the facilitator's verify
	outcomeDuplicate   = "duplicate"   // the payment was used before
	outcomeFailed      = "failed"      // settlement definitely failed
	outcomeUnavailable = "unavailable" // facilitator or store unreachable (503)
	outcomeSettled     = "settled"     // paid, recorded and answered
	outcomeUnrecorded  = "unrecorded"  // paid, but the ledger row could not be written
)

var (
	metricsOnce sync.Once
	theMetrics  *metrics
)

func newMetrics() *metrics {
	const ns, sub = "promptwall", "scan"
	return &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "requests_total",
			Help:      "Requests answered by prompt_scan, by endpoint (rules, precheck, scan, mcp, playground) and HTTP status code.",
		}, []string{"endpoint", "code"}),
		payments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns,
			Subsystem: sub,
			Name:      "payments_total",
			Help:      "Paid-scan payment outcomes: required, malformed, invalid, duplicate, failed, unavailable, settled, unrecorded.",
		}, []string{"outcome"}),
	}
}

// registerMetrics registers the process-wide collectors into a config's
// registry; a second handler in the same config finds them there already.
func registerMetrics(reg *prometheus.Registry) (*metrics, error) {
	metricsOnce.Do(func() { theMetrics = newMetrics() })
	m := theMetrics
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.payments, storeSeconds, requestStoreSeconds} {
		if err := reg.Register(c); err != nil {
			if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok && are.ExistingCollector == c {
				continue
			}
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) request(endpoint string, code int) {
	m.requests.WithLabelValues(endpoint, strconv.Itoa(code)).Inc()
}

func (m *metrics) payment(outcome string) {
	m.payments.WithLabelValues(outcome).Inc()
}
