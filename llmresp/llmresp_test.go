package llmresp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// rec is an event as a test compares it.
type rec struct {
	Raw, Name, Data  string
	HasData, Partial bool
}

func frame(t testing.TB, api API, ctype string, chunks [][]byte) ([]rec, error) {
	t.Helper()
	f, err := Detect(api, ctype)
	if err != nil {
		return nil, err
	}
	fr := NewFramer(api, f, 0)
	var out []rec
	emit := func(e *Event) error {
		out = append(out, rec{string(e.Raw), e.Name, string(e.Data), e.Data != nil, e.Partial})
		return nil
	}
	for _, c := range chunks {
		if err := fr.Feed(c, emit); err != nil {
			return out, err
		}
	}
	return out, fr.Close(emit)
}

func piecesOf(t *testing.T, tr transcript) (pieces []string, done, upErr int) {
	t.Helper()
	f, err := Detect(tr.api, tr.ctype)
	if err != nil {
		t.Fatal(err)
	}
	fr := NewFramer(tr.api, f, 0)
	emit := func(e *Event) error {
		ps, info, err := Pieces(tr.api, e, nil)
		if err != nil {
			return fmt.Errorf("event %q: %w", e.Raw, err)
		}
		if info.Done {
			done++
		}
		if info.UpstreamError {
			upErr++
		}
		for _, p := range ps {
			w := ""
			if p.Whole {
				w = "+"
			}
			pieces = append(pieces, w+p.Channel+"|"+p.Kind.String()+"|"+p.Text)
		}
		return nil
	}
	if err := fr.Feed([]byte(tr.body), emit); err != nil {
		t.Fatal(err)
	}
	if err := fr.Close(emit); err != nil {
		t.Fatal(err)
	}
	return
}

func TestTranscriptPieces(t *testing.T) {
	for _, tr := range transcripts {
		t.Run(tr.name, func(t *testing.T) {
			got, done, upErr := piecesOf(t, tr)
			if strings.Join(got, "\n") != strings.Join(tr.pieces, "\n") {
				t.Errorf("pieces:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tr.pieces, "\n"))
			}
			if done != tr.done || upErr != tr.errors {
				t.Errorf("[DONE] %d, upstream errors %d; want %d, %d", done, upErr, tr.done, tr.errors)
			}
		})
	}
}

func concat(rs []rec) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Raw)
	}
	return b.String()
}

// Every split point of every transcript, and random chunkings down to one byte, give the same
// events, and the events' bytes are the body.
func TestTranscriptChunking(t *testing.T) {
	for _, tr := range transcripts {
		t.Run(tr.name, func(t *testing.T) {
			body := []byte(tr.body)
			want, err := frame(t, tr.api, tr.ctype, [][]byte{body})
			if err != nil {
				t.Fatal(err)
			}
			if concat(want) != tr.body {
				t.Fatalf("events do not add up to the body")
			}
			for i := 0; i <= len(body); i++ {
				got, err := frame(t, tr.api, tr.ctype, [][]byte{body[:i], body[i:]})
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("split at %d: %v\n%+v\nwant\n%+v", i, err, got, want)
				}
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(body))))
			for range 200 {
				got, err := frame(t, tr.api, tr.ctype, randomChunks(rng, body))
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("random chunking: %v", err)
				}
			}
		})
	}
}

