package scanservice

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

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
	stop       context.CancelFunc
}

// Destruct writes the last delivery marks and closes the store, after the
// last handler using it is cleaned up.
func (p *pooledStore) Destruct() error {
	p.stop()
	p.deliveries.flush(context.Background(), p.Store)
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
			deliveries: newDeliveries(logger), stop: stop}
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
