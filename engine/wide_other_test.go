//go:build !amd64

package engine

// The kernel's state exists on amd64 only; TestWideStateLayout checks a
// stand-in with the same fields.
type wideState struct {
	delta  *uint32
	text   *byte
	hits   *uint32
	nhits  int
	hitEnd int
	out    uint32
	_      uint32
	cols   [128]byte
	pos    [wideLanes]int32
	rows   [wideLanes]uint32
	tbuf   [16][wideLanes]uint32
}

const (
	wideLanes  = 64
	wideMinLen = 6 << 10
)

var haveWide = false

func wideStride(n, ov int) int { return n / wideLanes }
