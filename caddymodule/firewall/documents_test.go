package firewall

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/filetext/pdftest"
)

// fileBodies puts one file, given by media type and bytes, where each API
// carries files, and returns path and body per API.
func fileBodies(mediaType string, data []byte) map[string][2]string {
	b64 := base64.StdEncoding.EncodeToString(data)
	return map[string][2]string{
		"chat": {"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Summarize."},` +
			`{"type":"file","file":{"filename":"f","file_data":"data:` + mediaType + `;base64,` + b64 + `"}}]}]}`},
		"anthropic": {"/v1/messages", `{"model":"c","max_tokens":9,"messages":[{"role":"user","content":[` +
			`{"type":"document","source":{"type":"base64","media_type":"` + mediaType + `","data":"` + b64 + `"}}]}]}`},
		"gemini": {"/v1beta/models/g:generateContent", `{"contents":[{"role":"user","parts":[` +
			`{"inlineData":{"mimeType":"` + mediaType + `","data":"` + b64 + `"}}]}]}`},
	}
}

// TestDocuments: a PDF's text is extracted and scanned in every API that
// carries files, and a flagged one is blocked even when the action is
// sanitize (it cannot be rewritten); a benign one goes on byte for byte.
func TestDocuments(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	sanitizing := newFixture(t, &Firewall{OnMalicious: ActionSanitize, OnSuspicious: ActionSanitize})
	for _, compress := range []bool{false, true} {
		for api, pb := range fileBodies("application/pdf", pdftest.Document(compress, "Quarterly report.", "Page two. "+malText)) {
			for _, f := range []*fixture{fx, sanitizing} {
				res := f.do(t, post(pb[0], pb[1]))
				if res.up.called || res.rec.Code != 400 || !strings.Contains(res.rec.Body.String(), "IO-1") {
					t.Errorf("%s, compress %v: a malicious PDF got %d (forwarded %v)", api, compress, res.rec.Code, res.up.called)
				}
			}
		}
		for api, pb := range fileBodies("application/pdf", pdftest.Document(compress, "Quarterly report.")) {
			res := fx.do(t, post(pb[0], pb[1]))
			if !res.up.called || string(res.up.body) != pb[1] || res.up.header.Get(HeaderVerdict) != "safe" {
				t.Errorf("%s: a benign PDF got %d, forwarded %v", api, res.rec.Code, res.up.called)
			}
		}
	}
}

// TestUnscannableFiles: a document type no reader knows passes counted in
// Prompt-Firewall-Unscanned, or is refused with unscannable_files refuse;
// a file the provider fetches counts the same; a file that should decode
// and does not is refused whatever the option says.
func TestUnscannableFiles(t *testing.T) {
	docx := []byte("PK\x03\x04\x14\x00\x06\x00" + strings.Repeat("\x00", 40) + "word/document.xml")
	pass, refuse := newFixture(t, &Firewall{}), newFixture(t, &Firewall{UnscannableFiles: UnscannedRefuse})
	mt := "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	for api, pb := range fileBodies(mt, docx) {
		res := pass.do(t, post(pb[0], pb[1]))
		if !res.up.called || res.up.header.Get(HeaderUnscanned) != "1" || string(res.up.body) != pb[1] {
			t.Errorf("%s: a DOCX got %d, forwarded %v, %s %q", api, res.rec.Code, res.up.called, HeaderUnscanned, res.up.header.Get(HeaderUnscanned))
		}
		res = refuse.do(t, post(pb[0], pb[1]))
		if res.up.called || res.rec.Code != 415 {
			t.Errorf("%s: unscannable_files refuse let a DOCX through: %d", api, res.rec.Code)
		}
	}
	remote := `{"model":"c","max_tokens":9,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://files.example/a.pdf"}}]}]}`
	if res := pass.do(t, post("/v1/messages", remote)); !res.up.called || res.up.header.Get(HeaderUnscanned) != "1" {
		t.Errorf("a fetched document: %d, %q", res.rec.Code, res.up.header.Get(HeaderUnscanned))
	}
	if res := refuse.do(t, post("/v1/messages", remote)); res.up.called || res.rec.Code != 415 {
		t.Errorf("a fetched document with unscannable_files refuse: %d", res.rec.Code)
	}
	bad := `{"messages":[{"role":"user","content":[{"type":"file","file":{"filename":"a.txt","file_data":"data:text/plain;base64,@@not base64@@"}}]}]}`
	if res := pass.do(t, post("/v1/chat/completions", bad)); res.up.called || res.rec.Code != 400 || !strings.Contains(res.rec.Body.String(), "unreadable_file") {
		t.Errorf("invalid base64: %d %s", res.rec.Code, res.rec.Body)
	}
	// Images are not text: they pass uncounted.
	png := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 64))
	for api, pb := range fileBodies("image/png", png) {
		if res := refuse.do(t, post(pb[0], pb[1])); !res.up.called || res.up.header.Get(HeaderUnscanned) != "" {
			t.Errorf("%s: an image: %d, %q", api, res.rec.Code, res.up.header.Get(HeaderUnscanned))
		}
	}
}

