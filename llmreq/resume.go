package llmreq

import (
	"errors"
	"slices"
)

// Resuming. Chat APIs are stateless: a client sends its whole conversation again with every
// turn, so most of a long request is bytes an earlier request held too. ParseResumed leaves
// unread the messages a caller has seen before in an earlier body and found clean, so that a
// resent history costs hashing its bytes, not parsing them.
//
// What it leaves unread is whole runs of messages (the runs of consecutive messages of one role
// that groups join: see the package doc) of a message list, a root member's array that a walker
// reads message by message: Chat, Ollama and Anthropic messages, Responses input and
// instructions, Gemini contents. A message's texts depend on its own bytes and on the state of
// the walk where it begins, and that state, after a run and a message that starts a run of its
// own, is counts: texts, path bytes, groups. A Resume records those counts for each range; the
// walk of a body that begins with the same bytes comes to the range in the same state, takes
// the counts and goes on after it, and finds exactly the texts a full walk would, but for those
// of the range. The message after a range must start a run of its own: the range records the
// role of the run it ends, and a message after it of that role voids the Resume. So does
// anything else that could make the walks differ, and the body is parsed whole: another walker
// than the earlier body's own (a mixed body), a range the tape does not meet where it expects,
// a skipped message read by anything but its list's walk, any error.

// A Resume tells ParseResumed which ranges of a body it may leave unread. It holds offsets and
// counts, never text. Request.ResumeAt makes one for a later body that begins with the first n
// bytes of the request's; the caller must make sure the later body does (a keyed hash of those
// bytes, say) before passing it on.
type Resume struct {
	api     API
	primary int
	skips   []skip
	few     [2]skip // skips, when there are no more (most Resumes): one allocation
}

// skip is one range of whole messages of a list.
type skip struct {
	list     int32 // the offset of the list's '['
	from, to int32 // the first byte of its first message; the first byte of the message after it
	elems    int32 // messages in the range
	texts    int32 // texts the walk found in them
	paths    int32 // bytes of those texts' paths, uncut by pathLimit
	groups   int32 // the walk's count of groups after them
	run      uint8 // the role of the run open after them (roleCode), 0: none
}

// Bytes returns how many bytes of a body the Resume leaves unread.
func (res *Resume) Bytes() int {
	n := 0
	for _, s := range res.skips {
		n += int(s.to - s.from)
	}
	return n
}

// kindSkip is the tape node of a skipped range (its b: the index in tape.skips). No other node
// has kind 0, and container() is false for it.
const kindSkip uint8 = 0

// message is what the walk of one element of a message list left, for ResumeAt; a skipped range
// is one message of elems messages.
type message struct {
	list, from, to       int32 // to: the first byte of the next element, else a bound on its end
	elems                int32
	texts, paths, groups int32
	run                  uint8 // the role of the run open after it (roleCode), 0: none
	fresh                bool  // it does not continue the run of the element before it
	clean                bool  // no file, document or token ids in it, nor parts of another API
}

// runRoles are the roles a run can have (walkers take roles from chatRole and geminiRole),
// coded by their index: a range records its run's role as a number, not a string.
var runRoles = [...]string{RoleUnknown, RoleUser, RoleSystem, RoleDeveloper, RoleAssistant, RoleTool, RoleFunction}

// roleCode returns role's index in runRoles, and false for a role not there.
func roleCode(role string) (uint8, bool) {
	for i, r := range runRoles {
		if r == role {
			return uint8(i), true
		}
	}
	return 0, false
}

// errVoid makes a resumed parse start over without its Resume.
var errVoid = errors.New("resume void")

// ParseResumed is Parse, leaving unread the ranges res names (nil: none), and its Request can
// make a Resume for a later body (ResumeAt). The Request is Parse's but for the texts in those
// ranges, which are not in Texts; every other text, document and token id, with its path, role,
// group and offsets, is what Parse finds, and so are its errors.
func ParseResumed(urlPath string, body []byte, res *Resume) (*Request, error) {
	t := getTape()
	defer putTape(t)
	t.record = true
	defer func() { t.record = false }()
	if res != nil && len(res.skips) > 0 {
		t.skips, t.resume = res.skips, res
		req, err := t.parse(urlPath, body)
		t.skips, t.resume = nil, nil
		if err == nil {
			return req, nil
		}
	}
	return t.parse(urlPath, body)
}

