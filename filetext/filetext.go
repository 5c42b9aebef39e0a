// Package filetext finds the text a language model would read in a file carried by a
// request (base64 file data in a JSON body, a multipart upload part), so that the
// firewall can scan it.
//
// A file is first classified (Classify, Sniff, ClassifyData) into a Kind:
//
//   - Text: the bytes are text; Extract decodes them to UTF-8 (DecodeText for a declared
//     charset).
//   - PDF: Extract returns the text of the pages' content streams, in content order,
//     which is the reading order the text extractors of model providers start from.
//   - Media: images, audio and video are not text and pass.
//   - Other: a document the package cannot read (DOCX, archives, unknown bytes); the
//     caller passes it labelled or refuses it.
//
// Every error is a value the caller maps to "refuse" or "pass labelled": ErrCharset,
// ErrLimit, ErrTimeout, ErrEncrypted, ErrMalformed, ErrUnsupported. On ErrLimit and
// ErrTimeout the text returned is what was read so far: it may be scanned, but it is not
// the whole file.
//
// # PDF library
//
// PDFs are parsed with github.com/ledongthuc/pdf (v0.0.0-20260907135840-6c8c28e0e8a0),
// a fork of rsc.io/pdf: pure Go, no dependencies, BSD-licensed (compatible with
// Apache-2.0), and maintained (commits through 2026 harden its lexer and bound object
// nesting). pdfcpu reads PDFs more completely but pulls in several modules and extracts
// text poorly; go-pdfium embeds a WebAssembly runtime and a C library's worth of code;
// rsc.io/pdf and dslipak/pdf are unmaintained.
//
// The library trusts its input, so this package bounds it from outside. Before the
// library sees a file, the pre-check (pdfguard.go, pdfxref.go) refuses the sizes it
// would allocate from (xref /Size, /Index, /W, object stream /N, predictor /Columns) and
// the object stream nesting on which it recurses until the stack overflows, and
// decompresses every zlib stream once under the byte budget. The library then reads the
// file through a ReaderAt that fails once the time budget is spent, so any loop of its
// ends at its next read; its panics are recovered. The page tree walk, the
// content-stream interpreter and the ToUnicode CMap parser are this package's own code,
// with their own bounds: the library's versions loop on cyclic page trees and keep
// unbounded PostScript stacks.
//
// The library parses an object whole, at some 16 bytes of memory a token: a decoded
// stream of over four million tokens is refused, but an object written uncompressed is
// bounded only by the file, so memory can reach some ten times the file's size.
//
// The library decodes an object stream again for each object it resolves from it, so a
// document whose page objects live in object streams costs time quadratic in its pages
// (about a second for a thousand pages): such a document can end in ErrTimeout where a
// classic one would not.
package filetext

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Kind says how a file's content reaches the model.
type Kind int

const (
	// Other is a file the package cannot read: DOCX, archives, unknown bytes.
	Other Kind = iota
	// Text is a file whose bytes are text (text/*, JSON, XML, CSV, YAML, ...).
	Text
	// PDF is a PDF document.
	PDF
	// Media is an image, audio or video file: not text.
	Media
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Text:
		return "text"
	case PDF:
		return "pdf"
	case Media:
		return "media"
	default:
		return "other"
	}
}

// Errors returned by Extract; they are wrapped with detail, so compare with errors.Is.
var (
	// ErrCharset: the declared charset is not one the package decodes.
	ErrCharset = errors.New("filetext: unsupported charset")
	// ErrLimit: a bound of Limits was reached (decompressed bytes, pages, text, sizes).
	ErrLimit = errors.New("filetext: limit exceeded")
	// ErrTimeout: the time budget or the context ended before extraction did.
	ErrTimeout = errors.New("filetext: time budget exceeded")
	// ErrEncrypted: the PDF is encrypted.
	ErrEncrypted = errors.New("filetext: encrypted PDF")
	// ErrMalformed: the PDF cannot be parsed, or uses a feature the package cannot read.
	ErrMalformed = errors.New("filetext: malformed or unreadable PDF")
	// ErrUnsupported: the kind has no text to extract (Media, Other).
	ErrUnsupported = errors.New("filetext: kind has no extractable text")
)

