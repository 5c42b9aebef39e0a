package pdftest_test

import (
	"strings"
	"testing"

	"github.com/promptwall/promptwall/filetext"
	"github.com/promptwall/promptwall/filetext/pdftest"
)

// TestDocumentReads: filetext reads back every page's text, in order,
// compressed or not.
func TestDocumentReads(t *testing.T) {
	for _, compress := range []bool{false, true} {
		pdf := pdftest.Document(compress, "First page (with parens).", `Second \ page`)
		text, err := filetext.Extract(filetext.PDF, pdf, filetext.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		first, second := strings.Index(text, "First page (with parens)."), strings.Index(text, `Second \ page`)
		if first < 0 || second < first {
			t.Fatalf("compress %v: extracted %q", compress, text)
		}
	}
}
