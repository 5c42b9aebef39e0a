package scanservice

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/store"
)

// stores shares one open store per backing database across handlers and
// config reloads: during a reload the old and the new config run side by
// side, and both must count pre-checks and payment keys in the same place,
// and know which payments the other is handling.
var stores = caddy.NewUsagePool()

// pooledStore is one open store with what this process knows of its
// payments beyond the store itself.
type pooledStore struct {
	store.Store
	inflight   *inflight   // payments a request or reconciliation is handling
	unrecorded *unrecorded // landed payments whose ledger row is not written yet
	deliveries *deliveries // delivered payments whose mark is not written yet
	replays    *replays    // what recovers a lost answer by payment-identifier
	stop       context.CancelFunc
}

// Destruct writes the last delivery marks and closes the store, after the
// last handler using it is cleaned up.
func (p *pooledStore) Destruct() error {
	p.stop()
	p.deliveries.flush(context.Background(), p.Store, time.Now())
	return p.Store.Close()
}

// sharedStore is one handler's reference to a pooled store.
type sharedStore struct {
	*pooledStore
	key string
}

// openShared opens cfg's store, or takes another reference to it when it is
// already open in this process.
func openShared(ctx context.Context, cfg store.Config, logger *zap.Logger) (*sharedStore, error) {
	key := cfg.Driver + ":" + cfg.Path
	if cfg.Driver == "sqlite" && cfg.Path != "" {
		if abs, err := filepath.Abs(cfg.Path); err == nil {
			key = cfg.Driver + ":" + abs
		}
	}
	v, _, err := stores.LoadOrNew(key, func() (caddy.Destructor, error) {
		s, err := store.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		// The delivery marks outlive any one config: they are written
		// until the store closes.
		bg, stop := context.WithCancel(context.Background())
		p := &pooledStore{Store: s, inflight: new(inflight), unrecorded: new(unrecorded),
			deliveries: newDeliveries(logger), replays: newReplays(), stop: stop}
		go p.deliveries.run(bg, s)
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	return &sharedStore{pooledStore: v.(*pooledStore), key: key}, nil
}

// release drops this reference; the store is closed with the last one.
func (s *sharedStore) release() error {
	_, err := stores.Delete(s.key)
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
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		keep := max(48*time.Hour, h.interval)
		n, err := st.Prune(ctx, h.now().Add(-keep))
		if err != nil && ctx.Err() == nil {
			h.logger.Error("pruning pre-check counters", zap.Error(err))
		} else if n > 0 {
			if ce := h.logger.Check(zapcore.DebugLevel, "pruned pre-check counters"); ce != nil {
				ce.Write(zap.Int64("deleted", n))
			}
		}
	}
}
