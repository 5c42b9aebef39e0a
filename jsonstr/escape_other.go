//go:build !amd64 || purego

package jsonstr

func plainEscapes(b []byte, i int) (int, bool, bool) { return plainEscapesSWAR(b, i) }

func unescapeRuns(dst, s []byte) ([]byte, int) { return unescapeRunsIndex(dst, s) }

// appendRuns has no portable form: Append's own loop is it.
func appendRuns[S string | []byte](dst []byte, _ S, _ bool) ([]byte, int) { return dst, 0 }

// appendRunsOn says whether Append calls appendRuns.
const appendRunsOn = false
