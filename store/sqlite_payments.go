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

// The statements of every paid scan, prepared once (prepareSQLite).
const (
	sqlReserve = `INSERT INTO payments
		(key, reserved_at, ident, state, header, accepted, payer, price, verdict, category_counts, tx, since)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?) ON CONFLICT DO NOTHING`
	sqlSettle = "UPDATE payments SET state = ?, tx = ?, since = ?, header = '', accepted = '' WHERE key = ? AND state = ?"
	sqlLedger = "INSERT INTO ledger (payer, time, price, verdict, category_counts) VALUES (?, ?, ?, ?, ?)"
)

// sqliteStmts are the prepared statements of a paid scan: parsing them on
// every call cost more than running them.
type sqliteStmts struct {
	reserve, settle, ledger *sql.Stmt
}

func (s *SQLite) prepare(ctx context.Context) error {
	for _, st := range []struct {
		to  **sql.Stmt
		sql string
	}{{&s.stmts.reserve, sqlReserve}, {&s.stmts.settle, sqlSettle}, {&s.stmts.ledger, sqlLedger}} {
		stmt, err := s.db.PrepareContext(ctx, st.sql)
		if err != nil {
			return fmt.Errorf("store: preparing %s: %w", s.path, err)
		}
		*st.to = stmt
	}
	return nil
}

// paymentColumns are read by scanPayment, in this order.
const paymentColumns = `key, COALESCE(ident, ''), state, header, accepted, payer, price, verdict, category_counts, tx, since`

// Reserve implements Store. The key is the primary key and the identifier
// a unique index, so the insert either adds the row or changes nothing.
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
	res, err := s.stmts.reserve.ExecContext(ctx,
		p.Key, formatTime(now), ident, string(PaymentSettling), p.Header, p.Accepted, p.Row.Payer,
		int64(p.Row.Price), p.Row.Verdict, counts, formatTime(now))
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
	if got, ok, err := s.payment(ctx, "key = ?", p.Key); err != nil || ok {
		return got, false, err
	}
	if p.Ident != "" {
		got, ok, err := s.payment(ctx, "ident = ?", p.Ident)
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
	return s.payment(ctx, "key = ?", key)
}

func (s *SQLite) payment(ctx context.Context, where string, arg string) (Payment, bool, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+paymentColumns+" FROM payments WHERE "+where, arg)
	if err != nil {
		return Payment{}, false, fmt.Errorf("store: reading a payment: %w", err)
	}
	ps, err := scanPayments(rows)
	if err != nil || len(ps) == 0 {
		return Payment{}, false, err
	}
	return ps[0], true, nil
}

// Settle implements Store: the state change and the ledger row are one
// transaction, and the change is conditional on the state, so of two
// servers settling one payment only the first writes a row.
func (s *SQLite) Settle(ctx context.Context, key, transaction string, row LedgerRow, now time.Time) (bool, error) {
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
	// The signed payment is needed only while it may have to be settled
	// or found again: cleared here, rows stay small.
	res, err := tx.StmtContext(ctx, s.stmts.settle).ExecContext(ctx,
		string(PaymentSettled), transaction, formatTime(now), key, string(PaymentSettling))
	if err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, fmt.Errorf("store: recording a paid scan: %w", err)
	} else if n == 0 {
		return false, nil
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

// Deliver implements Store.
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
	// At most 500 keys per statement: SQLite's default limit of bound
	// parameters is far above that.
	for len(keys) > 0 {
		n := min(len(keys), 500)
		args := make([]any, 0, n+3)
		args = append(args, string(PaymentDelivered), formatTime(now), string(PaymentSettled))
		for _, k := range keys[:n] {
			args = append(args, k)
		}
		q := "UPDATE payments SET state = ?, since = ? WHERE state = ? AND key IN (?" + strings.Repeat(", ?", n-1) + ")"
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

// Fail implements Store.
func (s *SQLite) Fail(ctx context.Context, key string, now time.Time) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if _, err := s.db.ExecContext(ctx, "UPDATE payments SET state = ?, since = ? WHERE key = ? AND state = ?",
		string(PaymentFailed), formatTime(now), key, string(PaymentSettling)); err != nil {
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
	if _, err := s.db.ExecContext(ctx, "DELETE FROM payments WHERE key = ? AND state = ?", key, string(PaymentSettling)); err != nil {
		return fmt.Errorf("store: releasing a payment: %w", err)
	}
	return nil
}

// Settling implements Store.
func (s *SQLite) Settling(ctx context.Context, before time.Time, limit int) ([]Payment, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+paymentColumns+
		" FROM payments WHERE state = ? AND since < ? ORDER BY since LIMIT ?",
		string(PaymentSettling), formatTime(before), limit)
	if err != nil {
		return nil, fmt.Errorf("store: reading payments in flight: %w", err)
	}
	return scanPayments(rows)
}

func scanPayments(rows *sql.Rows) ([]Payment, error) {
	defer rows.Close()
	var out []Payment
	for rows.Next() {
		var p Payment
		var state, since, counts string
		var price int64
		if err := rows.Scan(&p.Key, &p.Ident, &state, &p.Header, &p.Accepted, &p.Row.Payer, &price,
			&p.Row.Verdict, &counts, &p.Transaction, &since); err != nil {
			return nil, fmt.Errorf("store: reading a payment: %w", err)
		}
		p.State = PaymentState(state)
		p.Row.Price = uint64(price)
		if err := json.Unmarshal([]byte(counts), &p.Row.CategoryCounts); err != nil {
			return nil, fmt.Errorf("store: reading a payment: bad category_counts: %w", err)
		}
		if since != "" { // empty for keys used under schema version 1
			t, err := time.Parse(ledgerTimeFormat, since)
			if err != nil {
				return nil, fmt.Errorf("store: reading a payment: bad time %q: %w", since, err)
			}
			p.Since = t
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
