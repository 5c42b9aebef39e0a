package llmreq

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// longBody is a chat body whose one text decodes to more than heldValues
// bytes, escapes in every line, each line naming i.
func longBody(i int) []byte {
	line := fmt.Sprintf(`line %d: \"quoted\" caf\u00e9\n`, i)
	return []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat(line, 2000) + `"}]}`)
}

// TestReleaseValues: a Request keeps its long decoded values, which later
// parses leave alone until it is released; a released Request has no
// texts, and a parse after it, which may reuse the memory, reads its own.
func TestReleaseValues(t *testing.T) {
	a, err := Parse("/v1/chat/completions", longBody(1))
	if err != nil {
		t.Fatal(err)
	}
	value := strings.Clone(a.Texts[0].Value)
	if len(value) < heldValues || a.values == nil || unsafe.StringData(a.Texts[0].Value) != &a.values[0] {
		t.Fatalf("a %d-byte value is not the Request's own buffer", len(value))
	}
	for i := 2; i < 6; i++ {
		r, err := Parse("/v1/chat/completions", longBody(i))
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ReplaceAll(value, "line 1:", fmt.Sprintf("line %d:", i)); r.Texts[0].Value != want {
			t.Fatalf("parse %d after a release: its value is not its body's", i)
		}
		r.Release()
		r.Release() // a second time does nothing
		if r.Texts != nil || r.values != nil {
			t.Fatalf("a released Request keeps %d texts", len(r.Texts))
		}
		if a.Texts[0].Value != value {
			t.Fatalf("the value of a Request not released changed after parse %d", i)
		}
	}
	// Short values are copied out, as before.
	s, err := Parse("/v1/chat/completions", []byte(`{"model":"m","messages":[{"role":"user","content":"a \"short\" one"}]}`))
	if err != nil || s.values != nil || s.Texts[0].Value != `a "short" one` {
		t.Fatalf("a short escaped text: %v, held %v", err, s.values != nil)
	}
}
