//go:build !amd64 || purego

package engine

// widenASCII: the vector kernel is amd64 only (units_amd64.go).
func widenASCII(units []uint16, raw []byte, i, k int) (iOut, kOut int) { return i, k }

// encodeASCIIBytes: the vector kernel is amd64 only (units_amd64.go).
func encodeASCIIBytes(dst, src []byte, nib *nibbleTables) int { return 0 }
