package firewall

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// streamCodings are the content codings an upstream may compress a stream with; "deflate-raw"
// is a raw deflate stream sent as deflate.
var streamCodings = []string{"gzip", "zstd", "br", "deflate", "deflate-raw"}

// flushingEncoder is a compressor that can end a chunk so that all bytes written so far
// decode, as a streaming server flushes after each event.
type flushingEncoder interface {
	io.WriteCloser
	Flush() error
}

func newEncoder(t testing.TB, coding string, w io.Writer) (flushingEncoder, string) {
	t.Helper()
	switch coding {
	case "gzip":
		return gzip.NewWriter(w), coding
	case "deflate":
		return zlib.NewWriter(w), coding
	case "deflate-raw":
		fw, err := flate.NewWriter(w, flate.DefaultCompression)
		if err != nil {
			t.Fatal(err)
		}
		return fw, "deflate"
	case "br":
		return brotli.NewWriter(w), coding
	case "zstd":
		zw, err := zstd.NewWriter(w)
		if err != nil {
			t.Fatal(err)
		}
		return zw, coding
	}
	t.Fatalf("unknown coding %s", coding)
	return nil, ""
}

// compressedChunks compresses events, each flushed into its own chunk, and the stream's end
// as the last chunk.
func compressedChunks(t testing.TB, coding string, events []string) ([]string, string) {
	t.Helper()
	var buf bytes.Buffer
	enc, name := newEncoder(t, coding, &buf)
	var out []string
	for _, e := range events {
		if _, err := enc.Write([]byte(e)); err != nil {
			t.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf.String())
		buf.Reset()
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return append(out, buf.String()), name
}

// TestResponseCompressedStreamDecodedAsItComes: each compressed chunk's events reach the
// client within the Write that brought them, decoded and sanitized, with the stream's end.
func TestResponseCompressedStreamDecodedAsItComes(t *testing.T) {
	fx := respFixture(t, ActionSanitize, ActionSanitize)
	a := respAPIs[0]
	text := "Here is your chart: " + ex3 + " and that is all."
	want := string(fx.fw.engine.ScanString(text).Sanitized)
	for _, coding := range streamCodings {
		t.Run(coding, func(t *testing.T) {
			evs := a.events(tokens(text, 5))
			chunks, name := compressedChunks(t, coding, evs)
			req := withVars(post(a.path, a.reqBody))
			rec := &flushRec{ResponseRecorder: httptest.NewRecorder()}
			var during []int // the client's body length after each chunk's Write
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", a.ctype)
				w.Header().Set("Content-Encoding", name)
				w.WriteHeader(200)
				for _, c := range chunks {
					if _, err := io.WriteString(w, c); err != nil {
						return err
					}
					during = append(during, rec.Body.Len())
				}
				return nil
			})
			if err := fx.fw.ServeHTTP(rec, req, next); err != nil {
				t.Fatal(err)
			}
			if rec.Code != 200 || rec.Header().Get("Content-Encoding") != "" || rec.Header().Get("Content-Length") != "" {
				t.Fatalf("status %d headers %v", rec.Code, rec.Header())
			}
			// The opening event, which holds no text, went out within the first Write.
			if during[0] != len(evs[0]) || !strings.HasPrefix(rec.Body.String(), evs[0]) {
				t.Fatalf("after the first chunk the client had %d bytes, want the %d of the first event", during[0], len(evs[0]))
			}
			// The text's events went out before the upstream sent its last chunk.
			if n := during[len(during)-3]; n <= len(evs[0]) || n >= rec.Body.Len() {
				t.Fatalf("client's body %v after each chunk, %d at the end", during, rec.Body.Len())
			}
			body := rec.Body.String()
			if got := deltaText(t, a, body); got != want || strings.Contains(body, "collect.example") || !strings.HasSuffix(body, "data: [DONE]\n\n") {
				t.Fatalf("got %q, want %q; body:\n%s", got, want, body)
			}
		})
	}
}

