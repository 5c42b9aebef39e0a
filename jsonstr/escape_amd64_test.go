//go:build !purego

package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestEscapeKernels checks the kernels' own results, which the SWAR loops
// after them would hide: scanAVX2 stops where PlainEscapes does or in the
// last 63 bytes, never inside an escape (where the SWAR loop would start
// wrong); unquoteAVX2 and appendAVX2 write what the portable loops write
// for what they read, and stop where their contract says.
func TestEscapeKernels(t *testing.T) {
	if !useEscapes {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for n := 0; n < 20000; n++ {
		b := denseString(rng, rng.IntN(300), 1+rng.IntN(60))
		checkScanKernel(t, b)
		checkUnquoteKernel(t, b)
		checkAppendKernel(t, b, rng.IntN(2) == 0)
	}
}

func checkScanKernel(t *testing.T, b []byte) {
	t.Helper()
	we, _, _ := plainEscapesRef(b, 0)
	n, high, esc := scanAVX2(b)
	if n != we && (n > we || n+64 <= len(b)) {
		t.Fatalf("scanAVX2(%q) = %d, want %d or a tail start", b, n, we)
	}
	// The reference's walk over b[:n] ends at n exactly when n is not
	// inside an escape.
	e, wa, wx := plainEscapesRef(b[:n], 0)
	if e != n || n < len(b) && n > 0 && isEscapeStart(b, n-1) {
		t.Fatalf("scanAVX2(%q) = %d: inside an escape", b, n)
	}
	if high != !wa || esc != wx {
		t.Fatalf("scanAVX2(%q) = %d, high %v, esc %v, want high %v, esc %v", b, n, high, esc, !wa, wx)
	}
}

// isEscapeStart reports whether the walk from b's start takes b[i] as the
// backslash of a two-byte escape.
func isEscapeStart(b []byte, i int) bool {
	for j := 0; j < len(b); j++ {
		if b[j] == '\\' && j+1 < len(b) && escapeByte[b[j+1]] != 0 {
			if j == i {
				return true
			}
			j++
		}
	}
	return false
}

func checkUnquoteKernel(t *testing.T, s []byte) {
	t.Helper()
	dst := make([]byte, len(s)+1)
	dst[len(s)] = 0xAA // past the room: must stay
	nd, ns := unquoteAVX2(dst[:len(s)], s)
	want, wn := unescapeRunsIndex(nil, s[:ns])
	if wn != ns || !bytes.Equal(dst[:nd], want) || dst[len(s)] != 0xAA {
		t.Fatalf("unquoteAVX2(%q) = %q (%d read), want %q (%d)", s, dst[:nd], ns, want, wn)
	}
	if _, full := unescapeRunsIndex(nil, s); ns != full && ns+32 <= len(s) {
		t.Fatalf("unquoteAVX2(%q) stopped at %d, want %d or a tail start", s, ns, full)
	}
}

func checkAppendKernel(t *testing.T, s []byte, html bool) {
	t.Helper()
	room := 40 + rand.IntN(len(s)*2+1)
	dst := make([]byte, room+1)
	dst[room] = 0xAA
	nd, ns := appendAVX2(dst[:room], s, html)
	// What it read is ASCII: encoding/json's bytes are the reference.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	enc.Encode(string(s[:ns]))
	want := buf.Bytes()[1 : buf.Len()-2]
	if !bytes.Equal(dst[:nd], want) || dst[room] != 0xAA {
		t.Fatalf("appendAVX2(%q, %v) = %q (%d read), want %q", s, html, dst[:nd], ns, want)
	}
	if ns < len(s) && s[ns] < 0x80 && ns+32 <= len(s) && nd+40 <= room {
		t.Fatalf("appendAVX2(%q, %v) stopped at %d with room left", s, html, ns)
	}
	for _, c := range s[:ns] {
		if c >= 0x80 {
			t.Fatalf("appendAVX2(%q, %v) read past a byte from 0x80 up", s, html)
		}
	}
}

// TestScanBackslashRuns: runs of 1 to 130 backslashes, then a byte that
// ends them ('n', '"', 'u', 'q', a control), at every offset of strings
// of 200 bytes: a run's parity is what the scan's carry tracks across
// blocks.
func TestScanBackslashRuns(t *testing.T) {
	for k := 1; k <= 130; k++ {
		for _, after := range []byte{'n', '"', 'u', 'q', 0x01, 'a'} {
			for pos := 0; pos+k < 200; pos++ {
				b := bytes.Repeat([]byte{'a'}, 200)
				copy(b[pos:], bytes.Repeat([]byte{'\\'}, k))
				b[pos+k] = after
				checkScanKernel(t, b)
				we, wa, wx := plainEscapesRef(b, 0)
				if e, a, x := PlainEscapes(b, 0); e != we || a != wa || x != wx {
					t.Fatalf("PlainEscapes(%q) = %d, %v, %v, want %d, %v, %v", b, e, a, x, we, wa, wx)
				}
			}
		}
	}
}
