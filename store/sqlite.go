package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"time"

	_ "modernc.org/sqlite" // pure Go: no cgo, so the one binary stays static
)

// ledgerTimeFormat is fixed-width, so text order is time order and range
// queries on the column are plain comparisons.
const ledgerTimeFormat = "2006-01-02T15:04:05.000000Z"

// sqliteSchema is the schema, version 1. The category counts are one JSON
// object column rather than one column per category because the categories
// belong to the rulebook, and a custom rulebook brings its own: a fixed set
// of columns would need a migration per rulebook. SQLite's json_extract and
// PostgreSQL's jsonb query it just as well.
const sqliteSchema = `
CREATE TABLE IF NOT EXISTS ledger (
	payer           TEXT    NOT NULL,
	time            TEXT    NOT NULL,
	price           INTEGER NOT NULL,
	verdict         TEXT    NOT NULL,
	category_counts TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_time ON ledger (time);
CREATE TABLE IF NOT EXISTS precheck (
	caller  TEXT    NOT NULL PRIMARY KEY,
	day     TEXT    NOT NULL,
	count   INTEGER NOT NULL,
	last_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS precheck_last ON precheck (last_ms);
CREATE TABLE IF NOT EXISTS payments (
	key         TEXT NOT NULL PRIMARY KEY,
	reserved_at TEXT NOT NULL
) WITHOUT ROWID;
PRAGMA user_version = 1;
`

// SQLite is the default backend: one database file in WAL mode.
type SQLite struct {
	db   *sql.DB
	path string
	// wlock serializes this process's writes so they queue in Go instead
	// of polling SQLite's busy handler; other processes on the same file
	// are still kept apart by SQLite's own locks (BEGIN IMMEDIATE,
	// busy_timeout). It is a channel, not a mutex, so that each waiter
	// gives up with its own context: while another process holds the file,
	// the writes queued here must not each wait out the one before.
	wlock chan struct{}
}

// lock takes the write lock, or fails with ctx's error when ctx ends
// first; unlock gives it back.
func (s *SQLite) lock(ctx context.Context) error {
	select {
	case s.wlock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("store: waiting for the database: %w", ctx.Err())
	}
}

func (s *SQLite) unlock() { <-s.wlock }

// OpenSQLite opens (creating on first use) the database file at path.
// The file and its directory are made readable by the owner only.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: resolving %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: creating the directory of %s: %w", abs, err)
	}
	// Create the file ourselves so it gets mode 0600; SQLite gives its WAL
	// and shared-memory files the mode of the database file.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("store: creating %s: %w", abs, err)
	}
	// A file: URI, so a path holding '?' or '#' cannot be misread as
	// parameters. synchronous=FULL makes every commit reach the disk before
	// it returns: a ledger row acknowledged to a client is never lost.
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() +
		"?_busy_timeout=10000&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: opening %s: %w", abs, err)
	}
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &SQLite{db: db, path: abs, wlock: make(chan struct{}, 1)}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

func (s *SQLite) migrate(ctx context.Context) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("store: reading %s: %w", s.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("store: %s: journal mode is %q, want wal", s.path, mode)
	}
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("store: reading %s: %w", s.path, err)
	}
	if version > 1 {
		return fmt.Errorf("store: %s has schema version %d, newer than this server knows (1)", s.path, version)
	}
	if _, err := s.db.ExecContext(ctx, sqliteSchema); err != nil {
		return fmt.Errorf("store: creating the schema in %s: %w", s.path, err)
	}
	return nil
}

// Precheck implements Store as PrecheckAll of the caller's one counter.
func (s *SQLite) Precheck(ctx context.Context, caller string, now time.Time, limit int, interval time.Duration) (Quota, error) {
	qs, err := s.PrecheckAll(ctx, now, Counter{Key: caller, Limit: limit, Interval: interval})
	if err != nil {
		return Quota{}, err
	}
	return qs[0], nil
}

// Reserve implements Store with the key as primary key: the insert either
// adds the row or, for a key already there, does nothing.
func (s *SQLite) Reserve(ctx context.Context, key string, now time.Time) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.unlock()
	res, err := s.db.ExecContext(ctx, "INSERT INTO payments (key, reserved_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
		key, now.UTC().Format(ledgerTimeFormat))
	if err != nil {
		return false, fmt.Errorf("store: reserving a payment: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: reserving a payment: %w", err)
	}
	return n == 1, nil
}

// Release implements Store.
func (s *SQLite) Release(ctx context.Context, key string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if _, err := s.db.ExecContext(ctx, "DELETE FROM payments WHERE key = ?", key); err != nil {
		return fmt.Errorf("store: releasing a payment: %w", err)
	}
	return nil
}

// Record implements Store.
func (s *SQLite) Record(ctx context.Context, row LedgerRow) error {
	counts := row.CategoryCounts
	if counts == nil {
		counts = map[string]int{}
	}
	cj, err := json.Marshal(counts)
	if err != nil {
		return fmt.Errorf("store: recording a paid scan: %w", err)
	}
	if row.Price > 1<<63-1 {
		return fmt.Errorf("store: recording a paid scan: price %d out of range", row.Price)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if _, err := s.db.ExecContext(ctx, "INSERT INTO ledger (payer, time, price, verdict, category_counts) VALUES (?, ?, ?, ?, ?)",
		row.Payer, row.Time.UTC().Format(ledgerTimeFormat), int64(row.Price), row.Verdict, string(cj)); err != nil {
		return fmt.Errorf("store: recording a paid scan: %w", err)
	}
	return nil
}

// Ledger implements Store.
func (s *SQLite) Ledger(ctx context.Context, from, to time.Time) ([]LedgerRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT payer, time, price, verdict, category_counts FROM ledger
		WHERE time >= ? AND time < ? ORDER BY time, rowid`,
		from.UTC().Format(ledgerTimeFormat), to.UTC().Format(ledgerTimeFormat))
	if err != nil {
		return nil, fmt.Errorf("store: reading the ledger: %w", err)
	}
	defer rows.Close()
	var out []LedgerRow
	for rows.Next() {
		var r LedgerRow
		var ts, cj string
		var price int64
		if err := rows.Scan(&r.Payer, &ts, &price, &r.Verdict, &cj); err != nil {
			return nil, fmt.Errorf("store: reading the ledger: %w", err)
		}
		if r.Time, err = time.Parse(ledgerTimeFormat, ts); err != nil {
			return nil, fmt.Errorf("store: reading the ledger: bad time %q: %w", ts, err)
		}
		r.Price = uint64(price)
		if err := json.Unmarshal([]byte(cj), &r.CategoryCounts); err != nil {
			return nil, fmt.Errorf("store: reading the ledger: bad category_counts: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading the ledger: %w", err)
	}
	return out, nil
}

// Prune implements Store.
func (s *SQLite) Prune(ctx context.Context, before time.Time) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.unlock()
	res, err := s.db.ExecContext(ctx, "DELETE FROM precheck WHERE last_ms < ?", before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: pruning pre-check counters: %w", err)
	}
	return res.RowsAffected()
}

// Close implements Store. It checkpoints the WAL into the database file so
// a cleanly stopped server leaves one self-contained file behind.
func (s *SQLite) Close() error {
	s.wlock <- struct{}{}
	defer s.unlock()
	// Best effort: another process may hold the database open.
	s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	return s.db.Close()
}

// Interface guard
var _ Store = (*SQLite)(nil)
