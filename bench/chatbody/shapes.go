package chatbody

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Real shapes: request bodies built from the published corpora rather than
// cycled prose, in the forms that long requests take in practice. Every
// builder is deterministic: the same Material and seed give the same bytes
// (the generator is splitmix64, written out here so that no library
// change can move it).

// Message is one chat message of the corpora.
type Message struct{ Role, Content string }

// Material is what the real-shape builders draw from: the published
// corpus's benign prompts (benign_prompts.jsonl) and the messages of its
// benign chat bodies (chat_bodies_benign.jsonl), in file order. Those
// bodies are each a user question and its answer (a few are two such
// turns), so Messages alternates user and assistant, starting with a user
// message, and keeps every answer after its question.
type Material struct {
	Prompts  []string
	Messages []Message
}

// LoadMaterial reads the Material of the corpora in the folder corpora
// (gzipped or not; see ReadCorpus).
func LoadMaterial(corpora string) (*Material, error) {
	prompts, err := ReadCorpus(filepath.Join(corpora, "benign_prompts.jsonl"))
	if err != nil {
		return nil, err
	}
	bodies, err := ReadCorpus(filepath.Join(corpora, "chat_bodies_benign.jsonl"))
	if err != nil {
		return nil, err
	}
	m := &Material{}
	for _, p := range prompts {
		m.Prompts = append(m.Prompts, string(p))
	}
	for i, b := range bodies {
		var req struct{ Messages []Message }
		if err := json.Unmarshal(b, &req); err != nil {
			return nil, fmt.Errorf("chat body %d: %w", i+1, err)
		}
		for j, msg := range req.Messages {
			want := [2]string{"user", "assistant"}[j%2]
			if msg.Role != want || len(req.Messages)%2 != 0 {
				return nil, fmt.Errorf("chat body %d: message %d is %q, want user and assistant turns", i+1, j, msg.Role)
			}
		}
		m.Messages = append(m.Messages, req.Messages...)
	}
	if len(m.Prompts) == 0 || len(m.Messages) == 0 {
		return nil, fmt.Errorf("%s: no prompts or no chat bodies", corpora)
	}
	return m, nil
}

// rng is splitmix64.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// encode writes v as JSON.stringify does (no HTML escapes, no newline).
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only strings, numbers and maps of them
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// wireMessage is an OpenAI Chat message as a client writes it: content is
// null in an assistant message that only calls tools.
type wireMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func msg(role, content string) []byte {
	return encode(wireMessage{Role: role, Content: &content})
}

// assemble writes a body of the encoded messages, with tools (encoded, or
// nil) after them.
func assemble(dst []byte, msgs [][]byte, tools []byte) []byte {
	dst = append(dst, `{"model":"gpt-4o","messages":[`...)
	for i, m := range msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m...)
	}
	dst = append(dst, ']')
	if tools != nil {
		dst = append(dst, `,"tools":`...)
		dst = append(dst, tools...)
	}
	return append(dst, `,"temperature":0.2}`...)
}

// bodyOverhead is what assemble adds around the messages and tools.
const bodyOverhead = len(`{"model":"gpt-4o","messages":[],"tools":,"temperature":0.2}`)

// ChatSystem is the system prompt of the chat shapes: what a chat client
// typically sends (not scanned by default, so its wording costs nothing).
const ChatSystem = "You are a helpful assistant. Answer clearly and accurately; use Markdown for code and lists."

// Chat is a real conversation of about n bytes (at least n minus the
// largest corpus message, at most n): ChatSystem, then Material's
// messages in order from the question of pair seed (modulo their number),
// going round the corpus when it ends, and ending with a user message as
// a request does. This is the shape of a long chat resent whole.
func (m *Material) Chat(n int, seed uint64) []byte {
	pairs := len(m.Messages) / 2
	sys := msg("system", ChatSystem)
	msgs := [][]byte{sys}
	size := bodyOverhead + len(sys)
	for i := int(seed%uint64(pairs)) * 2; ; i = (i + 1) % len(m.Messages) {
		e := msg(m.Messages[i].Role, m.Messages[i].Content)
		if size+1+len(e) > n {
			break
		}
		msgs, size = append(msgs, e), size+1+len(e)
	}
	if len(msgs) > 1 && bytes.HasPrefix(msgs[len(msgs)-1], []byte(`{"role":"assistant"`)) {
		msgs = msgs[:len(msgs)-1]
	}
	return assemble(nil, msgs, nil)
}

// cut returns s shortened to at most n bytes, not inside a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// firstLine returns s's first line, at most n bytes of it.
func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return cut(s, n)
}

// Without returns a copy of m without the prompts that drop reports, and
// without the question-and-answer pairs where it reports either message,
// so that the answers still follow their own questions. A load test drops
// what the firewall would refuse (the rulebook's false positives in these
// benign texts), so that every request is served and measured.
func (m *Material) Without(drop func(text string) bool) *Material {
	out := &Material{}
	for _, p := range m.Prompts {
		if !drop(p) {
			out.Prompts = append(out.Prompts, p)
		}
	}
	for i := 0; i+1 < len(m.Messages); i += 2 {
		if !drop(m.Messages[i].Content) && !drop(m.Messages[i+1].Content) {
			out.Messages = append(out.Messages, m.Messages[i], m.Messages[i+1])
		}
	}
	return out
}
