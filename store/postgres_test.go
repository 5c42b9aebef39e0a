package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/pgtest"
	"github.com/promptwall/promptwall/store/storetest"
)

// TestPostgreSQL runs the backend suite on a private PostgreSQL server: the
// contract SQLite keeps, over several handles as several servers would
// hold, each a pool of its own.
func TestPostgreSQL(t *testing.T) {
	srv := pgtest.Shared(t)
	storetest.Run(t, func(t *testing.T) func() store.Store {
		dsn := srv.Database(t)
		return func() store.Store {
			s, err := store.OpenPostgreSQL(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}

// TestPostgreSQLMigratesOnce: servers starting at once on an empty
// database all open it; the schema is created once.
func TestPostgreSQLMigratesOnce(t *testing.T) {
	dsn := pgtest.Shared(t).Database(t)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			s, err := store.OpenPostgreSQL(context.Background(), dsn)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("a server starting with others: %v", err)
		}
	}
	s, err := store.OpenPostgreSQL(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Precheck(context.Background(), "wallet", time.Now(), 1, 0); err != nil {
		t.Fatalf("the schema is unusable after concurrent starts: %v", err)
	}
}

// TestPostgreSQLErrorsHideTheDSN: a password in the DSN is in no error.
func TestPostgreSQLErrorsHideTheDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://promptwall:s3cret-pw@127.0.0.1:1/scan?sslmode=disable&connect_timeout=2", // nothing listens
		"postgres://promptwall:s3cret-pw@[::1:bad/scan",                                      // unparseable
	} {
		_, err := store.OpenPostgreSQL(context.Background(), dsn)
		if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
			t.Fatalf("open %q: %v, want an error without the password", dsn, err)
		}
	}
}

// TestPostgreSQLRestart: the database restarted under an open store gives
// errors while it is down and works again after, with no new handle.
func TestPostgreSQLRestart(t *testing.T) {
	srv, err := pgtest.Start()
	if err != nil {
		pgtest.Shared(t) // skips or fails as the suite does without PostgreSQL
		t.Fatal(err)
	}
	defer srv.Stop()
	s, err := store.OpenPostgreSQL(context.Background(), srv.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	if q, err := s.Precheck(ctx, "wallet", now, 2, 0); err != nil || !q.Allowed {
		t.Fatal(q, err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		q, err := s.Precheck(ctx, "wallet", now, 2, 0)
		if err == nil {
			if !q.Allowed || q.Used != 2 {
				t.Fatalf("after the restart: %+v, want the second of two (the first was committed)", q)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store did not recover: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if q, err := s.Precheck(ctx, "wallet", now, 2, 0); err != nil || q.Allowed {
		t.Fatalf("a third pre-check of two: %+v %v", q, err)
	}
}
