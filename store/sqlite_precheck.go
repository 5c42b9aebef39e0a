package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// PrecheckAll implements Store as one BEGIN IMMEDIATE transaction holding the database's write lock from the first read to the
// commit, so no other connection or process counts between the reads of
// the counters and their writes.
func (s *SQLite) PrecheckAll(ctx context.Context, now time.Time, counters ...Counter) ([]Quota, error) {
	if err := checkKeys(counters); err != nil {
		return nil, err
	}
	if len(counters) == 0 {
		return []Quota{}, nil
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
	states, err := readPrechecks(ctx, tx, counters)
	if err != nil {
		return nil, err
	}
	qs, next := decideAll(states, now, counters)
	if next == nil {
		return qs, nil
	}
	// One statement for all the rows: each statement is a round trip
	// through the driver, which costs more than the rows themselves.
	var q strings.Builder
	q.WriteString("INSERT INTO precheck (caller, day, count, last_ms) VALUES ")
	args := make([]any, 0, 4*len(counters))
	for i, c := range counters {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("(?, ?, ?, ?)")
		args = append(args, c.Key, next[i].Day, next[i].Count, next[i].Last)
	}
	q.WriteString(" ON CONFLICT (caller) DO UPDATE SET day = excluded.day, count = excluded.count, last_ms = excluded.last_ms")
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return nil, fmt.Errorf("store: pre-check: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: pre-check: %w", err)
	}
	return qs, nil
}

// readPrechecks reads the counters' states in tx with one query, in the
// order of counters; a key never seen has nil.
func readPrechecks(ctx context.Context, tx *sql.Tx, counters []Counter) ([]*precheckState, error) {
	keys := make([]any, len(counters))
	for i, c := range counters {
		keys[i] = c.Key
	}
	marks := strings.Repeat(", ?", len(keys))[2:]
	rows, err := tx.QueryContext(ctx, "SELECT caller, day, count, last_ms FROM precheck WHERE caller IN ("+marks+")", keys...)
	if err != nil {
		return nil, fmt.Errorf("store: pre-check: %w", err)
	}
	defer rows.Close()
	found := make(map[string]*precheckState, len(counters))
	for rows.Next() {
		var key string
		var st precheckState
		if err := rows.Scan(&key, &st.Day, &st.Count, &st.Last); err != nil {
			return nil, fmt.Errorf("store: pre-check: %w", err)
		}
		found[key] = &st
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pre-check: %w", err)
	}
	states := make([]*precheckState, len(counters))
	for i, c := range counters {
		states[i] = found[c.Key]
	}
	return states, nil
}
