package firewall

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
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
