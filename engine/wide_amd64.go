//go:build !purego

package engine

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveWide reports whether the processor has the instructions the kernel
// uses: AVX-512 F and BW, and VBMI for the byte permute. Every such
// processor has AVX2, which the AVX-512 kernels' callers assume; with
// GODEBUG=cpu.avx2=off it stays off too.
var haveWide = hasAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI

// The hit buffer's size, and how much of it a call keeps free: a block of
// four steps adds at most four hits per chain. Each group's hits are stored
// as a whole register of sixteen, whatever their number; that stays inside
// the room too: it holds sixteen entries per group and step of the block,
// and the stores before one filled at most the entries of theirs.
const (
	wideHits    = 1024
	wideHitRoom = 4 * wideLanes
)

// wideState is what the kernel reads and writes; wide_amd64.s knows its
// layout (TestWideStateLayout).
type wideState struct {
	delta  *uint32
	text   *byte
	hits   *uint32
	nhits  int // hits stored
	hitEnd int // the kernel returns once nhits is beyond it
	out    uint32
	_      uint32
	cols   [128]byte        // view byte -> column
	pos    [wideLanes]int32 // each chain's next byte
	rows   [wideLanes]uint32
	tbuf   [16][wideLanes]uint32 // block k of every chain (wideTranspose)
}

// wideWalk runs up to blocks blocks of four steps of every chain and
// returns how many it ran: fewer when the hit buffer fills.
//
//go:noescape
func wideWalk(w *wideState, blocks int) int

// wideTranspose reads the next sixteen blocks of every chain into w.tbuf,
// block by block, and moves the chains on by 64 bytes.
//
//go:noescape
func wideTranspose(w *wideState)

// wideWalkBuf runs blocks from up to to of w.tbuf as wideWalk runs blocks,
// and returns the block it stopped at: to, or before when the hit buffer
// fills.
//
//go:noescape
func wideWalkBuf(w *wideState, from, to int) int

// scanWide does what scan does, with the wide chains; it reports false,
// having done nothing, when they do not apply. The kernel reads a byte's
// column from its low seven bits: every view's bytes are below 128 (an
// ASCII text's own, or alphabet bytes), and any byte would still read as
// some column, so that no load can leave the table.
func (ac *ahoCorasick) scanWide(text []byte, col *byteCols, seen []uint64) bool {
	var hits [wideHits]uint32
	return ac.scanWideBuf(text, col, seen, &hits)
}

// scanWideBuf is scanWide with the hit buffer given, so that a test can
// place it against a page that cannot be written.
func (ac *ahoCorasick) scanWideBuf(text []byte, col *byteCols, seen []uint64, hits *[wideHits]uint32) bool {
	n := len(text)
	if !haveWide || n < wideMinLen || ac.k > 256 || n >= 1<<31 || wideStride(n, ac.ov) < 4*ac.ov {
		return false
	}
	var w wideState
	for b := range w.cols {
		w.cols[b] = byte(col[b])
	}
	// Chain l >= 1 starts ov bytes before l*s, so that every occurrence
	// that ends after l*s starts in what it walks; chain 0 starts at 0. They
	// start at multiples of four, so that no load of four bytes crosses a
	// cache line, and all walk the last one's way to the end of the text, so
	// that they step together (the others walk past their part a little).
	// (Chains 4 KiB apart read bytes of the same few sets of the L1 cache;
	// that costs the gathers of wideWalk much, the loads of wideTranspose
	// little, as each of their lines is read once.)
	ov := ac.ov
	s := wideStride(n, ov)
	for l := range wideLanes {
		w.pos[l] = int32(max(0, l*s-ov) &^ 3)
	}
	steps := n - int(w.pos[wideLanes-1])
	w.delta = unsafe.SliceData(ac.delta)
	w.text = unsafe.SliceData(text)
	w.hits = &hits[0]
	w.hitEnd = wideHits - wideHitRoom
	w.out = ac.out
	// A state's outputs are marked once: prose reaches the states of its
	// common words over and over, and mark divides. Rows are multiples of
	// k, itself a multiple of 16 (keywordColumns), so row/16 tells states
	// apart.
	var marked [128]uint64
	dedupe := ac.k%16 == 0 && len(ac.delta)/16 <= len(marked)*64
	flush := func() {
		for _, row := range hits[:w.nhits] {
			if dedupe {
				i := row / 16
				if marked[i/64]&(1<<(i%64)) != 0 {
					continue
				}
				marked[i/64] |= 1 << (i % 64)
			}
			ac.mark(row, seen)
		}
		w.nhits = 0
	}
	blocks := steps / 4
	for ; blocks >= 16; blocks -= 16 {
		wideTranspose(&w)
		for b := 0; b < 16; {
			b = wideWalkBuf(&w, b, 16)
			flush()
		}
	}
	for blocks > 0 {
		blocks -= wideWalk(&w, blocks)
		flush()
	}
	// The steps left over from the blocks of four, chain by chain.
	last := steps &^ 3
	for l := range wideLanes {
		from := int(w.pos[l])
		end := from + steps - last
		ac.resume(text[from:end], w.rows[l], from, col, func(row uint32, _ int) { ac.mark(row, seen) })
	}
	return true
}

// encodeASCIIUnits writes tab[u] to dst for the units of units, 32 at a
// time with AVX-512 VBMI (a narrowing and a byte permute each), up to the
// first 32 that hold a unit from 128 up, and returns how many it wrote.
//
//go:noescape
func encodeASCIIUnits(dst []byte, units []uint16, tab *[128]byte) int

// encodeASCII writes the alphabet bytes of units' leading ASCII stretches
// to out and returns how many units it did; encodeUnits does the rest. A
// long non-ASCII text is mostly ASCII: a table load per unit was a quarter
// of its scan.
// Without AVX-512 VBMI, AVX2 takes them (encodeAVX2, nib being tab's
// nibble tables).
func encodeASCII(out []byte, units []uint16, tab *[256]byte, nib *nibbleTables) int {
	switch {
	case len(units) < 32:
		return 0
	case haveWide:
		return encodeASCIIUnits(out[:len(units)], units, (*[128]byte)(tab[:128]))
	case hasAVX2:
		return encodeAVX2(out[:len(units)], units, nib)
	}
	return 0
}
