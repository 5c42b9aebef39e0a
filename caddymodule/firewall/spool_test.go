package firewall

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpool: bytes come back as written, from memory or past spoolMemory
// from a temporary file, which is gone once the spool and its body are
// done; past max, Write fails with 413.
func TestSpool(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for _, n := range []int{0, 10, spoolMemory, spoolMemory + 1, 3 * spoolMemory} {
		data := bytes.Repeat([]byte("abcdefg"), n/7+1)[:n]
		sp := &spool{max: 4 * spoolMemory}
		// In pieces, as a tee writes them.
		for rest := data; len(rest) > 0; {
			k := min(len(rest), 100000)
			if m, err := sp.Write(rest[:k]); err != nil || m != k {
				t.Fatalf("%d bytes: write %d, %v", n, m, err)
			}
			rest = rest[k:]
		}
		if (sp.file != nil) != (n > spoolMemory) {
			t.Errorf("%d bytes: file %v", n, sp.file != nil)
		}
		body := newSpoolBody(sp, nil)
		got, err := io.ReadAll(body)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d, %v", n, len(got), err)
		}
		body.Close()
		if sp.file == nil && n > spoolMemory {
			t.Errorf("%d bytes: closed before the handler released it", n)
		}
		body.release()
		if _, err := body.Read(make([]byte, 1)); err == nil {
			t.Errorf("read after close")
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
			t.Errorf("%d bytes: left behind %v", n, left)
		}
	}
	sp := &spool{max: 10}
	if _, err := sp.Write([]byte(strings.Repeat("x", 11))); err == nil || !sp.overflow {
		t.Fatal("over max accepted")
	} else if fe, ok := err.(*failure); !ok || fe.status != 413 {
		t.Fatalf("err %v", err)
	}
}
