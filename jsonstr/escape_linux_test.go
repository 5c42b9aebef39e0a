package jsonstr

import (
	"testing"

	"github.com/promptwall/promptwall/internal/guardpage"
)

// TestEscapesGuardPages runs PlainEscapes, Unquote and Append on escape-
// dense strings that start or end at the edge of an inaccessible page, and
// Unquote into room that ends at one: a read or write outside the slices
// crashes the test.
func TestEscapesGuardPages(t *testing.T) {
	data := guardpage.New(t, 1)
	out := guardpage.New(t, 1)
	pattern := []byte(`ab\ncd\\e\"fgh\/ij\tk`)
	for i := range data {
		data[i] = pattern[i%len(pattern)]
	}
	for n := 0; n <= 200; n++ {
		for _, s := range [][]byte{data[:n:n], data[len(data)-n:]} {
			for from := 0; from <= len(s); from++ {
				we, wa, wx := plainEscapesRef(s, from)
				if e, a, x := PlainEscapes(s, from); e != we || a != wa || x != wx {
					t.Fatalf("PlainEscapes(%q, %d) = %d, %v, %v, want %d, %v, %v", s, from, e, a, x, we, wa, wx)
				}
			}
			// Unquote into room of exactly the input's length, at the
			// page's end (a cut escape at the end cut off).
			checkAppend(t, string(s))
			lit := s
			if len(lit) > 0 && lit[len(lit)-1] == '\\' {
				lit = lit[:len(lit)-1]
			}
			if End(append(append([]byte{'"'}, lit...), '"'), 0) != len(lit)+2 {
				continue // a quote of the pattern's \" cut from its backslash
			}
			room := out[len(out)-len(lit) : len(out)-len(lit)]
			got := Unquote(room, lit)
			if want := unquoteRef(t, lit); string(got) != string(want) {
				t.Fatalf("Unquote(%q) = %q, want %q", lit, got, want)
			}
		}
	}
}
