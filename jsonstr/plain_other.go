//go:build !amd64

package jsonstr

func plain(b []byte, i int) int {
	return plainSWAR(b, i)
}

func ascii(b []byte) bool { return asciiWords(b) }
