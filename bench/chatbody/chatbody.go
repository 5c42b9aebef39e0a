// Package chatbody builds the OpenAI chat request bodies that the firewall's
// load test (bench/fwload) sends and the engine, parser and handler
// benchmarks measure, so that all their figures are about the same bytes:
// deterministic benign English, no escapes.
package chatbody

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// words are benign English; texts cycle through them.
var words = strings.FieldsFunc(`The|quarterly|report|shows|that|revenue|grew|in|every|region,|with|the|strongest|gains|coming|from|
subscription|renewals|and|new|enterprise|contracts.|Please|summarise|the|main|points|for|a|non-technical|audience|and|
suggest|three|follow-up|questions|we|could|ask|the|finance|team.|Our|hiking|group|plans|a|weekend|trip|to|the|mountains;|
we|need|a|packing|list|that|covers|rain,|cold|nights|and|a|long|climb|on|the|second|day.|How|do|I|convert|a|list|of|
dictionaries|into|a|table|in|Python|without|pulling|in|a|large|dependency?|The|recipe|calls|for|two|cups|of|flour,|
one|egg|and|a|pinch|of|salt,|but|I|only|have|oat|milk|at|home.|Explain|the|difference|between|a|mutex|and|a|
semaphore|with|a|short|example|in|Go.|Write|a|polite|email|to|a|landlord|asking|when|the|heating|will|be|repaired.`,
	func(r rune) bool { return r == '|' || r == '\n' })

// Prose returns about n bytes of benign text starting at word offset seed.
func Prose(n, seed int) string {
	var b strings.Builder
	for i := seed; b.Len() < n; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String()[:n])
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func body(msgs []message) []byte {
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o", "messages": msgs, "temperature": 0.2})
	return b
}

// Chat4K is a 4 KiB multi-turn chat of ten messages: a system prompt, four
// user and assistant turns, and a last user message (2.4 KiB of user text,
// which the firewall scans by default).
func Chat4K() []byte {
	msgs := []message{{"system", Prose(300, 0)}}
	for i := 0; i < 4; i++ {
		msgs = append(msgs, message{"user", Prose(560, 10+i*37)}, message{"assistant", Prose(260, 5+i*23)})
	}
	return body(append(msgs, message{"user", Prose(200, 99)}))
}

// LongContext256K is one user message of about 256 KiB after a short system
// prompt.
func LongContext256K() []byte {
	return body([]message{{"system", Prose(200, 0)}, {"user", Prose(256<<10-400, 7)}})
}

// Document joins the message contents of texts (serialized chat bodies,
// such as the published corpus's chat_bodies_benign.jsonl holds; any other
// text counts as one content) with blank lines into a document of at most
// n bytes: real material, code and lists and explanations, as a
// long-context request would carry it. With asciiOnly, contents holding a
// byte from 0x80 up are left out.
func Document(texts [][]byte, n int, asciiOnly bool) string {
	var doc strings.Builder
	for _, t := range texts {
		contents := []string{string(t)}
		var req struct {
			Messages []struct{ Content any }
		}
		if json.Unmarshal(t, &req) == nil && len(req.Messages) > 0 {
			contents = contents[:0]
			for _, m := range req.Messages {
				if s, ok := m.Content.(string); ok {
					contents = append(contents, s)
				}
			}
		}
		for _, c := range contents {
			if !asciiOnly || !strings.ContainsFunc(c, func(r rune) bool { return r >= 0x80 }) {
				doc.WriteString(c)
				doc.WriteString("\n\n")
			}
		}
		if doc.Len() >= n {
			break
		}
	}
	d := doc.String()
	if len(d) > n {
		for n > 0 && !utf8.RuneStart(d[n]) {
			n-- // not inside a character
		}
		d = d[:n]
	}
	return d
}

// LongDocument256K is LongContext256K with Document's text of the published
// corpus's benign chat bodies (chat_bodies_benign.jsonl in the folder
// corpora) as the user message, written as JSON.stringify writes it (no
// HTML escapes).
func LongDocument256K(corpora string) ([]byte, error) {
	texts, err := ReadCorpus(filepath.Join(corpora, "chat_bodies_benign.jsonl"))
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]any{"model": "gpt-4o", "messages": []message{
		{"system", Prose(200, 0)}, {"user", Document(texts, 256<<10-400, false)}}, "temperature": 0.2})
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// ReadCorpus returns the "text" of every line of a JSONL corpus (the
// published corpora's format, and the conformance vectors'), read from
// path.gz when path is missing.
func ReadCorpus(path string) ([][]byte, error) {
	f, err := OpenCorpus(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var rec struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Text != "" {
			out = append(out, []byte(rec.Text))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// stampLen is the length of a stamp: eight lowercase letters, 26^8 values.
const stampLen = 8

// StampAt returns where Stamp writes in body: the first stampLen ASCII
// letters in a row in the content of its last user message, or -1.
func StampAt(body []byte) int {
	const key = `"role":"user","content":"`
	i := bytes.LastIndex(body, []byte(key))
	if i < 0 {
		return -1
	}
	run := 0
	for j := i + len(key); j < len(body) && body[j] != '"'; j++ {
		switch c := body[j]; {
		case c == '\\':
			// An escape's letters are not the text's: skip it.
			if run = 0; j+1 < len(body) && body[j+1] == 'u' {
				j += 5
			} else {
				j++
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if run++; run == stampLen {
				return j + 1 - stampLen
			}
		default:
			run = 0
		}
	}
	return -1
}

// Stamp writes n as stampLen lowercase letters at off (from StampAt), so
// that every request of a load carries a text no earlier request had, as
// the next turn of a conversation does: no scan result of an earlier
// request (prompt_firewall's safe-text cache) applies to it. Letters, not
// digits: digits would add a leetspeak view to the scan.
func Stamp(body []byte, off int, n uint64) {
	for i := stampLen - 1; i >= 0; i-- {
		body[off+i] = 'a' + byte(n%26)
		n /= 26
	}
}
