package firewall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/promptwall/promptwall/bufpool"
	"github.com/promptwall/promptwall/llmreq"
)

// watchRecycle records the buffers upstreamBody gives back.
func watchRecycle(t *testing.T) *[][]byte {
	var mu sync.Mutex
	var got [][]byte
	old := recycle
	recycle = func(b []byte) {
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
	}
	t.Cleanup(func() { recycle = old })
	return &got
}

func TestUpstreamBodyRecyclesAfterHandlerAndClose(t *testing.T) {
	for _, closeFirst := range []bool{false, true} {
		got := watchRecycle(t)
		buf := append(bufpool.Get(10), "hello body"...)
		ub := newUpstreamBody(buf)
		if b, err := io.ReadAll(ub); err != nil || string(b) != "hello body" {
			t.Fatalf("read %q, %v", b, err)
		}
		if closeFirst {
			ub.Close()
		} else {
			ub.release()
		}
		if len(*got) != 0 {
			t.Fatalf("closeFirst=%v: buffer recycled while still referenced", closeFirst)
		}
		if closeFirst {
			ub.release()
		} else {
			ub.Close()
		}
		ub.Close() // a second Close must not give the buffer back twice
		if len(*got) != 1 || &(*got)[0][:1][0] != &buf[:1][0] {
			t.Fatalf("closeFirst=%v: %d buffers recycled, want the body's one", closeFirst, len(*got))
		}
		if n, err := ub.Read(make([]byte, 4)); n != 0 || !errors.Is(err, http.ErrBodyReadAfterClose) {
			t.Fatalf("read after close: %d, %v", n, err)
		}
	}
}

