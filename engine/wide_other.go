//go:build !amd64

package engine

// scanWide: the wide chains are amd64 only (wide_amd64.go).
func (ac *ahoCorasick) scanWide(text []byte, col *byteCols, seen []uint64) bool { return false }

// encodeASCII: the vector kernel is amd64 only (wide_amd64.go).
func encodeASCII(out []byte, units []uint16, tab *[256]byte) int { return 0 }
