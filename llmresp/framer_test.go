package llmresp

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestSSEFraming(t *testing.T) {
	ev := func(raw, name, data string) rec { return rec{Raw: raw, Name: name, Data: data, HasData: true} }
	none := func(raw, name string) rec { return rec{Raw: raw, Name: name} }
	for _, c := range []struct {
		body string
		want []rec
	}{
		{"\xEF\xBB\xBFdata: x\n\n", []rec{ev("\xEF\xBB\xBFdata: x\n\n", "", "x")}},
		{"\xEF\xBB\xBF\ndata: x\n\n", []rec{none("\xEF\xBB\xBF\n", ""), ev("data: x\n\n", "", "x")}},
		{"\xEF\xBB\xBFdata: \xEF\xBB\xBF\n\n", []rec{ev("\xEF\xBB\xBFdata: \xEF\xBB\xBF\n\n", "", "\xEF\xBB\xBF")}}, // only the stream's first BOM is dropped
		{"\xEFdata: x\n\n", []rec{none("\xEFdata: x\n\n", "")}},                                                     // not a BOM: a field named "\xEFdata"
		{"data:a\r\ndata: b\r\n\r\n", []rec{ev("data:a\r\ndata: b\r\n\r\n", "", "a\nb")}},
		{": keep-alive\n\n", []rec{none(": keep-alive\n\n", "")}},
		{"event: e\nid: 1\nretry: 10\ndata\n\n", []rec{ev("event: e\nid: 1\nretry: 10\ndata\n\n", "e", "")}},
		{"data: x\r\rdata: y\r\r", []rec{ev("data: x\r\r", "", "x"), ev("data: y\r\r", "", "y")}},
		{"data: x\r\n\rdata: y\n\r\n", []rec{ev("data: x\r\n\r", "", "x"), ev("data: y\n\r\n", "", "y")}},
		{"data: x\n\n\n", []rec{ev("data: x\n\n", "", "x"), none("\n", "")}},
		{"data:  two\n\n", []rec{ev("data:  two\n\n", "", " two")}},
		{"event: only\n\n", []rec{none("event: only\n\n", "only")}},
		{"data: x", []rec{{Raw: "data: x", Data: "x", HasData: true, Partial: true}}},
		{"data: x\r", []rec{{Raw: "data: x\r", Data: "x", HasData: true, Partial: true}}},
		{"data: x\n\ndata: y\n", []rec{ev("data: x\n\n", "", "x"), {Raw: "data: y\n", Data: "y", HasData: true, Partial: true}}},
		{"", nil},
	} {
		body := []byte(c.body)
		for i := 0; i <= len(body); i++ {
			for j := i; j <= len(body); j++ {
				got, err := frame(t, OpenAIChat, "text/event-stream", [][]byte{body[:i], body[i:j], body[j:]})
				if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Fatalf("%q split at %d, %d: %v\n%+v\nwant\n%+v", c.body, i, j, err, got, c.want)
				}
			}
		}
	}
}