// Limits bound the work of one extraction. A zero field takes its default.
type Limits struct {
	// MaxDecompressed bounds the bytes decoded from a PDF's streams, twice over: the
	// pre-check decodes every compressed stream of the file once under this bound, and
	// the reads of content streams, forms and CMaps are charged to another (a stream
	// shared by many pages counts each time). A file rebuilt from its objects is read
	// again under fresh bounds. Memory peaks at a few times this bound plus some ten
	// times the file's size. Default 64 MiB.
	MaxDecompressed int64
	// MaxPages bounds the pages read from a PDF; a PDF with more pages is ErrLimit.
	// Default 1000.
	MaxPages int
	// MaxText bounds the extracted text in bytes. Default 8 MiB.
	MaxText int
	// Timeout bounds the time of one extraction, on top of any context deadline.
	// Default 3 s.
	Timeout time.Duration
}

// DefaultLimits are the limits applied to zero fields.
var DefaultLimits = Limits{
	MaxDecompressed: 64 << 20,
	MaxPages:        1000,
	MaxText:         8 << 20,
	Timeout:         3 * time.Second,
}

func (l Limits) withDefaults() Limits {
	if l.MaxDecompressed <= 0 {
		l.MaxDecompressed = DefaultLimits.MaxDecompressed
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultLimits.MaxPages
	}
	if l.MaxText <= 0 {
		l.MaxText = DefaultLimits.MaxText
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultLimits.Timeout
	}
	return l
}

// Extract returns the text of data read as kind. Text is decoded as DecodeText with no
// declared charset. PDF text is the document information (title, subject, keywords,
// author), then each page's content streams, Form XObjects, marked-content
// /ActualText and annotation texts, in content order, pages separated by a blank line;
// hidden text (white, clipped, invisible render mode) is included. Media and Other
// return ErrUnsupported. Extract never panics; hostile input ends in an error within
// limits.
func Extract(kind Kind, data []byte, limits Limits) (string, error) {
	return ExtractContext(context.Background(), kind, data, limits)
}

// ExtractContext is Extract bounded by ctx as well as limits.Timeout.
func ExtractContext(ctx context.Context, kind Kind, data []byte, limits Limits) (string, error) {
	return extract(ctx, kind, "", data, limits)
}

// ExtractFile classifies data with ClassifyData and extracts its text, decoding Text with
// the charset parameter of mediaType. It returns the kind it chose; for Media and Other
// the text is empty and the error ErrUnsupported.
//
// A file declared as text whose bytes look like a PDF reaches the model either way, as
// the upstream trusts the label or sniffs: its text is the PDF's text followed by the
// bytes read as text, or only the latter (kind Text) when it is not a PDF the package
// can read, since then the "%PDF-" was only text.
func ExtractFile(ctx context.Context, mediaType, filename string, data []byte, limits Limits) (Kind, string, error) {
	kind := ClassifyData(mediaType, filename, data)
	charset := charsetParam(mediaType)
	text, err := extract(ctx, kind, charset, data, limits)
	if kind != PDF || Classify(mediaType, filename) != Text {
		return kind, text, err
	}
	if errors.Is(err, ErrMalformed) {
		text, err = extract(ctx, Text, charset, data, limits)
		return Text, text, err
	}
	if err != nil {
		return kind, text, err
	}
	raw, err := extract(ctx, Text, charset, data, limits)
	text += "\n" + raw
	if limits = limits.withDefaults(); err == nil && len(text) > limits.MaxText {
		text, err = text[:validPrefix(text, limits.MaxText)], fmt.Errorf("%w: text over %d bytes", ErrLimit, limits.MaxText)
	}
	return kind, text, err
}

func extract(ctx context.Context, kind Kind, charset string, data []byte, limits Limits) (string, error) {
	limits = limits.withDefaults()
	switch kind {
	case Text:
		s, err := DecodeText(data, charset)
		if err != nil {
			return "", err
		}
		if len(s) > limits.MaxText {
			return s[:validPrefix(s, limits.MaxText)], fmt.Errorf("%w: text over %d bytes", ErrLimit, limits.MaxText)
		}
		return s, nil
	case PDF:
		return extractPDF(ctx, data, limits)
	default:
		return "", fmt.Errorf("%w: %s", ErrUnsupported, kind)
	}
}
