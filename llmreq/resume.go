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
	groups   int32 // groups the walk began in them
	run      uint8 // the role of the run open after them (roleCode), 0: none
	step     uint8 // the role its first message's run step had (stepCode)
	at       int32 // the list index of its first message

	// The records of its messages, as the body they were read in had them, or nil; in this
	// body they sit shift bytes earlier and drop indices lower (see History.Trimmed).
	recs        []message
	shift, drop int32
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
	list, from, to    int32 // to: the first byte of the next element, else a bound on its end
	elems             int32
	texts, paths, grp int32 // grp: the groups the walk began in it
	run               uint8 // the role of the run open after it (roleCode), 0: none
	step              uint8 // the role of its first run step (stepCode)
	fresh             bool  // it does not continue the run of the element before it
	clean             bool  // no file, document or token ids in it, nor parts of another API
	long              bool  // a path of a text of it is longer than MaxPathLen
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

// stepCode codes the role of a message's first run step: 0 for none (an element that is no
// message: it joins no run), 1 + its roleCode, stepOther for a role not in runRoles.
func stepCode(stepped bool, role string) uint8 {
	if !stepped || role == "" {
		return 0
	}
	if c, ok := roleCode(role); ok {
		return c + 1
	}
	return stepOther
}

const stepOther = 255

// joins reports whether a message whose first run step has code step continues the run open in
// the walk.
func (w *walker) joins(step uint8) bool {
	return step != 0 && w.runOn && (step == stepOther || runRoles[step-1] == w.runRole)
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
// the range, and so after it, read whole or resumed. A later body that lost messages before the
// range is shorter, and its count of the range's paths is smaller by the digits the indices
// lost (History.Trimmed): the same holds.
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
			// A whole walk would read the range as the body it was read in did: from a message
			// at index s.at that starts a run (its first message's run step joins none open
			// here), without passing MaxTexts in it.
			if int(s.at) != n || w.joins(s.step) || w.tooMany < 0 && len(w.texts)+w.skippedTexts+int(s.texts) > MaxTexts {
				w.misread = true
			}
			w.runEnd()
			w.skipped += int(s.to - s.from)
			w.skippedTexts += int(s.texts)
			w.skippedPaths += int(s.paths)
			w.groups += int(s.groups)
			if s.recs != nil && w.t.record && s.shift == 0 && s.drop == 0 {
				w.msgs = append(w.msgs, s.recs...) // clean, or ranges would not hold them
			} else if s.recs != nil && w.t.record {
				at := n
				for _, r := range s.recs {
					r.from, r.to = r.from-s.shift, r.to-s.shift
					r.paths = shiftedPaths(r, at+int(s.drop), at)
					r.clean = true
					w.msgs = append(w.msgs, r)
					at += int(r.elems)
				}
			} else {
				w.msgs = append(w.msgs, message{list: list, from: s.from, to: s.to, elems: s.elems,
					texts: s.texts, paths: s.paths, grp: s.groups, run: s.run, step: s.step, fresh: true, clean: true})
			}
			n += int(s.elems)
			w.afterSkip = runRoles[s.run]
			continue
		}
		m := message{list: list, from: int32(w.t.nodes[e].start()), elems: 1,
			texts: int32(len(w.texts)), paths: int32(len(w.paths) + w.short), grp: int32(w.groups)}
		docs, ids, files, want, long := len(w.docs), len(w.tokenIDs), len(w.fileTypes), w.want, w.long
		w.stepped, w.joined = false, false
		w.atIndex(n, e, role, each)
		w.afterSkip = ""
		n++
		m.to = int32(w.nodeEnd(e))
		m.texts = int32(len(w.texts)) - m.texts
		m.paths = int32(len(w.paths)+w.short) - m.paths
		m.grp = int32(w.groups) - m.grp
		m.fresh = w.stepped && !w.joined
		m.step = stepCode(w.stepped, w.stepRole)
		m.long = w.long != long
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

// shiftedPaths returns the path bytes of message r, read at list index old, at index now: each
// of its texts' paths holds the index once ("messages[12].content").
func shiftedPaths(r message, old, now int) int32 {
	if old == now {
		return r.paths
	}
	return r.paths - r.texts*int32(digits(old)-digits(now))
}

// digits is the length of n in decimal.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
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

// maxRecords bounds the messages of a body whose records its Resumes and History keep (36
// bytes each): a body read with such a Resume records its ranges message by message, so that a
// later one can part from it, or lose messages, within them. A longer list's ranges are
// recorded as one message each.
const maxRecords = 1024

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
	var small [256]bool
	bad := r.dirtyMessages(dirty, small[:])
	var buf [4]skip
	skips := ranges(buf[:0], r.msgs, 0, bad, int32(n), 0, 0, len(r.msgs) <= maxRecords)
	return newResume(r.API, r.primary, skips)
}

