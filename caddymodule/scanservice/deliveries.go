package scanservice

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// deliveryRetry is how long a failed write of delivery marks waits before
// the next try.
const deliveryRetry = time.Second

// deliveries marks settled payments delivered, after their answer was
// sent: a crash between the ledger row and the answer leaves the payment
// settled, and a retry with it gets its scan. The marks are written by one
// goroutine, group-committed: as soon as there are any, all pending at
// once, so a paid scan costs two durable writes on its path (reserve,
// settle with its ledger row) and the third is shared. Until its mark is
// written a payment counts as delivered here from memory; a crash in
// between loses the marks of the answers sent during the last write, and
// each of those payments can be retried for its scan once more: paid for,
// never free.
type deliveries struct {
	mu sync.Mutex
	// pending holds the payments whose scan is being answered (false) or
	// was sent (true: to be written).
	pending map[string]bool
	wake    chan struct{}
	logger  *zap.Logger
}

func newDeliveries(logger *zap.Logger) *deliveries {
	return &deliveries{pending: map[string]bool{}, wake: make(chan struct{}, 1), logger: logger}
}

// hold counts key as delivered from now on, in this process: its answer
// is on its way.
func (d *deliveries) hold(key string) {
	d.mu.Lock()
	d.pending[key] = false
	d.mu.Unlock()
}

// sent has key's mark written: its answer went out. When it could not be
// sent (the client was gone), unsent frees it again for a retry.
func (d *deliveries) sent(key string) {
	d.mu.Lock()
	d.pending[key] = true
	d.mu.Unlock()
	d.signal()
}

func (d *deliveries) unsent(key string) {
	d.mu.Lock()
	delete(d.pending, key)
	d.mu.Unlock()
}

func (d *deliveries) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// has reports whether key was delivered and its mark is not written yet.
func (d *deliveries) has(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.pending[key]
	return ok
}

// flush writes the pending marks. Marks that fail stay pending for the
// next flush, which it reports.
func (d *deliveries) flush(ctx context.Context, st store.Store) bool {
	d.mu.Lock()
	keys := make([]string, 0, len(d.pending))
	for k, ready := range d.pending {
		if ready {
			keys = append(keys, k)
		}
	}
	d.mu.Unlock()
	if len(keys) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if err := st.Deliver(ctx, time.Now(), keys...); err != nil {
		d.logger.Error("marking paid scans delivered", zap.Int("payments", len(keys)), zap.Error(err))
		return false
	}
	d.mu.Lock()
	for _, k := range keys {
		delete(d.pending, k)
	}
	d.mu.Unlock()
	return true
}

// run writes marks as they come until ctx ends. The last flush is the
// pooled store's, before it closes.
func (d *deliveries) run(ctx context.Context, st store.Store) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		}
		if !d.flush(ctx, st) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(deliveryRetry):
			}
			d.signal()
		}
	}
}
