package chatbody

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestStamp: a stamp changes only the last user message, keeps the body
// valid JSON of the same length, and differs with n.
func TestStamp(t *testing.T) {
	escaped := []byte(`{"messages":[{"role":"user","content":"old"},{"role":"user","content":"a\u00eaabcdef\nabcdefg hijklmnop"}]}`)
	for name, body := range map[string][]byte{"4k": Chat4K(), "256k": LongContext256K(), "escapes": escaped} {
		at := StampAt(body)
		if at < 0 {
			t.Fatalf("%s: no place for a stamp", name)
		}
		lastUser := func(b []byte) string {
			var req struct {
				Messages []struct{ Role, Content string }
			}
			if err := json.Unmarshal(b, &req); err != nil {
				t.Fatalf("%s: stamped body is not JSON: %v", name, err)
			}
			last := ""
			for _, m := range req.Messages {
				if m.Role == "user" {
					last = m.Content
				}
			}
			return last
		}
		a, b := bytes.Clone(body), bytes.Clone(body)
		Stamp(a, at, 1)
		Stamp(b, at, 2)
		if len(a) != len(body) || bytes.Equal(a, b) || lastUser(a) == lastUser(b) {
			t.Fatalf("%s: stamps 1 and 2 give the same message", name)
		}
		if lastUser(a) == lastUser(body) {
			t.Fatalf("%s: the stamp did not change the last user message", name)
		}
		// Nothing else changes: the bodies differ only in the stamp's bytes.
		for i := range body {
			if a[i] != body[i] && (i < at || i >= at+stampLen) {
				t.Fatalf("%s: byte %d outside the stamp changed", name, i)
			}
		}
	}
	// Escapes are skipped, and so are their letters.
	if got, want := lastUserStamped(t, escaped), "a\u00eaabcdef\nabcdefg aaaaaaaap"; got != want {
		t.Fatalf("stamped %q, want %q", got, want)
	}
}

// lastUserStamped returns the last message's content after stamp 0.
func lastUserStamped(t *testing.T, b []byte) string {
	b = bytes.Clone(b)
	Stamp(b, StampAt(b), 0)
	var req struct{ Messages []struct{ Content string } }
	if err := json.Unmarshal(b, &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("stamped body %s: %v", b, err)
	}
	return req.Messages[len(req.Messages)-1].Content
}
