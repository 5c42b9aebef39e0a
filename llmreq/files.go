package llmreq

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/promptwall/promptwall/filetext"
	"github.com/promptwall/promptwall/jsonstr"
)

// Files the model reads: inline file data (a data URL, or base64 typed by a media type member or
// a filename) whose type is text is decoded, and its content is a text; other files are
// Documents. The provider decodes the file and puts its content before the model, so its
// content is what is scanned, and a replacement is encoded back the way the file came.

// fileEnc says how a file text's literal encodes its content.
type fileEnc uint8

const (
	encFile    fileEnc = 1 << iota // the text is a file's content
	encPercent                     // a data URL without ";base64": percent-encoded
	encURL                         // base64 with the URL alphabet
	encRaw                         // base64 without padding
	encLatin1                      // the content is ISO-8859-1
	enc1252                        // the content is windows-1252
	encLossy                       // decoding replaced bytes (invalid UTF-8): re-encode even an unchanged value
)

// Reasons a file is unreadable (Document.Unreadable).
const (
	unreadableRemote  = "remote: the provider fetches it"
	unreadableBase64  = "invalid base64"
	unreadablePercent = "invalid percent-encoding"
	unreadableUTF16   = "charset utf-16 (byte order mark)"
)

// file handles node v, the data of a file whose declared media type (maybe "") is declared and
// whose filename (maybe "") is name.
func (w *walker) file(v int, role, declared, name string) {
	if w.kind(v) != kindString {
		w.all(v, role)
		return
	}
	n := w.t.nodes[v]
	s := w.body[n.start()+1 : n.end()-1]
	if n.escaped() {
		w.fileBuf = jsonstr.Unquote(w.fileBuf[:0], s)
		s = w.fileBuf
	}
	enc := encFile
	mt := declared
	payload := s
	if len(s) >= 5 && strings.EqualFold(string(s[:5]), "data:") {
		comma := bytes.IndexByte(s, ',')
		if comma < 0 {
			w.document(v, role, mt, nil, unreadableBase64)
			return
		}
		header, b64 := string(s[5:comma]), false
		if h, ok := cutSuffixFold(header, ";base64"); ok {
			header, b64 = h, true
		}
		if header == "" || header[0] == ';' {
			header = "text/plain" + header // RFC 2397's default
		}
		mt, payload = header, s[comma+1:]
		if !b64 {
			enc |= encPercent
		}
	}
	named := mt == "" && name != ""
	if named {
		mt = typeOfName(name)
	}
	media := filetext.KindOfType(mt) == filetext.Media
	if media && !named {
		// A provider may type the file by its name (OpenAI does for uploads), and a model reads
		// text behind a few bytes of junk: declared media is media only when the filename does
		// not say text or document and the bytes are not mostly text.
		if nt := typeOfName(name); nt != "" && filetext.KindOfType(nt) != filetext.Media {
			mt, media = nt, false
		} else if !filetext.MostlyText(mediaHead(payload, enc)) {
			return
		}
	}
	var data []byte
	if enc&encPercent != 0 {
		u, err := url.PathUnescape(string(payload))
		if err != nil {
			if !media {
				w.document(v, role, mt, nil, unreadablePercent)
			}
			return
		}
		data = []byte(u)
	} else {
		var ok bool
		if data, enc, ok = decodeBase64(payload, enc); !ok {
			if !media {
				w.document(v, role, baseType(mt), nil, unreadableBase64)
			}
			return
		}
	}
	base, charset := baseType(mt), charsetOf(mt)
	if media || filetext.Untyped(base) {
		// A filename is a weak label: bytes named as media that are text are read as text.
		sniffed := http.DetectContentType(data)
		switch {
		case strings.HasPrefix(sniffed, "text/"), !media:
			base, charset = baseType(sniffed), charsetOf(sniffed)
		case filetext.MostlyText(data):
			base, charset = "text/plain", ""
		default:
			return
		}
	}
	switch filetext.KindOfType(base) {
	case filetext.Media:
		return
	case filetext.Text:
	default:
		w.document(v, role, base, data, "")
		return
	}
	switch filetext.LookupCharset(charset) {
	case filetext.UTF8:
		if bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) {
			w.document(v, role, base, data, unreadableUTF16)
			return
		}
	case filetext.Latin1:
		enc |= encLatin1
		data = []byte(filetext.DecodeLatin1(data))
	case filetext.Windows1252:
		enc |= enc1252
		data = []byte(filetext.DecodeWindows1252(data))
	default:
		w.document(v, role, base, data, "charset "+charset)
		return
	}
	if !utf8.Valid(data) {
		enc |= encLossy
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	w.emitFile(v, role, data, base, enc)
}

