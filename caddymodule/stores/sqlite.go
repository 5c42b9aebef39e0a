package stores

import (
	"context"
	"path/filepath"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/promptwall/promptwall/store"
)

func init() {
	caddy.RegisterModule(SQLite{})
}

// SQLite keeps the store in one local SQLite file: the default, for one
// server (or several processes on one machine sharing the file).
type SQLite struct {
	// Path is the database file; it and its directory are created on
	// first use (mode 0600 and 0700). Default: promptwall/scan.db in
	// Caddy's data directory.
	Path string `json:"path,omitempty"`

	key string
}

// CaddyModule returns the Caddy module information.
func (SQLite) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  Namespace + ".sqlite",
		New: func() caddy.Module { return new(SQLite) },
	}
}

// Provision fills in the default path and resolves the file's real path:
// one file under two names (a symbolic link) is one store.
func (s *SQLite) Provision(caddy.Context) error {
	if s.Path == "" {
		s.Path = filepath.Join(caddy.AppDataDir(), "promptwall", "scan.db")
	}
	abs, err := filepath.Abs(s.Path)
	if err != nil {
		return err
	}
	s.key = "sqlite:" + realPath(abs)
	return nil
}

// realPath is abs with symbolic links resolved, as far as it exists.
func realPath(abs string) string {
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		return p
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// StoreKey implements Backend.
func (s *SQLite) StoreKey() string { return s.key }

// OpenStore implements Backend.
func (s *SQLite) OpenStore(ctx context.Context) (store.Store, error) {
	return store.OpenSQLite(ctx, s.Path)
}

// UnmarshalCaddyfile sets up the backend from Caddyfile tokens. Syntax:
//
//	store sqlite <file>
func (s *SQLite) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the driver's name
	if !d.AllArgs(&s.Path) {
		return d.ArgErr()
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner     = (*SQLite)(nil)
	_ caddyfile.Unmarshaler = (*SQLite)(nil)
	_ Backend               = (*SQLite)(nil)
)
