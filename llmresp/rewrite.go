package llmresp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/promptwall/promptwall/jsonstr"
)

// Edit replaces the value of one piece of an event.
type Edit struct {
	Piece *Piece // a piece Pieces returned for this event
	Text  string // the new string; for a JSON piece, JSON text (it is compacted)
}

// Rewrite returns ev's Raw with each edit's piece replaced: a string piece by its new text as a
// JSON string literal (escaped as encoding/json does, without HTML escapes), a JSON piece by its
// new JSON, compacted so that it holds no line end an SSE or NDJSON frame would break on.
// Every other byte is kept: indices, ids, usage, the SSE fields, the line ends. An edit whose
// text equals the piece's keeps the original literal. Edits that overlap, a JSON edit that is
// not valid JSON and a piece that is not in ev are ErrRewrite.
func Rewrite(ev *Event, edits []Edit) ([]byte, error) {
	type splice struct {
		start, end int
		lit        []byte
	}
	todo := make([]splice, 0, len(edits))
	size := len(ev.Raw)
	for _, e := range edits {
		p := e.Piece
		if p.end <= p.start || p.end > len(ev.Data) {
			return nil, fmt.Errorf("%w: the piece is not in the event", ErrRewrite)
		}
		if e.Text == p.Text && jsonstr.ValidUTF8(ev.Data[p.start:p.end]) {
			continue
		}
		var lit []byte
		if p.JSON {
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(e.Text)); err != nil {
				return nil, fmt.Errorf("%w: the replacement of a JSON piece is not JSON: %v", ErrRewrite, err)
			}
			lit = buf.Bytes()
		} else {
			lit = jsonstr.Append(nil, e.Text, false)
		}
		rs, re := ev.rawOffset(p.start, false), ev.rawOffset(p.end, true)
		if rs < 0 || re < rs {
			return nil, fmt.Errorf("%w: the piece is not in the event", ErrRewrite)
		}
		todo = append(todo, splice{rs, re, lit})
		size += len(lit) - (re - rs)
	}
	if len(todo) == 0 {
		return ev.Raw, nil
	}
	slices.SortFunc(todo, func(a, b splice) int { return a.start - b.start })
	out := make([]byte, 0, size)
	prev := 0
	for _, sp := range todo {
		if sp.start < prev {
			return nil, fmt.Errorf("%w: edits overlap", ErrRewrite)
		}
		out = append(out, ev.Raw[prev:sp.start]...)
		out = append(out, sp.lit...)
		prev = sp.end
	}
	return append(out, ev.Raw[prev:]...), nil
}

// Channels keeps, per channel, the text its deltas carried and the text forwarded in their
// place, so that a piece that repeats a channel's whole text (Piece.Whole: Responses' .done
// events, output_item.done, response.completed) is rewritten consistently with its deltas.
// The firewall calls Delta for each delta piece it forwards (with its replacement, or its own
// text when unchanged), then Whole for each whole piece. It holds the response's text once
// twice over: bounded by the response's size.
type Channels struct {
	m map[string]*chanText
}

type chanText struct{ orig, sent []byte }

// Delta records that a delta of channel ch carrying orig was forwarded as sent.
func (c *Channels) Delta(ch, orig, sent string) {
	if c.m == nil {
		c.m = map[string]*chanText{}
	}
	t := c.m[ch]
	if t == nil {
		t = &chanText{}
		c.m[ch] = t
	}
	t.orig = append(t.orig, orig...)
	t.sent = append(t.sent, sent...)
}

// Whole returns what to forward in place of a whole piece of channel ch carrying text: the
// deltas' forwarded text when text is exactly what the deltas carried (ok), so that the
// client's final text equals the text it streamed. When it is not (no deltas yet, or a whole
// text that differs from them), ok is false: the caller scans text as a fresh, whole text.
func (c *Channels) Whole(ch, text string) (sent string, ok bool) {
	t := c.m[ch]
	if t == nil || string(t.orig) != text {
		return "", false
	}
	return string(t.sent), true
}
