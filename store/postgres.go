package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgreSQL is the backend for several servers sharing one store. It keeps
// the tables SQLite keeps (postgres_schema.go), and every step that must be
// exact across servers runs in one transaction holding transaction-scoped
// advisory locks on the keys it touches, taken in sorted order (no
// deadlock): the counters of a pre-check, the key and identifier of a
// payment. What SQLite gets from its single writer, PostgreSQL gets per key,
// so servers only wait for each other on the same wallet or payment.
type PostgreSQL struct {
	pool *pgxpool.Pool
}

// DefaultStatementTimeout bounds each statement unless the DSN sets
// statement_timeout itself: a database that hangs gives an error, which
// the service answers with 503.
const DefaultStatementTimeout = 5 * time.Second

// OpenPostgreSQL connects to the database dsn names (a postgres:// URL or
// key=value string: TLS, credentials and pool size go there, as pgx reads
// them) and creates or migrates the schema. Errors never repeat the DSN:
// it may hold a password.
func OpenPostgreSQL(ctx context.Context, dsn string) (*PostgreSQL, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("store: the postgres DSN cannot be parsed (it is not repeated here: it may hold a password)")
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["statement_timeout"]; !ok {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprint(DefaultStatementTimeout.Milliseconds())
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connecting to postgres at %s: %w", cfg.ConnConfig.Host, err)
	}
	s := &PostgreSQL{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// querier is the pool, or the connection a transaction runs on.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// lockKeys takes the advisory locks of the keys in $1, in its order.
const lockKeys = "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k"

// tx runs one transaction holding the advisory locks of keys, taken in
// sorted order, in as few round trips as its statements allow: each costs
// a backend's wake-up as well as the network. BEGIN, the locks and what
// read queues (nil: nothing) go as the first batch. Then fn runs: it may
// run statements on the connection when it needs their results, and it
// queues its last writes in w, which go with COMMIT as the last batch. An
// error leaves the transaction to ROLLBACK, or to the pool, which closes a
// connection returned in one.
func (s *PostgreSQL) tx(ctx context.Context, what string, keys []string, read func(*pgx.Batch), fn func(q querier, w *pgx.Batch) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	defer conn.Release()
	keys = slices.Clone(keys)
	slices.Sort(keys)
	var first, last pgx.Batch
	first.Queue("begin")
	first.Queue(lockKeys, slices.Compact(keys))
	if read != nil {
		read(&first)
	}
	err = conn.SendBatch(ctx, &first).Close()
	if err == nil {
		err = fn(conn, &last)
	}
	if err == nil {
		err = commit(ctx, conn, &last)
	}
	if err != nil {
		conn.Exec(ctx, "rollback") // a connection it fails on is closed on release
		return fmt.Errorf("store: %s: %w", what, err)
	}
	return nil
}

// commit sends the writes queued in w with COMMIT, or, with none, COMMIT
// alone as one simple-protocol message.
func commit(ctx context.Context, conn *pgxpool.Conn, w *pgx.Batch) error {
	check := func(tag pgconn.CommandTag) error {
		if tag.String() != "COMMIT" {
			return errors.New("the transaction was rolled back")
		}
		return nil
	}
	if w.Len() == 0 {
		tag, err := conn.Exec(ctx, "commit")
		if err != nil {
			return err
		}
		return check(tag)
	}
	w.Queue("commit").Exec(check)
	return conn.SendBatch(ctx, w).Close()
}

// Precheck implements Store.
func (s *PostgreSQL) Precheck(ctx context.Context, caller string, now time.Time, limit int, interval time.Duration) (Quota, error) {
	qs, err := s.PrecheckAll(ctx, now, Counter{Key: caller, Limit: limit, Interval: interval})
	if err != nil {
		return Quota{}, err
	}
	return qs[0], nil
}

// PrecheckAll implements Store: the counters' locks are held from the read
// to the commit, in two round trips (the read with the locks, the write
// with the commit).
func (s *PostgreSQL) PrecheckAll(ctx context.Context, now time.Time, counters ...Counter) ([]Quota, error) {
	if err := checkKeys(counters); err != nil {
		return nil, err
	}
	if len(counters) == 0 {
		return []Quota{}, nil
	}
	callers, locks := make([]string, len(counters)), make([]string, len(counters))
	for i, c := range counters {
		callers[i], locks[i] = c.Key, "precheck:"+c.Key
	}
	found := map[string]*precheckState{}
	read := func(b *pgx.Batch) {
		b.Queue("SELECT caller, day, count, last_ms FROM precheck WHERE caller = ANY($1)", callers).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var key string
				var st precheckState
				if err := rows.Scan(&key, &st.Day, &st.Count, &st.Last); err != nil {
					return err
				}
				found[key] = &st
			}
			return rows.Err()
		})
	}
	var qs []Quota
	err := s.tx(ctx, "pre-check", locks, read, func(_ querier, w *pgx.Batch) error {
		states := make([]*precheckState, len(counters))
		for i, c := range counters {
			states[i] = found[c.Key]
		}
		var next []precheckState
		qs, next = decideAll(states, now, counters)
		if next == nil {
			return nil
		}
		days, counts, lasts := make([]string, len(next)), make([]int64, len(next)), make([]int64, len(next))
		for i, n := range next {
			days[i], counts[i], lasts[i] = n.Day, int64(n.Count), n.Last
		}
		w.Queue(`INSERT INTO precheck (caller, day, count, last_ms)
			SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
			ON CONFLICT (caller) DO UPDATE SET day = excluded.day, count = excluded.count, last_ms = excluded.last_ms`,
			callers, days, counts, lasts)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return qs, nil
}

// Ledger implements Store.
func (s *PostgreSQL) Ledger(ctx context.Context, from, to time.Time) ([]LedgerRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT payer, time, price, verdict, category_counts FROM ledger
		WHERE time >= $1 AND time < $2 ORDER BY time, id`, from.UTC(), to.UTC())
	if err != nil {
		return nil, fmt.Errorf("store: reading the ledger: %w", err)
	}
	defer rows.Close()
	var out []LedgerRow
	for rows.Next() {
		var r LedgerRow
		var price int64
		var counts []byte
		if err := rows.Scan(&r.Payer, &r.Time, &price, &r.Verdict, &counts); err != nil {
			return nil, fmt.Errorf("store: reading the ledger: %w", err)
		}
		r.Time = r.Time.UTC()
		r.Price = uint64(price)
		if err := json.Unmarshal(counts, &r.CategoryCounts); err != nil {
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
func (s *PostgreSQL) Prune(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM precheck WHERE last_ms < $1", before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: pruning pre-check counters: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Heartbeat implements Store.
func (s *PostgreSQL) Heartbeat(ctx context.Context, id string, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO servers (id, seen) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET seen = excluded.seen`, id, now.UTC()); err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	if _, err := s.pool.Exec(ctx, "DELETE FROM servers WHERE seen < $1", now.Add(-24*time.Hour).UTC()); err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	return nil
}

// Leave implements Store.
func (s *PostgreSQL) Leave(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, "DELETE FROM servers WHERE id = $1", id); err != nil {
		return fmt.Errorf("store: leaving: %w", err)
	}
	return nil
}

// Close implements Store.
func (s *PostgreSQL) Close() error {
	s.pool.Close()
	return nil
}

// Interface guard
var _ Store = (*PostgreSQL)(nil)
