//go:build !purego

package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWidenAVX2: widenAVX2 from random places of texts of ASCII bytes with
// the odd byte from 0x80 up, against a byte loop over the blocks of 32 it
// should take; nothing is written outside the units it reports.
func TestWidenAVX2(t *testing.T) {
	needAVX2(t)
	const unset = 0xEEEE
	rng := rand.New(rand.NewPCG(24, 25))
	for range 20000 {
		raw := randomText(rng, rng.IntN(400), "ab cd0135@$7%2XY", 2)
		i := rng.IntN(len(raw) + 1)
		k := i - rng.IntN(i+1)
		units := make([]uint16, len(raw)+8)
		for u := range units {
			units[u] = unset
		}
		gotI, gotK := widenAVX2(units[:len(raw)], raw, i, k)
		want := slices.Clone(units)
		wi, wk := i, k
		for wi+32 <= len(raw) && asciiPrefixWords32(raw[wi:wi+32]) {
			for j := range 32 {
				want[wk+j] = uint16(raw[wi+j])
			}
			wi, wk = wi+32, wk+32
		}
		if gotI != wi || gotK != wk || !slices.Equal(units, want) {
			t.Fatalf("%q from %d (unit %d): to %d (unit %d) %x; want %d (unit %d) %x", raw, i, k, gotI, gotK, units, wi, wk, want)
		}
	}
}

func asciiPrefixWords32(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// TestEncodeAVX2: encodeAVX2 over random units, mostly ASCII, through
// random tables and the engine's own, against the table read unit by
// unit: it stops at the first 32 units that hold one from 128 up.
func TestEncodeAVX2(t *testing.T) {
	checkEncodeKernel(t, 26, 0xFF80, func(dst []byte, units []uint16, nib *nibbleTables) int { return encodeAVX2(dst, units, nib) })
}

// TestEncodeBytesAVX2: encodeBytesAVX2, the same for bytes.
func TestEncodeBytesAVX2(t *testing.T) {
	checkEncodeKernel(t, 28, 128, func(dst []byte, src []byte, nib *nibbleTables) int { return encodeBytesAVX2(dst, src, nib) })
}

// checkEncodeKernel runs an encoding kernel on random units (high of them
// from 128 up, the odd one) with random tables: it must write tab's bytes
// for the whole blocks of 32 below 128 it should take, and nothing past.
func checkEncodeKernel[U byte | uint16](t *testing.T, seed uint64, high int, kernel func(dst []byte, units []U, nib *nibbleTables) int) {
	needAVX2(t)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	tabs := []*[256]byte{&Default().c.ascii}
	for range 8 {
		var tab [256]byte
		for b := range 128 {
			tab[b] = byte(rng.IntN(256))
		}
		tabs = append(tabs, &tab)
	}
	for range 20000 {
		tab := tabs[rng.IntN(len(tabs))]
		nib := nibbleTablesOf(tab)
		units := make([]U, rng.IntN(300))
		for j := range units {
			units[j] = U(rng.IntN(128))
			if rng.IntN(200) == 0 {
				units[j] = U(128 + rng.IntN(high))
			}
		}
		dst := make([]byte, len(units)+8)
		for j := range dst {
			dst[j] = 0xA5
		}
		n := kernel(dst[:len(units)], units, &nib)
		want := 0
		for want+32 <= len(units) && !slices.ContainsFunc(units[want:want+32], func(u U) bool { return u >= 128 }) {
			want += 32
		}
		if n != want {
			t.Fatalf("%x: encoded %d units, want %d", units, n, want)
		}
		for j := range dst {
			w := byte(0xA5)
			if j < n {
				w = tab[units[j]]
			}
			if dst[j] != w {
				t.Fatalf("%x: byte %d is %#x, want %#x", units, j, dst[j], w)
			}
		}
	}
}
