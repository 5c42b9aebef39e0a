package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkPaidScanWrites compares what the store writes per paid scan:
// "states" is this store's path (reserve in flight, settle with the used
// key and the ledger row, deliver in batches of 16); "plain" is the path
// before payments had states, one insert of the used key and one of the
// ledger row, run on the same schema. Both start from a store holding
// 20,000 paid scans, as a busy day leaves it; a payment's signed header is
// 1.7 KB, as @x402/fetch sends it.
func BenchmarkPaidScanWrites(b *testing.B) {
	header := strings.Repeat("h", 1700)
	row := LedgerRow{Payer: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", Price: 10000, Verdict: "malicious",
		CategoryCounts: map[string]int{"instruction_override": 1}}
	open := func(b *testing.B) *SQLite {
		s, err := OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "scan.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	states := func(s *SQLite, key string, pending *[]string) {
		ctx := context.Background()
		now := time.Now()
		if _, ok, err := s.Reserve(ctx, Payment{Key: key, Header: header, Accepted: "{}", Row: row}, now); err != nil || !ok {
			b.Fatal(ok, err)
		}
		r := row
		r.Time = now
		if ok, err := s.Settle(ctx, key, "bench", "5sig", r, now); err != nil || !ok {
			b.Fatal(ok, err)
		}
		*pending = append(*pending, key)
		if len(*pending) == 16 {
			if err := s.Deliver(ctx, now, *pending...); err != nil {
				b.Fatal(err)
			}
			*pending = (*pending)[:0]
		}
	}
	plain := func(s *SQLite, key string, _ *[]string) {
		now := formatTime(time.Now())
		if _, err := s.db.Exec("INSERT INTO payments (key, reserved_at) VALUES (?, ?)", key, now); err != nil {
			b.Fatal(err)
		}
		if _, err := s.db.Exec("INSERT INTO ledger (payer, time, price, verdict, category_counts) VALUES (?, ?, ?, ?, ?)",
			row.Payer, now, 10000, row.Verdict, `{"instruction_override":1}`); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		pay  func(*SQLite, string, *[]string)
	}{{"plain", plain}, {"states", states}} {
		b.Run(c.name, func(b *testing.B) {
			s := open(b)
			var pending []string
			for i := range 20_000 {
				c.pay(s, fmt.Sprintf("%064x", i*7919), &pending)
			}
			b.ResetTimer()
			for i := range b.N {
				c.pay(s, fmt.Sprintf("%064x-%d", i, b.N), &pending)
			}
		})
	}
}
