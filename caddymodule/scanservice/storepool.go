package scanservice

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/caddymodule/stores"
	"github.com/promptwall/promptwall/store"
)

// pool shares one open store per backing database across handlers and
// config reloads: during a reload the old and the new config run side by
// side, and both must count pre-checks and payment keys in the same place,
// and know which payments the other is handling.
var pool = caddy.NewUsagePool()

// pooledStore is one open store with what this process knows of its
// payments beyond the store itself.
type pooledStore struct {
	store.Store
	id         string      // this server, as the payments it owns name it
	inflight   *inflight   // payments a request or reconciliation is handling
	unrecorded *unrecorded // landed payments whose ledger row is not written yet
	deliveries *deliveries // delivered payments whose mark is not written yet
	replays    *replays    // what recovers a lost answer by payment-identifier
	unreserved *unreserved // payments whose reservation failed here, never sent
	stop       context.CancelFunc
}

// Destruct writes the last delivery marks and closes the store, after the
// last handler using it is cleaned up.
func (p *pooledStore) Destruct() error {
	p.stop()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	p.deliveries.flush(ctx, p.Store, time.Now())
	p.Store.Leave(ctx, p.id) // best effort: without it, others wait out the heartbeat
	return p.Store.Close()
}

// Servers beat every heartbeatEvery; one not seen for ownerTimeout is
// taken for dead, and its payments in flight for left behind.
const (
	heartbeatEvery = 2 * time.Second
	ownerTimeout   = 3 * heartbeatEvery
)

// beat records that this server is alive until ctx ends.
func (p *pooledStore) beat(ctx context.Context, logger *zap.Logger) {
	repeat(ctx, heartbeatEvery, func() {
		bctx, cancel := context.WithTimeout(ctx, heartbeatEvery)
		defer cancel()
		if err := p.Heartbeat(bctx, p.id, time.Now()); err != nil && ctx.Err() == nil {
			logger.Error("recording this server's heartbeat in the store", zap.Error(err))
		}
	})
}

// repeat runs fn every d until ctx ends: the background work of the
// service (heartbeat, delivery marks, reconciliation, pruning).
func repeat(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// busy reports whether a payment in flight belongs to another server that
// is alive: that server may be handling it right now.
func (p *pooledStore) busy(pay store.Payment) bool {
	return pay.Owner != "" && pay.Owner != p.id && !pay.OwnerSeen.IsZero() &&
		time.Since(pay.OwnerSeen) < ownerTimeout
}

// sharedStore is one handler's reference to a pooled store.
type sharedStore struct {
	*pooledStore
	key string
}

// generations counts, per backing database, the pooled stores found gone
// (their file deleted or replaced): a config loaded after that opens the
// file at the path anew instead of sharing the dead store.
var generations struct {
	sync.Mutex
	n map[string]int
}

// loadStore is the configured backend, provisioned: SQLite at its default
// path when none is configured.
func (h *Handler) loadStore(ctx caddy.Context) (stores.Backend, error) {
	if h.StoreRaw == nil {
		b := new(stores.SQLite)
		return b, b.Provision(ctx)
	}
	mod, err := ctx.LoadModule(h, "StoreRaw")
	if err != nil {
		return nil, fmt.Errorf("loading the store: %w", err)
	}
	b, ok := mod.(stores.Backend)
	if !ok {
		return nil, fmt.Errorf("store module %T is not a %s backend", mod, stores.Namespace)
	}
	return b, nil
}

// openShared opens b's store, or takes another reference to it when it is
// already open in this process.
func openShared(ctx context.Context, b stores.Backend, logger *zap.Logger) (*sharedStore, error) {
	base := b.StoreKey()
	for attempt := 0; ; attempt++ {
		generations.Lock()
		key := base + "#" + strconv.Itoa(generations.n[base])
		generations.Unlock()
		v, _, err := pool.LoadOrNew(key, func() (caddy.Destructor, error) { return newPooled(ctx, b, logger) })
		if err != nil {
			return nil, fmt.Errorf("opening the store: %w", err)
		}
		s := &sharedStore{pooledStore: v.(*pooledStore), key: key}
		if _, _, err := s.Payment(ctx, ""); !errors.Is(err, store.ErrFileGone) || attempt > 0 {
			return s, nil
		}
		s.release()
		generations.Lock()
		if generations.n == nil {
			generations.n = map[string]int{}
		}
		generations.n[base]++
		generations.Unlock()
	}
}

func newPooled(ctx context.Context, b stores.Backend, logger *zap.Logger) (*pooledStore, error) {
	s, err := b.OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	s = timeStore(s)
	var id [16]byte
	rand.Read(id[:])
	p := &pooledStore{Store: s, id: hex.EncodeToString(id[:]), inflight: new(inflight),
		unrecorded: new(unrecorded), deliveries: newDeliveries(logger), replays: newReplays(), unreserved: new(unreserved)}
	if err := s.Heartbeat(ctx, p.id, time.Now()); err != nil {
		s.Close()
		return nil, err
	}
	// The delivery marks and the heartbeat outlive any one config: they
	// go on until the store closes.
	bg, stop := context.WithCancel(context.Background())
	p.stop = stop
	go p.deliveries.run(bg, s)
	go p.beat(bg, logger)
	return p, nil
}

// release drops this reference; the store is closed with the last one.
func (s *sharedStore) release() error {
	_, err := pool.Delete(s.key)
	return err
}

// prune drops pre-check counters of wallets idle for two days, hourly,
// until the config is unloaded. Counters are only needed for today's limit
// and the interval, so nothing still in force is lost. The store is passed
// in because Cleanup clears h.store while this may still be running.
func (h *Handler) prune(ctx context.Context, st store.Store) {
	every := h.pruneEvery
	if every <= 0 {
		every = time.Hour
	}
	repeat(ctx, every, func() {
		keep := max(48*time.Hour, h.interval)
		n, err := st.Prune(ctx, h.now().Add(-keep))
		if err != nil && ctx.Err() == nil {
			h.logger.Error("pruning pre-check counters", zap.Error(err))
		} else if n > 0 {
			if ce := h.logger.Check(zapcore.DebugLevel, "pruned pre-check counters"); ce != nil {
				ce.Write(zap.Int64("deleted", n))
			}
		}
	})
}
