package scanservice

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// deliveryGrace is how long after its answer was written a payment's
// delivery mark is written. When the process dies the kernel still sends
// what was written to the socket, but not what the server had buffered;
// and a mark written too early makes a lost answer unrecoverable, while one
// written late only lets a retry have the scan once more.
const deliveryGrace = 50 * time.Millisecond

// deliveries marks settled payments delivered, deliveryGrace after their
// answer was written: a crash between the ledger row and the answer leaves
// the payment settled, and a retry with it gets its scan. The marks are
// written by one goroutine in batches, so a paid scan costs two durable
// writes on its path (reserve, settle with its ledger row) and the third
// is shared. Until its mark is written a payment counts as delivered here
// from memory; a crash in between loses the marks of the last moments'
// answers, and each of those payments can be retried for its scan once
// more: paid for, never free.
type deliveries struct {
	mu sync.Mutex
	// pending holds the payments whose scan is being answered (zero
	// time) or was written at the time held.
	pending map[string]time.Time
	logger  *zap.Logger
}

func newDeliveries(logger *zap.Logger) *deliveries {
	return &deliveries{pending: map[string]time.Time{}, logger: logger}
}

// hold counts key as delivered from now on, in this process: its answer
// is on its way.
func (d *deliveries) hold(key string) {
	d.mu.Lock()
	d.pending[key] = time.Time{}
	d.mu.Unlock()
}

// sent has key's mark written: its answer went out. When it could not be
// sent (the client was gone), unsent frees it again for a retry.
func (d *deliveries) sent(key string) {
	d.mu.Lock()
	d.pending[key] = time.Now()
	d.mu.Unlock()
}

func (d *deliveries) unsent(key string) {
	d.mu.Lock()
	delete(d.pending, key)
	d.mu.Unlock()
}

// has reports whether key was delivered and its mark is not written yet.
func (d *deliveries) has(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.pending[key]
	return ok
}

// flush writes the marks of answers written before before. Marks that
// fail stay pending for the next flush.
func (d *deliveries) flush(ctx context.Context, st store.Store, before time.Time) {
	d.mu.Lock()
	var keys []string
	for k, at := range d.pending {
		if !at.IsZero() && !at.After(before) {
			keys = append(keys, k)
		}
	}
	d.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if err := st.Deliver(ctx, time.Now(), keys...); err != nil {
		d.logger.Error("marking paid scans delivered", zap.Int("payments", len(keys)), zap.Error(err))
		return
	}
	d.mu.Lock()
	for _, k := range keys {
		delete(d.pending, k)
	}
	d.mu.Unlock()
}

// run writes the marks as they come of age until ctx ends. The last flush
// is the pooled store's, before it closes.
func (d *deliveries) run(ctx context.Context, st store.Store) {
	repeat(ctx, deliveryGrace/2, func() { d.flush(ctx, st, time.Now().Add(-deliveryGrace)) })
}
