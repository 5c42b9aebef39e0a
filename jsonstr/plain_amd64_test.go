//go:build !purego

package jsonstr

import "testing"

// TestPlainAVX2 checks the kernel's own result: through Plain, a kernel
// that stopped short of a hit would go unseen, the SWAR loop finding it.
func TestPlainAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	for n := 0; n <= 200; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = plainNearMisses[i%len(plainNearMisses)]
		}
		for _, stop := range []byte{'"', '\\', 0x00, 0x1F} {
			for pos := 0; pos <= n; pos++ { // n: no stop
				if pos < n {
					b[pos] = stop
				}
				for from := 0; from <= n; from++ {
					s := b[from:]
					want := min(plainRef(s, 0), len(s)&^31)
					if got := plainAVX2(s); got != want {
						t.Fatalf("plainAVX2(%q) = %d, want %d", s, got, want)
					}
				}
				if pos < n {
					b[pos] = plainNearMisses[pos%len(plainNearMisses)]
				}
			}
		}
	}
}
