package llmreq

import "strings"

// Data URLs in shapes no rule knows: a string value of the fallback that is a data URL
// ("data:<type>[;params][;base64],<data>") is a file the provider may decode (Mistral's
// document_url, new part types, new APIs), so it is read as the known file fields are: a text
// file is a text whose Value is its content, rewritten in its encoding; a PDF or another
// document is a Document; media is neither; an undecodable one is an unreadable Document.
//
// The literal is a text as well unless the file is a text: then the decoded content stands for
// it, and one span holds one text, so that Rewrite replaces it once, encoded as it came. For
// documents and media the literal is scanned as before, which misses no string and costs only
// precision.

// maxDataURLHeader bounds the part of a data URL before its comma that is looked at.
const maxDataURLHeader = 256

// isDataURL reports whether string node i is a data URL with a well-formed header: a media type
// (or none) and parameters, without spaces, so that prose that starts with "data:" is not one.
func (w *walker) isDataURL(i int) bool {
	n := w.t.nodes[i]
	lit := w.body[n.start()+1 : n.end()-1]
	if len(lit) < 6 || (lit[0]|0x20 != 'd' && lit[0] != '\\') {
		return false
	}
	s := lit
	if n.escaped() {
		s = w.decoded(i)
	}
	if len(s) < 6 || !strings.EqualFold(string(s[:5]), "data:") {
		return false
	}
	head := s[5:min(len(s), 5+maxDataURLHeader)]
	comma := strings.IndexByte(string(head), ',')
	if comma < 0 {
		return false
	}
	return validDataHeader(string(head[:comma]))
}

// validDataHeader reports whether h is "[type/subtype](;param)*" (RFC 2397, token characters).
func validDataHeader(h string) bool {
	mt, params, _ := strings.Cut(h, ";")
	if mt != "" {
		typ, sub, ok := strings.Cut(mt, "/")
		if !ok || !isToken(typ) || !isToken(sub) {
			return false
		}
	}
	for p := range strings.SplitSeq(params, ";") {
		if p == "" && params == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		if !isToken(k) || (v != "" && !isToken(strings.Trim(v, `"`))) {
			return false
		}
	}
	return true
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// dataURL handles string node i, a data URL met by the fallback, as a file.
func (w *walker) dataURL(i int, role string) {
	n := len(w.texts)
	w.file(i, role, "", "")
	if len(w.texts) == n {
		w.emit(i, role)
	}
}

// documentURL handles string node v, a document given by a data URL (a file) or by any other URL
// (fetched by the provider: a remote document, typed by its name or its extension).
func (w *walker) documentURL(v int, role, name string) {
	if w.kind(v) == kindString {
		if s := w.decoded(v); len(s) >= 5 && strings.EqualFold(string(s[:5]), "data:") {
			w.file(v, role, "", name)
			return
		}
	}
	w.remote(v, role, typeOfName(name))
}
