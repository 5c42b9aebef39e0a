//go:build !amd64 || purego

package engine

// haveWide: the wide chains are amd64 only, and not built with purego.
const haveWide = false

// scanWide: the wide chains are amd64 only (wide_amd64.go).
func (ac *ahoCorasick) scanWide(text []byte, col *byteCols, seen []uint64) bool { return false }

// encodeASCII: the vector kernel is amd64 only (wide_amd64.go).
func encodeASCII(out []byte, units []uint16, tab *[256]byte, nib *nibbleTables) int { return 0 }
