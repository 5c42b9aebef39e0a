package stores

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

func TestDrivers(t *testing.T) {
	if d := Drivers(); !slices.Contains(d, "sqlite") || !slices.Contains(d, "postgres") || !slices.IsSorted(d) {
		t.Fatalf("drivers %v", d)
	}
}

// TestSQLiteKey: one file is one key whatever its name; two files are two.
func TestSQLiteKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "scan.db")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "link.db")); err != nil {
		t.Fatal(err)
	}
	key := func(path string) string {
		s := &SQLite{Path: path}
		if err := s.Provision(caddy.Context{}); err != nil {
			t.Fatal(err)
		}
		return s.StoreKey()
	}
	if key(file) != key(filepath.Join(dir, "link.db")) || key(file) != key(filepath.Join(dir, ".", "scan.db")) {
		t.Error("one file under two names has two keys")
	}
	if key(file) == key(filepath.Join(dir, "other.db")) {
		t.Error("two files have one key")
	}
	def := &SQLite{}
	def.Provision(caddy.Context{})
	if def.Path != filepath.Join(caddy.AppDataDir(), "promptwall", "scan.db") {
		t.Errorf("default path %s", def.Path)
	}
}

// TestPostgreSQLKey: the DSN's placeholders are replaced, its password is
// in no key, and an empty DSN (an unset variable) is refused.
func TestPostgreSQLKey(t *testing.T) {
	t.Setenv("PROMPTWALL_TEST_DSN", "postgres://app:hunter2@db.internal/scan")
	key := func(dsn string) (string, error) {
		p := &PostgreSQL{DSN: dsn}
		p.Provision(caddy.Context{})
		return p.StoreKey(), p.Validate()
	}
	k1, err := key("{env.PROMPTWALL_TEST_DSN}")
	if err != nil || strings.Contains(k1, "hunter2") {
		t.Fatalf("key %q, %v", k1, err)
	}
	if k2, _ := key("postgres://app:hunter2@db.internal/scan"); k2 != k1 {
		t.Error("the placeholder and its value give two keys")
	}
	if k3, _ := key("postgres://app:hunter2@db.internal/other"); k3 == k1 {
		t.Error("two databases give one key")
	}
	if _, err := key("{env.PROMPTWALL_TEST_UNSET}"); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an unset variable gave %v", err)
	}
}
