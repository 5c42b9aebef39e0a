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
	fileMedia                 // image, audio, video by its bytes: not text, passes
	fileOther                 // a type the firewall cannot read: passes counted, or refused
)

// sniffLen is how many bytes http.DetectContentType reads; a raw body's
// head grows by as many while it is blank (readHead).
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

// jsonlFile reports whether a text file is JSON Lines by its name or type.
func jsonlFile(mediaType, filename string) bool { return filetext.JSONLines(mediaType, filename) }

// kindOf decides a file's kind from its name, its declared type and its
// first bytes (head, at least headLen of them when the file has as many),
// reading it as text wherever a reader might:
//   - a file name of a text or PDF type decides over any declared type
//     (OpenAI's file_search types a file by its name);
//   - a text or PDF type decides over the bytes;
//   - bytes that sniff as text or PDF, or that are mostly text past a
//     short header (a NUL byte or an image magic number before a prompt),
//     are read as such whatever else was declared;
//   - a declared image, audio or video whose bytes are no known media
//     format is of a type no reader knows (fileOther).
//
// Text in UTF-16 or UTF-32 (a byte order mark) is refused: the scan reads
// UTF-8.
func kindOf(mediaType, filename string, head []byte) (fileKind, *failure) {
	if cs := filetext.BOMCharset(head); cs != "" {
		return 0, errUnsupportedCharset
	}
	if filename != "" {
		if k := classifyFile("", filename); k == fileText || k == filePDF {
			return k, nil
		}
	}
	k := classifyFile(mediaType, filename)
	if k == fileText || k == filePDF {
		return k, nil
	}
	sniffed := http.DetectContentType(head)
	switch fs := filetext.Sniff(head); {
	case sniffed == "application/pdf", fs == filetext.PDF:
		return filePDF, nil
	case strings.HasPrefix(sniffed, "text/"), fs == filetext.Text, filetext.MostlyText(head):
		return fileText, nil
	case k == fileMedia && fs != filetext.Media && !mediaSniff(sniffed):
		return fileOther, nil
	}
	return k, nil
}

// headLen is how many leading bytes kindOf reads: mostlyText's window.
const headLen = 16 + 4096

// mediaSniff reports whether http.DetectContentType named a media format.
func mediaSniff(sniffed string) bool {
	return strings.HasPrefix(sniffed, "image/") || strings.HasPrefix(sniffed, "audio/") ||
		strings.HasPrefix(sniffed, "video/") || sniffed == "application/ogg"
}
