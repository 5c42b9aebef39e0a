package integration

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/promptwall/promptwall/x402"
)

// TestScanReliabilityFullDisk runs the server with its store on a 1 MiB
// tmpfs of its own and fills that disk: once while a payment is being
// settled (the facilitator takes 400 ms, so the ledger row is what cannot
// be written), then for a burst of paid scans and pre-checks. While the
// disk is full nothing panics and a paid scan gets either its result or an
// error, never a result without its row; once space is back, every payment
// retried with the same header ends with exactly one ledger row if and only
// if it settled, and its scan is given.
func TestScanReliabilityFullDisk(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "scan.db")
	s := startPaidSite(t, dbPath, "precheck_interval none", inTmpfs(dir, "1m", "")...)
	// The tmpfs is in the server's mount namespace only: reach it there.
	inside := func(p string) string { return fmt.Sprintf("/proc/%d/root%s", s.srv.cmd.Process.Pid, p) }
	filler := inside(filepath.Join(dir, "filler"))
	fill := func() {
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		chunk := make([]byte, 16<<10)
		for {
			if _, err := f.Write(chunk); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("filling the disk: %v", err)
				}
				return
			}
		}
	}

	payers := map[string]string{} // payer -> header
	final := map[string]int{}     // payer -> last status
	pay := func(seed string) {
		p := newGoPayer(seed)
		h := p.header(t, s.offer, seed)
		st, _, _, err := rawPost(s.base+"/scan", scanText, map[string]string{"PAYMENT-SIGNATURE": h})
		if err != nil {
			t.Fatalf("paid scan %s: %v", seed, err)
		}
		payers[p.addr], final[p.addr] = h, st
	}
	pay("disk before")
	if final[newGoPayer("disk before").addr] != 200 {
		t.Fatal("paid scan before the disk is full failed")
	}

	// Full while a payment settles.
	s.fac.delay.Store(int64(400 * time.Millisecond))
	done := make(chan struct{})
	go func() { defer close(done); pay("disk settling") }()
	time.Sleep(150 * time.Millisecond)
	fill()
	<-done
	s.fac.delay.Store(0)

	// A burst on the full disk.
	statuses := map[int]int{}
	for i := range 6 {
		pay(fmt.Sprint("disk full ", i))
		st, _ := s.precheck(t, fmt.Sprint("disk full caller ", i))
		statuses[st]++
	}
	for _, st := range final {
		statuses[st]++
	}
	t.Logf("answers while the disk was full: %v", statuses)
	if statuses[503]+statuses[500] == 0 {
		t.Fatal("nothing failed on a full disk: the disk was not full")
	}
	for st := range statuses {
		if st != 200 && st != 500 && st != 503 {
			t.Errorf("status %d on a full disk, want 200, 500 or 503", st)
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for payer, h := range payers {
		for try := 0; final[payer] != 200 && try < 40; try++ {
			st, hdr, b, err := rawPost(s.base+"/scan", scanText, map[string]string{"PAYMENT-SIGNATURE": h})
			if err != nil {
				t.Fatal(err)
			}
			if st == 402 && offerError(hdr) == x402.ReasonDuplicateSettlement {
				t.Fatalf("payer %s: refused as used without having had its scan", payer)
			}
			if st != 200 && st != 500 && st != 503 && st != 409 {
				t.Fatalf("payer %s: retry answered %d %s", payer, st, b)
			}
			final[payer] = st
			if st != 200 {
				time.Sleep(250 * time.Millisecond)
			}
		}
	}
	if st, b := s.precheck(t, "disk after"); st != 200 {
		t.Fatalf("pre-check once space is back: %d %s", st, b)
	}
	// SQLite resolves the /proc link to the host's view: read a copy.
	time.Sleep(500 * time.Millisecond) // the delivery marks
	cp := filepath.Join(t.TempDir(), "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(inside(dbPath + suffix))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cp+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rows := ledgerPayers(t, cp)
	for payer, h := range payers {
		settled := s.fac.wasSettled(headerKey(t, h))
		if final[payer] != 200 || !settled || rows[payer] != 1 {
			t.Errorf("payer %s: last answer %d, settled %t, %d ledger rows; want 200, true, 1", payer, final[payer], settled, rows[payer])
		}
	}
	if len(rows) != len(payers) {
		t.Errorf("%d payers in the ledger, %d paid", len(rows), len(payers))
	}
	log := s.srv.Log()
	if strings.Contains(log, "panic") || len(logLines(log, `"level":"error"`)) == 0 {
		t.Fatalf("want error lines and no panic in the log:\n%s", log)
	}
}
