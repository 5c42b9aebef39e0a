package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/promptwall/promptwall/bench/chatbody"
	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/llmresp"
)

// An answer is one assistant message of the published benign chat corpus
// and the user message before it: the question a client asks, the answer the
// fake upstream streams back.
type answer struct {
	question string
	text     string
}

// loadAnswers returns up to n answers of the benign chat corpus, spread
// over it, of at most maxBytes of text each, and how many it left out
// because the firewall would not stream them as a benign answer: a
// question the request scan flags (it would be blocked or rewritten before
// the upstream sees it) or an answer with a malicious match (blocked).
func loadAnswers(corpora string, n, maxBytes int) ([]answer, int, error) {
	bodies, err := chatbody.ReadCorpus(filepath.Join(corpora, "chat_bodies_benign.jsonl"))
	if err != nil {
		return nil, 0, err
	}
	e := engine.Default()
	var all []answer
	skipped := 0
	for _, b := range bodies {
		var v struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(b, &v) != nil {
			continue
		}
		for i := 1; i < len(v.Messages); i++ {
			q, qok := v.Messages[i-1].Content.(string)
			a, aok := v.Messages[i].Content.(string)
			if !qok || !aok || v.Messages[i].Role != "assistant" || a == "" || len(a) > maxBytes {
				continue
			}
			if e.ScanString(q).Verdict != engine.Safe || e.ScanString(a).Verdict == engine.Malicious {
				skipped++
				continue
			}
			all = append(all, answer{q, a})
		}
	}
	if len(all) == 0 {
		return nil, skipped, fmt.Errorf("no answers in %s", corpora)
	}
	if n <= 0 || n >= len(all) {
		return all, skipped, nil
	}
	out := make([]answer, n)
	for i := range out {
		out[i] = all[i*len(all)/n]
	}
	return out, skipped, nil
}

// pretoken is GPT-2's pre-tokenizer split (without its look-ahead): a
// contraction, a word with the space before it, a number, a run of
// punctuation, or white space.
var pretoken = regexp.MustCompile(`'(?:[sdmt]|ll|ve|re)| ?\pL+| ?\pN+| ?[^\s\pL\pN]+|\s+`)

// tokens cuts text into token-sized deltas as a BPE tokenizer's output
// decodes: GPT-2's pre-tokens, each over 6 bytes cut into pieces of 4 (on
// rune boundaries), as BPE splits a long word into sub-words. Their
// concatenation is text.
func tokens(text string) []string {
	var out []string
	last := 0
	for _, loc := range pretoken.FindAllStringIndex(text, -1) {
		if loc[0] > last {
			out = append(out, text[last:loc[0]]) // nothing the pattern takes (never, but exact)
		}
		out = append(out, cut(text[loc[0]:loc[1]])...)
		last = loc[1]
	}
	if last < len(text) {
		out = append(out, text[last:])
	}
	return out
}

func cut(s string) []string {
	if len(s) <= 6 {
		return []string{s}
	}
	var out []string
	for s != "" {
		n := min(4, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// A stream is what the fake upstream sends for one answer: its SSE events
// in order, which of them carry a delta of the answer's text, and for each
// event the index of the event whose arrival makes its text final for a
// firewall that holds events (finalBy; len(events) for the end of the body).
type stream struct {
	path    string
	body    []byte // the request
	events  [][]byte
	text    int // bytes of model text in the deltas
	wire    int // bytes of the events
	finalBy []int
}

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// newStream builds the request and the SSE events of a in deltas, for api
// ("openai": Chat Completions chunks; "anthropic": Messages events), with
// their offline replay through engine.Stream.
func newStream(api string, a answer, e *engine.Engine) (*stream, error) {
	s := &stream{}
	deltas := tokens(a.text)
	switch api {
	case "openai":
		s.path = "/v1/chat/completions"
		s.body = []byte(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":` + jsonString(a.question) + `}]}`)
		const head = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":`
		s.events = append(s.events, []byte(head+`{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}`+"\n\n"))
		for _, d := range deltas {
			s.events = append(s.events, []byte(head+`{"content":`+jsonString(d)+`},"logprobs":null,"finish_reason":null}]}`+"\n\n"))
		}
		s.events = append(s.events, []byte(head+`{},"logprobs":null,"finish_reason":"stop"}]}`+"\n\n"), []byte("data: [DONE]\n\n"))
	case "anthropic":
		s.path = "/v1/messages"
		s.body = []byte(`{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":` + jsonString(a.question) + `}]}`)
		ev := func(name, data string) { s.events = append(s.events, []byte("event: "+name+"\ndata: "+data+"\n\n")) }
		ev("message_start", `{"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for _, d := range deltas {
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+jsonString(d)+`}}`)
		}
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, len(deltas)))
		ev("message_stop", `{"type":"message_stop"}`)
	default:
		return nil, fmt.Errorf("unknown api %q (openai, anthropic)", api)
	}
	s.text = len(a.text)
	for _, ev := range s.events {
		s.wire += len(ev)
	}
	var err error
	if s.finalBy, err = replay(llmAPI(api), s.events, e); err != nil {
		return nil, err
	}
	return s, nil
}

func llmAPI(api string) llmresp.API {
	if api == "anthropic" {
		return llmresp.AnthropicMessages
	}
	return llmresp.OpenAIChat
}

// replay computes, for each event, the index of the event after which a
// firewall that holds events (response_on_* sanitize or block) forwards it,
// by doing offline what its response writer does: frame the events, feed
// each channel's deltas to an engine.Stream of their own, and release an
// event once every delta in it is before its stream's Released (or its
// channel ended), in order. len(events): at the end of the body, where
// every stream is closed.
func replay(api llmresp.API, events [][]byte, e *engine.Engine) ([]int, error) {
	type ref struct {
		s   *engine.Stream
		end int
	}
	type chanState struct {
		s      *engine.Stream
		fed    []byte
		closed bool
	}
	chans := map[string]*chanState{}
	held := make([][]ref, len(events))
	finalBy := make([]int, len(events))
	next := 0 // the first event not yet released
	fr := llmresp.NewFramer(api, llmresp.FormatSSE, 0)
	for i, raw := range events {
		framed := 0
		err := fr.Feed(raw, func(ev *llmresp.Event) error {
			framed++
			ps, _, err := llmresp.Pieces(api, ev, nil)
			if err != nil {
				return err
			}
			for _, p := range ps {
				ch := chans[p.Channel]
				if p.Whole {
					if ch != nil && !ch.closed && p.Text != "" && string(ch.fed) == p.Text {
						ch.closed = true
						ch.s.Close()
					}
					continue
				}
				if ch == nil || ch.closed {
					ch = &chanState{s: e.NewStream()}
					chans[p.Channel] = ch
				}
				ch.fed = append(ch.fed, p.Text...)
				ch.s.Write([]byte(p.Text))
				held[i] = append(held[i], ref{ch.s, len(ch.fed)})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if framed != 1 {
			return nil, fmt.Errorf("event %d framed as %d events", i, framed)
		}
		for ; next <= i; next++ {
			final := true
			for _, r := range held[next] {
				closed := false
				for _, ch := range chans {
					if ch.s == r.s && ch.closed {
						closed = true
					}
				}
				if !closed && r.s.Released() < r.end {
					final = false
				}
			}
			if !final {
				break
			}
			finalBy[next] = i
		}
	}
	for ; next < len(events); next++ {
		finalBy[next] = len(events)
	}
	return finalBy, nil
}
