//go:build !purego

package engine

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"unsafe"
)

// TestWideStateLayout holds the offsets wide_amd64.s reads wideState at
// (its W_ defines) to the struct's.
func TestWideStateLayout(t *testing.T) {
	src, err := os.ReadFile("wide_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]uintptr{}
	for _, m := range regexp.MustCompile(`(?m)^#define W_([A-Z]+) (\d+)$`).FindAllStringSubmatch(string(src), -1) {
		v, _ := strconv.Atoi(m[2])
		defs[m[1]] = uintptr(v)
	}
	var w wideState
	for name, off := range map[string]uintptr{
		"DELTA": unsafe.Offsetof(w.delta), "TEXT": unsafe.Offsetof(w.text), "HITS": unsafe.Offsetof(w.hits),
		"NHITS": unsafe.Offsetof(w.nhits), "HITEND": unsafe.Offsetof(w.hitEnd), "OUT": unsafe.Offsetof(w.out),
		"COLS": unsafe.Offsetof(w.cols), "POS": unsafe.Offsetof(w.pos), "ROWS": unsafe.Offsetof(w.rows),
		"TBUF": unsafe.Offsetof(w.tbuf),
	} {
		if got, ok := defs[name]; !ok || got != off {
			t.Errorf("wide_amd64.s reads W_%s at %d (defined %v), wideState has it at %d", name, got, ok, off)
		}
	}
}
