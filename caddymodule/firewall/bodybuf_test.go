package firewall

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/promptwall/promptwall/llmreq"
)

func TestGetBodyBufSizes(t *testing.T) {
	for _, tc := range []struct{ size, cap int64 }{
		{1, 4096}, {4096, 4096}, {4097, 8192}, {1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20}, {2<<20 + 1, 2<<20 + 1},
	} {
		b := getBodyBuf(tc.size)
		if len(b) != 0 || int64(cap(b)) != tc.cap {
			t.Errorf("getBodyBuf(%d): len %d cap %d, want 0 and %d", tc.size, len(b), cap(b), tc.cap)
		}
		putBodyBuf(b)
	}
}

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
		buf := append(getBodyBuf(10), "hello body"...)
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
		buf := append(getBodyBuf(1<<16), bytes.Repeat([]byte{'a'}, 1<<16)...)
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
			raw := append(getBodyBuf(int64(len(body))), body...)
			lits, splices := req.AppendSplices(getBodyBuf(64), repl)
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
