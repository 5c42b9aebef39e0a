package firewall

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// wsFrame encodes one client frame: masked (unless unmasked), with flags
// the first byte's high bits.
func wsFrame(fin bool, op byte, payload string, opts ...string) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	for _, o := range opts {
		if o == "rsv1" {
			b0 |= 0x40
		}
	}
	masked := true
	for _, o := range opts {
		if o == "unmasked" {
			masked = false
		}
	}
	out := []byte{b0}
	mbit := byte(0)
	if masked {
		mbit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		out = append(out, mbit|byte(n))
	case n < 1<<16:
		out = append(out, mbit|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, mbit|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if !masked {
		return append(out, payload...)
	}
	key := []byte{0x12, 0x34, 0x56, 0x78}
	out = append(out, key...)
	for i := 0; i < len(payload); i++ {
		out = append(out, payload[i]^key[i&3])
	}
	return out
}

func realtimeItem(text string) string {
	return `{"type": "conversation.item.create", "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ` + strconv.Quote(text) + `}]}}`
}

// TestWSScanner: messages go on byte for byte once whole and scanned;
// the first blocked message, or a frame that cannot be read, ends the
// stream before any of its bytes.
func TestWSScanner(t *testing.T) {
	block := newFixture(t, &Firewall{MaxBody: 1 << 16})
	shadow := newFixture(t, &Firewall{MaxBody: 1 << 16, OnMalicious: "log", OnSuspicious: "log"})
	safe := wsFrame(true, wsText, realtimeItem("hello"))
	ping := wsFrame(true, 0x9, "p")
	for _, tc := range []struct {
		name   string
		fx     *fixture
		frames [][]byte
		passed int   // leading frames that go on
		err    error // nil: all go on, then EOF
		order  []int // the order they go on in, when not as sent
	}{
		{"safe messages and control frames", block, [][]byte{safe, ping, wsFrame(true, wsBinary, "\x00\x01audio"), safe}, 4, nil, nil},
		{"fragmented with a ping inside", block, [][]byte{wsFrame(false, wsText, `{"type": "x", `), ping, wsFrame(true, wsContinuation, `"text": "hi"}`)}, 3, nil,
			[]int{1, 0, 2}}, // the ping goes on at once, the message once whole
		{"malicious item", block, [][]byte{safe, wsFrame(true, wsText, realtimeItem(malText)), safe}, 1, errWSBlocked, nil},
		{"malicious across fragments", block, [][]byte{wsFrame(false, wsText, realtimeItem(malText)[:40]), wsFrame(true, wsContinuation, realtimeItem(malText)[40:])}, 0, errWSBlocked, nil},
		{"tool output", block, [][]byte{wsFrame(true, wsText, `{"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "c", "output": `+strconv.Quote(malText)+`}}`)}, 0, errWSBlocked, nil},
		{"gemini live client content", block, [][]byte{wsFrame(true, wsText, `{"clientContent": {"turns": [{"role": "user", "parts": [{"text": `+strconv.Quote(malText)+`}]}], "turnComplete": true}}`)}, 0, errWSBlocked, nil},
		{"json in a binary message", block, [][]byte{wsFrame(true, wsBinary, `{"toolResponse": {"functionResponses": [{"response": {"r": `+strconv.Quote(malText)+`}}]}}`)}, 0, errWSBlocked, nil},
		{"plain text message", block, [][]byte{wsFrame(true, wsText, malText)}, 0, errWSBlocked, nil},
		{"suspicious is blocked, not rewritten", block, [][]byte{wsFrame(true, wsText, realtimeItem(suspText))}, 0, errWSBlocked, nil},
		{"invalid json", block, [][]byte{wsFrame(true, wsText, `{"type": `)}, 0, errWSBlocked, nil},
		{"invalid utf-8 text", block, [][]byte{wsFrame(true, wsText, "Ign\xf6re")}, 0, errWSBlocked, nil},
		{"padded json in a binary message", block, [][]byte{wsFrame(true, wsBinary, strings.Repeat(" ", 600)+`{"type": "conversation.item.create", "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "`+escaped(malText)+`"}]}}`)}, 0, errWSBlocked, nil},
		{"binary media passes", block, [][]byte{wsFrame(true, wsBinary, strings.Repeat("\x00\x01\x02\xfe\x9c", 60)+malText)}, 1, nil, nil},
		{"a binary message of text is scanned", block, [][]byte{wsFrame(true, wsBinary, "\x00\x01"+malText)}, 0, errWSBlocked, nil},
		{"log lets it through", shadow, [][]byte{wsFrame(true, wsText, realtimeItem(malText))}, 1, nil, nil},
		{"unmasked", block, [][]byte{wsFrame(true, wsText, "{}", "unmasked")}, 0, errWSProtocol, nil},
		{"compressed", block, [][]byte{wsFrame(true, wsText, "{}", "rsv1")}, 0, errWSProtocol, nil},
		{"message over max_body", block, [][]byte{wsFrame(true, wsBinary, strings.Repeat("a", 1<<16+1))}, 0, errWSProtocol, nil},
		{"fragments over max_body", block, [][]byte{wsFrame(false, wsBinary, strings.Repeat("a", 1<<15)), wsFrame(true, wsContinuation, strings.Repeat("a", 1<<15+1))}, 0, errWSProtocol, nil},
		{"continuation of nothing", block, [][]byte{wsFrame(true, wsContinuation, "x")}, 0, errWSProtocol, nil},
		{"message inside a message", block, [][]byte{wsFrame(false, wsText, "a"), wsFrame(true, wsText, "b")}, 0, errWSProtocol, nil},
		{"unknown opcode", block, [][]byte{wsFrame(true, 0x3, "x")}, 0, errWSProtocol, nil},
		{"long control frame", block, [][]byte{wsFrame(true, 0x9, strings.Repeat("p", 126))}, 0, errWSProtocol, nil},
		{"truncated", block, [][]byte{safe[:len(safe)-3]}, 0, errWSProtocol, nil},
		{"declared length past max", block, [][]byte{{0x82, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4}}, 0, errWSProtocol, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Join(tc.frames, nil)
			s := newWSScanner(bytes.NewReader(in), tc.fx.fw, httptest.NewRequest("GET", "/v1/realtime", nil))
			got, err := io.ReadAll(s)
			want := bytes.Join(tc.frames[:tc.passed], nil)
			if tc.order != nil {
				want = nil
				for _, i := range tc.order {
					want = append(want, tc.frames[i]...)
				}
			}
			if !errors.Is(err, tc.err) && !(tc.err == nil && err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("handed on %d bytes, want %d", len(got), len(want))
			}
		})
	}
}

