package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// How SQLite keeps payments (schema version 2). A payment in flight, from
// its reservation until its answer went out, is a row of inflight, which
// holds what finishing it after a crash needs: the signed payment, the
// ledger row to write, the transaction once it landed. Settling it inserts
// its small row into payments (every key used, for good) and its ledger row
// in the same transaction; delivering it deletes its inflight row. So the
// table that grows with every paid scan is written once per payment, as it
// was before payments had states, and the one written three times stays as
// small as the payments in flight.
//
// A key is used when it is in either table; Reserve inserts into inflight
// only if payments does not hold it, and one statement does both, under
// SQLite's single writer.
const (
	sqlReserve = `INSERT INTO inflight
		(key, ident, state, header, accepted, payer, price, verdict, category_counts, tx, since, owner)
		SELECT ?1, ?2, 'settling', ?3, ?4, ?5, ?6, ?7, ?8, '', ?9, ?10
		WHERE NOT EXISTS (SELECT 1 FROM payments WHERE key = ?1)
		AND (?2 IS NULL OR NOT EXISTS (SELECT 1 FROM payments WHERE ident = ?2))
		ON CONFLICT DO NOTHING`
	sqlSettleInflight = `UPDATE inflight SET state = 'settled', tx = ?, since = ?, owner = ?, header = '', accepted = ''
		WHERE key = ? AND state = 'settling' RETURNING ident, payer`
	sqlSettleUsed = `INSERT INTO payments (key, reserved_at, state, ident, payer, tx) VALUES (?, ?, 'paid', ?, ?, ?)`
	sqlLedger     = "INSERT INTO ledger (payer, time, price, verdict, category_counts) VALUES (?, ?, ?, ?, ?)"
)

// sqliteStmts are the prepared statements of a paid scan: parsing them on
// every call cost more than running them.
type sqliteStmts struct {
	reserve, settleInflight, settleUsed, ledger *sql.Stmt
}

func (s *SQLite) prepare(ctx context.Context) error {
	for _, st := range []struct {
		to  **sql.Stmt
		sql string
	}{
		{&s.stmts.reserve, sqlReserve},
		{&s.stmts.settleInflight, sqlSettleInflight},
		{&s.stmts.settleUsed, sqlSettleUsed},
		{&s.stmts.ledger, sqlLedger},
	} {
		stmt, err := s.db.PrepareContext(ctx, st.sql)
		if err != nil {
			return fmt.Errorf("store: preparing %s: %w", s.path, err)
		}
		*st.to = stmt
	}
	return nil
}

// Reserve implements Store.
func (s *SQLite) Reserve(ctx context.Context, p Payment, now time.Time) (Payment, bool, error) {
	counts, err := countsJSON(p.Row.CategoryCounts)
	if err != nil {
		return Payment{}, false, fmt.Errorf("store: reserving a payment: %w", err)
	}
	if p.Row.Price > 1<<63-1 {
		return Payment{}, false, fmt.Errorf("store: reserving a payment: price %d out of range", p.Row.Price)
	}
	if err := s.lock(ctx); err != nil {
		return Payment{}, false, err
	}
	defer s.unlock()
	var ident any
	if p.Ident != "" {
		ident = p.Ident
	}
	res, err := s.stmts.reserve.ExecContext(ctx, p.Key, ident, p.Header, p.Accepted, p.Row.Payer,
		int64(p.Row.Price), p.Row.Verdict, counts, formatTime(now), p.Owner)
	if err != nil {
		return Payment{}, false, fmt.Errorf("store: reserving a payment: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Payment{}, false, fmt.Errorf("store: reserving a payment: %w", err)
	} else if n == 1 {
		p.State, p.Since, p.Transaction = PaymentSettling, now.UTC().Truncate(time.Microsecond), ""
		return p, true, nil
	}
	// A conflict on the key or on the identifier: say which.
	if got, ok, err := s.lookup(ctx, "key", p.Key); err != nil || ok {
		return got, false, err
	}
	if p.Ident != "" {
		got, ok, err := s.lookup(ctx, "ident", p.Ident)
		if err != nil {
			return Payment{}, false, err
		}
		if ok {
			return got, false, ErrIdentInUse
		}
	}
	return Payment{}, false, errors.New("store: reserving a payment: refused with no conflicting payment")
}

// Payment implements Store.
func (s *SQLite) Payment(ctx context.Context, key string) (Payment, bool, error) {
	if err := s.check(); err != nil {
		return Payment{}, false, err
	}
	return s.lookup(ctx, "key", key)
}

// lookup finds a payment by key or ident: in flight, or done.
func (s *SQLite) lookup(ctx context.Context, column, value string) (Payment, bool, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+inflightColumns+" FROM inflight LEFT JOIN servers ON servers.id = owner WHERE inflight."+column+" = ?", value)
	if err != nil {
		return Payment{}, false, fmt.Errorf("store: reading a payment: %w", err)
	}
	ps, err := scanInflight(rows)
	if err != nil || len(ps) > 0 {
		if len(ps) == 0 {
			return Payment{}, false, err
		}
		return ps[0], true, err
	}
	var p Payment
	var state, reserved string
	err = s.db.QueryRowContext(ctx, "SELECT key, COALESCE(ident, ''), state, payer, tx, reserved_at FROM payments WHERE "+column+" = ?", value).
		Scan(&p.Key, &p.Ident, &state, &p.Row.Payer, &p.Transaction, &reserved)
	if errors.Is(err, sql.ErrNoRows) {
		return Payment{}, false, nil
	}
	if err != nil {
		return Payment{}, false, fmt.Errorf("store: reading a payment: %w", err)
	}
	p.State = PaymentDelivered
	if state == "failed" {
		p.State = PaymentFailed
	}
	p.Since, _ = time.Parse(ledgerTimeFormat, reserved)
	return p, true, nil
}

