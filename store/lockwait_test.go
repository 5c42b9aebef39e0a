package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestWaitsEndWithTheirContexts: while another process holds the
// database's write lock, a write queued in this one behind another ends
// with its own context (a client that hung up), instead of waiting for the
// lock the first holds while that one waits out the busy timeout.
func TestWaitsEndWithTheirContexts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scan.db")
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Another process: its own connection, holding a write transaction.
	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("INSERT INTO payments (key, reserved_at) VALUES ('held', 'now')"); err != nil {
		t.Fatal(err)
	}

	// One write waits in SQLite's busy handler for the other process; a
	// second, queued behind it here, is cancelled: it must leave before the
	// first is done, not wait for the lock the first holds.
	order := make(chan string, 2)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		s.Precheck(ctx, "first", time.Now(), 100, 0)
		order <- "first"
	}()
	time.Sleep(100 * time.Millisecond) // let the first take the lock
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := s.Precheck(ctx, "second", time.Now(), 100, 0)
		if err == nil {
			t.Error("a pre-check succeeded while another process held the write lock")
		}
		order <- "second"
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	if got := <-order; got != "second" {
		t.Fatalf("the cancelled write waited for the lock the first held (%s ended first)", got)
	}
	<-order
}