// fileShaped handles, for all, an object of no known API that looks like a file: base64 data
// ("data", "bytes", "file_data", or a "source" object holding them) beside a media type
// ("media_type", "mimeType", ...), a format ("txt", "pdf": Bedrock's) or a filename. Its keys and
// other members are scanned as all does; the data is read as a file, and its literal is a text
// as well when it is not a text file (all misses no string).
func (w *walker) fileShaped(o int, role string) bool {
	mt, name, data := "", "", false
	w.eachMember(o, func(k, v int) {
		switch {
		case w.kind(v) != kindString && !(w.kind(v) == kindObject && w.keyIs(k, "source")):
		case w.geminiKeyIs(k, "mediatype"), w.geminiKeyIs(k, "mimetype"), w.geminiKeyIs(k, "contenttype"):
			mt = string(w.decoded(v))
		case w.keyIs(k, "format"):
			if f := string(w.decoded(v)); strings.Contains(f, "/") {
				mt = f
			} else if t := typeOfName("." + f); t != "" {
				mt = t
			}
		case w.keyIs(k, "filename"), w.keyIs(k, "name"):
			name = string(w.decoded(v))
		case w.isFileData(k):
			data = true
			if s := w.decoded(v); mt == "" && len(s) > 5 && strings.EqualFold(string(s[:5]), "data:") {
				mt = "data:" // typed by its data URL
			}
		case w.keyIs(k, "source"):
			w.eachMember(v, func(k, _ int) { data = data || w.isFileData(k) })
		}
	})
	if !data || (mt == "" && typeOfName(name) == "") {
		return false
	}
	if mt == "data:" {
		mt = ""
	}
	var walk func(o int)
	walk = func(o int) {
		w.eachMember(o, func(k, v int) {
			mark := w.pushKey(k)
			w.emitKey(k, role)
			switch {
			case w.kind(v) == kindString && w.isFileData(k):
				n := len(w.texts)
				w.file(v, role, mt, name)
				if len(w.texts) == n {
					w.emit(v, role)
				}
			case w.kind(v) == kindObject && w.keyIs(k, "source"):
				walk(v)
			case w.kind(v) < kindNumber:
				w.all(v, role)
			}
			w.pop(mark)
		})
	}
	walk(o)
	return true
}

func (w *walker) isFileData(k int) bool {
	return w.keyIs(k, "data") || w.keyIs(k, "bytes") || w.geminiKeyIs(k, "filedata")
}

// remote records string node v, the URL of a document the provider fetches itself, of media
// type mt (maybe ""; else the URL's extension tells). Images, audio and video are media.
func (w *walker) remote(v int, role, mt string) {
	if w.kind(v) != kindString {
		w.all(v, role)
		return
	}
	if mt == "" {
		u := string(w.decoded(v))
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			u = u[:i]
		}
		mt = typeOfName(u)
	}
	if w.isImage || filetext.KindOfType(mt) == filetext.Media {
		return
	}
	w.document(v, role, baseType(mt), nil, unreadableRemote)
}

// document records a file llmreq does not read as text; data is the walker's to give (freshly
// decoded).
func (w *walker) document(v int, role, mt string, data []byte, why string) {
	w.docs = append(w.docs, Document{Path: string(w.path), Role: role, MediaType: mt,
		Data: data, Unreadable: why, start: w.t.nodes[v].start()})
}

