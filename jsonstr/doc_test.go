package jsonstr

import (
	"encoding/json"
	"testing"

	"github.com/promptwall/promptwall/bench/chatbody"
)

// docText is the document of the firewall load test's 256k-doc body
// (chatbody.LongDocument256K) and its literal in the body: real text, with
// an escaped newline every 48 bytes or so, quotes and non-ASCII letters.
func docText(b *testing.B) (text string, lit []byte) {
	body, err := chatbody.LongDocument256K(chatbody.Corpora())
	if err != nil {
		b.Fatal(err)
	}
	var req struct {
		Messages []struct{ Content string }
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 2 {
		b.Fatal(err)
	}
	text = req.Messages[1].Content
	return text, Append(nil, text, false)
}

// BenchmarkDocument reads and writes the document's literal: End finds its
// end, PlainASCII as a parser called it (once after each escape) and
// PlainEscapes as it calls it (once), Unquote decodes it and Append encodes
// it.
func BenchmarkDocument(b *testing.B) {
	text, lit := docText(b)
	b.Run("End", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		for b.Loop() {
			if End(lit, 0) != len(lit) {
				b.Fatal("wrong end")
			}
		}
	})
	b.Run("PlainASCII", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		for b.Loop() {
			i := 1
			for {
				if i, _ = PlainASCII(lit, i); lit[i] == '"' {
					break
				}
				i += 2 // the document's escapes are all two bytes
			}
			if i != len(lit)-1 {
				b.Fatal("wrong end")
			}
		}
	})
	b.Run("PlainEscapes", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		for b.Loop() {
			if i, _, _ := PlainEscapes(lit, 1); i != len(lit)-1 {
				b.Fatal("wrong end")
			}
		}
	})
	b.Run("Unquote", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		dst := make([]byte, 0, len(lit))
		for b.Loop() {
			if dst = Unquote(dst[:0], lit[1:len(lit)-1]); len(dst) != len(text) {
				b.Fatal("wrong length")
			}
		}
	})
	b.Run("Append", func(b *testing.B) {
		b.SetBytes(int64(len(lit)))
		dst := make([]byte, 0, len(lit)+64)
		for b.Loop() {
			if dst = Append(dst[:0], text, false); len(dst) != len(lit) {
				b.Fatal("wrong length")
			}
		}
	})
}
