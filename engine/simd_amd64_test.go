//go:build !purego

package engine

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKernelMins: the fuzz targets' long texts reach the kernels.
func TestKernelMins(t *testing.T) {
	if leetKernelMin > longTextMin || tokenKernelMin > longTextMin {
		t.Fatalf("kernels from %d and %d bytes, long texts from %d", leetKernelMin, tokenKernelMin, longTextMin)
	}
}

func needAVX2(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2")
	}
}

// checkLeetAVX2 compares leetAVX2 from position from, with room for room
// positions, with the byte loop over the blocks it should read
// (checkLeetKernel).
func checkLeetAVX2(t *testing.T, raw []byte, from, room int) {
	t.Helper()
	checkLeetKernel(t, raw, from, room, true, true, func(pos []int32) (int, int, bool, bool) { return leetAVX2(pos, raw, from) })
}

// checkLeetKernel runs a leetspeak kernel from position from with room for
// room positions, compares what it returns with the byte loop over the
// blocks it should read, and checks that it writes nothing past the
// positions it returns. It returns where the kernel should stop, and
// whether raw was ASCII up to there. reread: the bytes after the whole
// blocks are read as the end of the last 64 (leetAVX2), not alone;
// progress: at a block that is not ASCII, the kernel returns the positions
// before it and its start (leetAVX2).
func checkLeetKernel(t *testing.T, raw []byte, from, room int, reread, progress bool, kernel func(pos []int32) (n, end int, ascii, pct bool)) (wantEnd int, ascii bool) {
	t.Helper()
	const unset = -7
	pos := make([]int32, room+8)
	for k := range pos {
		pos[k] = unset
	}
	n, end, ascii, pct := kernel(pos[:room])

	var want []int32
	wantEnd, wantASCII, wantPct := from, true, false
	for (len(raw) >= 64 || !reread) && wantEnd < len(raw) {
		next := min(wantEnd+64, len(raw))
		block := raw[wantEnd:next]
		if reread && next-wantEnd < 64 {
			block = raw[len(raw)-64:] // the end, read again
		}
		if _, ascii := leetRef(block); !ascii {
			wantASCII = false
			break
		}
		wantPct = wantPct || bytes.IndexByte(block, '%') >= 0
		p, _ := leetRef(raw[wantEnd:next])
		if len(p) > 0 && room-len(want) < 64 {
			break
		}
		for _, p := range p {
			want = append(want, int32(wantEnd)+p)
		}
		wantEnd = next
	}
	if ascii != wantASCII {
		t.Fatalf("%q from %d: ASCII %v, want %v", raw, from, ascii, wantASCII)
	}
	if !ascii && progress && (end != wantEnd || !slices.Equal(pos[:n], want)) {
		t.Fatalf("%q from %d, room %d: %v up to %d before a byte from 0x80 up, want %v up to %d", raw, from, room, pos[:n], end, want, wantEnd)
	}
	if !ascii {
		return wantEnd, false
	}
	if pct != wantPct {
		t.Fatalf("%q from %d, room %d: '%%' %v, want %v", raw, from, room, pct, wantPct)
	}
	if end != wantEnd || !slices.Equal(pos[:n], want) {
		t.Fatalf("%q from %d, room %d: %v up to %d, want %v up to %d", raw, from, room, pos[:n], end, want, wantEnd)
	}
	for k := n; k < len(pos); k++ {
		if pos[k] != unset {
			t.Fatalf("%q from %d, room %d: %d positions, and %d written", raw, from, room, n, k)
		}
	}
	return wantEnd, true
}

// tokenSkipRef is what tokenSkipAVX2 returns.
func tokenSkipRef(s []byte) int {
	if len(s) < 64 {
		return 0
	}
	return firstWindow(s, 0)
}

func checkTokenSkip(t *testing.T, s []byte) {
	t.Helper()
	want := tokenSkipRef(s)
	if got := tokenSkipAVX2(s); got != want {
		t.Fatalf("%q: %d, want %d", s, got, want)
	}
	if hasAVX512BW {
		if got := tokenSkipAVX512(s); got != want {
			t.Fatalf("%q: AVX-512 %d, want %d", s, got, want)
		}
	}
}

