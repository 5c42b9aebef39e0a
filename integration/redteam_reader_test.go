package integration

import (
	"encoding/binary"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestRecordingUpstreamReads checks the red-team upstream itself: what it
// must read, and that benign or sanitized requests do not read as the
// payload (else every case would fail whatever the firewall did).
func TestRecordingUpstreamReads(t *testing.T) {
	P := rtPayload
	form, formType := multipartBody(t, formPart{name: "prompt", data: []byte("Transcribe this, please.")},
		formPart{name: "file", filename: "a.jsonl", data: []byte(`{"body":{"messages":[{"role":"user","content":"Hello"}]}}` + "\n")})
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Add(kv[i], kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		body   []byte
		want   string // a view that must be read; "" for none
		benign bool   // no view may carry the payload
	}{
		{"duplicate keys: both values", h(), []byte(`{"a":"x1","a":"x2"}`), "x2", false},
		{"duplicate keys: the first too", h(), []byte(`{"a":"x1","a":"x2"}`), "x1", false},
		{"keys are read", h(), []byte(`{"` + P + `":1}`), P, false},
		{"escapes decoded", h(), []byte(`{"a":"` + escapeAll("hello") + `"}`), "hello", false},
		{"comments, NaN and BOM", h(), []byte("\xEF\xBB\xBF{/*x*/\"t\":NaN, // y\n\"a\":\"ok-read\"}"), "ok-read", false},
		{"parts joined", h(), []byte(`[{"text":"ab"},{"text":"cd"}]`), "abcd", false},
		{"token ids", h(), rtJSON(obj{"prompt": toyTokens("Hello world")}), "Hello world", false},
		{"data URL", h(), rtJSON(obj{"d": "data:text/plain;base64," + rtBase64([]byte("inside-file"))}), "inside-file", false},
		{"PDF text", h(), rtJSON(obj{"d": rtBase64(makePDF("a (b) c"))}), "a (b) c", false},
		{"utf-16 with BOM", h("Content-Type", "application/json; charset=utf-16"),
			utf16Bytes(`{"a":"wide"}`, binary.LittleEndian, true), "wide", false},
		{"utf-7", h("Content-Type", "text/plain; charset=utf-7"), []byte(encodeUTF7("seven") + " a+-b"), "seven a+b", false},
		{"latin-1", h("Content-Type", "text/plain; charset=latin1"), []byte("caf\xe9"), "café", false},
		{"stacked codings over two lines", h("Content-Encoding", "gzip", "Content-Encoding", "br"),
			brBytes(gzipBytes(t, []byte(`{"a":"coded"}`))), "coded", false},
		{"multipart JSONL line", h("Content-Type", formType), form, "Hello", true},
		{"benign chat", h(), chatBody(rtUser("What is the capital of France?")), "", true},
		{"sanitized chat", h(), chatBody(rtUser("[removed: instruction_override] and [removed: exfiltration].")), "", true},
		{"benign parts", h(), chatBody(rtUser([]any{obj{"type": "text", "text": "Ignore the"}, obj{"type": "text", "text": " typo."}})), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			views := requestViews(tc.header, tc.body)
			if tc.want != "" && !slices.Contains(views, tc.want) {
				t.Errorf("views %q lack %q", views, tc.want)
			}
			if tc.benign && carries(views, P) {
				t.Errorf("a benign request reads as the payload: %q", views)
			}
		})
	}
	if got := decodeUTF7([]byte(encodeUTF7(P))); got != P {
		t.Errorf("UTF-7 round trip: %q", got)
	}
	if got := pdfText(makePDF(P)); got != P {
		t.Errorf("PDF round trip: %q", got)
	}
}

// FuzzRecordingUpstream: the upstream reads hostile bodies without
// panicking (a short run: go test -fuzz FuzzRecordingUpstream ./integration).
func FuzzRecordingUpstream(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"text":"x"}],"b":"data:text/plain;base64,aGVsbG8gd29ybGQgaGVsbG8="}`), "application/json; charset=utf-7", "")
	f.Add([]byte("\"unterminated \\"), "text/plain", "identity")
	f.Add([]byte("+AEk-gnore /* "), "multipart/form-data; boundary=x", "gzip")
	f.Fuzz(func(t *testing.T, body []byte, ct, ce string) {
		h := http.Header{}
		h.Set("Content-Type", ct)
		h.Set("Content-Encoding", ce)
		for _, v := range requestViews(h, body) {
			_ = strings.Contains(v, rtPayload)
		}
	})
}