func TestNDJSONAndArrayFraming(t *testing.T) {
	for _, c := range []struct {
		api         API
		ctype, body string
		want        []rec
		err         error
	}{
		{OllamaChat, "application/x-ndjson", "{\"a\":1}\r\n\n {}", []rec{
			{Raw: "{\"a\":1}\r\n", Data: `{"a":1}`, HasData: true}, {Raw: "\n"}, {Raw: " {}", Data: "{}", HasData: true, Partial: true}}, nil},
		{Gemini, "application/json", " [ {\"a\":\"]\"} ,\n[1]\n] \n", []rec{
			{Raw: " [ {\"a\":\"]\"}", Data: `{"a":"]"}`, HasData: true}, {Raw: " ,\n[1]", Data: "[1]", HasData: true}, {Raw: "\n] \n"}}, nil},
		{Gemini, "application/json", "[]", []rec{{Raw: "[]"}}, nil},
		{Gemini, "application/json", "{\"candidates\":[]}\n", []rec{{Raw: "{\"candidates\":[]}\n", Data: `{"candidates":[]}`, HasData: true}}, nil},
		{OpenAIChat, "application/json", "[{}]", []rec{{Raw: "[{}]", Data: "[{}]", HasData: true}}, nil}, // whole; Pieces refuses it
		{Gemini, "application/json", "[1]", nil, ErrBadFrame},
		{Gemini, "application/json", "[{},]", []rec{{Raw: "[{}", Data: "{}", HasData: true}}, ErrBadFrame},
		{Gemini, "application/json", "[{}] x", []rec{{Raw: "[{}", Data: "{}", HasData: true}}, ErrBadFrame},
		{Gemini, "application/json", "[{}", []rec{{Raw: "[{}", Data: "{}", HasData: true}}, ErrBadFrame},
		{Gemini, "application/json", "[{\"a\":\"\\\"}\"}", []rec{{Raw: "[{\"a\":\"\\\"}\"}", Data: "{\"a\":\"\\\"}\"}", HasData: true}}, ErrBadFrame},
	} {
		body := []byte(c.body)
		for i := 0; i <= len(body); i++ {
			got, err := frame(t, c.api, c.ctype, [][]byte{body[:i], body[i:]})
			if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) || fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("%q split at %d: %v\n%+v\nwant %v\n%+v", c.body, i, err, got, c.err, c.want)
			}
		}
	}
}

func TestMaxEvent(t *testing.T) {
	for _, c := range []struct {
		f    Format
		body string
	}{
		{FormatSSE, "data: 0123456789abcdef\n\n"},
		{FormatSSE, "data: 0123456789abcdef"},
		{FormatNDJSON, "\"0123456789abcdef\"\n"},
		{FormatNDJSON, "\"0123456789abcdef\""},
		{FormatJSONArray, "[{\"k\":\"0123456789abcdef\"}]"},
		{FormatJSON, "\"0123456789abcdef\""},
	} {
		for _, chunk := range []int{1, 5, 1000} {
			fr := NewFramer(OpenAIChat, c.f, 16)
			var err error
			nop := func(*Event) error { return nil }
			for b := []byte(c.body); len(b) > 0 && err == nil; b = b[min(chunk, len(b)):] {
				err = fr.Feed(b[:min(chunk, len(b))], nop)
			}
			if err == nil {
				err = fr.Close(nop)
			}
			if !errors.Is(err, ErrEventTooLarge) {
				t.Errorf("%v %q by %d: %v, want ErrEventTooLarge", c.f, c.body, chunk, err)
			}
			if err2 := fr.Feed([]byte("\n\n"), nop); !errors.Is(err2, ErrEventTooLarge) {
				t.Errorf("after the error, Feed: %v", err2)
			}
		}
	}
	// At the bound, it passes.
	fr := NewFramer(OpenAIChat, FormatSSE, 16)
	n := 0
	count := func(*Event) error { n++; return nil }
	if err := fr.Feed([]byte("data: 01234567\n\ndata: 01234567\n\n"), count); err != nil || fr.Close(count) != nil || n != 2 {
		t.Errorf("events of 16 bytes: %v, %d events", err, n)
	}
}

func TestEmitErrorStops(t *testing.T) {
	stop := errors.New("stop")
	for _, f := range []Format{FormatSSE, FormatNDJSON, FormatJSONArray, FormatJSON} {
		fr := NewFramer(Gemini, f, 0)
		body := map[Format]string{FormatSSE: "data: {}\n\ndata: {}\n\n", FormatNDJSON: "{}\n{}\n", FormatJSONArray: "[{},{}]", FormatJSON: "{}"}[f]
		n := 0
		emit := func(*Event) error { n++; return stop }
		err := fr.Feed([]byte(body), emit)
		if err == nil {
			err = fr.Close(emit)
		}
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("%v: %v after %d events", f, err, n)
		}
	}
}

