package scanservice

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/store"
)

// stores shares one open store per backing database across handlers and
// config reloads: during a reload the old and the new config run side by
// side, and both must count pre-checks and payment keys in the same place.
var stores = caddy.NewUsagePool()

type pooledStore struct{ store.Store }

func (p pooledStore) Destruct() error { return p.Store.Close() }

// sharedStore is one handler's reference to a pooled store.
type sharedStore struct {
	store.Store
	key string
}

// openShared opens cfg's store, or takes another reference to it when it is
// already open in this process.
func openShared(ctx context.Context, cfg store.Config) (*sharedStore, error) {
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
		return pooledStore{s}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	return &sharedStore{Store: v.(pooledStore).Store, key: key}, nil
}

// release drops this reference; the store is closed with the last one.
func (s *sharedStore) release() error {
	_, err := stores.Delete(s.key)
	return err
}
