package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Payments in PostgreSQL: the two tables of sqlite_payments.go, each change
// of a payment in one transaction holding the advisory lock of its key
// (and, on reserving, of its identifier), so that what is checked and what
// is written are never apart.

func paymentLock(key string) string { return "payment:" + key }
func identLock(id string) string    { return "ident:" + id }

// Reserve implements Store.
func (s *PostgreSQL) Reserve(ctx context.Context, p Payment, now time.Time) (Payment, bool, error) {
	counts, err := countsJSON(p.Row.CategoryCounts)
	if err != nil {
		return Payment{}, false, fmt.Errorf("store: reserving a payment: %w", err)
	}
	if p.Row.Price > 1<<63-1 {
		return Payment{}, false, fmt.Errorf("store: reserving a payment: price %d out of range", p.Row.Price)
	}
	locks := []string{paymentLock(p.Key)}
	if p.Ident != "" {
		locks = append(locks, identLock(p.Ident))
	}
	var got Payment
	var reserved bool
	var conflict error
	err = s.tx(ctx, "reserving a payment", locks, nil, func(tx querier, _ *pgx.Batch) error {
		if q, ok, err := pgLookup(ctx, tx, "key", p.Key); err != nil || ok {
			got = q
			return err
		}
		if p.Ident != "" {
			if q, ok, err := pgLookup(ctx, tx, "ident", p.Ident); err != nil || ok {
				got, conflict = q, ErrIdentInUse
				return err
			}
		}
		var ident any
		if p.Ident != "" {
			ident = p.Ident
		}
		if _, err := tx.Exec(ctx, `INSERT INTO inflight
			(key, ident, state, header, accepted, payer, price, verdict, category_counts, tx, since, owner)
			VALUES ($1, $2, 'settling', $3, $4, $5, $6, $7, $8, '', $9, $10)`,
			p.Key, ident, p.Header, p.Accepted, p.Row.Payer, int64(p.Row.Price), p.Row.Verdict, counts,
			now.UTC(), p.Owner); err != nil {
			return err
		}
		reserved = true
		return nil
	})
	if err != nil {
		return Payment{}, false, err
	}
	if reserved {
		p.State, p.Since, p.Transaction = PaymentSettling, now.UTC().Truncate(time.Microsecond), ""
		return p, true, nil
	}
	return got, false, conflict
}

// Payment implements Store.
func (s *PostgreSQL) Payment(ctx context.Context, key string) (Payment, bool, error) {
	p, ok, err := pgLookup(ctx, s.pool, "key", key)
	if err != nil {
		return Payment{}, false, fmt.Errorf("store: reading a payment: %w", err)
	}
	return p, ok, nil
}

// pgInflightColumns are read by pgScanInflight, in this order.
const pgInflightColumns = `i.key, COALESCE(i.ident, ''), i.state, i.header, i.accepted, i.payer, i.price, i.verdict,
	i.category_counts, i.tx, i.since, i.owner, s.seen`

// pgLookup finds a payment by key or ident (column): in flight, or done.
func pgLookup(ctx context.Context, q querier, column, value string) (Payment, bool, error) {
	rows, err := q.Query(ctx, "SELECT "+pgInflightColumns+
		" FROM inflight i LEFT JOIN servers s ON s.id = i.owner WHERE i."+column+" = $1", value)
	if err != nil {
		return Payment{}, false, err
	}
	ps, err := pgScanInflight(rows)
	if err != nil || len(ps) > 0 {
		if len(ps) == 0 {
			return Payment{}, false, err
		}
		return ps[0], true, err
	}
	var p Payment
	var state string
	err = q.QueryRow(ctx, "SELECT key, COALESCE(ident, ''), state, payer, tx, reserved_at FROM payments WHERE "+column+" = $1", value).
		Scan(&p.Key, &p.Ident, &state, &p.Row.Payer, &p.Transaction, &p.Since)
	if errors.Is(err, pgx.ErrNoRows) {
		return Payment{}, false, nil
	}
	if err != nil {
		return Payment{}, false, err
	}
	p.Since = p.Since.UTC()
	p.State = PaymentDelivered
	if state == "failed" {
		p.State = PaymentFailed
	}
	return p, true, nil
}

