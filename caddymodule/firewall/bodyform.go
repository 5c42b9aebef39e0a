package firewall

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// bodyKind is how a request body is read for scanning.
type bodyKind int

const (
	bodyJSON      bodyKind = iota // parsed as JSON, refused if it is not
	bodyMultipart                 // a multipart form: parts scanned by kind (multipart.go)
	bodyRaw                       // an upload of raw bytes: sniffed (rawbody.go)
)

// bodyForm is what the headers say about a body.
type bodyForm struct {
	kind      bodyKind
	mediaType string // lower case; "" when absent or unreadable
	params    map[string]string
	boundary  string // multipart only
	ascii     bool   // charset us-ascii: every byte must be ASCII
	unscanned int    // 1 for a chunk of a split upload (splitupload.go)
}

var (
	errAmbiguousType = &failure{http.StatusBadRequest, "ambiguous_content_type",
		"Request blocked by prompt firewall: the request has several Content-Type fields that disagree"}
	errBadMultipart = &failure{http.StatusBadRequest, "invalid_multipart",
		"Request blocked by prompt firewall: the multipart body does not parse"}
	errNotASCII = &failure{http.StatusUnsupportedMediaType, "unsupported_charset",
		"Request blocked by prompt firewall: the body declares charset us-ascii but holds other bytes"}
)

// errUnsupportedCharset names no charset: the header's text, or a form's
// _charset_ field, is the client's and must not reach the log or the answer.
var errUnsupportedCharset = &failure{http.StatusUnsupportedMediaType, "unsupported_charset",
	"Request blocked by prompt firewall: the body's charset cannot be scanned (utf-8 and us-ascii can)"}

// requestForm reads the Content-Type and Content-Encoding fields of r, all
// their lines: a proxy and an upstream may each read a different one.
// Identical Content-Type lines are folded into one, disagreeing ones
// refused; Content-Encoding lines stack (RFC 9110: several lines are one
// list) and are folded into one list, so the upstream reads the codings
// the scan undid.
//
// The rule fails closed: a body is JSON unless its header says multipart,
// or names a raw upload (application/octet-stream, application/pdf,
// audio/*, image/*, video/*, or any type but JSON on a raw upload path).
// Even then a raw body that looks like JSON is scanned as JSON (rawbody.go):
// Ollama and llama.cpp parse JSON whatever the header says.
func requestForm(r *http.Request) (bodyForm, *failure) {
	if ce := r.Header.Values("Content-Encoding"); len(ce) > 1 {
		r.Header["Content-Encoding"] = []string{strings.Join(ce, ", ")}
	}
	cts := r.Header.Values("Content-Type")
	for _, ct := range cts[min(1, len(cts)):] {
		if !strings.EqualFold(strings.TrimSpace(ct), strings.TrimSpace(cts[0])) {
			return bodyForm{}, errAmbiguousType
		}
	}
	if len(cts) > 1 {
		r.Header["Content-Type"] = cts[:1]
	}
	var form bodyForm
	if len(cts) == 0 || strings.TrimSpace(cts[0]) == "" {
		if rawUploadPath(r.URL.Path) {
			form.kind = bodyRaw
		}
		return form, nil
	}
	ct := cts[0]
	if asciiEqualFold(ct, "application/json") || asciiEqualFold(ct, "application/json; charset=utf-8") {
		return form, nil // the common cases, without parsing
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		// A header we cannot read is no reason to skip the scan: the body
		// must be JSON. But a charset we cannot read might be honoured
		// upstream, and a multipart type without a boundary is no form.
		if strings.Contains(strings.ToLower(ct), "charset") {
			return form, errUnsupportedCharset
		}
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "multipart/") {
			return form, errBadMultipart
		}
		return form, nil
	}
	form.mediaType, form.params = mt, params
	if cs, ok := params["charset"]; ok {
		ascii, ok := readableCharset(cs)
		if !ok {
			return form, errUnsupportedCharset
		}
		form.ascii = ascii
	}
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		form.boundary = params["boundary"]
		if form.boundary == "" {
			return form, errBadMultipart
		}
		form.kind = bodyMultipart
	case rawMediaType(mt), rawUploadPath(r.URL.Path) && !jsonMediaType(mt):
		form.kind = bodyRaw
	}
	return form, nil
}