func randomChunks(rng *rand.Rand, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := 1 + rng.IntN(min(len(b), 1+rng.IntN(64)))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// Rewriting each piece changes that string only: the event still frames as one event, its
// pieces are the same but that one, and the bytes before and after the literal are kept.
func TestRewriteEachPiece(t *testing.T) {
	for _, tr := range transcripts {
		t.Run(tr.name, func(t *testing.T) {
			f, _ := Detect(tr.api, tr.ctype)
			n := 0
			emit := func(e *Event) error {
				ps, _, err := Pieces(tr.api, e, nil)
				if err != nil {
					return err
				}
				unchanged, err := Rewrite(e, nil)
				if err != nil || !bytes.Equal(unchanged, e.Raw) {
					t.Errorf("no edit changed the event: %v", err)
				}
				for k := range ps {
					p := ps[k]
					repl := "[redacted \"</a>&\n\u2028\xff]"
					if p.JSON {
						repl = "{\n  \"redacted\": \"<x>\"\n}"
					}
					out, err := Rewrite(e, []Edit{{&p, repl}})
					if err != nil {
						t.Fatalf("rewrite %s: %v", p.Channel, err)
					}
					checkRewritten(t, tr, e, ps, k, repl, out)
					n++
				}
				return nil
			}
			fr := NewFramer(tr.api, f, 0)
			if err := fr.Feed([]byte(tr.body), emit); err != nil {
				t.Fatal(err)
			}
			if err := fr.Close(emit); err != nil {
				t.Fatal(err)
			}
			if n != len(tr.pieces) {
				t.Errorf("rewrote %d pieces, want %d", n, len(tr.pieces))
			}
		})
	}
}

func checkRewritten(t *testing.T, tr transcript, orig *Event, ps []Piece, k int, repl string, out []byte) {
	t.Helper()
	p := ps[k]
	rs, re := orig.rawOffset(p.start, false), orig.rawOffset(p.end, true)
	if !bytes.HasPrefix(out, orig.Raw[:rs]) || !bytes.HasSuffix(out, orig.Raw[re:]) {
		t.Fatalf("bytes outside the literal changed:\n%q\n%q", orig.Raw, out)
	}
	// Reframe the rewritten event alone (a JSON array element: with its closing).
	body := out
	f, _ := Detect(tr.api, tr.ctype)
	var evs []rec
	var got []Piece
	fr := NewFramer(tr.api, f, 0)
	if _, ok := fr.(*Whole); ok && bytes.HasPrefix(bytes.TrimSpace(orig.Raw), []byte(",")) {
		body = append([]byte("["), bytes.TrimSpace(out)[1:]...)
		body = append(body, ']')
	} else if ok && bytes.HasPrefix(orig.Raw, []byte("[")) && tr.api == Gemini && bytes.Contains([]byte(tr.body), []byte("\n]")) {
		body = append(append([]byte{}, out...), ']')
	}
	emit := func(e *Event) error {
		evs = append(evs, rec{Raw: string(e.Raw)})
		if e.Data != nil {
			q, _, err := Pieces(tr.api, e, nil)
			if err != nil {
				return err
			}
			got = append(got, q...)
		}
		return nil
	}
	if err := fr.Feed(body, emit); err != nil {
		t.Fatalf("rewritten event: %v\n%q", err, body)
	}
	if err := fr.Close(emit); err != nil {
		t.Fatalf("rewritten event: %v\n%q", err, body)
	}
	if len(got) != len(ps) {
		t.Fatalf("rewritten event has %d pieces, want %d:\n%q", len(got), len(ps), body)
	}
	for i := range ps {
		want := ps[i].Text
		if i == k {
			want = strings.ToValidUTF8(repl, "\uFFFD")
			if p.JSON {
				var v any
				json.Unmarshal([]byte(repl), &v)
				c, _ := json.Marshal(v)
				want = strings.ReplaceAll(string(c), `\u003cx\u003e`, "<x>")
			}
		}
		if got[i].Text != want || got[i].Channel != ps[i].Channel || got[i].Kind != ps[i].Kind {
			t.Fatalf("piece %d after rewriting %d: %q %s, want %q %s", i, k, got[i].Text, got[i].Channel, want, ps[i].Channel)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		api   API
		ctype string
		want  Format
	}{
		{OpenAIChat, "text/event-stream", FormatSSE},
		{OpenAIChat, "Text/Event-Stream; charset=utf-8", FormatSSE},
		{OpenAIChat, "application/json", FormatJSON},
		{OllamaChat, "application/x-ndjson", FormatNDJSON},
		{Gemini, "application/json; charset=UTF-8", FormatJSON},
		{OpenAIChat, "text/plain", 0},
		{OpenAIChat, "", 0},
		{Generic, "application/json", 0},
		{API("other"), "text/event-stream", 0},
	} {
		f, err := Detect(c.api, c.ctype)
		if f != c.want || (c.want == 0) != errors.Is(err, ErrCannotParse) {
			t.Errorf("Detect(%s, %q) = %v, %v; want %v", c.api, c.ctype, f, err, c.want)
		}
	}
}
