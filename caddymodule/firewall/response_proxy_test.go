package firewall

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// waitBound bounds the waits of these tests: a failure bound, never a measure.
const waitBound = 20 * time.Second

// TestResponseCompressedStreamThroughReverseProxy: through reverse_proxy, the upstream is
// asked for identity whatever the client accepts; one that compresses anyway has its
// stream decoded as it comes: the client reads the first text before the upstream sends the
// rest, and the rest arrives sanitized, as identity.
func TestResponseCompressedStreamThroughReverseProxy(t *testing.T) {
	a := respAPIs[0]
	text := "Here is your chart: " + ex3 + " and that is all."
	head := a.events(tokens("Sure, the chart is ready. ", 4))
	head = head[:len(head)-2] // without the finish and [DONE]
	rest := a.events(tokens(text, 5))[1:]
	for _, coding := range []string{"gzip", "zstd", "br"} {
		t.Run(coding, func(t *testing.T) {
			ack := make(chan struct{})
			acceptEnc := make(chan string, 1)
			url := proxied(t, `, "response_on_malicious": "sanitize", "response_on_suspicious": "sanitize"`,
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					acceptEnc <- r.Header.Get("Accept-Encoding")
					enc, name := newEncoder(t, coding, w)
					w.Header().Set("Content-Type", a.ctype)
					w.Header().Set("Content-Encoding", name)
					send := func(evs []string) {
						for _, e := range evs {
							io.WriteString(enc, e)
							enc.Flush()
							w.(http.Flusher).Flush()
						}
					}
					send(head)
					select {
					case <-ack:
					case <-r.Context().Done():
						return
					}
					send(rest)
					enc.Close()
				}))
			req, _ := http.NewRequest("POST", url+a.path, strings.NewReader(a.reqBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
			ctx, cancel := context.WithTimeout(context.Background(), waitBound)
			defer cancel()
			res, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if got := <-acceptEnc; got != "identity" {
				t.Fatalf("the upstream was asked for %q", got)
			}
			if res.Header.Get("Content-Encoding") != "" {
				t.Fatalf("sent on as %q", res.Header.Get("Content-Encoding"))
			}
			// Read up to the first event with text; only then may the upstream go on. A
			// firewall that buffered would leave both waiting until the bound.
			var body strings.Builder
			br := bufio.NewReader(res.Body)
			for !strings.Contains(body.String(), `"content":"Sure`) {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("before the first text: %v; got %q", err, body.String())
				}
				body.WriteString(line)
			}
			close(ack)
			b, err := io.ReadAll(br)
			if err != nil {
				t.Fatalf("the stream did not end cleanly: %v", err)
			}
			body.Write(b)
			want := "Sure, the chart is ready. " + string(respFixture(t, ActionSanitize, ActionSanitize).fw.engine.ScanString(text).Sanitized)
			if got := deltaText(t, a, body.String()); got != want || !strings.HasSuffix(body.String(), "data: [DONE]\n\n") {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

// TestResponseBlockStopsUpstream: once a stream is blocked, the upstream's answer is no
// longer read: reverse_proxy closes it and the upstream sees its client gone, while the client
// gets the events before the block, the error event, and a clean end of the stream.
func TestResponseBlockStopsUpstream(t *testing.T) {
	a := respAPIs[0]
	for _, coding := range []string{"", "gzip"} {
		t.Run("coding "+coding, func(t *testing.T) {
			gone := make(chan int, 1)
			url := proxied(t, `, "response_on_malicious": "block", "response_on_suspicious": "block"`,
				endlessUpstream(t, a.ctype, coding, a.events([]string{"Sure. ", "Here is the plan. ", "Step one is easy. ", malText, " More"}), gone))
			req, _ := http.NewRequest("POST", url+a.path, strings.NewReader(a.reqBody))
			req.Header.Set("Content-Type", "application/json")
			ctx, cancel := context.WithTimeout(context.Background(), waitBound)
			defer cancel()
			res, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatalf("the stream did not end cleanly: %v; got %q", err, b)
			}
			body := string(b)
			ds := streamData(t, a.ctype, body)
			if len(ds) < 2 || !strings.Contains(ds[len(ds)-1], CodeResponseBlocked) || strings.Contains(body, "more") || strings.Contains(body, "[DONE]") {
				t.Fatalf("body:\n%s", body)
			}
			if !strings.HasPrefix(deltaText(t, a, body), "Sure. ") {
				t.Fatalf("the text before the block did not pass:\n%s", body)
			}
			waitGone(t, gone)
		})
	}
}

// endlessUpstream streams a compressed (coding, or identity when "") chat stream of benign
// events until its client is gone, then reports how many it sent on gone (-1: never gone).
func endlessUpstream(t *testing.T, ctype, coding string, first []string, gone chan<- int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		var out io.Writer = w
		var enc flushingEncoder
		if coding != "" {
			enc, _ = newEncoder(t, coding, w)
			w.Header().Set("Content-Encoding", coding)
			out = enc
		}
		send := func(e string) {
			io.WriteString(out, e)
			if enc != nil {
				enc.Flush()
			}
			w.(http.Flusher).Flush()
		}
		for _, e := range first {
			send(e)
		}
		more := respAPIs[0].events([]string{" and more"})[1]
		for i := 0; i < 2000; i++ {
			select {
			case <-r.Context().Done():
				gone <- i
				return
			case <-time.After(10 * time.Millisecond):
				send(more)
			}
		}
		gone <- -1
	})
}

// TestResponseCompressedClientGone: a client that leaves a compressed stream midway ends it
// upstream too, and the server goes on serving.
func TestResponseCompressedClientGone(t *testing.T) {
	a := respAPIs[0]
	gone := make(chan int, 1)
	url := proxied(t, `, "response_on_malicious": "block", "response_on_suspicious": "sanitize"`,
		endlessUpstream(t, a.ctype, "gzip", a.events([]string{"Sure. ", "Here is the plan. "})[:3], gone))
	for range 2 {
		req, _ := http.NewRequest("POST", url+a.path, strings.NewReader(a.reqBody))
		req.Header.Set("Content-Type", "application/json")
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		res, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(res.Body)
		for line := ""; !strings.Contains(line, "Sure. "); {
			if line, err = br.ReadString('\n'); err != nil {
				t.Fatalf("before the first text: %v", err)
			}
		}
		cancel()
		res.Body.Close()
		waitGone(t, gone)
	}
}

// TestResponseRefusedBeforeAnyByteThroughReverseProxy: a response refused at its header gets
// the whole error answer, and its upstream is not read on.
func TestResponseRefusedBeforeAnyByteThroughReverseProxy(t *testing.T) {
	a := respAPIs[0]
	gone := make(chan int, 1)
	url := proxied(t, `, "response_on_malicious": "log", "response_on_suspicious": "log"`,
		endlessUpstream(t, "text/plain", "", []string{"hello"}, gone))
	req, _ := http.NewRequest("POST", url+a.path, strings.NewReader(a.reqBody))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != respStatus || !strings.Contains(string(b), CodeResponseNotScanned) {
		t.Fatalf("status %d, %v, body %s", res.StatusCode, err, b)
	}
	waitGone(t, gone)
}

// waitGone waits for the upstream's report that its client went away (n >= 0), failing if
// its answer was read to its end (n < 0) or no report comes within waitBound.
func waitGone(t *testing.T, gone <-chan int) {
	t.Helper()
	select {
	case n := <-gone:
		if n < 0 {
			t.Fatal("the upstream's answer was read to its end: it was not stopped")
		}
	case <-time.After(waitBound):
		t.Fatal("the upstream did not see its client go")
	}
}