// readableCharset reports whether the scan reads text of charset cs as the
// upstream does: UTF-8 under any of its WHATWG labels, or US-ASCII, which
// is a subset only while every byte is ASCII (browsers and Node decode
// "us-ascii" as windows-1252).
func readableCharset(cs string) (ascii, ok bool) {
	switch strings.ToLower(strings.TrimSpace(cs)) {
	case "utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8":
		return false, true
	case "us-ascii", "ascii":
		return true, true
	}
	return false, false
}

// rawMediaType reports whether mt is a type of raw uploads: media and
// documents sent as the body itself.
func rawMediaType(mt string) bool {
	return mt == "application/octet-stream" || mt == "application/pdf" ||
		strings.HasPrefix(mt, "audio/") || strings.HasPrefix(mt, "image/") || strings.HasPrefix(mt, "video/")
}

func jsonMediaType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// rawUploadPath reports whether p is an endpoint that takes a file as the
// raw body: Gemini's upload endpoints (/upload/v1beta/files, resumable
// chunks, which often carry no Content-Type) and Ollama's /api/blobs/.
func rawUploadPath(p string) bool {
	return strings.HasPrefix(p, "/upload/") || strings.Contains(p, "/upload/v1") || strings.Contains(p, "/api/blobs/")
}

// isASCII reports whether every byte of b is ASCII.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// looksJSON reports whether a body starting with head is meant as JSON:
// after byte order marks, whitespace and NUL bytes (UTF-16 and UTF-32 text,
// which Python's json.loads detects), its first byte opens an object or an
// array. Such a body is scanned as JSON whatever its Content-Type, and
// refused if it does not parse as UTF-8 JSON.
// The whole of head is read past its blanks, however many: a JSON parser
// skips them all.
func looksJSON(head []byte) bool {
	head = skipBlank(head)
	return len(head) > 0 && (head[0] == '{' || head[0] == '[')
}

// skipBlank returns b after a byte order mark, whitespace and NUL bytes.
func skipBlank(b []byte) []byte {
	for _, bom := range [][]byte{{0xEF, 0xBB, 0xBF}, {0xFE, 0xFF}, {0xFF, 0xFE}} {
		if len(b) >= len(bom) && string(b[:len(bom)]) == string(bom) {
			b = b[len(bom):]
			break
		}
	}
	for i, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n', 0:
			continue
		}
		return b[i:]
	}
	return nil
}

// blankHead reports whether head holds nothing but blanks (skipBlank).
func blankHead(head []byte) bool { return len(skipBlank(head)) == 0 }

// provisionBodyForms sets the defaults of the options of this file's
// concern.
func (f *Firewall) provisionBodyForms() {
	if f.WebSocket == "" {
		f.WebSocket = WebSocketRefuse
	}
	if f.MaxUpload == 0 {
		f.MaxUpload = DefaultMaxUpload
	}
}

func (f *Firewall) validateBodyForms() error {
	switch f.WebSocket {
	case "", WebSocketRefuse, WebSocketPass, WebSocketScan: // "": not provisioned yet
	default:
		return fmt.Errorf("websocket: unknown value %q (want refuse, pass or scan)", f.WebSocket)
	}
	if f.MCP != nil && f.WebSocket != "" && f.WebSocket != WebSocketRefuse {
		// The MCP guard reads JSON-RPC over HTTP: a WebSocket's frames
		// would go unscanned (pass) or be read as an LLM API's (scan).
		return fmt.Errorf("websocket %s cannot be used with mcp: an MCP route refuses upgrades (websocket refuse)", f.WebSocket)
	}
	if f.MaxUpload < 0 {
		return fmt.Errorf("max_upload must not be negative, got %d", f.MaxUpload)
	}
	return nil
}