// Settle implements Store: the state change, the used key and the ledger
// row are one transaction, and the change is conditional on the state, so
// of two servers settling one payment only the first writes a row.
func (s *SQLite) Settle(ctx context.Context, key, owner, transaction string, row LedgerRow, now time.Time) (bool, error) {
	counts, err := countsJSON(row.CategoryCounts)
	if err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	}
	if row.Price > 1<<63-1 {
		return false, fmt.Errorf("store: recording a paid scan: price %d out of range", row.Price)
	}
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	}
	defer tx.Rollback()
	var ident sql.NullString
	var payer string
	err = tx.StmtContext(ctx, s.stmts.settleInflight).QueryRowContext(ctx, transaction, formatTime(now), owner, key).Scan(&ident, &payer)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // not settling: settled by someone else, failed, or unknown
	}
	if err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	}
	if _, err := tx.StmtContext(ctx, s.stmts.settleUsed).ExecContext(ctx, key, formatTime(now), ident, row.Payer, transaction); err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	}
	if _, err := tx.StmtContext(ctx, s.stmts.ledger).ExecContext(ctx,
		row.Payer, formatTime(row.Time), int64(row.Price), row.Verdict, counts); err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	}
	return true, nil
}

// Claim implements Store.
func (s *SQLite) Claim(ctx context.Context, key, from, to string, now time.Time) (bool, error) {
	if err := s.lock(ctx); err != nil {
		return false, err
	}
	defer s.unlock()
	res, err := s.db.ExecContext(ctx, "UPDATE inflight SET owner = ?, since = ? WHERE key = ? AND state = 'settled' AND owner = ?",
		to, formatTime(now), key, from)
	if err != nil {
		return false, fmt.Errorf("store: claiming a paid scan: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: claiming a paid scan: %w", err)
	}
	return n == 1, nil
}

// Deliver implements Store: a delivered payment leaves inflight, and its
// used key stays in payments.
func (s *SQLite) Deliver(ctx context.Context, now time.Time, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: marking payments delivered: %w", err)
	}
	defer tx.Rollback()
	// At most 500 keys per statement, far below SQLite's limit of bound
	// parameters.
	for len(keys) > 0 {
		n := min(len(keys), 500)
		args := make([]any, 0, n)
		for _, k := range keys[:n] {
			args = append(args, k)
		}
		q := "DELETE FROM inflight WHERE state = 'settled' AND key IN (?" + strings.Repeat(", ?", n-1) + ")"
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("store: marking payments delivered: %w", err)
		}
		keys = keys[n:]
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: marking payments delivered: %w", err)
	}
	return nil
}

