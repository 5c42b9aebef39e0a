package firewall

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"net"
	"net/http"
	"sync"
)

// Bounds of pin_tools' memory: 32 bytes a page, a few pages a session.
const (
	maxPinnedSessions = 10000
	maxPinnedPages    = 64
)

// toolPins remembers, per session, a keyed hash of each tools/list page.
// Keys are hashed too: neither session ids nor tool texts are kept.
type toolPins struct {
	mu       sync.Mutex
	key      []byte
	sessions map[[32]byte]map[[32]byte][32]byte // session → cursor → result
	order    [][32]byte                         // sessions, oldest first (maybe forgotten since)
}

func newToolPins() *toolPins {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return &toolPins{key: key, sessions: map[[32]byte]map[[32]byte][32]byte{}}
}

func (p *toolPins) sum(parts ...string) [32]byte {
	m := hmac.New(sha256.New, p.key)
	for _, s := range parts {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	var out [32]byte
	m.Sum(out[:0])
	return out
}

// pinSession names the session of a request: the host and its
// Mcp-Session-Id, else the client's address (a server without sessions).
func pinSession(r *http.Request) string {
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		return r.Host + "\x00s\x00" + id
	}
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	return r.Host + "\x00a\x00" + ip
}

// same reports whether the tools/list page at cursor of session has the
// result it had the first time; a first time it remembers it.
func (p *toolPins) same(session, cursor string, result []byte) bool {
	sk, ck, rk := p.sum(session), p.sum(cursor), p.sum(string(result))
	p.mu.Lock()
	defer p.mu.Unlock()
	pages := p.sessions[sk]
	if pages == nil {
		for len(p.sessions) >= maxPinnedSessions && len(p.order) > 0 {
			delete(p.sessions, p.order[0])
			p.order = p.order[1:]
		}
		pages = map[[32]byte][32]byte{}
		p.sessions[sk] = pages
		p.order = append(p.order, sk)
		if len(p.order) > 2*maxPinnedSessions {
			p.compact()
		}
	}
	old, ok := pages[ck]
	if !ok {
		if len(pages) >= maxPinnedPages {
			return false // a list of more pages than any real server's: refused
		}
		pages[ck] = rk
		return true
	}
	return hmac.Equal(old[:], rk[:])
}

// forget drops a session (its DELETE).
func (p *toolPins) forget(session string) {
	sk := p.sum(session)
	p.mu.Lock()
	delete(p.sessions, sk)
	p.mu.Unlock()
}

// compact drops forgotten sessions from order.
func (p *toolPins) compact() {
	live := p.order[:0]
	for _, k := range p.order {
		if _, ok := p.sessions[k]; ok {
			live = append(live, k)
		}
	}
	p.order = live
}
