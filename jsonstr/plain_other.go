//go:build !amd64 || purego

package jsonstr

func plain(b []byte, i int) int {
	return plainSWAR(b, i)
}

func asciiPrefix(b []byte) int { return asciiPrefixWords(b) }

func plainASCII(b []byte, i int) (int, bool) {
	j := plainSWAR(b, i)
	return j, asciiPrefixWords(b[i:j]) == j-i
}
