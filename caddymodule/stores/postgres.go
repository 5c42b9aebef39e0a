package stores

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/promptwall/promptwall/store"
)

func init() {
	caddy.RegisterModule(PostgreSQL{})
}

// PostgreSQL keeps the store in a PostgreSQL database, which several
// servers share: pre-check quotas and used payments are then exact across
// all of them. The schema is created or migrated when a server starts;
// servers starting at once take turns.
type PostgreSQL struct {
	// DSN is the connection string, a postgres:// URL or key=value pairs
	// as pgx reads them: host, database, user, password, TLS (sslmode,
	// sslrootcert, ...), pool_max_conns, and statement_timeout (default
	// 5s). Placeholders such as {env.DATABASE_URL} are replaced when the
	// config loads, so the secret need not be in the JSON. Required.
	DSN string `json:"dsn,omitempty"`

	dsn string // DSN with placeholders replaced
}

// CaddyModule returns the Caddy module information.
func (PostgreSQL) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  Namespace + ".postgres",
		New: func() caddy.Module { return new(PostgreSQL) },
	}
}

// Provision replaces the DSN's placeholders.
func (p *PostgreSQL) Provision(caddy.Context) error {
	p.dsn = caddy.NewReplacer().ReplaceKnown(p.DSN, "")
	return nil
}

// Validate refuses an empty DSN: an unset DATABASE_URL must not fall back
// to whatever libpq defaults a machine has.
func (p *PostgreSQL) Validate() error {
	if p.dsn == "" {
		return errors.New("store postgres: the dsn is empty (is the environment variable it names set?)")
	}
	return nil
}

// StoreKey implements Backend: a hash, so the password is in no key.
func (p *PostgreSQL) StoreKey() string {
	sum := sha256.Sum256([]byte(p.dsn))
	return "postgres:" + hex.EncodeToString(sum[:])
}

// OpenStore implements Backend.
func (p *PostgreSQL) OpenStore(ctx context.Context) (store.Store, error) {
	return store.OpenPostgreSQL(ctx, p.dsn)
}

// UnmarshalCaddyfile sets up the backend from Caddyfile tokens. Syntax:
//
//	store postgres <dsn>
//
// for example `store postgres {env.DATABASE_URL}`.
func (p *PostgreSQL) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the driver's name
	if !d.AllArgs(&p.DSN) {
		return d.ArgErr()
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner     = (*PostgreSQL)(nil)
	_ caddy.Validator       = (*PostgreSQL)(nil)
	_ caddyfile.Unmarshaler = (*PostgreSQL)(nil)
	_ Backend               = (*PostgreSQL)(nil)
)
