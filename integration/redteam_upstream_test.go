package integration

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingLLM is the red-team suite's upstream: it reads every request the
// way the most lenient real provider would and records every text it could
// hand to a model (requestViews). A case is a bypass when a recorded text
// carries its payload.
type recordingLLM struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []recordedRequest
}

type recordedRequest struct {
	Method, Path string
	Header       http.Header
	Trailer      http.Header
	Body         []byte // as received, before any decoding
	Views        []string
}

func newRecordingLLM(t *testing.T) *recordingLLM {
	u := &recordingLLM{}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *recordingLLM) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests = nil
}

func (u *recordingLLM) recorded() []recordedRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]recordedRequest(nil), u.requests...)
}

func (u *recordingLLM) record(r *http.Request, body []byte, views []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests = append(u.requests, recordedRequest{
		Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Trailer: r.Trailer.Clone(),
		Body: body, Views: views,
	})
}

func (u *recordingLLM) serve(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		u.serveWebSocket(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxDecoded))
	u.record(r, body, requestViews(r.Header, body))
	switch r.URL.Path {
	case "/api/chat":
		writeJSON(w, `{"model":"llama3","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"pong"},"done":true}`)
	case "/api/generate":
		writeJSON(w, `{"model":"llama3","created_at":"2026-01-01T00:00:00Z","response":"pong","done":true}`)
	default:
		writeJSON(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}]}`)
	}
}

// serveWebSocket accepts the upgrade as a Realtime or Live server would and
// records each client text frame, answering each with a text frame so the
// client knows it was read.
func (u *recordingLLM) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Sec-WebSocket-Key")
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Accept: " + base64.StdEncoding.EncodeToString(h[:]) + "\r\n\r\n")
	rw.Flush()
	u.record(r, nil, nil)
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	for {
		op, payload, err := readWSFrame(rw.Reader)
		if err != nil || op == 8 {
			return
		}
		if op != 1 {
			continue
		}
		u.mu.Lock()
		last := &u.requests[len(u.requests)-1]
		last.Views = append(last.Views, textViews(payload, 0)...)
		u.mu.Unlock()
		rw.Write(wsFrame(1, []byte(`{"type":"ack"}`), false))
		rw.Flush()
	}
}

// readWSFrame reads one unfragmented frame (RFC 6455 section 5.2), masked
// or not.
func readWSFrame(r *bufio.Reader) (op byte, payload []byte, err error) {
	var hdr [2]byte
	if _, err = io.ReadFull(r, hdr[:]); err != nil {
		return
	}
	op = hdr[0] & 0x0f
	n := uint64(hdr[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(r, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(r, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 1<<20 {
		return 0, nil, io.ErrShortBuffer
	}
	var mask [4]byte
	masked := hdr[1]&0x80 != 0
	if masked {
		if _, err = io.ReadFull(r, mask[:]); err != nil {
			return
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(r, payload); err != nil {
		return
	}
	if masked {
		for i := range payload {
			payload[i] ^= mask[i%4]
		}
	}
	return op, payload, nil
}

// wsFrame builds one final frame; clients must mask theirs.
func wsFrame(op byte, payload []byte, mask bool) []byte {
	var b bytes.Buffer
	b.WriteByte(0x80 | op)
	m := byte(0)
	if mask {
		m = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b.WriteByte(m | byte(n))
	case n < 1<<16:
		b.WriteByte(m | 126)
		binary.Write(&b, binary.BigEndian, uint16(n))
	default:
		b.WriteByte(m | 127)
		binary.Write(&b, binary.BigEndian, uint64(n))
	}
	if !mask {
		b.Write(payload)
		return b.Bytes()
	}
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	b.Write(key[:])
	for i, c := range payload {
		b.WriteByte(c ^ key[i%4])
	}
	return b.Bytes()
}
