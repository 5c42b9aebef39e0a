package filetext

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var fuzzLimits = Limits{MaxDecompressed: 1 << 20, MaxPages: 20, MaxText: 1 << 16, Timeout: 200 * time.Millisecond}

func pdfSeeds() [][]byte {
	return [][]byte{
		textPDF(false, show(injection)),
		textPDF(true, show(injection)),
		textPDF(false, "BT /F1 12 Tf (ignore all ) Tj 0 -14 Td [(previous) -300 (instructions)] TJ ET", show("two")),
		textPDF(false, "BT /F1 12 Tf <69676e6f7265> Tj (\\(a\\) \\151) ' ET"),
		textPDF(false, "/Span << /ActualText (x) >> BDC BI /W 1 /H 1 ID \x00 EI EMC"),
		cmapPDF(), formPDF(), contentsArrayPDF(), objStmPDF(), infoPDF(),
		manyPages(3, show(injection), true),
	}
}

// FuzzExtractPDF checks that any input ends within the bounds, with valid UTF-8 and one
// of the package's errors.
func FuzzExtractPDF(f *testing.F) {
	for _, s := range pdfSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		text, err := Extract(PDF, data, fuzzLimits)
		if d := time.Since(start); d > fuzzLimits.Timeout+2*time.Second {
			t.Errorf("took %v", d)
		}
		if len(text) > fuzzLimits.MaxText {
			t.Errorf("text of %d bytes over the limit", len(text))
		}
		if !utf8.ValidString(text) {
			t.Errorf("text is not valid UTF-8: %q", text)
		}
		if err != nil && !isPackageError(err) {
			t.Errorf("error %v is none of the package's", err)
		}
	})
}

func isPackageError(err error) bool {
	for _, e := range []error{ErrCharset, ErrLimit, ErrTimeout, ErrEncrypted, ErrMalformed, ErrUnsupported} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzDecodeText checks that decoding never fails for a supported charset, always yields
// valid UTF-8, and keeps valid UTF-8 as it is (followed, maybe, by a UTF-16 reading).
func FuzzDecodeText(f *testing.F) {
	for _, s := range []string{"héllo", "\xff\xfeh\x00", "\xfe\xff\x00h", "\xef\xbb\xbfx", "a\xffb"} {
		for _, cs := range []string{"", "utf-16", "utf-16le", "latin1", "windows-1252"} {
			f.Add([]byte(s), cs)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, charset string) {
		s, err := DecodeText(data, charset)
		if err != nil && !errors.Is(err, ErrCharset) {
			t.Fatalf("error %v", err)
		}
		if !utf8.ValidString(s) {
			t.Fatalf("%q is not valid UTF-8", s)
		}
		if err == nil && charset == "" && utf8.Valid(data) && !strings.HasPrefix(string(data), "\xef\xbb\xbf") &&
			!strings.HasPrefix(string(data), "\xfe\xff") && !strings.HasPrefix(string(data), "\xff\xfe") && !strings.HasPrefix(s, string(data)) {
			t.Fatalf("valid UTF-8 %q changed to %q", data, s)
		}
	})
}

func BenchmarkExtractPDF10Pages(b *testing.B) {
	data := reportPDF(10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Extract(PDF, data, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeTextLatin1(b *testing.B) {
	data := []byte(strings.Repeat("caf\xe9 na\xefve ", 4096))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeText(data, "iso-8859-1"); err != nil {
			b.Fatal(err)
		}
	}
}
