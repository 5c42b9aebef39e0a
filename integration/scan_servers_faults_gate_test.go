package integration

import (
	"bytes"
	"net"
	"sync"
	"testing"
)

// faultGate is a TCP proxy to PostgreSQL that can hold every byte in both
// directions, as a network partition does: connections stay open and
// connects succeed, but nothing arrives until it opens again, when what
// was held goes through (TCP would retransmit it).
type faultGate struct {
	addr   string
	mu     sync.Mutex
	shut   chan struct{} // non-nil while holding; closed on open
	holdAt []byte        // a chunk to the database holding this shuts the gate first
}

func startFaultGate(t *testing.T, target string) *faultGate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &faultGate{addr: ln.Addr().String()}
	var conns sync.WaitGroup
	t.Cleanup(func() { g.open(); ln.Close(); conns.Wait() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			conns.Go(func() { g.pipe(out, in, true) })
			conns.Go(func() { g.pipe(in, out, false) })
		}
	}()
	return g
}

// pipe copies src to dst, each chunk once the gate is open, and closes
// both when either side ends. toServer is the direction holdAt watches.
func (g *faultGate) pipe(dst, src net.Conn, toServer bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		g.mu.Lock()
		if toServer && g.holdAt != nil && bytes.Contains(buf[:n], g.holdAt) {
			g.holdAt = nil
			if g.shut == nil {
				g.shut = make(chan struct{})
			}
		}
		shut := g.shut
		g.mu.Unlock()
		if shut != nil {
			<-shut
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// hold stops every byte until open.
func (g *faultGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut == nil {
		g.shut = make(chan struct{})
	}
}

// holdOn shuts the gate at the next chunk sent to the database that
// holds b, before that chunk goes through: the fault strikes at one chosen
// statement.
func (g *faultGate) holdOn(b []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holdAt = b
}

// held reports whether the gate is shut.
func (g *faultGate) held() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shut != nil
}

func (g *faultGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}
