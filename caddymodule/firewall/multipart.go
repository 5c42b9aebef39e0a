package firewall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/promptwall/promptwall/bufpool"
)

// DefaultMaxUpload is the default limit of a multipart body: 512 MiB, the
// largest file OpenAI's /v1/files takes.
const DefaultMaxUpload int64 = 512 << 20

// maxParts bounds the parts of one form: real forms have a handful.
const maxParts = 1000

var (
	errTooManyParts = &failure{http.StatusRequestEntityTooLarge, "request_too_large",
		"Request blocked by prompt firewall: the multipart body has too many parts"}
	errTransferEncoding = &failure{http.StatusBadRequest, "invalid_multipart",
		"Request blocked by prompt firewall: a multipart part has a Content-Transfer-Encoding (RFC 7578 forbids it in forms)"}
	errBareLF = &failure{http.StatusBadRequest, "invalid_multipart",
		"Request blocked by prompt firewall: a multipart delimiter ends a line with LF alone (RFC 2046 wants CRLF)"}
	errAmbiguousPart = &failure{http.StatusBadRequest, "invalid_multipart",
		"Request blocked by prompt firewall: a multipart part repeats its Content-Type or Content-Disposition"}
	errFormEdges = &failure{http.StatusBadRequest, "invalid_multipart",
		"Request blocked by prompt firewall: the multipart body has content before its first delimiter or after its last, or no part"}
)

func formTooLarge(max int64) *failure {
	return &failure{http.StatusRequestEntityTooLarge, "request_too_large",
		fmt.Sprintf("Request blocked by prompt firewall: the form's text fields and files are larger than %d bytes together", max)}
}

// formPart is one part of a form the scan reads: a text field, a text
// document or a PDF. Media and other parts are not kept.
type formPart struct {
	index     int // among all the body's parts, for the rebuild
	name      string
	filename  string
	mediaType string
	kind      fileKind
	field     bool // a disposition without a file name: a text field
	data      []byte
	ascii     bool // charset us-ascii
}

// form is what reading a multipart body keeps: the parts to scan, and what
// its fields say of them.
type form struct {
	parts []formPart
	jsonl bool // a purpose field names JSON Lines files (batch, fine-tune)
	ascii bool
	// unscanned counts the files of a type no reader knows (fileOther),
	// which go upstream unread.
	unscanned int
	// declared is the text or PDF type a metadata part gave the file
	// (Gemini's multipart/related upload: {"file": {"mimeType": ...}}).
	declared string
}