// emitFile records string node v as a text of role whose value is a file's content.
func (w *walker) emitFile(v int, role string, content []byte, mt string, enc fileEnc) {
	n := w.t.nodes[v]
	if len(w.texts)+w.skippedTexts >= MaxTexts {
		if w.tooMany < 0 {
			w.tooMany = n.start()
		}
		return
	}
	sp := textSpan{path0: len(w.paths)}
	w.appendTextPath()
	sp.path1, sp.val0 = len(w.paths), len(w.values)
	w.values = append(w.growValues(len(content)), content...)
	sp.val1 = len(w.values)
	w.push(Text{Role: role, start: int32(n.start()), end: int32(n.end()), enc: enc}, sp)
	w.fileTypes = append(w.fileTypes, fileType{int32(n.start()), mt})
}

// mediaHead is the start of a file's content, from its literal's payload, enough for
// filetext.MostlyText, without decoding a large image whole.
func mediaHead(payload []byte, enc fileEnc) []byte {
	if enc&encPercent != 0 {
		u, err := url.PathUnescape(string(payload[:min(len(payload), 3*4200)]))
		if err != nil {
			u, _ = url.PathUnescape(string(payload)) // an escape was cut
		}
		return []byte(u)
	}
	head, _, _ := decodeBase64(payload[:min(len(payload), 4*1400)], enc)
	return head
}

// decodeBase64 decodes standard or URL-alphabet base64, padded or not (MIME line breaks are
// ignored, as encoding/base64 does), and notes the variant in enc.
func decodeBase64(p []byte, enc fileEnc) ([]byte, fileEnc, bool) {
	e := base64.StdEncoding
	if bytes.ContainsAny(p, "-_") {
		e, enc = base64.URLEncoding, enc|encURL
	}
	trimmed := bytes.TrimRight(p, "=\r\n")
	if len(trimmed) == len(bytes.TrimRight(p, "\r\n")) && len(trimmed)%4 != 0 {
		enc |= encRaw
	}
	e = e.WithPadding(base64.NoPadding)
	out := make([]byte, e.DecodedLen(len(trimmed)))
	n, err := e.Decode(out, trimmed)
	return out[:n], enc, err == nil
}

// encodeFile is the literal's content (before JSON quoting) for a replacement s of file text t
// whose original literal content is orig.
func encodeFile(orig []byte, enc fileEnc, s string) []byte {
	var prefix []byte
	if len(orig) >= 5 && strings.EqualFold(string(orig[:5]), "data:") {
		if c := bytes.IndexByte(orig, ','); c >= 0 {
			prefix = orig[:c+1]
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	content := []byte(s)
	switch {
	case enc&encLatin1 != 0:
		content = filetext.EncodeLatin1(s)
	case enc&enc1252 != 0:
		content = filetext.EncodeWindows1252(s)
	}
	out := append([]byte(nil), prefix...)
	if enc&encPercent != 0 {
		return append(out, url.PathEscape(string(content))...)
	}
	e := base64.StdEncoding
	if enc&encURL != 0 {
		e = base64.URLEncoding
	}
	if enc&encRaw != 0 {
		e = e.WithPadding(base64.NoPadding)
	}
	return e.AppendEncode(out, content)
}

func cutSuffixFold(s, suf string) (string, bool) {
	if len(s) >= len(suf) && strings.EqualFold(s[len(s)-len(suf):], suf) {
		return s[:len(s)-len(suf)], true
	}
	return s, false
}

// typeOfName is the media type of a filename's extension, or "" (then the bytes are sniffed).
func typeOfName(name string) string { return filetext.TypeOfName(name) }

// baseType is a media type in lower case without its parameters.
func baseType(mt string) string {
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// charsetOf is the charset parameter of a media type, in lower case, or "".
func charsetOf(mt string) string {
	for _, p := range strings.Split(mt, ";")[1:] {
		k, v, ok := strings.Cut(p, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "charset") {
			return strings.ToLower(strings.Trim(strings.TrimSpace(v), `"`))
		}
	}
	return ""
}
