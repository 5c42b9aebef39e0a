package firewall

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// compress encodes b with one content coding ("deflate-raw" is a raw
// deflate stream, which some clients send as deflate).
func compress(t testing.TB, coding string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "deflate-raw":
		w, err = flate.NewWriter(&buf, flate.DefaultCompression)
	case "br":
		w = brotli.NewWriter(&buf)
	case "zstd":
		w, err = zstd.NewWriter(&buf)
	default:
		t.Fatalf("unknown coding %s", coding)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEncodedBodies: every supported coding is decoded and scanned. A
// blocked one never reaches the upstream; a sanitized one goes on as the
// rewritten identity body; a safe or logged one goes on as the very bytes
// the client sent, still encoded.
func TestEncodedBodies(t *testing.T) {
	block := newFixture(t, &Firewall{})
	shadow := newFixture(t, &Firewall{OnMalicious: "log"})
	malicious := []byte(chat(msg("user", malText)))
	suspicious := []byte(chat(msg("user", suspText)))
	sanitized := chat(msg("user", suspSan))

	for _, coding := range []string{"gzip", "deflate", "deflate-raw", "br", "zstd"} {
		header := strings.TrimSuffix(coding, "-raw")
		t.Run(coding, func(t *testing.T) {
			req := func(b []byte) *http.Request {
				r := post("/v1/chat/completions", string(compress(t, coding, b)))
				r.Header.Set("Content-Encoding", header)
				return r
			}
			res := block.do(t, req(malicious))
			if res.up.called || res.rec.Code != 400 || !strings.Contains(res.rec.Body.String(), CodePromptInjection) {
				t.Fatalf("malicious %s body: %d %s", coding, res.rec.Code, res.rec.Body)
			}

			res = block.do(t, req(suspicious))
			if !res.up.called || string(res.up.body) != sanitized {
				t.Fatalf("suspicious %s body: upstream got %q", coding, res.up.body)
			}
			if res.up.header.Get("Content-Encoding") != "" || res.up.header.Get("Content-Length") != strconv.Itoa(len(sanitized)) {
				t.Errorf("sanitized body headers %v", res.up.header)
			}

			enc := compress(t, coding, malicious)
			r := post("/v1/chat/completions", string(enc))
			r.Header.Set("Content-Encoding", header)
			res = shadow.do(t, r)
			if !res.up.called || !bytes.Equal(res.up.body, enc) || res.up.header.Get("Content-Encoding") != header {
				t.Fatalf("logged %s body was not forwarded as sent", coding)
			}
			if res.up.header.Get(HeaderVerdict) != "malicious" {
				t.Errorf("logged body verdict %q", res.up.header.Get(HeaderVerdict))
			}
		})
	}
}

// TestStackedEncodings: "gzip, br" means gzip then br; both are undone.
func TestStackedEncodings(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	b := compress(t, "br", compress(t, "gzip", []byte(chat(msg("user", malText)))))
	r := post("/v1/chat/completions", string(b))
	r.Header.Set("Content-Encoding", "gzip, BR")
	res := fx.do(t, r)
	if res.up.called || res.rec.Code != 400 {
		t.Fatalf("stacked encodings: %d %s", res.rec.Code, res.rec.Body)
	}
}

// TestDecodedSizeBounded: a small compressed body that inflates past
// max_body is refused with 413 for every coding, without decoding it all.
func TestDecodedSizeBounded(t *testing.T) {
	fx := newFixture(t, &Firewall{MaxBody: 1 << 20})
	huge := []byte(chat(msg("user", strings.Repeat("a", 8<<20))))
	for _, coding := range []string{"gzip", "deflate", "br", "zstd"} {
		t.Run(coding, func(t *testing.T) {
			enc := compress(t, coding, huge)
			if len(enc) > 1<<20 {
				t.Fatalf("test body does not compress: %d", len(enc))
			}
			r := post("/v1/chat/completions", string(enc))
			r.Header.Set("Content-Encoding", coding)
			res := fx.do(t, r)
			if res.up.called || res.rec.Code != 413 {
				t.Fatalf("got %d %s", res.rec.Code, res.rec.Body)
			}
		})
	}
}

// TestReadLimited: exactly max bytes pass and one more is 413, whatever
// the Content-Length hint says and however the reader splits the bytes.
func TestReadLimited(t *testing.T) {
	for _, hint := range []int64{-1, 0, 1, 99, 100, 101, 1 << 30} {
		for _, oneByte := range []bool{false, true} {
			for _, n := range []int{0, 1, 99, 100, 101, 5000} {
				var r io.Reader = bytes.NewReader(bytes.Repeat([]byte{'x'}, n))
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				got, err := readLimited(r, hint, 100)
				if n > 100 {
					if fe, ok := err.(*failure); !ok || fe.status != 413 {
						t.Errorf("hint %d, %d bytes: err %v, want 413", hint, n, err)
					}
					continue
				}
				if err != nil || len(got) != n {
					t.Errorf("hint %d, %d bytes: got %d bytes, err %v", hint, n, len(got), err)
				}
			}
		}
	}
	// A broken connection is a read error, not a refusal.
	if _, err := readLimited(iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader("abc"))), 3, 100); err == nil {
		t.Error("read error swallowed")
	}
}
