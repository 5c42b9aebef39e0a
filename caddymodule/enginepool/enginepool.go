// Package enginepool shares compiled rulebooks between handlers and across
// config reloads: compiling is done once per rulebook content, and a reload
// that keeps the rulebook reuses the engine the old config had.
package enginepool

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/rulebook"
)

var pool = caddy.NewUsagePool()

type pooled struct{ e *engine.Engine }

func (pooled) Destruct() error { return nil }

// Handle is one user's reference to a shared engine. Release it in the
// module's Cleanup.
type Handle struct {
	Engine *engine.Engine
	key    string
}

// Release drops this reference; the engine is freed with the last one.
func (h *Handle) Release() {
	if h != nil && h.key != "" {
		pool.Delete(h.key)
		h.key = ""
	}
}

// Load returns the engine for the rulebook file at path, or for the
// embedded v1 rulebook when path is empty. The key is the content hash, so
// an edited file is compiled anew on reload and an unchanged one is not.
func Load(path string) (*Handle, error) {
	var data []byte
	if path != "" {
		var err error
		data, err = os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("loading rulebook %s: %w", path, err)
		}
	} else {
		data = rulebook.Default().Raw
	}
	sum := sha256.Sum256(data)
	key := hex.EncodeToString(sum[:])
	v, _, err := pool.LoadOrNew(key, func() (caddy.Destructor, error) {
		rb := rulebook.Default()
		if path != "" {
			var err error
			if rb, err = rulebook.Parse(data); err != nil {
				return nil, fmt.Errorf("loading rulebook %s: %w", path, err)
			}
		}
		e, err := engine.New(rb)
		if err != nil {
			return nil, fmt.Errorf("compiling rulebook %s: %w", rb.ID, err)
		}
		return pooled{e}, nil
	})
	if err != nil {
		return nil, err
	}
	return &Handle{Engine: v.(pooled).e, key: key}, nil
}
