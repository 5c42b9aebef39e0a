package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSQLiteDurabilitySettings checks the settings the crash guarantees
// rest on, on several pooled connections at once: WAL, synchronous=FULL
// (every commit reaches the disk before Record returns) and a busy timeout
// (other processes' locks are waited for, not failed on).
func TestSQLiteDurabilitySettings(t *testing.T) {
	s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "scan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// Hold connections open so the pool has to make new ones.
	for i := range 4 {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var mode string
		var sync, busy int
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || sync != 2 || busy < 1000 {
			t.Errorf("connection %d: journal_mode %s, synchronous %d, busy_timeout %d; want wal, 2 (FULL), at least 1000", i, mode, sync, busy)
		}
	}
}
