package bufpool

import "testing"

func TestGetSizes(t *testing.T) {
	for _, tc := range []struct{ size, cap int }{
		{-1, 4096}, {0, 4096}, {1, 4096}, {4096, 4096}, {4097, 8192}, {1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20}, {2<<20 + 1, 2<<20 + 1},
	} {
		b := Get(tc.size)
		if len(b) != 0 || cap(b) != tc.cap {
			t.Errorf("Get(%d): len %d cap %d, want 0 and %d", tc.size, len(b), cap(b), tc.cap)
		}
		Put(b)
	}
}

// TestPutUnpooled: a buffer no pool takes (too small, not a power of two,
// too large) is dropped without an allocation.
func TestPutUnpooled(t *testing.T) {
	for _, c := range []int{100, 3 << 12, 4 << 20} {
		b := make([]byte, 5, c)
		if n := testing.AllocsPerRun(20, func() { Put(b) }); n != 0 {
			t.Errorf("Put of a %d-byte buffer: %.1f allocations", c, n)
		}
	}
}
