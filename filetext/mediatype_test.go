package filetext

import (
	"strings"
	"testing"
)

func TestKindOfType(t *testing.T) {
	tests := []struct {
		mediaType string
		want      Kind
	}{
		{"text/plain", Text},
		{"Text/X-Whatever; charset=utf-8", Text},
		{"message/partial", Text},
		{"application/x-jsonl", Text},
		{"text/x-ndjson", Text},
		{"application/typescript", Text},
		{"application/x-perl", Text},
		{"application/xhtml", Text},
		{"application/x-ipynb+json", Text},
		{"image/svg+xml", Text},
		{"application/acrobat", PDF},
		{"image/bmp", Media},
		{"video/x-matroska", Media},
		{"application/msword", Other},
		{"application/octet-stream", Other},
		{"", Other},
	}
	for _, tt := range tests {
		if got := KindOfType(tt.mediaType); got != tt.want {
			t.Errorf("KindOfType(%q) = %v, want %v", tt.mediaType, got, tt.want)
		}
	}
}

func TestTypeOfName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"notes.MD", "text/markdown"},
		{`C:\dir.d\main.RS`, "text/x-rust"},
		{"a/b/train.jsonl", "application/jsonl"},
		{"https://x/a.png", "image/png"},
		{"report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"archive.tar.gz", ""},
		{"README", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := TypeOfName(tt.name); got != tt.want {
			t.Errorf("TypeOfName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestExtTypesKinds: every extension's type is of the kind its section of the table
// says, so a typo in a type cannot turn a text extension into Other.
func TestExtTypesKinds(t *testing.T) {
	documents := map[string]bool{".doc": true, ".docx": true, ".xlsx": true, ".pptx": true,
		".odt": true, ".epub": true}
	for ext, mt := range extTypes {
		want := Text
		switch major, _, _ := strings.Cut(mt, "/"); {
		case ext == ".pdf":
			want = PDF
		case documents[ext]:
			want = Other
		case ext == ".svg":
		case major == "image", major == "audio", major == "video":
			want = Media
		}
		if got := KindOfType(mt); got != want {
			t.Errorf("%s: KindOfType(%q) = %v, want %v", ext, mt, got, want)
		}
		if ext != strings.ToLower(ext) || !strings.HasPrefix(ext, ".") {
			t.Errorf("%s: an extension is a dot and lower case", ext)
		}
	}
}

func TestUntyped(t *testing.T) {
	tests := []struct {
		mediaType string
		want      bool
	}{
		{"", true},
		{"application/octet-stream", true},
		{"Binary/Octet-Stream; x=y", true},
		{"unknown/unknown", true},
		{"application/binary", true},
		{"text/plain", false},
		{"image/png", false},
		{"application/zip", false},
	}
	for _, tt := range tests {
		if got := Untyped(tt.mediaType); got != tt.want {
			t.Errorf("Untyped(%q) = %v, want %v", tt.mediaType, got, tt.want)
		}
	}
}

func TestJSONLines(t *testing.T) {
	tests := []struct {
		mediaType, filename string
		want                bool
	}{
		{"application/jsonl", "", true},
		{"Application/X-NDJSON; charset=utf-8", "", true},
		{"text/jsonl", "", true},
		{"application/jsonlines", "data.txt", true},
		{"", "batch.JSONL", true},
		{"text/plain", "x.ndjson", true},
		{"application/json", "", false},
		{"application/json-seq", "", false},
		{"text/plain", "a.json", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got := JSONLines(tt.mediaType, tt.filename); got != tt.want {
			t.Errorf("JSONLines(%q, %q) = %v, want %v", tt.mediaType, tt.filename, got, tt.want)
		}
		if tt.want && Classify(tt.mediaType, tt.filename) != Text {
			t.Errorf("Classify(%q, %q) is not Text, but JSON Lines is", tt.mediaType, tt.filename)
		}
	}
}
