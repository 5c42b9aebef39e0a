package firewall

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strconv"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// joinedBody is a body of which the first bytes were read already.
type joinedBody struct {
	io.Reader
	io.Closer
}

// serveRaw handles a body sent as a raw upload (requestForm). A body that
// looks like JSON, after any run of whitespace, is not one: serveRaw puts
// it back together in r.Body and reports done false, and ServeHTTP scans
// it as JSON. Otherwise its first bytes and declared type decide (kindOf):
// media and documents the firewall cannot read pass unscanned and
// unbuffered (the latter counted), so max_body does not apply; text that
// is one JSON string is scanned decoded as well; text is scanned as one text of role user, and a PDF as its
// extracted text (refused when nothing extracts it), both bounded by
// max_body. A body with a Content-Encoding is decoded first, in memory.
func (f *Firewall) serveRaw(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, fam string, bf bodyForm) (done bool, err error) {
	var data, original []byte // the decoded body, and the bytes as sent
	var head []byte
	if enc := r.Header.Get("Content-Encoding"); enc != "" {
		if r.ContentLength > f.MaxBody {
			return true, f.refuse(w, r, fam, tooLarge(f.MaxBody))
		}
		raw, body, _, err := readBody(r.Body, r.ContentLength, enc, f.MaxBody)
		if err != nil {
			return true, f.readFailure(w, r, fam, err)
		}
		if looksJSON(body) {
			r.Body = readCloser{bytes.NewReader(raw)}
			return false, nil
		}
		data, original, head = body, raw, body[:min(len(body), headLen)]
	} else {
		var err error
		if head, err = readHead(r.Body, f.MaxBody); err != nil {
			return true, caddyhttp.Error(http.StatusBadRequest, err)
		}
		r.Body = joinedBody{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		if looksJSON(head) {
			return false, nil
		}
	}
	kind, fe := kindOf(bf.mediaType, "", head)
	if fe != nil {
		return true, f.refuse(w, r, fam, fe)
	}
	if kind == fileOther && f.UnscannableFiles == UnscannedRefuse {
		return true, f.refuse(w, r, fam, errUnscannableFile)
	}
	if kind != fileText && kind != filePDF {
		if n := bf.unscanned + btoi(kind == fileOther); n > 0 {
			r.Header[HeaderUnscanned] = []string{strconv.Itoa(n)}
		}
		if original != nil {
			setBody(r, original)
		} else {
			r.Body = trailerScrub{r.Body, r}
		}
		return true, f.pass(w, r, next)
	}
	if data == nil {
		if r.ContentLength > f.MaxBody {
			return true, f.refuse(w, r, fam, tooLarge(f.MaxBody))
		}
		if data, err = readLimited(r.Body, r.ContentLength, f.MaxBody); err != nil {
			return true, f.readFailure(w, r, fam, err)
		}
		original = data
	}
	scrubTrailers(r)
	if bf.ascii && !isASCII(data) {
		return true, f.refuse(w, r, fam, errNotASCII)
	}
	text, err := extractFile(kind, data, int64(len(data)))
	if err != nil {
		return true, f.refuse(w, r, fam, errUnscannableFile)
	}
	units := []scanUnit{textUnit(0, "body", text, len(data), kind != fileText)}
	if u, ok := jsonStringUnit(0, "body", data); ok {
		units = append(units, u)
	}
	out, action := f.judge(r, units, bf.unscanned)
	switch action {
	case actionRefuse:
		return true, f.refuse(w, r, fam, out.refusal)
	case ActionBlock:
		writeBlock(w, fam, out)
		return true, nil
	case ActionSanitize:
		setBody(r, unitReplacement(&units[0]))
		r.Header.Del("Content-Encoding")
		dropBodyDigests(r)
		return true, next.ServeHTTP(w, r)
	}
	setBody(r, original)
	return true, next.ServeHTTP(w, r)
}

// readHead reads the first headLen bytes of a raw body, and on past them
// while they are all blank (whitespace, NUL, a byte order mark), at most
// max bytes: Ollama and llama.cpp skip any run of whitespace before a JSON
// value, so whether the body is JSON is decided by its first other byte.
func readHead(body io.Reader, max int64) ([]byte, error) {
	head := make([]byte, 0, headLen)
	for {
		from := len(head)
		n, err := io.ReadFull(body, head[len(head):cap(head)])
		head = head[:len(head)+n]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return head, nil
		}
		if err != nil {
			return head, err
		}
		// Past the first read only the new bytes need a look: the BOM
		// can only lead.
		if from == 0 && !blankHead(head) || from > 0 && !blankHead(head[from:]) || int64(len(head)) > max {
			return head, nil
		}
		head = slices.Grow(head, sniffLen)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
