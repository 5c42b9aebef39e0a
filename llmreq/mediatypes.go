package llmreq

import (
	"path"
	"strings"
	"unicode/utf8"
)

// What a file's media type makes of it.
const (
	fileText     = iota // decoded and scanned
	fileMedia           // images, audio, video: not text
	fileDocument        // anything else: listed in Request.Documents
)

// textTypes are the application/ types that are text; every text/ type is, and every +json,
// +xml and +yaml suffix.
var textTypes = map[string]bool{
	"application/json": true, "application/x-ndjson": true, "application/ndjson": true,
	"application/jsonl": true, "application/x-jsonlines": true, "application/jsonlines": true,
	"application/json-seq": true, "application/xml": true, "application/xhtml": true,
	"application/yaml": true, "application/x-yaml": true, "application/toml": true,
	"application/csv": true, "application/javascript": true, "application/x-javascript": true,
	"application/ecmascript": true, "application/typescript": true, "application/x-sh": true,
	"application/x-python": true, "application/x-python-code": true, "application/sql": true,
	"application/graphql": true, "application/x-www-form-urlencoded": true,
	"application/rtf": true, "application/x-tex": true, "application/x-latex": true,
	"application/markdown": true, "application/x-markdown": true, "application/x-subrip": true,
	"application/x-httpd-php": true, "application/x-ruby": true, "application/x-perl": true,
	"message/rfc822": true, "message/http": true, "message/global": true,
}

// kindOfType classifies a media type (lower case, no parameters; "" is a document).
func kindOfType(mt string) int {
	major, minor, _ := strings.Cut(mt, "/")
	switch {
	case major == "text", textTypes[mt], strings.HasSuffix(minor, "+json"), strings.HasSuffix(minor, "+xml"),
		strings.HasSuffix(minor, "+yaml"):
		return fileText // image/svg+xml included: it is XML a model may read as such
	case major == "image", major == "audio", major == "video":
		return fileMedia
	}
	return fileDocument
}

// extTypes give a raw base64 file the media type of its filename's extension. The table is
// the package's own, not the system's (mime.TypeByExtension reads /etc/mime.types), so that
// every host decides alike.
var extTypes = map[string]string{
	".txt": "text/plain", ".text": "text/plain", ".log": "text/plain", ".md": "text/markdown",
	".markdown": "text/markdown", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".json": "application/json", ".jsonl": "application/jsonl", ".ndjson": "application/x-ndjson",
	".xml": "application/xml", ".html": "text/html", ".htm": "text/html", ".xhtml": "application/xhtml+xml",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".ini": "text/plain", ".cfg": "text/plain", ".conf": "text/plain", ".env": "text/plain",
	".rtf": "application/rtf", ".tex": "application/x-tex", ".srt": "application/x-subrip",
	".vtt": "text/vtt", ".eml": "message/rfc822", ".css": "text/css", ".js": "text/javascript",
	".mjs": "text/javascript", ".ts": "text/x-typescript", ".py": "text/x-python", ".go": "text/x-go",
	".java": "text/x-java", ".c": "text/x-c", ".h": "text/x-c", ".cpp": "text/x-c++", ".cc": "text/x-c++",
	".rs": "text/x-rust", ".rb": "text/x-ruby", ".php": "text/x-php", ".sh": "text/x-shellscript",
	".sql": "application/sql", ".svg": "image/svg+xml", ".properties": "text/plain",
	".pdf": "application/pdf", ".doc": "application/msword",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt":  "application/vnd.oasis.opendocument.text", ".epub": "application/epub+zip",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".heic": "image/heic", ".mp3": "audio/mpeg", ".wav": "audio/wav",
	".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4", ".mp4": "video/mp4",
	".webm": "video/webm", ".mov": "video/quicktime",
}

// typeOfName is the media type of a filename's extension, or "" (then the bytes are sniffed).
func typeOfName(name string) string {
	return extTypes[strings.ToLower(path.Ext(name))]
}

// cp1252 maps windows-1252's bytes 0x80 to 0x9f (the rest is ISO-8859-1); 0 where undefined.
var cp1252 = [32]rune{
	0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0,
	0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
}

// decodeSingleByte decodes ISO-8859-1 (high nil) or windows-1252 to UTF-8.
func decodeSingleByte(b []byte, high *[32]rune) []byte {
	out := make([]byte, 0, len(b)+len(b)/4)
	for _, c := range b {
		r := rune(c)
		if high != nil && c >= 0x80 && c < 0xa0 && high[c-0x80] != 0 {
			r = high[c-0x80]
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// encodeSingleByte encodes s in ISO-8859-1 (high nil) or windows-1252; a character neither has
// becomes '?'.
func encodeSingleByte(s string, high *[32]rune) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x80 || (r < 0x100 && (high == nil || r >= 0xa0)):
			out = append(out, byte(r))
		default:
			c := byte('?')
			if high != nil {
				for i, h := range high {
					if h == r {
						c = byte(0x80 + i)
					}
				}
			}
			out = append(out, c)
		}
	}
	return out
}
