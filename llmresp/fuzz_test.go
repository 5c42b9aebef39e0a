package llmresp

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Run the fuzzers with -fuzzminimizetime=1s: minimizing a new input of a transcript's size
// takes the default 60 s, in which no new input runs.
const fuzzMax = 2048

var fuzzAPIs = []API{OpenAIChat, OpenAIResponses, AnthropicMessages, Gemini, OllamaChat, OllamaGenerate, AnthropicComplete}

// fuzzFrame frames body whole and in chunks cut by seed, checks that both give the same events,
// that the events add up to the body, that the buffer never holds more than an event's bound,
// and that reading and rewriting every event's pieces neither panics nor fails.
func fuzzFrame(t *testing.T, f Format, body []byte, seed uint64) {
	run := func(chunks [][]byte) ([]rec, error) {
		fr := NewFramer(Gemini, f, fuzzMax)
		var out []rec
		emit := func(e *Event) error {
			out = append(out, rec{string(e.Raw), e.Name, string(e.Data), e.Data != nil, e.Partial})
			for _, api := range fuzzAPIs {
				ps, _, err := Pieces(api, e, nil)
				if err != nil {
					continue
				}
				for i := range ps {
					repl := "x\n\"y"
					if ps[i].JSON {
						repl = `{"a": [1]}`
					}
					if _, err := Rewrite(e, []Edit{{&ps[i], repl}}); err != nil {
						t.Fatalf("rewrite %s in %q: %v", api, e.Raw, err)
					}
				}
			}
			return nil
		}
		for _, c := range chunks {
			if err := fr.Feed(c, emit); err != nil {
				return out, err
			}
			if n := buffered(fr); n > fuzzMax {
				t.Fatalf("%d bytes held, over the bound", n)
			}
		}
		return out, fr.Close(emit)
	}
	want, werr := run([][]byte{body})
	if werr == nil && concat(want) != string(body) {
		t.Fatalf("events do not add up to the body")
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	got, gerr := run(randomChunks(rng, body))
	if (werr == nil) != (gerr == nil) || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("chunked: %v %+v\nwhole: %v %+v", gerr, got, werr, want)
	}
}

func buffered(fr Framer) int {
	switch f := fr.(type) {
	case *SSE:
		return len(f.buf)
	case *NDJSON:
		return len(f.buf)
	case *JSONArray:
		return len(f.buf)
	case *Whole:
		if f.arr != nil {
			return len(f.arr.buf)
		}
		return len(f.buf)
	}
	return 0
}

func addTranscripts(f *testing.F, keep func(transcript) bool) {
	for _, tr := range transcripts {
		if keep(tr) {
			f.Add([]byte(tr.body), uint64(len(tr.body)))
		}
	}
}

func FuzzSSE(f *testing.F) {
	addTranscripts(f, func(tr transcript) bool { return bytes.HasPrefix([]byte(tr.ctype), []byte("text/event-stream")) })
	for _, s := range []string{"\xEF\xBB\xBFdata: x\r\r", "data:a\r\ndata: b\r\n\r\n", ": c\n\nevent: e\ndata\n\n", "data: x\r"} {
		f.Add([]byte(s), uint64(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) { fuzzFrame(t, FormatSSE, body, seed) })
}

func FuzzNDJSON(f *testing.F) {
	addTranscripts(f, func(tr transcript) bool { return tr.ctype == "application/x-ndjson" })
	f.Add([]byte("{}\r\n\n {\"message\":{\"content\":\"a\"}}"), uint64(3))
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) { fuzzFrame(t, FormatNDJSON, body, seed) })
}

// FuzzJSONArray frames through Whole with Gemini: arrays streamed, other bodies whole.
func FuzzJSONArray(f *testing.F) {
	addTranscripts(f, func(tr transcript) bool { return tr.api == Gemini && tr.ctype != "text/event-stream" })
	f.Add([]byte(` [ {"a":"]"} ,[1]] `), uint64(5))
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) { fuzzFrame(t, FormatJSON, body, seed) })
}
