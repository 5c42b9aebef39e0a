package llmresp

import "testing"

// TestCloneOutlivesEmit: a cloned event, kept past the framer's next events (which reuse its
// buffers), still rewrites as the original would have.
func TestCloneOutlivesEmit(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"World, and more text here\"}}]}\n\n"
	fr := NewFramer(OpenAIChat, FormatSSE, 0)
	var kept []*Event
	emit := func(e *Event) error { kept = append(kept, e.Clone()); return nil }
	if err := fr.Feed([]byte(body), emit); err != nil {
		t.Fatal(err)
	}
	if err := fr.Close(emit); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 {
		t.Fatalf("%d events", len(kept))
	}
	ps, _, err := Pieces(OpenAIChat, kept[0], nil)
	if err != nil || len(ps) != 1 || ps[0].Text != "Hello" {
		t.Fatalf("pieces %v %v", ps, err)
	}
	out, err := Rewrite(kept[0], []Edit{{Piece: &ps[0], Text: "Bye"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Bye\"}}]}\n\n"; string(out) != want {
		t.Errorf("got %q want %q", out, want)
	}
}