// hijackable is a ResponseWriter whose connection can be taken over, as
// Go's server's is: its client side is the other end of a pipe.
type hijackable struct {
	*httptest.ResponseRecorder
	conn     net.Conn
	buffered string // client bytes the server read past the handshake
}

func (h *hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	r := bufio.NewReader(io.MultiReader(strings.NewReader(h.buffered), h.conn))
	r.Peek(len(h.buffered)) // held in the reader's buffer, as the server's would be
	return h.conn, bufio.NewReadWriter(r, bufio.NewWriter(h.conn)), nil
}

// TestWebSocketScanThroughHandler: with `websocket scan`, a proxy that
// takes the connection over reads the client's frames through the
// scanner, the bytes buffered at the handshake first; no compression is
// offered upstream.
func TestWebSocketScanThroughHandler(t *testing.T) {
	fx := newFixture(t, &Firewall{WebSocket: "scan"})
	safe := wsFrame(true, wsText, realtimeItem("hello"))
	bad := wsFrame(true, wsText, realtimeItem(malText))

	server, client := net.Pipe()
	go func() {
		client.Write(safe[5:]) // the rest of the first frame, then a blocked one
		client.Write(bad)
		client.Close()
	}()
	w := &hijackable{ResponseRecorder: httptest.NewRecorder(), conn: server, buffered: string(safe[:5])}
	r := httptest.NewRequest("GET", "/v1/realtime?model=gpt-realtime", nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")
	var got []byte
	var readErr error
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if r.Header.Get("Sec-WebSocket-Extensions") != "" {
			t.Error("compression offered upstream")
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return err
		}
		// As reverse_proxy does: what the reader holds, then the connection.
		got = make([]byte, brw.Reader.Buffered())
		brw.Reader.Read(got)
		rest, err := io.ReadAll(conn)
		got, readErr = append(got, rest...), err
		return nil
	})
	if err := fx.fw.ServeHTTP(w, withVars(r), next); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, safe) || !errors.Is(readErr, errWSBlocked) {
		t.Fatalf("proxy read %d bytes (want the %d of the safe frame), err %v", len(got), len(safe), readErr)
	}
}
