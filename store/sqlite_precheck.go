package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// PrecheckAll implements Store. Like Precheck it is one BEGIN IMMEDIATE
// transaction holding the database's write lock from the first read to the
// commit, so no other connection or process counts between the reads of
// the counters and their writes.
func (s *SQLite) PrecheckAll(ctx context.Context, now time.Time, counters ...Counter) ([]Quota, error) {
	if err := checkKeys(counters); err != nil {
		return nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: pre-check: %w", err)
	}
	defer tx.Rollback()
	states := make([]*precheckState, len(counters))
	for i, c := range counters {
		if states[i], err = readPrecheck(ctx, tx, c.Key); err != nil {
			return nil, err
		}
	}
	qs, next := decideAll(states, now, counters)
	if next == nil {
		return qs, nil
	}
	for i, c := range counters {
		if _, err := tx.ExecContext(ctx, `INSERT INTO precheck (caller, day, count, last_ms) VALUES (?, ?, ?, ?)
			ON CONFLICT (caller) DO UPDATE SET day = excluded.day, count = excluded.count, last_ms = excluded.last_ms`,
			c.Key, next[i].Day, next[i].Count, next[i].Last); err != nil {
			return nil, fmt.Errorf("store: pre-check: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: pre-check: %w", err)
	}
	return qs, nil
}

// readPrecheck is one counter's state in tx, or nil for a key never seen.
func readPrecheck(ctx context.Context, tx *sql.Tx, key string) (*precheckState, error) {
	var st precheckState
	err := tx.QueryRowContext(ctx, "SELECT day, count, last_ms FROM precheck WHERE caller = ?", key).
		Scan(&st.Day, &st.Count, &st.Last)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: pre-check: %w", err)
	}
	return &st, nil
}
