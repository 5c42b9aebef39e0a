//go:build !purego

package engine

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/promptwall/promptwall/internal/guardpage"
)

// TestWideHitsStayInside: the kernel stores each group's hits as a whole
// register, so a call's last stores reach past the hits it counts. Here
// the hit buffer ends against a page that cannot be written, and texts of
// a one-byte literal make the chains hit on most steps: a store past the
// buffer crashes the test. (It crashes with wideHitRoom eight entries
// short.)
func TestWideHitsStayInside(t *testing.T) {
	if !haveWide {
		t.Log("no AVX-512 VBMI here: only that scanWideBuf declines is tested")
	}
	c := engineOf(t, `{"rules_id":"t","version":"1","categories":{"c":"c"},"rules":[
		{"id":"A-1","category":"c","severity":"suspicious","pattern":"\\s*z","flags":"i"}]}`).c
	if c.ac.ov != 0 {
		t.Fatalf("the literal is not one byte: ov %d", c.ac.ov)
	}
	mem := guardpage.New(t, int(unsafe.Sizeof([wideHits]uint32{})))
	hits := (*[wideHits]uint32)(unsafe.Pointer(&mem[len(mem)-wideHits*4]))
	col := &c.keywordCols[viewASCII]
	z := byte(slices.Index(c.ascii[:128], c.literals[0][0]))
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(text []byte, what string) {
		t.Helper()
		got := make([]uint64, 1)
		if ran := c.ac.scanWideBuf(text, col, got, hits); ran != haveWide {
			t.Fatalf("%s: scanWideBuf ran %v, want %v", what, ran, haveWide)
		} else if !ran {
			return
		}
		if want := []uint64{1}; !slices.Equal(got, want) {
			t.Fatalf("%s: seen %x, want %x", what, got, want)
		}
	}
	const n = 100_003
	// The literal at every byte, or missing at random one byte in m.
	for _, miss := range []int{0, 1000, 100, 16, 8, 4, 2} {
		text := make([]byte, n)
		for i := range text {
			text[i] = z
			if miss > 0 && rng.IntN(miss) == 0 {
				text[i] = '.'
			}
		}
		check(text, "one byte in "+strconv.Itoa(miss)+" missing")
	}
	// Each block of four steps of the chains gets a density of its own, so
	// that a call's count reaches every value, then meets a block in which
	// nearly every chain hits at every step: the fullest the room allows.
	s := wideStride(n, 0)
	steps := n - (wideLanes-1)*s&^3
	for trial := range 20 {
		text := make([]byte, n)
		for i := range text {
			text[i] = '.'
		}
		for blk := 0; blk*4 < steps; blk++ {
			p := 0.5 + rng.Float64()/2
			if rng.IntN(3) == 0 {
				p = 0.97 + rng.Float64()*0.03
			}
			for l := range wideLanes {
				at := l * s &^ 3
				for k := blk * 4; k < min(blk*4+4, steps); k++ {
					if rng.Float64() < p {
						text[at+k] = z
					}
				}
			}
		}
		check(text, "trial "+strconv.Itoa(trial))
	}
}