// TestUpstreamBodyCloseDuringRead closes the body while another goroutine
// reads it, as an HTTP transport may, then scribbles over the buffer as its
// next user would: no read may return the scribbles (run with -race).
func TestUpstreamBodyCloseDuringRead(t *testing.T) {
	got := watchRecycle(t)
	for i := 0; i < 200; i++ {
		buf := append(bufpool.Get(1<<16), bytes.Repeat([]byte{'a'}, 1<<16)...)
		ub := newUpstreamBody(buf)
		done := make(chan error)
		go func() {
			p := make([]byte, 64)
			for {
				n, err := ub.Read(p)
				if bytes.IndexByte(p[:n], 'X') >= 0 {
					done <- errors.New("read bytes of the buffer's next user")
					return
				}
				if err != nil {
					done <- nil
					return
				}
			}
		}()
		ub.release()
		ub.Close()
		for k := range buf {
			buf[k] = 'X'
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if len(*got) != 200 {
		t.Fatalf("%d buffers recycled, want 200", len(*got))
	}
}

// TestSpliceBody: a spliced body reads as the original's bytes with the
// splices' literals in their place, whatever the reads' sizes, and gives
// both its buffers back once the handler is done and it is closed.
func TestSpliceBody(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"one"},{"role":"user","content":"two"}],"n":1}`
	req, err := llmreq.Parse("/v1/chat/completions", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, repl := range []map[int]string{
		{0: "ONE \"1\""},
		{1: ""},
		{0: "a", 1: strings.Repeat("b\n", 3000)},
		{0: "one"}, // unchanged: no splice
	} {
		want := req.Rewrite(repl)
		for _, chunk := range []int{1, 3, 17, 4096, 1 << 16} {
			got := watchRecycle(t)
			raw := append(bufpool.Get(len(body)), body...)
			lits, splices := req.AppendSplices(bufpool.Get(64), repl, nil)
			ub, n := spliceBody(raw, lits, splices)
			if n != len(want) {
				t.Fatalf("%v: length %d, want %d", repl, n, len(want))
			}
			var out []byte
			p := make([]byte, chunk)
			for {
				k, err := ub.Read(p)
				out = append(out, p[:k]...)
				if err == io.EOF {
					break
				}
				if err != nil || k == 0 {
					t.Fatalf("%v, reads of %d: %d, %v", repl, chunk, k, err)
				}
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("%v, reads of %d:\n got  %q\n want %q", repl, chunk, out, want)
			}
			ub.release()
			if len(*got) != 0 {
				t.Fatal("buffers recycled before Close")
			}
			ub.Close()
			if len(*got) != 2 || &(*got)[0][:1][0] != &raw[:1][0] || cap((*got)[1]) != cap(lits) {
				t.Fatalf("%d buffers recycled, want the body's and the literals'", len(*got))
			}
		}
	}
}

// TestSanitizeKeepsLiteral: a long text sanitized in one round goes to the
// upstream as its literal's own bytes, escapes and all, with only the
// replaced span written anew; its value is what rewriting the whole
// literal gives. So for a body that came gzip'd, rewritten decoded.
func TestSanitizeKeepsLiteral(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	filler := strings.Repeat(`line \"q\" caf\u00e9 \ud83d\ude00 na\u00efve\n`, 900)
	susp, _ := json.Marshal(suspText)
	lit := filler + string(susp[1:len(susp)-1]) + " " + filler
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"` + lit + `"}]}`
	var text string
	if err := json.Unmarshal([]byte(`"`+lit+`"`), &text); err != nil {
		t.Fatal(err)
	}
	wantText := strings.Replace(text, suspText, suspSan, 1)
	for _, coding := range []string{"", "gzip"} {
		req := post("/v1/chat/completions", body)
		if coding != "" {
			req = post("/v1/chat/completions", string(compress(t, coding, []byte(body))))
			req.Header.Set("Content-Encoding", coding)
		}
		res := fx.do(t, req)
		var got struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if !res.up.called || json.Unmarshal(res.up.body, &got) != nil || len(got.Messages) != 1 || got.Messages[0].Content != wantText {
			t.Fatalf("%q: the upstream got %d bytes, not the sanitized text", coding, len(res.up.body))
		}
		// The literal's own bytes on both sides of the replaced span.
		san, _ := json.Marshal(suspSan)
		want := strings.Replace(body, string(susp[1:len(susp)-1]), string(san[1:len(san)-1]), 1)
		if string(res.up.body) != want {
			t.Fatalf("%q: the upstream got %.200q..., want the literal with one span replaced", coding, res.up.body)
		}
		if res.up.header.Get("Content-Length") != strconv.Itoa(len(want)) {
			t.Fatalf("%q: Content-Length %s, body %d bytes", coding, res.up.header.Get("Content-Length"), len(want))
		}
	}
}

// TestConcurrentLongTexts: a long text's decoded value and its sanitized
// copy go back to their pools when the request is done
// (llmreq.Request.Release, engine.Cover.Release); with many requests at
// once (run with -race), each upstream still gets what its request sent
// alone gives, whatever another request wrote into reused memory. The
// texts are safe, sanitized in a plain body (spliced), in a gzip'd one
// (rewritten with the edits), and sanitized with an invalid byte in the
// literal, which is then written whole from the copy.
func TestConcurrentLongTexts(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	susp, _ := json.Marshal(suspText)
	type request struct {
		body, want []byte
		coding     string
	}
	var reqs []request
	for i := range 16 {
		line := fmt.Sprintf(`line %d \"q\" caf\u00e9 \ud83d\ude00\n`, i)
		lit := strings.Repeat(line, 1500+40*i)
		kind := i % 4
		if kind > 0 {
			lit += string(susp[1:len(susp)-1]) + " " + strings.Repeat(line, 900+30*i)
		}
		if kind == 3 {
			lit = "\xff" + lit
		}
		r := request{body: []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"` + lit + `"}]}`)}
		if kind == 2 {
			r.body, r.coding = compress(t, "gzip", r.body), "gzip"
		}
		reqs = append(reqs, r)
	}
	send := func(r request) result {
		req := post("/v1/chat/completions", string(r.body))
		if r.coding != "" {
			req.Header.Set("Content-Encoding", r.coding)
		}
		return fx.do(t, req)
	}
	for i := range reqs {
		res := send(reqs[i])
		reqs[i].want = res.up.body
		sanitized := bytes.Contains(res.up.body, []byte("[removed: instruction_override]"))
		if !res.up.called || bytes.Contains(res.up.body, susp[1:len(susp)-1]) || sanitized != (i%4 > 0) {
			t.Fatalf("request %d alone: the upstream got %.200q", i, res.up.body)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 3 * len(reqs) {
				i := (g*5 + k) % len(reqs)
				if got := send(reqs[i]).up.body; !bytes.Equal(got, reqs[i].want) {
					errs <- fmt.Sprintf("request %d: the upstream got %d bytes, %d alone", i, len(got), len(reqs[i].want))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
