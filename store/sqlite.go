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
`

// sqliteSchemaV2 adds what a crash in the middle of a payment needs to be
// finished. Payments in flight (settling, or settled and not yet answered)
// live in a table of their own, small and hot, with the signed payment and
// the ledger row they will write; payments keeps one small row per used
// key, as under version 1, and gains its outcome. Keys used under version 1
// were answered or refused for good: they are paid.
const sqliteSchemaV2 = `
ALTER TABLE payments ADD COLUMN state TEXT NOT NULL DEFAULT 'paid';
ALTER TABLE payments ADD COLUMN ident TEXT;
ALTER TABLE payments ADD COLUMN payer TEXT NOT NULL DEFAULT '';
ALTER TABLE payments ADD COLUMN tx TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX payments_ident ON payments (ident) WHERE ident IS NOT NULL;
CREATE TABLE inflight (
	key             TEXT    NOT NULL PRIMARY KEY,
	ident           TEXT    UNIQUE,
	state           TEXT    NOT NULL,
	header          TEXT    NOT NULL,
	accepted        TEXT    NOT NULL,
	payer           TEXT    NOT NULL,
	price           INTEGER NOT NULL,
	verdict         TEXT    NOT NULL,
	category_counts TEXT    NOT NULL,
	tx              TEXT    NOT NULL,
	since           TEXT    NOT NULL,
	owner           TEXT    NOT NULL
);
CREATE TABLE servers (
	id   TEXT NOT NULL PRIMARY KEY,
	seen TEXT NOT NULL
) WITHOUT ROWID;
PRAGMA user_version = 2;
`

// sqliteVersion is the schema version this code writes.
const sqliteVersion = 2

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
	// file is the database file as opened, to notice it being deleted or
	// replaced under the running server.
	file  os.FileInfo
	stmts sqliteStmts
}

// ErrFileGone is returned, wrapped, by every operation once the database
// file was deleted or replaced while the server runs. SQLite would go on
// writing to the unlinked file, or to a file nobody looks at any more:
// pre-check counters, used payments (so replays would pass) and ledger rows
// would be lost without a word. Restarting opens the file now at the path.
var ErrFileGone = errors.New("store: the database file was deleted or replaced while the server runs")

// check fails once the file at the path is not the one opened.
func (s *SQLite) check() error {
	fi, err := os.Stat(s.path)
	switch {
	case err == nil && os.SameFile(fi, s.file):
		return nil
	case err == nil:
		return fmt.Errorf("%w: %s is another file now", ErrFileGone, s.path)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s does not exist", ErrFileGone, s.path)
	default:
		return fmt.Errorf("%w: %s: %v", ErrFileGone, s.path, err)
	}
}

// lock takes the write lock, or fails with ctx's error when ctx ends
// first, or when the file is gone; unlock gives it back.
func (s *SQLite) lock(ctx context.Context) error {
	select {
	case s.wlock <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("store: waiting for the database: %w", ctx.Err())
	}
	if err := s.check(); err != nil {
		s.unlock()
		return err
	}
	return nil
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
	fi, err := os.Stat(abs)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: opening %s: %w", abs, err)
	}
	s := &SQLite{db: db, path: abs, wlock: make(chan struct{}, 1), file: fi}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
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
	if version > sqliteVersion {
		return fmt.Errorf("store: %s has schema version %d, newer than this server knows (%d)", s.path, version, sqliteVersion)
	}
	if version == sqliteVersion {
		return nil
	}
	// Both steps in one transaction: a crash leaves version 1 or 2, never
	// half of the second.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migrating %s: %w", s.path, err)
	}
	defer tx.Rollback()
	if version < 1 {
		if _, err := tx.ExecContext(ctx, sqliteSchema); err != nil {
			return fmt.Errorf("store: creating the schema in %s: %w", s.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, sqliteSchemaV2); err != nil {
		return fmt.Errorf("store: migrating %s to schema version 2: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migrating %s: %w", s.path, err)
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

// Ledger implements Store.
func (s *SQLite) Ledger(ctx context.Context, from, to time.Time) ([]LedgerRow, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
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
