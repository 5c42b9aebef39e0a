package filetext

import (
	"bytes"
	"testing"
)

func TestLookupCharset(t *testing.T) {
	tests := []struct {
		label string
		want  Charset
	}{
		{"", UTF8},
		{"UTF-8", UTF8},
		{`"utf_8"`, UTF8},
		{"US-ASCII", UTF8},
		{"utf-16", UTF16BE},
		{"UTF-16BE", UTF16BE},
		{"utf-16le", UTF16LE},
		{"ISO-8859-1", Latin1},
		{"iso_8859-1:1987", Latin1},
		{"IBM819", Latin1},
		{"latin-1", Latin1},
		{"Windows-1252", Windows1252},
		{"x-cp1252", Windows1252},
		{"iso-8859-2", UnknownCharset},
		{"utf-32", UnknownCharset},
		{"shift_jis", UnknownCharset},
	}
	for _, tt := range tests {
		if got := LookupCharset(tt.label); got != tt.want {
			t.Errorf("LookupCharset(%q) = %v, want %v", tt.label, got, tt.want)
		}
	}
}

func TestBOMCharset(t *testing.T) {
	tests := []struct{ data, want string }{
		{"\x00\x00\xFE\xFFa", "utf-32be"},
		{"\xFF\xFE\x00\x00", "utf-32le"},
		{"\xFE\xFF\x00a", "utf-16be"},
		{"\xFF\xFEa\x00", "utf-16le"},
		{"\xFF\xFE", "utf-16le"},
		{"\xEF\xBB\xBFa", ""},
		{"\xFE", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := BOMCharset([]byte(tt.data)); got != tt.want {
			t.Errorf("BOMCharset(%q) = %q, want %q", tt.data, got, tt.want)
		}
	}
}

// TestSingleByteRoundTrip: every byte decodes to a character that encodes back to it,
// in both charsets, so a file rewritten without change keeps its bytes.
func TestSingleByteRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, c := range []struct {
		name   string
		decode func([]byte) string
		encode func(string) []byte
	}{
		{"latin-1", DecodeLatin1, EncodeLatin1},
		{"windows-1252", DecodeWindows1252, EncodeWindows1252},
	} {
		if got := c.encode(c.decode(all)); !bytes.Equal(got, all) {
			t.Errorf("%s: bytes changed in a round trip: %q", c.name, got)
		}
	}
}

func TestSingleByte(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"latin-1 decode", DecodeLatin1([]byte("caf\xe9 \x80")), "café \u0080"},
		{"windows-1252 decode", DecodeWindows1252([]byte("\x80\x93x\x94\x81")), "€“x”\u0081"},
		{"latin-1 lacks €", string(EncodeLatin1("thé €")), "th\xe9 ?"},
		{"windows-1252 has €", string(EncodeWindows1252("thé €")), "th\xe9 \x80"},
		{"windows-1252 lacks U+0080", string(EncodeWindows1252("\u0080")), "?"},
		{"beyond one byte", string(EncodeWindows1252("日本")), "??"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