// errRecorder remembers the first error of the client's body, so that a
// broken connection is told from a malformed form.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// readForm reads a multipart body from body to its end, every byte into
// sp, and keeps the parts the scan reads, together at most budget bytes.
// The parser is Go's mime/multipart, raw parts (no transfer decoding);
// what it would read one way and another parser another is refused: a
// preamble or epilogue other than whitespace (a JSON parser such as
// Ollama's reads a JSON preamble as the request), a form of no part, a
// Content-Transfer-Encoding, a repeated Content-Type or
// Content-Disposition, a charset other than UTF-8, a delimiter after a
// bare LF.
func readForm(body io.Reader, boundary string, sp *spool, budget int64) (*form, error) {
	src := &errRecorder{r: body}
	watch := &delimWatch{delim: []byte("\n--" + boundary)}
	edges := &edgeWatch{open: []byte("--" + boundary), close: []byte("\r\n--" + boundary + "--")}
	tee := io.TeeReader(src, io.MultiWriter(sp, watch, edges))
	mr := multipart.NewReader(tee, boundary)
	fm := new(form)
	max := budget
	fail := func(err error) error {
		var fe *failure
		switch {
		case sp.overflow:
			return tooLarge(sp.max)
		case src.err != nil:
			return src.err
		case errors.As(err, &fe) && fe.status == http.StatusRequestEntityTooLarge:
			return formTooLarge(max)
		case errors.As(err, &fe):
			return fe
		}
		return errBadMultipart
	}
	parts := 0
	for i := 0; ; i++ {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fail(err)
		}
		parts++
		if i >= maxParts {
			return nil, errTooManyParts
		}
		fp, fe := partInfo(p.Header)
		if fe != nil {
			return nil, fe
		}
		fp.index = i
		head := make([]byte, headLen)
		n, err := io.ReadFull(p, head)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return nil, fail(err)
		}
		head = head[:n]
		mt := fp.mediaType
		if fm.declared != "" && !fp.field {
			mt = fm.declared // the type the provider stores the file as
		}
		if fp.kind, fe = kindOf(mt, fp.filename, head); fe != nil {
			return nil, fe
		}
		if fp.field {
			// Servers (Starlette, busboy, Go's) read a part without a file
			// name as a string, whatever its type or bytes say.
			fp.kind = fileText
		}
		if fp.kind != fileText && fp.kind != filePDF {
			if fp.kind == fileOther {
				fm.unscanned++
			}
			if _, err := io.Copy(io.Discard, p); err != nil {
				return nil, fail(err)
			}
			continue
		}
		if int64(n) > budget {
			return nil, formTooLarge(max)
		}
		rest, err := readLimited(p, -1, budget-int64(n))
		if err != nil {
			return nil, fail(err)
		}
		fp.data = append(head, rest...)
		bufpool.Put(rest)
		budget -= int64(len(fp.data))
		if !fp.field && fp.filename == "" {
			// A part without a Content-Disposition: the metadata part of
			// a related upload, perhaps.
			if mt := metadataType(fp.data); mt != "" {
				fm.declared = mt
			}
		}
		if fp.field {
			switch strings.ToLower(fp.name) {
			case "purpose":
				// Any of them: parsers differ on which of two they read.
				fm.jsonl = fm.jsonl || jsonlPurpose(strings.TrimSpace(string(fp.data)))
			case "_charset_":
				// RFC 7578 4.6: the default charset of the form's text fields.
				ascii, ok := readableCharset(string(fp.data))
				if !ok {
					return nil, errUnsupportedCharset
				}
				fm.ascii = fm.ascii || ascii
			}
		}
		fm.parts = append(fm.parts, fp)
	}
	// The epilogue goes upstream too.
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return nil, fail(err)
	}
	if watch.bare {
		return nil, errBareLF
	}
	if edges.bad || !edges.closed || parts == 0 {
		return nil, errFormEdges
	}
	return fm, nil
}

// metadataType returns the media type a JSON metadata part declares for
// the file of its upload (Gemini: file.mimeType, or mimeType at the top;
// the keys match as Go's decoder matches them, case-insensitively) when
// it is a text or PDF type, else "".
func metadataType(data []byte) string {
	if !looksJSON(data) {
		return ""
	}
	var meta struct {
		MimeType  string `json:"mimeType"`
		MimeType2 string `json:"mime_type"`
		File      struct {
			MimeType  string `json:"mimeType"`
			MimeType2 string `json:"mime_type"`
		} `json:"file"`
	}
	if json.Unmarshal(data, &meta) != nil {
		return ""
	}
	for _, mt := range []string{meta.File.MimeType, meta.File.MimeType2, meta.MimeType, meta.MimeType2} {
		if k := classifyFile(mt, ""); mt != "" && (k == fileText || k == filePDF) {
			return mt
		}
	}
	return ""
}

// partInfo reads a part's name, file name and media type from its header.
func partInfo(h textproto.MIMEHeader) (formPart, *failure) {
	var fp formPart
	if len(h.Values("Content-Transfer-Encoding")) > 0 {
		return fp, errTransferEncoding
	}
	if len(h.Values("Content-Type")) > 1 || len(h.Values("Content-Disposition")) > 1 {
		return fp, errAmbiguousPart
	}
	if cd := h.Get("Content-Disposition"); cd != "" {
		_, params, err := mime.ParseMediaType(cd)
		if err != nil {
			// A name or file name we cannot read: the part is scanned by
			// its bytes, whatever it is.
			params = nil
		}
		fp.name, fp.filename = params["name"], params["filename"]
		fp.field = fp.filename == ""
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		return fp, nil // a field (text/plain by RFC 7578), or a file sniffed
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		if strings.Contains(strings.ToLower(ct), "charset") {
			return fp, errUnsupportedCharset
		}
		return fp, nil
	}
	fp.mediaType = mt
	if cs, ok := params["charset"]; ok {
		ascii, ok := readableCharset(cs)
		if !ok {
			return fp, errUnsupportedCharset
		}
		fp.ascii = ascii
	}
	return fp, nil
}