// skipAt is called by the tape's scan at the first byte i of an element of list, a root
// member's array: when a range begins there, it records a skip node and returns the first byte
// of the element after the range.
func (t *tape) skipAt(list, i int) (int, bool) {
	if t.next >= len(t.skips) || int(t.skips[t.next].from) != i {
		return i, false
	}
	s := t.skips[t.next]
	if int(s.list) != list || s.to <= s.from {
		t.void = true
		return i, false
	}
	t.push(kindSkip, 0, i, t.next)
	t.next++
	return int(s.to), true
}

// history visits a message list like list, records each element for ResumeAt, and takes the
// ranges of skip nodes as the messages they stand for.
//
// A message's path bytes are counted uncut by pathLimit (w.short), since its bound is the
// body's length: a later, longer body read whole may keep the paths this one cut. That body
// either cuts none of the range's paths, and makes the same count, or is past the bound within
// the range, and so after it, read whole or resumed.
func (w *walker) history(i int, role string, each, single func(int, string)) {
	if w.kind(i) != kindArray {
		single(i, role)
		return
	}
	list := int32(w.t.nodes[i].start())
	end := w.next(i)
	n := 0
	for e := i + 1; e < end; e = w.next(e) {
		if w.kind(e) == kindSkip {
			if w.secondary {
				w.misread = true
				continue
			}
			s := &w.t.skips[w.t.nodes[e].b]
			w.runEnd()
			w.skipped += int(s.to - s.from)
			w.skippedTexts += int(s.texts)
			w.skippedPaths += int(s.paths)
			w.groups = int(s.groups)
			w.msgs = append(w.msgs, message{list: list, from: s.from, to: s.to, elems: s.elems,
				texts: s.texts, paths: s.paths, groups: s.groups, run: s.run, fresh: true, clean: true})
			n += int(s.elems)
			w.afterSkip = runRoles[s.run]
			continue
		}
		m := message{list: list, from: int32(w.t.nodes[e].start()), elems: 1,
			texts: int32(len(w.texts)), paths: int32(len(w.paths) + w.short)}
		docs, ids, files, want := len(w.docs), len(w.tokenIDs), len(w.fileTypes), w.want
		w.stepped, w.joined = false, false
		w.atIndex(n, e, role, each)
		w.afterSkip = ""
		n++
		m.to = int32(w.nodeEnd(e))
		m.texts = int32(len(w.texts)) - m.texts
		m.paths = int32(len(w.paths)+w.short) - m.paths
		m.groups = int32(w.groups)
		m.fresh = w.stepped && !w.joined
		run, known := uint8(0), true
		if w.runOn {
			run, known = roleCode(w.runRole)
		}
		m.run = run
		m.clean = known && docs == len(w.docs) && ids == len(w.tokenIDs) && files == len(w.fileTypes) && want == w.want
		if !w.secondary && w.t.record {
			w.msgs = append(w.msgs, m)
		}
	}
	if k := len(w.msgs) - 1; k >= 0 && w.msgs[k].list == list {
		w.msgs[k].to = int32(w.lastEnd(i))
	}
}

// nodeEnd returns a bound on the end of node i's value: the first byte of the node after its
// subtree, or the end of the body.
func (w *walker) nodeEnd(i int) int {
	if j := w.next(i); j < len(w.t.nodes) {
		return w.t.nodes[j].start()
	}
	return len(w.body)
}

// lastEnd returns the end of the last element of list, a root member's array: the byte after
// it, before the list's ']'. The tape does not record where a container ends, but the bytes
// between the element and the root's next member (or the root's end) can only be space, the
// ']', space, and a ',' (or the root's '}').
func (w *walker) lastEnd(list int) int {
	p := w.nodeEnd(list) - 1
	back := func() {
		for p > 0 && isSpace(w.body[p]) {
			p--
		}
	}
	back()
	if w.body[p] == ',' || w.body[p] == '}' {
		p--
	}
	back()
	if w.body[p] == ']' {
		p--
	}
	back()
	return p + 1
}

