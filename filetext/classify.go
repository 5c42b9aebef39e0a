package filetext

import (
	"bytes"
	"mime"
	"path"
	"strings"
	"unicode/utf8"
)

// Classify returns the kind a declared media type names. Parameters (charset) are
// ignored and case does not matter. When the media type is missing, unparsable or says
// nothing (application/octet-stream, binary/octet-stream, application/unknown), the
// filename's extension decides. Anything not known to be text, PDF or media is Other.
//
// image/svg+xml is Text, not Media: an SVG is XML whose text an upstream may read.
func Classify(mediaType, filename string) Kind {
	mt := baseType(mediaType)
	switch mt {
	case "", "application/octet-stream", "binary/octet-stream", "application/unknown",
		"application/x-unknown", "unknown/unknown", "application/binary":
		return classifyExt(filename)
	}
	return classifyType(mt)
}

func baseType(mediaType string) string {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		// A malformed parameter must not hide the type itself.
		mt, _, _ = strings.Cut(mediaType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

// textTypes are the application/* types whose bytes are text.
var textTypes = map[string]bool{
	"application/json": true, "application/x-ndjson": true, "application/ndjson": true,
	"application/jsonl": true, "application/x-jsonl": true, "application/jsonlines": true,
	"application/x-jsonlines": true, "application/json-seq": true, "application/xml": true,
	"application/yaml": true, "application/x-yaml": true, "application/csv": true,
	"application/x-www-form-urlencoded": true, "application/javascript": true,
	"application/x-javascript": true, "application/ecmascript": true, "application/sql": true,
	"application/toml": true, "application/graphql": true, "application/x-sh": true,
	"application/x-tex": true, "application/x-latex": true, "application/rtf": true,
	"application/x-python": true, "application/x-httpd-php": true, "application/x-ruby": true,
	"application/markdown": true, "application/x-markdown": true, "application/x-subrip": true,
}

func classifyType(mt string) Kind {
	major, sub, _ := strings.Cut(mt, "/")
	switch {
	case mt == "application/pdf", mt == "application/x-pdf", mt == "application/acrobat":
		return PDF
	case major == "text", major == "message": // message/rfc822 and kin are text
		return Text
	case strings.HasSuffix(sub, "+json"), strings.HasSuffix(sub, "+xml"),
		strings.HasSuffix(sub, "+yaml"), textTypes[mt]:
		return Text
	case major == "image", major == "audio", major == "video":
		return Media
	}
	return Other
}

var textExts = map[string]bool{
	".txt": true, ".text": true, ".md": true, ".markdown": true, ".csv": true, ".tsv": true,
	".json": true, ".jsonl": true, ".ndjson": true, ".xml": true, ".html": true, ".htm": true,
	".xhtml": true, ".yaml": true, ".yml": true, ".toml": true, ".ini": true, ".cfg": true,
	".conf": true, ".log": true, ".rst": true, ".tex": true, ".rtf": true, ".svg": true,
	".js": true, ".mjs": true, ".ts": true, ".py": true, ".go": true, ".java": true,
	".c": true, ".h": true, ".cpp": true, ".cs": true, ".rb": true, ".php": true,
	".sh": true, ".sql": true, ".css": true, ".srt": true, ".vtt": true, ".eml": true,
}

var mediaExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".bmp": true,
	".tif": true, ".tiff": true, ".heic": true, ".heif": true, ".ico": true, ".avif": true,
	".mp3": true, ".wav": true, ".flac": true, ".ogg": true, ".oga": true, ".m4a": true,
	".aac": true, ".opus": true, ".weba": true, ".aiff": true, ".mp4": true, ".m4v": true,
	".mov": true, ".webm": true, ".mkv": true, ".avi": true, ".mpeg": true, ".mpg": true,
	".3gp": true, ".flv": true, ".wmv": true,
}

func classifyExt(filename string) Kind {
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(filename, `\`, "/")))
	switch {
	case ext == ".pdf":
		return PDF
	case textExts[ext]:
		return Text
	case mediaExts[ext]:
		return Media
	}
	return Other
}

// Sniff returns the kind the first bytes of data show: PDF when "%PDF-" occurs in the
// first 1024 bytes (where PDF readers look for it), Text for bytes that decode as text (a
// UTF-16 BOM, or UTF-8 without control characters other than whitespace in the first
// 4 KiB), Media for the magic numbers of common image, audio and video formats, and
// Other otherwise.
func Sniff(data []byte) Kind {
	head := data[:min(len(data), 1024)]
	if bytes.Contains(head, []byte("%PDF-")) {
		return PDF
	}
	// Text before media: a media magic number followed by text is text to a reader
	// that falls back to text, and no real image, audio or video is all text.
	if looksText(data[:min(len(data), 4096)]) {
		return Text
	}
	if isMediaMagic(data) {
		return Media
	}
	return Other
}

var mediaMagic = [][]byte{
	[]byte("\x89PNG\r\n\x1a\n"), []byte("\xff\xd8\xff"), []byte("GIF87a"), []byte("GIF89a"),
	[]byte("BM"), []byte("II*\x00"), []byte("MM\x00*"), []byte("\x00\x00\x01\x00"),
	[]byte("ID3"), []byte("\xff\xfb"), []byte("\xff\xf3"), []byte("\xff\xf2"),
	[]byte("fLaC"), []byte("OggS"), []byte("\x1a\x45\xdf\xa3"), []byte("\x00\x00\x01\xba"),
	[]byte("\x00\x00\x01\xb3"), []byte("FLV"), []byte("\xff\xf1"), []byte("\xff\xf9"),
}

func isMediaMagic(data []byte) bool {
	for _, m := range mediaMagic {
		if bytes.HasPrefix(data, m) {
			return true
		}
	}
	if len(data) >= 12 {
		switch string(data[:4]) {
		case "RIFF": // WAVE, AVI, WEBP
			switch string(data[8:12]) {
			case "WAVE", "AVI ", "WEBP":
				return true
			}
		case "FORM": // AIFF
			return string(data[8:12]) == "AIFF" || string(data[8:12]) == "AIFC"
		}
		if string(data[4:8]) == "ftyp" { // MP4, MOV, HEIC, AVIF, M4A
			return true
		}
	}
	return false
}

// looksText reports whether head is text: a UTF-16 BOM, or UTF-8 (a sequence cut at the
// end of head is allowed) without control characters other than whitespace.
func looksText(head []byte) bool {
	if bytes.HasPrefix(head, []byte{0xFE, 0xFF}) || bytes.HasPrefix(head, []byte{0xFF, 0xFE}) {
		return true
	}
	if len(head) == 0 {
		return false
	}
	for i := 0; i < len(head); {
		c := head[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7F {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n <= 1 {
			return len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:])
		}
		i += n
	}
	return true
}

// ClassifyData decides the kind of a file from its declared media type, its filename and
// its bytes, so that a mislabelled file is still read:
//
//   - bytes starting like a PDF are PDF whatever the label: a reader that sniffs would
//     read the PDF's text, and its text is a superset of what raw bytes show a model;
//   - a file declared Text stays Text (the upstream reads it as text);
//   - a file declared Media stays Media when its bytes are media or not text (the
//     upstream trusts the label and decodes it as media), but bytes that are text are
//     Text: scanning them costs only precision;
//   - a file declared Other whose bytes are text is Text; otherwise it stays Other.
func ClassifyData(mediaType, filename string, data []byte) Kind {
	declared := Classify(mediaType, filename)
	sniffed := Sniff(data)
	switch {
	case sniffed == PDF:
		return PDF
	case declared == Text, declared == PDF:
		return declared
	case sniffed == Text:
		return Text
	}
	return declared
}
