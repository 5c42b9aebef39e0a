package firewall

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/promptwall/promptwall/bufpool"
)

// maxPrealloc bounds the buffer allocated for a body before its bytes come.
const maxPrealloc = 1 << 20

// failure is a request the firewall refuses before scanning. Its code and
// message go to the client in the API family's error shape; neither ever
// holds request text.
type failure struct {
	status  int
	code    string
	message string
}

func (f *failure) Error() string { return f.message }

var (
	errInvalidJSON = &failure{http.StatusBadRequest, "invalid_json",
		"Request blocked by prompt firewall: the body is not valid JSON"}
	errTooDeep = &failure{http.StatusBadRequest, "invalid_json",
		"Request blocked by prompt firewall: the body's JSON is nested too deeply"}
	errTooManyTexts = &failure{http.StatusRequestEntityTooLarge, "request_too_large",
		"Request blocked by prompt firewall: the body holds more texts than can be scanned"}
	errBadEncoding = &failure{http.StatusBadRequest, "invalid_encoding",
		"Request blocked by prompt firewall: the body does not decode as its Content-Encoding says"}
)

func tooLarge(max int64) *failure {
	return &failure{http.StatusRequestEntityTooLarge, "request_too_large",
		fmt.Sprintf("Request blocked by prompt firewall: the body is larger than %d bytes", max)}
}

// errUnsupportedEncoding names no coding: the header's text is the client's.
var errUnsupportedEncoding = &failure{http.StatusUnsupportedMediaType, "unsupported_encoding",
	"Request blocked by prompt firewall: the body's Content-Encoding cannot be decoded for scanning (gzip, deflate, zstd and br can)"}

// contentCodings splits a Content-Encoding header into its codings in the
// order they were applied, lower-cased, without "identity". An unknown
// coding is returned as a failure before any byte is read.
func contentCodings(header string) ([]string, *failure) {
	if header == "" {
		return nil, nil
	}
	var out []string
	for _, c := range strings.Split(header, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		switch c {
		case "", "identity":
		case "gzip", "x-gzip", "deflate", "br", "zstd":
			out = append(out, c)
		default:
			return nil, errUnsupportedEncoding
		}
	}
	return out, nil
}

// readBody reads the whole body, at most max bytes, and decodes its
// content codings, the decoded size bounded by max too (a small compressed
// body must not inflate into gigabytes). raw is the body as received, body
// the decoded JSON; decoded says whether they differ. Errors that are the
// client's fault are *failure; anything else is a broken read.
func readBody(r io.Reader, contentLength int64, encoding string, max int64) (raw, body []byte, decoded bool, err error) {
	codings, fe := contentCodings(encoding)
	if fe != nil {
		return nil, nil, false, fe
	}
	if raw, err = readLimited(r, contentLength, max); err != nil {
		return nil, nil, false, err
	}
	if len(codings) == 0 || len(raw) == 0 {
		return raw, raw, false, nil
	}
	body = raw
	// Codings are listed in the order they were applied: undo them last first.
	for i := len(codings) - 1; i >= 0; i-- {
		if body, err = decode(codings[i], body, max); err != nil {
			bufpool.Put(raw)
			return nil, nil, false, err
		}
	}
	return raw, body, true, nil
}

// readLimited reads r to its end, failing with 413 past max bytes. sizeHint
// (a Content-Length, or -1) sizes the first allocation, but at most
// maxPrealloc: memory grows with the bytes that really arrive, so a client
// that declares 16 MiB and sends slowly cannot make every connection hold
// 16 MiB at once. With an honest Content-Length the body is read into one
// buffer of its size, from bufpool: the caller gives it back
// with bufpool.Put (or an upstreamBody) when done.
func readLimited(r io.Reader, sizeHint, max int64) ([]byte, error) {
	size := int64(512)
	if sizeHint > 0 {
		// +1: room to see EOF without growing.
		size = min(sizeHint, maxPrealloc, max) + 1
	}
	buf := bufpool.Get(int(size))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // let append pick the growth
		}
		// Never read more than one byte past max, however far append grew.
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), max+1)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			bufpool.Put(buf)
			return nil, tooLarge(max)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			bufpool.Put(buf)
			return nil, err
		}
	}
}

// decode undoes one content coding, bounded by max decoded bytes.
func decode(coding string, in []byte, max int64) ([]byte, error) {
	dec, done, err := codingReader(coding, bytes.NewReader(in), max)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := readLimited(dec, int64(len(in))*4, max)
	if err != nil {
		return nil, decodeError(err, max)
	}
	return out, nil
}

// codingReader returns a reader undoing one content coding of src as its bytes are read,
// and the function that releases it. zstd's window is bounded by max; the caller bounds the
// decoded size.
func codingReader(coding string, src io.Reader, max int64) (io.Reader, func(), error) {
	switch coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, nil, decodeError(err, max)
		}
		return zr, func() {}, nil
	case "deflate":
		// HTTP's deflate is zlib (RFC 9110), but some clients send a raw
		// deflate stream: accept both, as browsers do for responses. A zlib
		// stream opens with a header whose 16 bits are a multiple of 31.
		br := bufio.NewReader(src)
		if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint(h[0])<<8|uint(h[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, nil, decodeError(err, max)
			}
			return zr, func() {}, nil
		}
		return flate.NewReader(br), func() {}, nil
	case "br":
		return brotli.NewReader(src), func() {}, nil
	case "zstd":
		zr, err := zstd.NewReader(src,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(uint64(max)+1))
		if err != nil {
			return nil, nil, decodeError(err, max)
		}
		return zr, zr.Close, nil
	}
	return nil, nil, errUnsupportedEncoding
}

// decodeError is the failure of a body that does not decode: 413 past max, else 400.
func decodeError(err error, max int64) error {
	var fe *failure
	if errors.As(err, &fe) {
		return fe
	}
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		return tooLarge(max)
	}
	return errBadEncoding
}
