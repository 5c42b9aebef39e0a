//go:build !amd64

package engine

// scanWide: the wide chains are amd64 only (wide_amd64.go).
func (ac *ahoCorasick) scanWide(text []byte, col *byteCols, seen []uint64) bool { return false }