// Boundaries returns the places where a later body of the same conversation is likely to part
// from this one: the end of the last message of its last message list (a turn added), and the
// first bytes of that list's last k messages (a turn edited, regenerated or answered anew), in
// descending order. They are bounds: a later body that equals this one up to such a place can
// resume from a ResumeAt of it.
func (r *Request) Boundaries(k int) []int {
	if len(r.msgs) == 0 {
		return nil
	}
	last := r.msgs[len(r.msgs)-1]
	out := []int{int(last.to)}
	for i := len(r.msgs) - 1; i >= 0 && len(out) <= k && r.msgs[i].list == last.list; i-- {
		out = append(out, int(r.msgs[i].from))
	}
	return out
}

// maxSkips bounds the ranges of a Resume: the largest are kept.
const maxSkips = 16

// ResumeAt returns the Resume that leaves unread, in a later body whose first n bytes are this
// body's, the runs of messages of its message lists that hold none of the texts dirty names
// (indices in Texts) and no file, document or token ids, and that end within those n bytes
// before another message of their list. It is nil when there is no such run, or when the body
// was read by more than one walker. The texts a caller must read every time (a text with a
// match) go in dirty: their runs are never left unread.
func (r *Request) ResumeAt(n int, dirty []int) *Resume {
	if r.primary < 0 || len(r.msgs) == 0 {
		return nil
	}
	// Mark the messages that hold a dirty text.
	var small [256]bool
	bad := small[:]
	if len(r.msgs) > len(small) {
		bad = make([]bool, len(r.msgs))
	}
	for _, d := range dirty {
		at := int32(r.Texts[d].start)
		i, _ := slices.BinarySearchFunc(r.msgs, at, func(m message, at int32) int { return int(m.from - at) })
		if i < len(r.msgs) && r.msgs[i].from == at {
			bad[i] = true
		} else if i > 0 && at < r.msgs[i-1].to {
			bad[i-1] = true
		}
	}
	var buf [4]skip
	skips := buf[:0]
	var cur *skip // the range being built
	for i := 0; i < len(r.msgs); {
		// The run that starts at message i: its messages up to the next fresh one.
		m := r.msgs[i]
		j, ok := i+1, m.clean && !bad[i] && m.fresh
		for j < len(r.msgs) && !r.msgs[j].fresh && r.msgs[j].list == m.list {
			ok = ok && r.msgs[j].clean && !bad[j]
			j++
		}
		// It may be left unread when a message of its list follows it, starting within n.
		ok = ok && j < len(r.msgs) && r.msgs[j].list == m.list && int(r.msgs[j].from) <= n
		if !ok {
			cur = nil
			i = j
			continue
		}
		if cur == nil || cur.list != m.list || cur.to != m.from {
			skips = append(skips, skip{list: m.list, from: m.from})
			cur = &skips[len(skips)-1]
		}
		for _, x := range r.msgs[i:j] {
			cur.elems += x.elems
			cur.texts += x.texts
			cur.paths += x.paths
		}
		cur.to = r.msgs[j].from
		cur.groups = r.msgs[j-1].groups
		cur.run = r.msgs[j-1].run
		i = j
	}
	if len(skips) == 0 {
		return nil
	}
	if len(skips) > maxSkips {
		slices.SortFunc(skips, func(a, b skip) int { return int((b.to - b.from) - (a.to - a.from)) })
		skips = skips[:maxSkips]
		slices.SortFunc(skips, func(a, b skip) int { return int(a.from - b.from) })
	}
	res := &Resume{api: r.API, primary: r.primary}
	if len(skips) <= len(res.few) {
		res.skips = res.few[:copy(res.few[:], skips)]
	} else {
		res.skips = slices.Clone(skips)
	}
	return res
}

// Skipped returns how many bytes of the body ParseResumed left unread.
func (r *Request) Skipped() int { return r.skipped }