// Fail implements Store: a settling payment leaves inflight, and its key is
// used, as failed.
func (s *SQLite) Fail(ctx context.Context, key string, now time.Time) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: marking a payment failed: %w", err)
	}
	defer tx.Rollback()
	var ident sql.NullString
	var payer string
	err = tx.QueryRowContext(ctx, "DELETE FROM inflight WHERE key = ? AND state = 'settling' RETURNING ident, payer", key).Scan(&ident, &payer)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: marking a payment failed: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO payments (key, reserved_at, state, ident, payer, tx) VALUES (?, ?, 'failed', ?, ?, '')",
		key, formatTime(now), ident, payer); err != nil {
		return fmt.Errorf("store: marking a payment failed: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: marking a payment failed: %w", err)
	}
	return nil
}

// Release implements Store. Only a settling payment is released: one that
// settled meanwhile (another server, a reconciliation) keeps its key.
func (s *SQLite) Release(ctx context.Context, key string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if _, err := s.db.ExecContext(ctx, "DELETE FROM inflight WHERE key = ? AND state = 'settling'", key); err != nil {
		return fmt.Errorf("store: releasing a payment: %w", err)
	}
	return nil
}

// Settling implements Store. The table holds only the payments in flight,
// so reading it whole is cheap.
func (s *SQLite) Settling(ctx context.Context, before time.Time, limit int) ([]Payment, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+inflightColumns+
		" FROM inflight LEFT JOIN servers ON servers.id = owner WHERE state = 'settling' AND since < ? ORDER BY since LIMIT ?", formatTime(before), limit)
	if err != nil {
		return nil, fmt.Errorf("store: reading payments in flight: %w", err)
	}
	return scanInflight(rows)
}

// inflightColumns are read by scanInflight, in this order.
const inflightColumns = `key, COALESCE(ident, ''), state, header, accepted, payer, price, verdict, category_counts, tx, since, owner, COALESCE(servers.seen, '')`

func scanInflight(rows *sql.Rows) ([]Payment, error) {
	defer rows.Close()
	var out []Payment
	for rows.Next() {
		var p Payment
		var state, since, counts, seen string
		var price int64
		if err := rows.Scan(&p.Key, &p.Ident, &state, &p.Header, &p.Accepted, &p.Row.Payer, &price,
			&p.Row.Verdict, &counts, &p.Transaction, &since, &p.Owner, &seen); err != nil {
			return nil, fmt.Errorf("store: reading a payment: %w", err)
		}
		p.State = PaymentState(state)
		p.Row.Price = uint64(price)
		if err := json.Unmarshal([]byte(counts), &p.Row.CategoryCounts); err != nil {
			return nil, fmt.Errorf("store: reading a payment: bad category_counts: %w", err)
		}
		t, err := time.Parse(ledgerTimeFormat, since)
		if err != nil {
			return nil, fmt.Errorf("store: reading a payment: bad time %q: %w", since, err)
		}
		p.Since = t
		if seen != "" {
			if p.OwnerSeen, err = time.Parse(ledgerTimeFormat, seen); err != nil {
				return nil, fmt.Errorf("store: reading a payment: bad time %q: %w", seen, err)
			}
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading a payment: %w", err)
	}
	return out, nil
}

func formatTime(t time.Time) string { return t.UTC().Format(ledgerTimeFormat) }

func countsJSON(c map[string]int) (string, error) {
	if c == nil {
		c = map[string]int{}
	}
	b, err := json.Marshal(c)
	return string(b), err
}

// Heartbeat implements Store. Servers not seen for a day are forgotten.
func (s *SQLite) Heartbeat(ctx context.Context, id string, now time.Time) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO servers (id, seen) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET seen = excluded.seen`, id, formatTime(now)); err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, "DELETE FROM servers WHERE seen < ?", formatTime(now.Add(-24*time.Hour))); err != nil {
		return fmt.Errorf("store: heartbeat: %w", err)
	}
	return nil
}

// Leave implements Store.
func (s *SQLite) Leave(ctx context.Context, id string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if _, err := s.db.ExecContext(ctx, "DELETE FROM servers WHERE id = ?", id); err != nil {
		return fmt.Errorf("store: leaving: %w", err)
	}
	return nil
}
