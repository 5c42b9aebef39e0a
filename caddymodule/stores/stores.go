// Package stores makes the scan service's store backends Caddy modules in
// the promptwall.stores namespace, as Caddy does for its own storage
// (caddy.storage): prompt_scan names a backend by its driver, and a third
// party adds one by registering a module promptwall.stores.<driver> that
// implements Backend.
//
// In JSON the driver is the inline key:
//
//	"store": {"driver": "sqlite", "path": "/var/lib/promptwall/scan.db"}
//	"store": {"driver": "postgres", "dsn": "{env.DATABASE_URL}"}
//
// In the Caddyfile, `store <driver> <args...>` hands the line (and any
// block) to the driver's UnmarshalCaddyfile.
package stores

import (
	"context"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/store"
)

// Namespace is where store backends are registered.
const Namespace = "promptwall.stores"

// Backend is a promptwall.stores module: a store the scan service can open.
// Modules are provisioned before use.
type Backend interface {
	// StoreKey names the database the backend opens. Handlers whose
	// backends give one key share one open store in the process, as the
	// old and the new config do during a reload; two keys must never name
	// one database. The key is never printed, but keep secrets out of it
	// (hash them).
	StoreKey() string

	// OpenStore opens the store, creating or migrating its schema. Its
	// error must not repeat a secret of the configuration.
	OpenStore(ctx context.Context) (store.Store, error)
}

// Drivers lists the registered drivers, sorted: what a Caddyfile error
// offers.
func Drivers() []string {
	var ds []string
	for _, m := range caddy.GetModules(Namespace) {
		ds = append(ds, strings.TrimPrefix(string(m.ID), Namespace+"."))
	}
	slices.Sort(ds)
	return ds
}
