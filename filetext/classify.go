package filetext

import (
	"bytes"
	"unicode/utf8"
)

// Classify returns the kind a declared media type names. Parameters (charset) are
// ignored and case does not matter. When the media type is missing, unparsable or says
// nothing (application/octet-stream, binary/octet-stream, application/unknown), the
// filename's extension decides. Anything not known to be text, PDF or media is Other.
//
// image/svg+xml is Text, not Media: an SVG is XML whose text an upstream may read.
func Classify(mediaType, filename string) Kind {
	if Untyped(mediaType) {
		return KindOfType(TypeOfName(filename))
	}
	return KindOfType(mediaType)
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

// MostlyText reports whether data is mostly text although it may start like something else:
// after the first 16 bytes (room for a magic number or a few junk bytes a reader of text
// skips), at least 90% of the next 4 KiB are printable ASCII, whitespace, or bytes of valid
// UTF-8 sequences (a sequence cut at the end of the window counts). Data of 16 bytes or
// fewer is judged whole; empty data is not text. Real compressed images, audio and video
// are close to random bytes and fail this, so a file declared as media that passes it is
// text in disguise.
func MostlyText(data []byte) bool {
	win := data
	if len(data) > 16 {
		win = data[16:]
	}
	win = win[:min(len(win), 4096)]
	if len(win) == 0 {
		return false
	}
	good := 0
	for i := 0; i < len(win); {
		c := win[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c < 0x7F || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
				good++
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(win[i:])
		if r == utf8.RuneError && n <= 1 {
			if len(win)-i < utf8.UTFMax && !utf8.FullRune(win[i:]) {
				good += len(win) - i
				break
			}
			i++
			continue
		}
		good += n
		i += n
	}
	return good*10 >= len(win)*9
}