// rebuildForm writes the form of sp again, with the data of the parts in
// repl (by index) replaced, into out. It keeps the boundary when Go's
// writer takes it, else it makes a new one; the media type to send is
// returned either way. Part headers keep their fields and values, in the
// writer's order; preamble and epilogue are left out.
func rebuildForm(sp *spool, boundary string, form bodyForm, repl map[int][]byte, out io.Writer) (string, error) {
	mr := multipart.NewReader(sp.reader(), boundary)
	mw := multipart.NewWriter(out)
	if err := mw.SetBoundary(boundary); err != nil {
		boundary = mw.Boundary()
	}
	for i := 0; ; i++ {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		w, err := mw.CreatePart(p.Header)
		if err != nil {
			return "", err
		}
		if b, ok := repl[i]; ok {
			_, err = io.Copy(w, bytes.NewReader(b))
		} else {
			_, err = io.Copy(w, p)
		}
		if err != nil {
			return "", err
		}
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	params := make(map[string]string, len(form.params))
	for k, v := range form.params {
		params[k] = v
	}
	params["boundary"] = boundary
	return mime.FormatMediaType(form.mediaType, params), nil
}

// delimWatch sees the body go by and notes a delimiter line that a bare LF
// ends the line before: Go's parser takes it for a delimiter, others take
// it for content, and the two would split the parts differently.
type delimWatch struct {
	delim   []byte // "\n--" + boundary
	tail    []byte // the last bytes of the previous writes, to match across them
	off     int64  // the body offset of tail[0]
	checked int64  // delimiters starting before this offset were checked
	bare    bool
}

func (d *delimWatch) Write(p []byte) (int, error) {
	if d.bare {
		return len(p), nil
	}
	buf := append(d.tail, p...)
	for i := 0; ; {
		j := bytes.Index(buf[i:], d.delim)
		if j < 0 {
			break
		}
		at := i + j
		i = at + 1
		if d.off+int64(at) < d.checked {
			continue
		}
		// The tail keeps the byte before any delimiter not checked yet,
		// but at the body's start, where there is none.
		if at == 0 || buf[at-1] != '\r' {
			d.bare = true
			return len(p), nil
		}
		d.checked = d.off + int64(at) + 1
	}
	keep := min(len(buf), len(d.delim)+1)
	d.off += int64(len(buf) - keep)
	d.tail = append(d.tail[:0], buf[len(buf)-keep:]...)
	return len(p), nil
}

// edgeWatch sees the body go by and notes content outside the parts:
// before the first delimiter, anything but whitespace; after the close
// delimiter, anything but whitespace. Go's parser skips both, but a server
// that reads the body as JSON reads the first value wherever it is.
type edgeWatch struct {
	open   []byte // "--" + boundary
	close  []byte // "\r\n--" + boundary + "--"
	seen   int    // bytes of open matched, while in the preamble
	midLn  bool   // in the preamble, a blank opened the current line
	inBody bool   // the first delimiter line was seen
	closed bool   // the close delimiter was seen
	tail   []byte // the last bytes of the body, to match close across writes
	bad    bool
}

func (e *edgeWatch) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !e.bad {
		switch {
		case e.closed:
			for _, c := range p {
				if !blankByte(c) {
					e.bad = true
					break
				}
			}
			return n, nil
		case e.inBody:
			buf := append(e.tail, p...)
			j := bytes.Index(buf, e.close)
			if j < 0 {
				keep := min(len(buf), len(e.close)-1)
				e.tail = append(e.tail[:0], buf[len(buf)-keep:]...)
				return n, nil
			}
			// What follows the close delimiter in p.
			rest := buf[j+len(e.close):]
			e.closed = true
			p = p[len(p)-len(rest):]
		default:
			c := p[0]
			p = p[1:]
			e.preamble(c)
		}
	}
	return n, nil
}

// preamble reads one byte before the first delimiter line: blank lines,
// then "--" + boundary at a line's start, then blanks to the line's end,
// as Go's parser takes a delimiter line; anything else is content the
// parser would skip.
func (e *edgeWatch) preamble(c byte) {
	switch {
	case e.seen == len(e.open): // the delimiter line's end
		switch c {
		case ' ', '\t', '\r':
		case '\n':
			e.inBody = true
		default:
			e.bad = true // a longer boundary, or the close delimiter: no part
		}
	case e.seen > 0:
		if c != e.open[e.seen] {
			e.bad = true
			return
		}
		e.seen++
	case c == '\n':
		e.midLn = false
	case c == ' ', c == '\t', c == '\r':
		e.midLn = true
	case c == '-' && !e.midLn:
		e.seen = 1
	default:
		e.bad = true
	}
}

func blankByte(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