func pgScanInflight(rows pgx.Rows) ([]Payment, error) {
	defer rows.Close()
	var out []Payment
	for rows.Next() {
		var p Payment
		var state string
		var price int64
		var counts []byte
		var seen *time.Time
		if err := rows.Scan(&p.Key, &p.Ident, &state, &p.Header, &p.Accepted, &p.Row.Payer, &price,
			&p.Row.Verdict, &counts, &p.Transaction, &p.Since, &p.Owner, &seen); err != nil {
			return nil, err
		}
		p.State = PaymentState(state)
		p.Row.Price = uint64(price)
		p.Since = p.Since.UTC()
		if seen != nil {
			p.OwnerSeen = seen.UTC()
		}
		if err := json.Unmarshal(counts, &p.Row.CategoryCounts); err != nil {
			return nil, fmt.Errorf("bad category_counts: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Settle implements Store.
func (s *PostgreSQL) Settle(ctx context.Context, key, owner, transaction string, row LedgerRow, now time.Time) (bool, error) {
	counts, err := countsJSON(row.CategoryCounts)
	if err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	}
	if row.Price > 1<<63-1 {
		return false, fmt.Errorf("store: recording a paid scan: price %d out of range", row.Price)
	}
	// The conditional update goes with the lock, the inserts with the
	// commit: two round trips.
	var ident *string
	var payer string
	settling := false
	read := func(b *pgx.Batch) {
		b.Queue(`UPDATE inflight SET state = 'settled', tx = $1, since = $2, owner = $3, header = '', accepted = ''
			WHERE key = $4 AND state = 'settling' RETURNING ident, payer`, transaction, now.UTC(), owner, key).QueryRow(func(r pgx.Row) error {
			err := r.Scan(&ident, &payer)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // not settling: settled by someone else, failed, or unknown
			}
			settling = err == nil
			return err
		})
	}
	err = s.tx(ctx, "recording a paid scan", []string{paymentLock(key)}, read, func(_ querier, w *pgx.Batch) error {
		if !settling {
			return nil
		}
		w.Queue(`INSERT INTO payments (key, reserved_at, state, ident, payer, tx)
			VALUES ($1, $2, 'paid', $3, $4, $5)`, key, now.UTC(), ident, row.Payer, transaction)
		w.Queue(`INSERT INTO ledger (payer, time, price, verdict, category_counts)
			VALUES ($1, $2, $3, $4, $5)`, row.Payer, row.Time.UTC(), int64(row.Price), row.Verdict, counts)
		return nil
	})
	if err != nil {
		return false, err
	}
	return settling, nil
}

// Claim implements Store: one conditional UPDATE, which PostgreSQL runs
// on the row's latest version, so of claims from one owner one wins.
func (s *PostgreSQL) Claim(ctx context.Context, key, from, to string, now time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, "UPDATE inflight SET owner = $1, since = $2 WHERE key = $3 AND state = 'settled' AND owner = $4",
		to, now.UTC(), key, from)
	if err != nil {
		return false, fmt.Errorf("store: claiming a paid scan: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Deliver implements Store.
func (s *PostgreSQL) Deliver(ctx context.Context, now time.Time, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, "DELETE FROM inflight WHERE state = 'settled' AND key = ANY($1)", keys); err != nil {
		return fmt.Errorf("store: marking payments delivered: %w", err)
	}
	return nil
}

// Fail implements Store.
func (s *PostgreSQL) Fail(ctx context.Context, key string, now time.Time) error {
	return s.tx(ctx, "marking a payment failed", []string{paymentLock(key)}, nil, func(tx querier, _ *pgx.Batch) error {
		var ident *string
		var payer string
		err := tx.QueryRow(ctx, "DELETE FROM inflight WHERE key = $1 AND state = 'settling' RETURNING ident, payer", key).Scan(&ident, &payer)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO payments (key, reserved_at, state, ident, payer, tx)
			VALUES ($1, $2, 'failed', $3, $4, '')`, key, now.UTC(), ident, payer)
		return err
	})
}

// Release implements Store.
func (s *PostgreSQL) Release(ctx context.Context, key string) error {
	return s.tx(ctx, "releasing a payment", []string{paymentLock(key)}, nil, func(_ querier, w *pgx.Batch) error {
		w.Queue("DELETE FROM inflight WHERE key = $1 AND state = 'settling'", key)
		return nil
	})
}

// Settling implements Store.
func (s *PostgreSQL) Settling(ctx context.Context, before time.Time, limit int) ([]Payment, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+pgInflightColumns+
		" FROM inflight i LEFT JOIN servers s ON s.id = i.owner WHERE i.state = 'settling' AND i.since < $1 ORDER BY i.since LIMIT $2",
		before.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: reading payments in flight: %w", err)
	}
	ps, err := pgScanInflight(rows)
	if err != nil {
		return nil, fmt.Errorf("store: reading payments in flight: %w", err)
	}
	return ps, nil
}