// TestResponseCompressedWholeDecoded: a compressed JSON answer goes on decoded, with its
// new length.
func TestResponseCompressedWholeDecoded(t *testing.T) {
	fx := respFixture(t, ActionSanitize, ActionSanitize)
	a := respAPIs[2]
	text := "Here is your chart: " + ex3
	want := a.whole(string(fx.fw.engine.ScanString(text).Sanitized))
	for _, coding := range streamCodings {
		chunks, name := compressedChunks(t, coding, []string{a.whole(text)})
		rec, _ := serveResp(t, fx, a, 200, map[string]string{"Content-Type": "application/json", "Content-Encoding": name}, chunks)
		if rec.Body.String() != want || rec.Header().Get("Content-Length") != itoa(len(want)) || rec.Header().Get("Content-Encoding") != "" {
			t.Fatalf("%s: headers %v body %s", coding, rec.Header(), rec.Body.String())
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestResponseCompressedBrokenRefused: a compressed stream that is cut, corrupted or padded
// after its end is refused where it breaks: the events before went on, the error event ends
// the stream, and no byte of the undecodable part passes.
func TestResponseCompressedBrokenRefused(t *testing.T) {
	fx := respFixture(t, ActionLog, ActionLog)
	a := respAPIs[0]
	evs := a.events([]string{"Hello", " there", " friend"})
	for _, coding := range streamCodings {
		chunks, name := compressedChunks(t, coding, evs)
		hdr := map[string]string{"Content-Type": a.ctype, "Content-Encoding": name}
		last := chunks[2] // the second delta's compressed bytes
		for _, tc := range []struct {
			name   string
			chunks []string
		}{
			{"cut", chunks[:2]},
			{"cut inside a chunk", append(chunks[:2:2], last[:len(last)/2])},
			{"corrupt", append(chunks[:2:2], strings.Repeat("\xff", len(last)))},
			{"after its end", append(append([]string(nil), chunks...), strings.Repeat("\xff", 16))},
		} {
			rec, _ := serveResp(t, fx, a, 200, hdr, tc.chunks)
			body := rec.Body.String()
			if rec.Code != 200 || !strings.HasPrefix(body, evs[0]+evs[1]) || !strings.HasSuffix(body, CodeResponseNotScanned+`"}}`+"\n\n") {
				t.Fatalf("%s %s: status %d body:\n%s", coding, tc.name, rec.Code, body)
			}
			if tc.name != "after its end" && strings.Contains(body, "[DONE]") {
				t.Fatalf("%s %s: the stream's end passed:\n%s", coding, tc.name, body)
			}
			if strings.Count(body, "data: ") != map[bool]int{true: len(evs) + 1, false: 3}[tc.name == "after its end"] {
				t.Fatalf("%s %s: events:\n%s", coding, tc.name, body)
			}
		}
	}
}

// TestResponseCompressedBombRefused: a small compressed answer that inflates past max_body
// is refused, not decoded on.
func TestResponseCompressedBombRefused(t *testing.T) {
	fx := newFixture(t, &Firewall{ResponseOnMalicious: ActionLog, ResponseOnSuspicious: ActionLog, MaxBody: 64 << 10})
	a := respAPIs[0]
	ev := `data: {"choices":[{"index":0,"delta":{}}]}` + "\n\n"
	for _, coding := range streamCodings {
		chunks, name := compressedChunks(t, coding, []string{strings.Repeat(ev, 1<<20/len(ev))})
		rec, _ := serveResp(t, fx, a, 200, map[string]string{"Content-Type": a.ctype, "Content-Encoding": name}, chunks)
		if body := rec.Body.String(); len(body) > 64<<10+1024 || !strings.Contains(body, "over max_body") {
			t.Fatalf("%s: %d compressed bytes gave %d bytes ending %q", coding, len(strings.Join(chunks, "")), len(body), body[max(0, len(body)-200):])
		}
	}
}

// TestResponseDecoderEndsWithTheHandler: however the handler ends (its upstream gone
// midway: reverse_proxy's panic; or an error), the decoders stop, and no goroutine stays.
func TestResponseDecoderEndsWithTheHandler(t *testing.T) {
	fx := respFixture(t, ActionSanitize, ActionSanitize)
	a := respAPIs[0]
	chunks, _ := compressedChunks(t, "gzip", a.events(tokens(benign, 5)))
	serve := func(end func() error) (rw *respWriter, panicked any) {
		req := withVars(post(a.path, a.reqBody))
		next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			rw = w.(*respWriter)
			w.Header().Set("Content-Type", a.ctype)
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, chunks[0])
			io.WriteString(w, chunks[1])
			return end()
		})
		defer func() { panicked = recover() }()
		fx.fw.ServeHTTP(httptest.NewRecorder(), req, next)
		return rw, nil
	}
	base := runtime.NumGoroutine()
	const n = 200
	for i := 0; i < n; i++ {
		rw, p := serve(func() error { panic(http.ErrAbortHandler) })
		if p != http.ErrAbortHandler {
			t.Fatalf("the upstream's abort became %v", p)
		}
		if rw.dec == nil || !rw.dec.ended {
			t.Fatal("the decoders still run after the handler panicked")
		}
		rw, _ = serve(func() error { return io.ErrUnexpectedEOF })
		if !rw.dec.ended || !rw.done {
			t.Fatalf("the decoders still run after the handler's error (done %v)", rw.done)
		}
	}
	// The coroutines' goroutines exit once stopped: their count returns to the base (other
	// tests' goroutines may come and go, far fewer than n).
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+n/4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before %d requests", runtime.NumGoroutine(), base, 2*n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// FuzzResponseDecoder: decoding a body as it comes, in any chunks, never panics, and what it
// decodes is what decoding the whole body gives.
func FuzzResponseDecoder(f *testing.F) {
	codings := []string{"gzip", "zstd", "br", "deflate"}
	for i, c := range streamCodings {
		chunks, _ := compressedChunks(f, c, respAPIs[0].events([]string{"Hello", " there"}))
		f.Add(byte(i%len(codings)), []byte(strings.Join(chunks, "")), uint16(7))
	}
	f.Fuzz(func(t *testing.T, which byte, in []byte, step uint16) {
		coding := codings[int(which)%len(codings)]
		const max = 1 << 20
		var got []byte
		d := newRespDecoder([]string{coding}, max, func(b []byte) bool {
			got = append(got, b...)
			return true
		})
		defer d.release()
		n := int(step%64) + 1
		var err error
		for p := in; len(p) > 0 && err == nil; {
			k := min(n, len(p))
			err = d.write(p[:k])
			p = p[k:]
		}
		if err == nil {
			err = d.close()
		}
		whole, werr := decode(coding, in, max)
		switch {
		case err == nil && werr != nil:
			t.Fatalf("%s: decoded as it came, not whole: %v", coding, werr)
		case err == nil && !bytes.Equal(got, whole):
			t.Fatalf("%s: decoded as it came %q, whole %q", coding, got, whole)
		case err != nil && werr == nil && !strings.Contains(err.Error(), "after the end"):
			t.Fatalf("%s: decoded whole, not as it came: %v", coding, err)
		}
		if err != nil && !d.ended {
			d.release()
			if !d.ended {
				t.Fatal("the decoders run on after release")
			}
		}
	})
}
