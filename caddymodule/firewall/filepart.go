package firewall

import (
	"net/http"
	"strings"

	"github.com/promptwall/promptwall/filetext"
)

// fileKind is what an uploaded file (a multipart part, or a raw body) is to
// the scan.
type fileKind int

const (
	fileText  fileKind = iota // read as UTF-8 text and scanned
	filePDF                   // its text extracted, then scanned; never rewritten
	fileMedia                 // image, audio, video: not text, passes
	fileOther                 // a document type the firewall cannot read: passes
)

// sniffLen is how many leading bytes decide a file's kind, as
// http.DetectContentType reads them.
const sniffLen = 512

// The file reader: how a file's declared type and name map to a kind, and
// how a file of a text-bearing kind becomes the text that is scanned
// (package filetext: PDF text extraction, charsets). Variables, so that a
// test can stand in for the extractor.
var (
	classifyFile = func(mediaType, filename string) fileKind {
		return kindOfFiletext[filetext.Classify(mediaType, filename)]
	}
	extractFile = func(kind fileKind, data []byte, max int64) (string, error) {
		k := filetext.Text
		if kind == filePDF {
			k = filetext.PDF
		}
		// A text's invalid bytes grow threefold as U+FFFD, and a UTF-16
		// look-alike is read twice: max bounds the file, not the text.
		return filetext.Extract(k, data, filetext.Limits{MaxText: int(min(4*max+64, 1<<30))})
	}
)

// kindOfFiletext maps filetext's kinds to the form reader's.
var kindOfFiletext = map[filetext.Kind]fileKind{
	filetext.Text: fileText, filetext.PDF: filePDF, filetext.Media: fileMedia, filetext.Other: fileOther,
}

var errUnscannableFile = &failure{http.StatusUnsupportedMediaType, "unscannable_file",
	"Request blocked by prompt firewall: an uploaded document's text cannot be read for scanning"}

// jsonlFile reports whether a text file is JSON Lines by its name or type.
func jsonlFile(mediaType, filename string) bool { return filetext.JSONLines(mediaType, filename) }

// kindOf decides a file's kind from its declared type and name, then from
// its first bytes: a file declared as media or of an unknown type, whose
// bytes are text or a PDF, is scanned as what it is. Text in UTF-16 or
// UTF-32 (a byte order mark) is refused: the scan reads UTF-8.
func kindOf(mediaType, filename string, head []byte) (fileKind, *failure) {
	if cs := filetext.BOMCharset(head); cs != "" {
		return 0, unsupportedCharset(cs)
	}
	k := classifyFile(mediaType, filename)
	if k == fileText || k == filePDF {
		return k, nil
	}
	sniffed := http.DetectContentType(head)
	switch {
	case sniffed == "application/pdf":
		return filePDF, nil
	case strings.HasPrefix(sniffed, "text/"):
		return fileText, nil
	}
	return k, nil
}
