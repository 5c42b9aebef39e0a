package firewall

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// proxied runs a Caddy server in this process with the firewall
// (configured by the JSON members fw) in front of reverse_proxy to
// upstream: what the proxy does with hop-by-hop fields, hijacked
// connections and request bodies is its own.
func proxied(t *testing.T, fw string, upstream http.Handler) string {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := `{"admin": {"disabled": true}, "logging": {"logs": {"default": {"level": "ERROR"}}},
		"apps": {"http": {"servers": {"s": {"listen": ["` + addr + `"], "automatic_https": {"disable": true},
		"routes": [{"handle": [{"handler": "prompt_firewall"` + fw + `},
			{"handler": "reverse_proxy", "upstreams": [{"dial": "` + strings.TrimPrefix(up.URL, "http://") + `"}]}]}]}}}}}`
	if err := caddy.Load([]byte(cfg), true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { caddy.Stop() })
	return "http://" + addr
}

// TestThroughReverseProxy: a client's Connection field cannot make the
// proxy drop the verdict; a form goes on as sent, or rebuilt and readable
// by a server's form parser.
func TestThroughReverseProxy(t *testing.T) {
	var mu sync.Mutex
	var got *http.Request
	var prompt string
	url := proxied(t, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got, prompt = r, ""
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				w.WriteHeader(400)
				return
			}
			prompt = r.FormValue("prompt")
		}
	}))

	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(chat(msg("user", suspText))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "keep-alive, Prompt-Firewall-Verdict, Prompt-Firewall-Rules")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got == nil || got.Header.Get(HeaderVerdict) != "suspicious" || got.Header.Get(HeaderRules) != "IO-4" {
		t.Fatalf("the upstream lost the labels: %v", got)
	}

	for _, tc := range []struct{ prompt, want string }{{"Names: Anna.", "Names: Anna."}, {suspText, suspSan}} {
		body := formBody(testBoundary, file("file", "a.wav", "audio/wav", audio), field("prompt", tc.prompt))
		res, err := http.Post(url+"/v1/audio/transcriptions", "multipart/form-data; boundary="+testBoundary, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || prompt != tc.want {
			t.Errorf("form with %q: status %d, upstream read prompt %q", tc.prompt, res.StatusCode, prompt)
		}
	}
}

// TestWebSocketScanThroughReverseProxy: with `websocket scan`, the frames
// of a real upgrade through reverse_proxy reach the upstream until the
// first blocked message, then the connection closes.
func TestWebSocketScanThroughReverseProxy(t *testing.T) {
	received := make(chan []byte, 1)
	url := proxied(t, `, "websocket": "scan"`, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Sec-WebSocket-Extensions") != "" {
			t.Error("compression offered upstream")
		}
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Sec-WebSocket-Accept", base64.StdEncoding.EncodeToString(sum[:]))
		w.WriteHeader(http.StatusSwitchingProtocols)
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(brw)
		received <- b
	}))

	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(conn, "GET /v1/realtime?model=gpt-realtime HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n")
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != 101 {
		t.Fatalf("handshake: %v %v", res, err)
	}
	safe := wsFrame(true, wsText, realtimeItem("hello"))
	conn.Write(safe)
	conn.Write(wsFrame(true, wsText, realtimeItem(malText)))
	conn.Write(wsFrame(true, wsText, realtimeItem("after")))
	// The proxy closes the client's side once the upstream's is done.
	io.Copy(io.Discard, br)
	select {
	case b := <-received:
		if !bytes.Equal(b, safe) {
			t.Fatalf("upstream received %d bytes %q, want the %d of the safe frame", len(b), unmaskAll(b), len(safe))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream's connection did not close")
	}
}

// unmaskAll decodes client frames for a failure message.
func unmaskAll(b []byte) string {
	var out []byte
	for len(b) >= 6 {
		n := int(b[1] & 0x7f)
		at := 2
		if n == 126 {
			n, at = int(binary.BigEndian.Uint16(b[2:])), 4
		}
		key := b[at : at+4]
		at += 4
		if at+n > len(b) {
			break
		}
		for i, c := range b[at : at+n] {
			out = append(out, c^key[i&3])
		}
		b = b[at+n:]
	}
	return string(out)
}