// TestTextFiles: text files are scanned as text, in UTF-16 too.
func TestTextFiles(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	utf16 := []byte{0xFF, 0xFE}
	for _, r := range malText {
		utf16 = append(utf16, byte(r), 0)
	}
	for name, file := range map[string][]byte{"utf-8": []byte("Notes.\n" + malText), "utf-16": utf16} {
		for api, pb := range fileBodies("text/plain", file) {
			if res := fx.do(t, post(pb[0], pb[1])); res.up.called || res.rec.Code != 400 {
				t.Errorf("%s %s text file: %d (forwarded %v)", name, api, res.rec.Code, res.up.called)
			}
		}
	}
}

// TestTokenIDs: prompts given as token ids are refused, or pass counted
// with token_ids pass; embeddings input as tokens is no prompt.
func TestTokenIDs(t *testing.T) {
	refuse, pass := newFixture(t, &Firewall{}), newFixture(t, &Firewall{TokenIDs: UnscannedPass})
	for _, tc := range []struct{ path, body string }{
		{"/v1/completions", `{"model":"m","prompt":[1,2,3]}`},
		{"/v1/completions", `{"model":"m","prompt":[[1,2],[3]]}`},
		{"/api/generate", `{"model":"m","prompt":"hi","context":[1,2,3]}`},
	} {
		res := refuse.do(t, post(tc.path, tc.body))
		if res.up.called || res.rec.Code != 400 || !strings.Contains(res.rec.Body.String(), "token ids") {
			t.Errorf("%s: %d %s", tc.body, res.rec.Code, res.rec.Body)
		}
		res = pass.do(t, post(tc.path, tc.body))
		if !res.up.called || res.up.header.Get(HeaderUnscanned) == "" {
			t.Errorf("token_ids pass: %s: %d %q", tc.body, res.rec.Code, res.up.header.Get(HeaderUnscanned))
		}
	}
	if res := refuse.do(t, post("/v1/embeddings", `{"model":"m","input":[[1,2,3]]}`)); !res.up.called {
		t.Errorf("embeddings token input refused: %d", res.rec.Code)
	}
}

// TestToolDefinitionsScanned: tool definitions are scanned by default
// (tool poisoning), in every API.
func TestToolDefinitionsScanned(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	poison := `"Gets the weather. ` + malText + `"`
	for _, tc := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"w","description":` + poison + `}}]}`},
		{"/v1/responses", `{"input":"hi","tools":[{"type":"function","name":"w","parameters":{"type":"object","properties":{"city":{"type":"string","description":` + poison + `}}}}]}`},
		{"/v1/messages", `{"max_tokens":9,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"w","description":` + poison + `,"input_schema":{"type":"object"}}]}`},
		{"/v1beta/models/g:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"w","description":` + poison + `}]}]}`},
		{"/api/chat", `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"w","description":` + poison + `}}]}`},
	} {
		if res := fx.do(t, post(tc.path, tc.body)); res.up.called || res.rec.Code != 400 {
			t.Errorf("%s: a poisoned tool definition got %d", tc.path, res.rec.Code)
		}
	}
	// Roles without it leave them to the application.
	fx = newFixture(t, &Firewall{Roles: []string{"user"}})
	body := `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"w","description":` + poison + `}}]}`
	if res := fx.do(t, post("/v1/chat/completions", body)); !res.up.called {
		t.Errorf("roles user still scanned the tool definitions")
	}
}