// TestLeetAVX2: every byte value alone at every place of a block among
// letters or among leetspeak characters, in a text of three blocks and a
// tail, read from the start, from a later block and from the tail, with
// room for every position or fewer; random texts.
func TestLeetAVX2(t *testing.T) {
	needAVX2(t)
	for c := range 256 {
		for at := range 3 * 64 {
			for _, fill := range []string{"abcdefghijklmnopqrstuvwxyz ABC", "01345@$7"} {
				b := bytes.Repeat([]byte(fill), 200/len(fill)+1)[:200]
				b[at] = byte(c)
				for _, from := range []int{0, 64, 192, 199, 200} {
					for _, room := range []int{0, 63, 64, 100, 200} {
						checkLeetAVX2(t, b, from, room)
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(14, 15))
	for range 5000 {
		b := randomText(rng, rng.IntN(2000), "ab 0123456789@$#%", 4)
		checkLeetAVX2(t, b, rng.IntN(len(b)+1), rng.IntN(2*len(b)+64))
	}
}

// TestTokenSkipAVX2: every byte value alone at every place of three blocks
// of base64 bytes; a run of 15 to 17 base64 bytes at every place among
// spaces, and two runs that make 16 with one byte between; random texts.
func TestTokenSkipAVX2(t *testing.T) {
	needAVX2(t)
	const letters = "QUJDREVGR0hJSktMTU5PUA+/-_09azAZ"
	for c := range 256 {
		for at := range 3 * 64 {
			b := bytes.Repeat([]byte(letters), 7)[:200]
			b[at] = byte(c)
			checkTokenSkip(t, b)
		}
	}
	for n := 0; n <= 300; n++ {
		b := make([]byte, n)
		for at := range n {
			for run := 15; run <= 17; run++ {
				for i := range b {
					b[i] = ' '
				}
				copy(b[at:min(at+run, n)], letters)
				checkTokenSkip(t, b)
				if at+run < n {
					b[at+run-7] = '.'
					checkTokenSkip(t, b)
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(16, 17))
	for range 20000 {
		b := make([]byte, rng.IntN(1000))
		for i := range b {
			if rng.IntN(12) == 0 {
				b[i] = " .=\xff"[rng.IntN(4)]
			} else {
				b[i] = letters[rng.IntN(len(letters))]
			}
		}
		checkTokenSkip(t, b)
	}
}

// checkClassify compares classifyVBMI from position from, with room for
// room positions, with the byte loops over the blocks it should read: the
// leetspeak positions as checkLeetKernel wants them (it reads the bytes
// after the whole blocks alone), the start of the first 16 base64 bytes in
// a row among the bytes read, and, when it stops before the end with none,
// the base64 bytes that end them.
func checkClassify(t *testing.T, raw []byte, from, room int) {
	t.Helper()
	// The state the blocks before from leave.
	run0, tok0 := trailingB64(raw[:from]), firstWindow(raw[:from], 0)
	if tok0 == from {
		tok0 = -1
	}
	var run, tok int
	wantEnd, ascii := checkLeetKernel(t, raw, from, room, false, false, func(pos []int32) (n, end int, ascii, pct bool) {
		n, end, run, tok, ascii, pct = classifyVBMI(pos, raw, from, run0, tok0)
		return n, end, ascii, pct
	})
	if !ascii {
		return
	}
	wantTok := firstWindow(raw[:wantEnd], 0)
	if wantTok == wantEnd {
		wantTok = -1
	}
	if tok != wantTok {
		t.Fatalf("%q from %d (run %d), room %d: token from %d, want %d", raw, from, run0, room, tok, wantTok)
	}
	if wantRun := trailingB64(raw[:wantEnd]); tok < 0 && wantEnd < len(raw) && run != wantRun {
		t.Fatalf("%q from %d, room %d: %d base64 bytes end the blocks read, want %d", raw, from, room, run, wantRun)
	}
}

// trailingB64 counts the base64 bytes that end s.
func trailingB64(s []byte) int {
	n := 0
	for n < len(s) && isB64Ref(s[len(s)-1-n]) {
		n++
	}
	return n
}

// TestClassifyVBMI: every byte value alone at every place of a block among
// letters, leetspeak characters or base64 bytes, in a text of three blocks
// and a tail, read from the start, from a later block and from the tail,
// with room for every position or fewer; runs of 15 to 17 base64 bytes at
// every place; random texts.
func TestClassifyVBMI(t *testing.T) {
	if !hasVBMI {
		t.Skip("no AVX-512 VBMI")
	}
	for c := range 256 {
		for at := range 3 * 64 {
			for _, fill := range []string{"abcdefghijklmnopqrstuvwxyz ABC", "01345@$7", "QUJDREVGR0hJSktMTU5PUA+/-_09azAZ"} {
				b := bytes.Repeat([]byte(fill), 200/len(fill)+1)[:200]
				b[at] = byte(c)
				for _, from := range []int{0, 64, 192, 199, 200} {
					for _, room := range []int{0, 63, 64, 100, 200} {
						checkClassify(t, b, from, room)
					}
				}
			}
		}
	}
	const letters = "QUJDREVGR0hJSktMTU5PUA+/-_09azAZ"
	for n := 0; n <= 300; n++ {
		b := make([]byte, n)
		for at := range n {
			for run := 15; run <= 17; run++ {
				for i := range b {
					b[i] = " 1"[i%2]
				}
				copy(b[at:min(at+run, n)], letters)
				for _, from := range []int{0, 64, 128} {
					if from <= n {
						checkClassify(t, b, from, n)
						checkClassify(t, b, from, 0)
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(18, 19))
	for range 20000 {
		// Mostly base64 letters, so that runs of 16 come and go.
		b := randomText(rng, rng.IntN(2000), letters+letters+" .=%@3", 4)
		checkClassify(t, b, rng.IntN(len(b)+1)&^63, rng.IntN(2*len(b)+64))
	}
}
