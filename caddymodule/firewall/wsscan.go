package firewall

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/filetext"
	"github.com/promptwall/promptwall/llmreq"
)

var (
	errWSBlocked  = errors.New("prompt firewall: a WebSocket message was blocked")
	errWSProtocol = errors.New("prompt firewall: a WebSocket frame cannot be scanned")
)

// WebSocket opcodes (RFC 6455 5.2).
const (
	wsContinuation = 0x0
	wsText         = 0x1
	wsBinary       = 0x2
)

// wsScanner reads the frames a client sends over a WebSocket and hands
// them on unchanged, one message at a time: the frames of a data message
// are held until the message is whole and scanned; control frames go on at
// once. A message the scan blocks, or any frame it cannot read (unmasked,
// compressed, a message over max_body), ends the stream with an error, so
// the proxy closes the connection: nothing unscanned gets through.
type wsScanner struct {
	src  io.Reader
	f    *Firewall
	r    *http.Request
	out  []byte // frames ready to hand on
	held []byte // the frames of the message being read, as sent
	msg  []byte // its payload, unmasked
	op   byte   // its opcode; 0 between messages
	err  error
}

func newWSScanner(src io.Reader, f *Firewall, r *http.Request) *wsScanner {
	return &wsScanner{src: src, f: f, r: r}
}

func (s *wsScanner) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.err = s.frame()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	if len(s.out) == 0 {
		s.out = nil
	}
	return n, nil
}

// frame reads one frame.
func (s *wsScanner) frame() error {
	var hdr [14]byte
	if _, err := io.ReadFull(s.src, hdr[:2]); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF && len(s.held) > 0 {
			return errWSProtocol
		}
		return err
	}
	fin, rsv, op := hdr[0]&0x80 != 0, hdr[0]&0x70, hdr[0]&0x0f
	masked, n := hdr[1]&0x80 != 0, uint64(hdr[1]&0x7f)
	size := 2
	switch n {
	case 126:
		size += 2
	case 127:
		size += 8
	}
	if masked {
		size += 4
	}
	if _, err := io.ReadFull(s.src, hdr[2:size]); err != nil {
		return errWSProtocol
	}
	switch n {
	case 126:
		n = uint64(binary.BigEndian.Uint16(hdr[2:4]))
	case 127:
		n = binary.BigEndian.Uint64(hdr[2:10])
	}
	// A client's frames are masked (RFC 6455 5.1); compression was not
	// offered (RSV1), and no other extension is known.
	if !masked || rsv != 0 {
		return errWSProtocol
	}
	control := op >= 0x8
	if control && (n > 125 || !fin) || op > wsBinary && !control {
		return errWSProtocol
	}
	if !control && (n > uint64(s.f.MaxBody) || uint64(len(s.msg))+n > uint64(s.f.MaxBody)) {
		return errWSProtocol
	}
	if control {
		// Handed on only once whole: never a frame the client did not
		// finish.
		f, err := appendN(append([]byte(nil), hdr[:size]...), s.src, n)
		if err != nil {
			return errWSProtocol
		}
		s.out = append(s.out, f...)
		return nil
	}
	s.held = append(s.held, hdr[:size]...)
	at := len(s.held)
	var err error
	if s.held, err = appendN(s.held, s.src, n); err != nil {
		return errWSProtocol
	}
	switch {
	case op == wsContinuation && s.op == 0, op != wsContinuation && s.op != 0:
		return errWSProtocol // a continuation of nothing, or a message inside one
	case op != wsContinuation:
		s.op = op
	}
	key := hdr[size-4 : size]
	for i, b := range s.held[at:] {
		s.msg = append(s.msg, b^key[i&3])
	}
	if !fin {
		return nil
	}
	if s.blocked() {
		return errWSBlocked
	}
	s.out = append(s.out, s.held...)
	s.held, s.msg, s.op = s.held[:0], s.msg[:0], 0
	return nil
}

// blocked scans the message just completed: JSON (every Realtime and Live
// event) as a request to the connection's path, any other text as one
// text; a binary message that is not JSON is media. It reports whether the
// action for its verdict is block (sanitize too: frames are not
// rewritten). The request's headers and vars are not touched: they went
// upstream with the handshake, and others may read them now.
func (s *wsScanner) blocked() bool {
	var req *llmreq.Request
	switch {
	case looksJSON(s.msg):
		var err error
		if req, err = llmreq.Parse(s.r.URL.Path, s.msg); err != nil {
			return true // not scannable: closed
		}
	case s.op == wsText:
		if !utf8.Valid(s.msg) {
			return true // RFC 6455 8.1: the peer fails the connection anyway
		}
		req = textUnit(0, "message", string(s.msg), 0, true).req
	case filetext.MostlyText(s.msg):
		// A binary message that is text a reader would take as such.
		req = textUnit(0, "message", strings.ToValidUTF8(string(s.msg), "\uFFFD"), 0, true).req
	default:
		return false
	}
	defer req.Release() // nothing keeps the texts past the verdict
	var client uint64
	if s.f.cache != nil {
		client = s.f.cache.clientKey(s.r)
	}
	out := s.f.scan(req, client)
	if out.refusal != nil {
		return true // unreadable: closed
	}
	act := out.act
	if act == doSanitize {
		act = doBlock // frames are not rewritten
	}
	action := act.name()
	if out.verdict != engine.Safe {
		s.f.logFlagged(s.r, req, out, action)
	}
	s.f.metrics.request(phaseRequest, s.f.hosts.of(s.r), out.verdict, action)
	return act == doBlock
}

// wsWriter is the ResponseWriter the proxy of a scanned WebSocket gets:
// when it takes the connection over (Hijack), the client's side of it is
// read through a wsScanner.
type wsWriter struct {
	http.ResponseWriter
	f *Firewall
	r *http.Request
}

func (w *wsWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *wsWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The reader of brw holds what the client sent past the handshake: it
	// is read first, through the scanner like the rest.
	c := &wsConn{Conn: conn, r: newWSScanner(brw.Reader, w.f, w.r)}
	return c, bufio.NewReadWriter(bufio.NewReader(c), brw.Writer), nil
}

// wsConn is a hijacked connection whose reads go through a wsScanner.
type wsConn struct {
	net.Conn
	r io.Reader
}

func (c *wsConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// wsBody is the body of an HTTP/2 extended CONNECT: the client's side of
// the WebSocket, read through a wsScanner.
type wsBody struct {
	io.Reader
	io.Closer
}

// scanWebSocket sets r and w up so that the client's messages are
// scanned: no compression is offered upstream (its frames could not be
// read), and the client's stream is read through a wsScanner, on the
// hijacked connection (HTTP/1.1) or the request body (HTTP/2, HTTP/3).
func (f *Firewall) scanWebSocket(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	r.Header.Del("Sec-Websocket-Extensions")
	if r.Method == http.MethodConnect {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = wsBody{newWSScanner(r.Body, f, r), r.Body}
		}
		return w
	}
	return &wsWriter{ResponseWriter: w, f: f, r: r}
}

// appendN appends the next n bytes of src to dst, growing it as they come:
// a frame's declared length is no reason to allocate it before its bytes
// arrive.
func appendN(dst []byte, src io.Reader, n uint64) ([]byte, error) {
	for n > 0 {
		k := int(min(n, 32<<10))
		at := len(dst)
		dst = append(dst, make([]byte, k)...)
		if _, err := io.ReadFull(src, dst[at:]); err != nil {
			return dst, err
		}
		n -= uint64(k)
	}
	return dst, nil
}
