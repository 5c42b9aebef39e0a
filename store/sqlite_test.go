package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/pgtest"
	"github.com/promptwall/promptwall/store/storetest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() store.Store {
		path := filepath.Join(t.TempDir(), "sub", "dir", "scan.db")
		return func() store.Store {
			s, err := store.OpenSQLite(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}

func TestSQLiteFileCreatedPrivateInWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "scan?#x.db")
	s, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the database file was not created at its exact path: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("database file mode %v, want 0600", fi.Mode().Perm())
	}
	if _, _, err := s.Reserve(context.Background(), store.Payment{Key: "k"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no WAL file beside the database: %v", err)
	}
	db := rawDB(t, path)
	var cols []string
	rows, err := db.Query("SELECT name FROM pragma_table_info('ledger') ORDER BY cid")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		rows.Scan(&c)
		cols = append(cols, c)
	}
	rows.Close()
	if got := strings.Join(cols, ","); got != "payer,time,price,verdict,category_counts" {
		t.Errorf("ledger columns %s: the ledger keeps exactly payer, time, price, verdict and counts", got)
	}
}

// rawDB opens the file with the driver alone, as an operator would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestSQLiteCrashKeepsAcknowledgedRows runs a writer process that records
// ledger rows as fast as it can and prints the number of each row once
// Record returned, kills it with SIGKILL mid-stream, and checks that every
// row it acknowledged is in the file.
func TestSQLiteCrashKeepsAcknowledgedRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scan.db")
	for round := range 3 {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "STORE_CRASH_WRITER="+path, "STORE_CRASH_ROUND="+strconv.Itoa(round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := map[int]bool{}
		sc := bufio.NewScanner(out)
		deadline := time.After(30 * time.Second)
		killAt := 40 + 30*round
		for len(acked) < killAt && sc.Scan() {
			n, err := strconv.Atoi(sc.Text())
			if err != nil {
				continue
			}
			acked[n] = true
			select {
			case <-deadline:
				t.Fatal("writer too slow")
			default:
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		// Rows acknowledged while the kill was on its way count too.
		for sc.Scan() {
			if n, err := strconv.Atoi(sc.Text()); err == nil {
				acked[n] = true
			}
		}
		cmd.Wait()
		if len(acked) < killAt {
			t.Fatalf("round %d: writer acknowledged only %d rows", round, len(acked))
		}

		s, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatalf("reopening after SIGKILL: %v", err)
		}
		rows, err := s.Ledger(context.Background(), time.Unix(0, 0), time.Now().Add(time.Hour))
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		have := map[int]bool{}
		for _, r := range rows {
			if strings.HasPrefix(r.Payer, fmt.Sprintf("round%d-", round)) {
				n, _ := strconv.Atoi(strings.TrimPrefix(r.Payer, fmt.Sprintf("round%d-", round)))
				have[n] = true
			}
		}
		for n := range acked {
			if !have[n] {
				t.Errorf("round %d: row %d was acknowledged but is not in the ledger after SIGKILL", round, n)
			}
		}
		t.Logf("round %d: %d rows acknowledged before the kill, %d in the file", round, len(acked), len(have))
	}
}

// TestMain doubles as the writer process of the crash test when that test
// starts this binary with STORE_CRASH_WRITER set.
func TestMain(m *testing.M) {
	if path := os.Getenv("STORE_CRASH_WRITER"); path != "" {
		crashWriter(path, os.Getenv("STORE_CRASH_ROUND"))
		return
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// crashWriter settles payments until killed, printing each one's number
// once Settle has returned.
func crashWriter(path, round string) {
	s, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		row := store.LedgerRow{Payer: fmt.Sprintf("round%s-%d", round, i), Time: time.Now(), Price: 10000,
			Verdict: "suspicious", CategoryCounts: map[string]int{"concealment": 1}}
		key := "crash-" + row.Payer
		if _, _, err := s.Reserve(context.Background(), store.Payment{Key: key, Row: row}, row.Time); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := s.Settle(context.Background(), key, "writer", "tx", row, row.Time); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintln(w, i)
		w.Flush()
	}
}