func TestRewriteMultilineData(t *testing.T) {
	body := "event: x\r\ndata: {\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\"hi\",\r\ndata:\"refusal\":\"no\"}}]}\r\n\r\n"
	var out []byte
	emit := func(e *Event) error {
		ps, _, err := Pieces(OpenAIChat, e, nil)
		if err != nil || len(ps) != 2 {
			return fmt.Errorf("%v, %d pieces", err, len(ps))
		}
		out, err = Rewrite(e, []Edit{{&ps[1], "NO"}, {&ps[0], "a\r\nb"}})
		return err
	}
	fr := NewFramer(OpenAIChat, FormatSSE, 0)
	if err := fr.Feed([]byte(body), emit); err != nil {
		t.Fatal(err)
	}
	want := "event: x\r\ndata: {\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\"a\\r\\nb\",\r\ndata:\"refusal\":\"NO\"}}]}\r\n\r\n"
	if string(out) != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
}

func TestRewriteErrors(t *testing.T) {
	e := &Event{Raw: []byte(`{"message":{"content":"a","tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]}}`)}
	e.Data = e.Raw
	ps, _, err := Pieces(OllamaChat, e, nil)
	if err != nil || len(ps) != 3 || !ps[2].JSON {
		t.Fatalf("%v %+v", err, ps)
	}
	if _, err := Rewrite(e, []Edit{{&ps[2], "{not json"}}); !errors.Is(err, ErrRewrite) {
		t.Errorf("JSON piece with non-JSON: %v", err)
	}
	if _, err := Rewrite(e, []Edit{{&ps[0], "b"}, {&ps[0], "c"}}); !errors.Is(err, ErrRewrite) {
		t.Errorf("overlapping edits: %v", err)
	}
	if _, err := Rewrite(e, []Edit{{&Piece{start: 5, end: 500}, "c"}}); !errors.Is(err, ErrRewrite) {
		t.Errorf("a piece not in the event: %v", err)
	}
	out, err := Rewrite(e, []Edit{{&ps[2], "[1,\n 2]"}, {&ps[0], "a"}})
	if want := `{"message":{"content":"a","tool_calls":[{"function":{"name":"f","arguments":[1,2]}}]}}`; err != nil || string(out) != want {
		t.Errorf("got %s, %v", out, err)
	}
	// An unchanged text keeps its literal, escapes and all.
	e2 := &Event{Raw: []byte(`{"response":"\u0041\/"}`)}
	e2.Data = e2.Raw
	ps, _, _ = Pieces(OllamaGenerate, e2, nil)
	if out, err := Rewrite(e2, []Edit{{&ps[0], "A/"}}); err != nil || !bytes.Equal(out, e2.Raw) {
		t.Errorf("unchanged: %s %v", out, err)
	}
}

func TestPiecesRefusesUnknownShapes(t *testing.T) {
	for _, c := range []struct {
		api  API
		data string
		err  error
	}{
		{OpenAIChat, `{"choices":[`, ErrBadEvent},
		{OpenAIChat, `[{"choices":[]}]`, ErrShape},
		{OpenAIChat, `"text"`, ErrShape},
		{AnthropicMessages, `[DONE]`, ErrBadEvent},
		{OpenAIChat, ` [DONE] `, nil},
		{OllamaChat, "{\"a\":1}\n{\"b\":2}", ErrBadEvent},
	} {
		e := &Event{Raw: []byte(c.data), Data: []byte(c.data)}
		_, _, err := Pieces(c.api, e, nil)
		if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Errorf("%s %q: %v, want %v", c.api, c.data, err, c.err)
		}
	}
}

// Duplicate keys: every occurrence of a text member is a piece (some client reads each), and
// escaped keys are read decoded, as JSON.parse reads them.
func TestPiecesDuplicateAndEscapedKeys(t *testing.T) {
	d := `{"choices":[{"index":0,"delta":{"content":"a","con\u0074ent":"b"}},{"index":0,"delta":{"content":"c"}}],"choices":[{"delta":{"content":"d"}}]}`
	e := &Event{Raw: []byte(d), Data: []byte(d)}
	ps, _, err := Pieces(OpenAIChat, e, nil)
	var got []string
	for _, p := range ps {
		got = append(got, p.Channel+"="+p.Text)
	}
	if want := "[choices[0].content=a choices[0].content=b choices[0].content=c choices[0].content=d]"; err != nil || fmt.Sprint(got) != want {
		t.Errorf("%v %v, want %s", got, err, want)
	}
}
