package firewall

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"net"
	"net/http"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/promptwall/promptwall/mcpmsg"
)

// Bounds of pin_tools' memory: 32 bytes a page and about 100 a pending
// request, a few kilobytes a session at most.
const (
	maxPinnedSessions = 10000
	maxPinnedPages    = 64
	maxPendingIDs     = 64
)

// toolPins remembers, per session, a keyed hash of each tools/list page,
// and the requests the client waits for, so that an answer on any of the
// session's streams is matched to its request. Keys are hashed too:
// neither session ids, request ids, cursors nor tool texts are kept. The
// two are bounded apart: requests to sessions the server never answers
// (made-up session ids) cannot push out the pins of real ones.
type toolPins struct {
	mu       sync.Mutex
	key      []byte
	sessions pinTable // pages
	waiting  pinTable // pending requests
}

// pinTable is sessions' memory, the oldest forgotten past maxPinnedSessions.
type pinTable struct {
	m     map[[32]byte]*pinned
	order [][32]byte // sessions, oldest first (maybe forgotten since)
}

// pinned is one session's memory.
type pinned struct {
	pages   map[[32]byte][32]byte // cursor → result
	pending map[[32]byte]pendingPin
	porder  [][32]byte // pending ids, oldest first (maybe answered since)
}

// pendingPin is a request of the session's that is not answered yet.
type pendingPin struct {
	list   bool     // a tools/list
	cursor [32]byte // its cursor's hash
}

func newToolPins() *toolPins {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return &toolPins{key: key, sessions: pinTable{m: map[[32]byte]*pinned{}}, waiting: pinTable{m: map[[32]byte]*pinned{}}}
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
	return p.sameKey(p.sum(session), p.sum(cursor), result)
}

func (p *toolPins) sameKey(sk, ck [32]byte, result []byte) bool {
	rk := p.sum(string(result))
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sessions.get(sk)
	old, ok := s.pages[ck]
	if !ok {
		if len(s.pages) >= maxPinnedPages {
			return false // a list of more pages than any real server's: refused
		}
		s.pages[ck] = rk
		return true
	}
	return hmac.Equal(old[:], rk[:])
}

// get returns sk's memory, made (and the oldest forgotten) if new; the
// toolPins' mu is held.
func (t *pinTable) get(sk [32]byte) *pinned {
	s := t.m[sk]
	if s != nil {
		return s
	}
	for len(t.m) >= maxPinnedSessions && len(t.order) > 0 {
		delete(t.m, t.order[0])
		t.order = t.order[1:]
	}
	s = &pinned{pages: map[[32]byte][32]byte{}, pending: map[[32]byte]pendingPin{}}
	t.m[sk] = s
	t.order = append(t.order, sk)
	if len(t.order) > 2*maxPinnedSessions {
		t.compact()
	}
	return s
}

// expect remembers the requests of the client's body as pending in its
// session; past maxPendingIDs the oldest is forgotten (an answer to it
// then counts only on its own POST's stream).
func (p *toolPins) expect(session string, msg *mcpmsg.Body) {
	if msg == nil {
		return
	}
	sk := p.sum(session)
	type req struct {
		id [32]byte
		pp pendingPin
	}
	var reqs []req
	for _, m := range msg.Messages {
		if m.Kind == mcpmsg.Request {
			reqs = append(reqs, req{p.sum(idKey(m.ID)), pendingPin{m.Method == "tools/list", p.sum(m.Cursor)}})
		}
	}
	if len(reqs) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.waiting.get(sk)
	for _, r := range reqs {
		for len(s.pending) >= maxPendingIDs && len(s.porder) > 0 {
			delete(s.pending, s.porder[0])
			s.porder = s.porder[1:]
		}
		if _, ok := s.pending[r.id]; !ok {
			s.porder = append(s.porder, r.id)
		}
		s.pending[r.id] = r.pp
		if len(s.porder) > 2*maxPendingIDs {
			live := s.porder[:0]
			for _, k := range s.porder {
				if _, ok := s.pending[k]; ok {
					live = append(live, k)
				}
			}
			s.porder = live
		}
	}
}

