package filetext

import (
	"mime"
	"path"
	"strings"
)

// The media type tables: which declared types are text, PDF or media, which say nothing,
// which name JSON Lines, and the type a filename's extension gives. The tables are the
// package's own, not the system's (mime.TypeByExtension reads /etc/mime.types), so that
// every host decides alike.

// KindOfType returns the kind a media type names, whatever its parameters and case; a
// missing or unknown type is Other. Every text/ and message/ type is Text, and every
// +json, +xml and +yaml suffix: image/svg+xml is Text, not Media, because an SVG is XML
// whose text an upstream may read.
func KindOfType(mediaType string) Kind {
	mt := baseType(mediaType)
	major, sub, _ := strings.Cut(mt, "/")
	switch {
	case mt == "application/pdf", mt == "application/x-pdf", mt == "application/acrobat":
		return PDF
	case major == "text", major == "message": // message/rfc822 and kin are text
		return Text
	case strings.HasSuffix(sub, "+json"), strings.HasSuffix(sub, "+xml"),
		strings.HasSuffix(sub, "+yaml"), textTypes[mt], jsonlTypes[mt]:
		return Text
	case major == "image", major == "audio", major == "video":
		return Media
	}
	return Other
}

// Untyped reports whether a media type says nothing of its content: it is missing, or
// one of the octet-stream and unknown types senders use for "some bytes". The filename
// or the bytes must then decide.
func Untyped(mediaType string) bool {
	switch baseType(mediaType) {
	case "", "application/octet-stream", "binary/octet-stream", "application/unknown",
		"application/x-unknown", "unknown/unknown", "application/binary":
		return true
	}
	return false
}

// JSONLines reports whether a file is JSON Lines (NDJSON) by its media type or, whatever
// the type, by its filename's extension (.jsonl, .ndjson).
func JSONLines(mediaType, filename string) bool {
	switch extOf(filename) {
	case ".jsonl", ".ndjson":
		return true
	}
	return jsonlTypes[baseType(mediaType)]
}

// TypeOfName returns the media type of a filename's extension (case does not matter; a
// Windows path's backslashes separate directories), or "" for an extension the package
// does not know.
func TypeOfName(filename string) string {
	return extTypes[extOf(filename)]
}

func extOf(filename string) string {
	return strings.ToLower(path.Ext(strings.ReplaceAll(filename, `\`, "/")))
}

// baseType is a media type in lower case without its parameters.
func baseType(mediaType string) string {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		// A malformed parameter must not hide the type itself.
		mt, _, _ = strings.Cut(mediaType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

// jsonlTypes are the media types of JSON Lines; every one is text.
var jsonlTypes = map[string]bool{
	"application/jsonl": true, "application/x-jsonl": true, "application/jsonlines": true,
	"application/x-jsonlines": true, "application/ndjson": true, "application/x-ndjson": true,
	"text/jsonl": true, "text/x-ndjson": true,
}

// textTypes are the application/* types whose bytes are text, besides JSON Lines and the
// +json, +xml and +yaml suffixes.
var textTypes = map[string]bool{
	"application/json": true, "application/json-seq": true, "application/xml": true,
	"application/xhtml": true, "application/yaml": true, "application/x-yaml": true,
	"application/toml": true, "application/csv": true, "application/x-www-form-urlencoded": true,
	"application/javascript": true, "application/x-javascript": true,
	"application/ecmascript": true, "application/typescript": true, "application/sql": true,
	"application/graphql": true, "application/x-sh": true, "application/x-tex": true,
	"application/x-latex": true, "application/rtf": true, "application/x-python": true,
	"application/x-python-code": true, "application/x-httpd-php": true,
	"application/x-ruby": true, "application/x-perl": true, "application/markdown": true,
	"application/x-markdown": true, "application/x-subrip": true,
}

// extTypes give a filename's extension its media type: the document and code formats the
// providers' file tools read as text, PDF and office documents, images, audio and video.
var extTypes = map[string]string{
	// Text and data.
	".txt": "text/plain", ".text": "text/plain", ".log": "text/plain", ".ini": "text/plain",
	".cfg": "text/plain", ".conf": "text/plain", ".env": "text/plain", ".properties": "text/plain",
	".md": "text/markdown", ".markdown": "text/markdown", ".mdx": "text/markdown",
	".rst": "text/x-rst", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".json": "application/json", ".jsonl": "application/jsonl", ".ndjson": "application/x-ndjson",
	".ipynb": "application/x-ipynb+json", ".xml": "application/xml", ".html": "text/html",
	".htm": "text/html", ".xhtml": "application/xhtml+xml", ".svg": "image/svg+xml",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".rtf": "application/rtf", ".tex": "application/x-tex", ".srt": "application/x-subrip",
	".vtt": "text/vtt", ".eml": "message/rfc822", ".css": "text/css", ".sql": "application/sql",
	// Code.
	".js": "text/javascript", ".mjs": "text/javascript", ".jsx": "text/javascript",
	".ts": "text/x-typescript", ".tsx": "text/x-typescript", ".vue": "text/x-vue",
	".py": "text/x-python", ".go": "text/x-go", ".java": "text/x-java", ".kt": "text/x-kotlin",
	".scala": "text/x-scala", ".swift": "text/x-swift", ".c": "text/x-c", ".h": "text/x-c",
	".cpp": "text/x-c++", ".cc": "text/x-c++", ".hpp": "text/x-c++", ".cs": "text/x-csharp",
	".m": "text/x-objcsrc", ".rs": "text/x-rust", ".rb": "text/x-ruby", ".php": "text/x-php",
	".pl": "text/x-perl", ".lua": "text/x-lua", ".r": "text/x-r", ".sh": "text/x-shellscript",
	".bash": "text/x-shellscript", ".ps1": "text/x-powershell",
	// Documents.
	".pdf": "application/pdf", ".doc": "application/msword",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt":  "application/vnd.oasis.opendocument.text", ".epub": "application/epub+zip",
	// Images.
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".tif": "image/tiff", ".tiff": "image/tiff",
	".heic": "image/heic", ".heif": "image/heif", ".ico": "image/vnd.microsoft.icon",
	".avif": "image/avif",
	// Audio.
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".flac": "audio/flac", ".ogg": "audio/ogg",
	".oga": "audio/ogg", ".opus": "audio/opus", ".m4a": "audio/mp4", ".aac": "audio/aac",
	".weba": "audio/webm", ".aiff": "audio/aiff",
	// Video.
	".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm",
	".mkv": "video/x-matroska", ".avi": "video/x-msvideo", ".mpeg": "video/mpeg",
	".mpg": "video/mpeg", ".3gp": "video/3gpp", ".flv": "video/x-flv", ".wmv": "video/x-ms-wmv",
}
