package scanservice

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"
)

// playgroundPage is the playground, one self-contained HTML file: its CSS
// and JavaScript are inline, it loads nothing else, and it calls the
// service's own /scan or /precheck relative to its own path.
//
//go:embed playground.html
var playgroundPage string

// playgroundCSP allows the page's one inline style and one inline script,
// by their hashes, and requests to its own origin; nothing else. The hashes
// are taken once from the embedded file.
var playgroundCSP = mustPlaygroundCSP(playgroundPage)

// mustPlaygroundCSP builds the Content-Security-Policy of page, which must
// hold exactly one <style> and one <script> element without attributes.
func mustPlaygroundCSP(page string) string {
	style, err := inlineBlock(page, "style")
	if err != nil {
		panic(err)
	}
	script, err := inlineBlock(page, "script")
	if err != nil {
		panic(err)
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + cspHash(script),
		"style-src " + cspHash(style),
		"connect-src 'self'",
		"img-src data:", // the empty icon, so the browser asks for no /favicon.ico
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}

// inlineBlock is the content of page's only <tag>...</tag> element.
func inlineBlock(page, tag string) (string, error) {
	open, end := "<"+tag+">", "</"+tag+">"
	if strings.Count(page, "<"+tag) != 1 || strings.Count(page, end) != 1 {
		return "", fmt.Errorf("playground.html: want exactly one <%s> element", tag)
	}
	_, rest, ok := strings.Cut(page, open)
	if !ok {
		return "", fmt.Errorf("playground.html: <%s> must have no attributes", tag)
	}
	body, _, _ := strings.Cut(rest, end)
	return body, nil
}

// cspHash is the CSP source expression of an inline element's content.
func cspHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// playground is the page of one handler's configuration, built at
// provision: the mode and the price are attributes of its <body>, outside
// the hashed script.
type playground struct {
	page []byte
	etag string
}

func newPlayground(free bool, price string) *playground {
	mode := "paid"
	if free {
		mode = "free"
	}
	page := strings.NewReplacer(
		"{{mode}}", mode,
		"{{price}}", html.EscapeString(price),
	).Replace(playgroundPage)
	sum := sha256.Sum256([]byte(page))
	return &playground{page: []byte(page), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}

// servePlayground answers GET and HEAD with the page. It needs neither the
// engine nor the store: the page's own requests go to /scan or /precheck.
func (h *Handler) servePlayground(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD")
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Security-Policy", playgroundCSP)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("ETag", h.playground.etag)
	// A reload may change the mode or the price: revalidate, at the cost
	// of a 304.
	hdr.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.playground.page))
}