// ResumesAt appends to dst ResumeAt(n, dirty) for each n of places, which are in descending
// order (as Boundaries returns them): the ranges are found once, for the first, and cut back
// for the others.
func (r *Request) ResumesAt(dst []*Resume, places []int, dirty []int) []*Resume {
	if r.primary < 0 || len(r.msgs) == 0 || len(places) == 0 {
		for range places {
			dst = append(dst, nil)
		}
		return dst
	}
	var small [256]bool
	bad := r.dirtyMessages(dirty, small[:])
	recs := len(r.msgs) <= maxRecords
	var buf, cutBuf [8]skip
	all := ranges(buf[:0], r.msgs, 0, bad, int32(places[0]), 0, 0, recs)
	last, to := -1, int32(0) // the previous place's cut: its ranges, the end of its last
	for i, n := range places {
		if !recs || i > 0 && n > places[i-1] {
			dst, last = append(dst, r.ResumeAt(n, dirty)), -1
			continue
		}
		cut := cutSkips(append(cutBuf[:0], all...), int32(n))
		end := int32(0)
		if len(cut) > 0 {
			end = cut[len(cut)-1].to
		}
		if i > 0 && last == len(cut) && to == end {
			// The same ranges as the previous place's (a cut only drops runs from the
			// end): its Resume, which nothing changes.
			dst = append(dst, dst[len(dst)-1])
			continue
		}
		dst, last, to = append(dst, newResume(r.API, r.primary, cut)), len(cut), end
	}
	return dst
}

// cutSkips drops from the end of skips, ranges of an unshifted Resume with their records, the
// runs of messages that end after n: those a message does not follow within n.
func cutSkips(skips []skip, n int32) []skip {
	for len(skips) > 0 {
		s := &skips[len(skips)-1]
		if s.to <= n {
			break
		}
		// Its last run: its records from the last that starts one.
		k := len(s.recs) - 1
		for k > 0 && !s.recs[k].fresh {
			k--
		}
		for _, x := range s.recs[k:] {
			s.elems -= x.elems
			s.texts -= x.texts
			s.paths -= x.paths
			s.groups -= x.grp
		}
		if k == 0 {
			skips = skips[:len(skips)-1]
			continue
		}
		s.to = s.recs[k].from
		s.run = s.recs[k-1].run
		s.recs = s.recs[:k]
	}
	return skips
}

// dirtyMessages marks, in buf (or a new slice when it is too short), the messages that hold a
// dirty text.
func (r *Request) dirtyMessages(dirty []int, buf []bool) []bool {
	bad := buf[:min(len(buf), len(r.msgs))]
	clear(bad)
	if len(r.msgs) > len(buf) {
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
	return bad
}

// ranges appends to skips the ranges of msgs, a body's records, from record first on, that a
// Resume may leave unread in a later body whose first n bytes are the body's, or, when drop >
// 0, whose bytes from that record's start to n are the body's, shift bytes earlier and with
// drop fewer messages before them in their list. A range is runs of messages: each starts at a
// message that continues no run, holds only clean messages not marked in bad, and ends before
// another message of its list that starts within n. With recs, a range keeps its records.
func ranges(skips []skip, msgs []message, first int, bad []bool, n, shift, drop int32, recs bool) []skip {
	var cur *skip // the range being built
	start := 0    // its first record
	// The run being read: its first record, its list index, whether it may be left unread,
	// and its counts.
	r0, rAt, rOK := 0, int32(0), false
	var rElems, rTexts, rPaths, rGroups int32
	at := int32(0) // the list index of record i
	for i := 0; i <= len(msgs); i++ {
		var x *message
		if i < len(msgs) {
			x = &msgs[i]
		}
		if i > 0 && (x == nil || x.fresh || x.list != msgs[i-1].list) {
			// The run from r0 ends before record i: it may be left unread when record i, of
			// its list, follows it within n.
			m := &msgs[r0]
			if rOK && x != nil && x.list == m.list && x.from <= n {
				if cur == nil || cur.list != m.list || cur.to != m.from-shift {
					skips = append(skips, skip{list: m.list, from: m.from - shift, at: rAt - drop, step: m.step,
						shift: shift, drop: drop})
					cur, start = &skips[len(skips)-1], r0
				}
				cur.elems += rElems
				cur.texts += rTexts
				cur.paths += rPaths
				cur.groups += rGroups
				cur.to = x.from - shift
				cur.run = msgs[i-1].run
				if recs {
					cur.recs = msgs[start:i]
				}
			} else {
				cur = nil
			}
			if x != nil && x.list != msgs[i-1].list {
				at = 0
			}
			r0 = i
		}
		if x == nil {
			break
		}
		if r0 == i {
			rAt, rOK = at, i >= first && x.fresh
			rElems, rTexts, rPaths, rGroups = 0, 0, 0, 0
		}
		rOK = rOK && x.clean && !bad[i] && (drop == 0 || x.elems == 1 && !x.long)
		rElems += x.elems
		rTexts += x.texts
		rPaths += x.paths
		if drop > 0 {
			rPaths -= x.paths - shiftedPaths(*x, int(at), int(at-drop))
		}
		rGroups += x.grp
		at += x.elems
	}
	return skips
}

// newResume returns the Resume of skips, nil when there are none.
func newResume(api API, primary int, skips []skip) *Resume {
	if len(skips) == 0 {
		return nil
	}
	if len(skips) > maxSkips {
		slices.SortFunc(skips, func(a, b skip) int { return int((b.to - b.from) - (a.to - a.from)) })
		skips = skips[:maxSkips]
		slices.SortFunc(skips, func(a, b skip) int { return int(a.from - b.from) })
	}
	res := &Resume{api: api, primary: primary}
	if len(skips) <= len(res.few) {
		res.skips = res.few[:copy(res.few[:], skips)]
	} else {
		res.skips = slices.Clone(skips)
	}
	return res
}

// Skipped returns how many bytes of the body ParseResumed left unread.
func (r *Request) Skipped() int { return r.skipped }
