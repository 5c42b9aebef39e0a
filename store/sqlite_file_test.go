package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
)

// TestSQLiteFileGone deletes or replaces the database file under an open
// store: every operation fails with ErrFileGone from then on, where SQLite
// alone would go on writing to the unlinked file.
func TestSQLiteFileGone(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, path string)
	}{
		{"deleted", func(t *testing.T, path string) {
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
			}
		}},
		{"replaced", func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "other.db")
			s, err := store.OpenSQLite(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"moved away", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".bak"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "scan.db")
			s, err := store.OpenSQLite(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			now := time.Now()
			if _, err := s.Precheck(ctx, "wallet", now, 100, 0); err != nil {
				t.Fatal(err)
			}
			tc.do(t, path)
			ops := map[string]error{}
			_, ops["precheck"] = s.Precheck(ctx, "wallet", now, 100, 0)
			_, _, ops["reserve"] = s.Reserve(ctx, store.Payment{Key: "k"}, now)
			_, _, ops["payment"] = s.Payment(ctx, "k")
			_, ops["settle"] = s.Settle(ctx, "k", "me", "tx", store.LedgerRow{Time: now}, now)
			ops["deliver"] = s.Deliver(ctx, now, "k")
			ops["release"] = s.Release(ctx, "k")
			_, ops["ledger"] = s.Ledger(ctx, now.Add(-time.Hour), now.Add(time.Hour))
			_, ops["settling"] = s.Settling(ctx, now, 10)
			_, ops["prune"] = s.Prune(ctx, now)
			ops["heartbeat"] = s.Heartbeat(ctx, "me", now)
			for op, err := range ops {
				if !errors.Is(err, store.ErrFileGone) {
					t.Errorf("%s after the file was %s: %v, want ErrFileGone", op, tc.name, err)
				}
			}
		})
	}
}

// TestSQLiteMigratesVersion1 opens a file written by schema version 1: its
// used payment keys stay used (as delivered) and its ledger rows stay.
func TestSQLiteMigratesVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE ledger (payer TEXT NOT NULL, time TEXT NOT NULL, price INTEGER NOT NULL, verdict TEXT NOT NULL, category_counts TEXT NOT NULL)`,
		`CREATE INDEX ledger_time ON ledger (time)`,
		`CREATE TABLE precheck (caller TEXT NOT NULL PRIMARY KEY, day TEXT NOT NULL, count INTEGER NOT NULL, last_ms INTEGER NOT NULL) WITHOUT ROWID`,
		`CREATE INDEX precheck_last ON precheck (last_ms)`,
		`CREATE TABLE payments (key TEXT NOT NULL PRIMARY KEY, reserved_at TEXT NOT NULL) WITHOUT ROWID`,
		`PRAGMA user_version = 1`,
		`INSERT INTO payments VALUES ('old-key', '2026-03-14T12:00:00.000000Z')`,
		`INSERT INTO ledger VALUES ('payer', '2026-03-14T12:00:00.000000Z', 10000, 'safe', '{}')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()

	s, err := store.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, known, err := s.Payment(ctx, "old-key")
	if err != nil || !known || p.State != store.PaymentDelivered {
		t.Fatalf("a key used under version 1: %+v %v %v, want delivered", p, known, err)
	}
	if _, ok, err := s.Reserve(ctx, store.Payment{Key: "old-key"}, time.Now()); err != nil || ok {
		t.Fatalf("a key used under version 1 was reserved again: %v %v", ok, err)
	}
	noon := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	if rows, err := s.Ledger(ctx, noon, noon.Add(time.Hour)); err != nil || len(rows) != 1 {
		t.Fatalf("ledger after migration: %v %v", rows, err)
	}
	var version int
	if err := rawDB(t, path).QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != 2 {
		t.Fatalf("schema version %d %v, want 2", version, err)
	}
}