// answer takes the session's pending request of id (an idKey) away and
// returns it; ok is false when the session waits for no such request.
func (p *toolPins) answer(session, id string) (pp pendingPin, ok bool) {
	sk, ik := p.sum(session), p.sum(id)
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.waiting.m[sk]
	if s == nil {
		return pendingPin{}, false
	}
	pp, ok = s.pending[ik]
	delete(s.pending, ik)
	return pp, ok
}

// forget drops a session (its DELETE).
func (p *toolPins) forget(session string) {
	sk := p.sum(session)
	p.mu.Lock()
	delete(p.sessions.m, sk)
	delete(p.waiting.m, sk)
	p.mu.Unlock()
}

// compact drops forgotten sessions from order.
func (t *pinTable) compact() {
	live := t.order[:0]
	for _, k := range t.order {
		if _, ok := t.m[k]; ok {
			live = append(live, k)
		}
	}
	t.order = live
}

// pinned matches msg's answers to the requests the client waits for: on
// this stream (its POST's), else anywhere in the session (an answer on the
// GET stream or in another request's). It returns, by raw id, true for a
// tools/list result that differs from the session's pinned page, and
// false for a result that answers no pending request (dropped: a client
// may read its id as a pending one's, "1" as 1, and take it unchecked).
// Errors pass: they carry no tool list; so do null ids.
func (mw *mcpWriter) pinned(msg *mcpmsg.Body) map[string]bool {
	pins := mw.f.pins
	if pins == nil {
		return nil
	}
	session := pinSession(mw.r)
	// On a resumed GET stream the SDKs give a result the id of the request
	// they resume (one the guard never saw): a tool list there must be a
	// pinned page, whatever its id.
	resumed := mw.r.Method == http.MethodGet && mw.r.Header.Get("Last-Event-ID") != ""
	var out map[string]bool
	mark := func(id json.RawMessage, changed bool) {
		if out == nil {
			out = map[string]bool{}
		}
		out[string(id)] = out[string(id)] || changed
	}
	for _, m := range msg.Messages {
		if m.Kind != mcpmsg.Response && m.Kind != mcpmsg.ErrorReply || idKey(m.ID) == "z" {
			continue
		}
		k := idKey(m.ID)
		sp, inSession := pins.answer(session, k)
		if m.Kind != mcpmsg.Response {
			continue
		}
		p, onStream := mw.pending[k]
		switch {
		case onStream && p.method == "tools/list":
			if !pins.same(session, p.cursor, m.Result) {
				mark(m.ID, true)
			}
		case onStream:
		case inSession && sp.list:
			if !pins.sameKey(pins.sum(session), sp.cursor, m.Result) {
				mark(m.ID, true)
			}
		case !inSession:
			mark(m.ID, false)
			if c := mw.f.logger.Check(zapcore.InfoLevel, "mcp answer to no pending request dropped"); c != nil {
				c.Write(zap.String("phase", "response"), zap.String("api", mcpAPI), zap.String("host", mw.r.Host),
					zap.String("uri_path", mw.r.URL.Path))
			}
			continue
		}
		if resumed && !(onStream && p.method == "tools/list" || inSession && sp.list) &&
			hasTools(m.Result) && !pins.known(session, m.Result) {
			mark(m.ID, true)
		}
	}
	return out
}

// hasTools reports whether result has a tools member: what a client reads
// as a tools/list answer.
func hasTools(result json.RawMessage) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(result, &members) != nil {
		return false
	}
	_, ok := members["tools"]
	return ok
}

// known reports whether result is one of session's pinned pages, or the
// session has none.
func (p *toolPins) known(session string, result []byte) bool {
	sk, rk := p.sum(session), p.sum(string(result))
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.sessions.m[sk]
	if s == nil || len(s.pages) == 0 {
		return true
	}
	for _, v := range s.pages {
		if hmac.Equal(v[:], rk[:]) {
			return true
		}
	}
	return false
}

// anyChanged reports whether pinned found a changed tool list.
func (mw *mcpWriter) anyChanged(marks map[string]bool) bool {
	for _, changed := range marks {
		if changed {
			return true
		}
	}
	return false
}
