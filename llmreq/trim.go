package llmreq

// Trimmed histories. A client near its model's context limit drops the oldest messages of its
// conversation (after the system message, or from the first), and a sliding-window client does
// so with every request: the body no longer begins with the bytes of the one before, and a
// Resume of a prefix leaves nothing unread. What follows the dropped messages is still the
// earlier body's bytes, at another offset: body' = body[:F] + body[F+Δ:E] + the new turn, with
// F the start of the first message dropped, F+Δ that of the first kept and E the end of a
// message. A History keeps the records of the earlier body's message list, and Trimmed makes
// the Resume of such a later body: the same ranges, Δ bytes earlier.
//
// The walk of the later body reads its messages as the earlier one did but for three counts:
// a kept message sits at a list index lower by the d messages dropped, and its texts' paths
// hold that index once, so their bytes are fewer by the digits it lost (shiftedPaths; a
// message with a path MaxPathLen cut is not left unread, its cut's length being another); the
// groups a range adds are counted from the walk's count where it begins (skip.groups is
// relative), not the earlier body's; and the element before a range is another, so its first
// message might continue the run that element left open: the walk voids the Resume then
// (joins), as it does for the message after a range. Every other state the walk carries from
// one message to the next is the same at a message that starts a run: the group before the
// run, the path up to the index, the rules bits asked for (clean messages ask for none).

// A History is the record of a body's last message list, message by message, with the
// messages that hold a dirty text marked: offsets and counts, never text. A caller keeps it to
// resume a later body that lost some of its oldest messages (Trimmed).
type History struct {
	api     API
	primary int
	msgs    []message
	bad     []bool
}

// History returns the History of the request's last message list, dirty as ResumeAt's. It is
// nil when the body was read by more than one walker, has no message list, or more than
// maxRecords messages.
func (r *Request) History(dirty []int) *History {
	if r.primary < 0 || len(r.msgs) == 0 || len(r.msgs) > maxRecords {
		return nil
	}
	list := r.msgs[len(r.msgs)-1].list
	k := len(r.msgs) - 1
	for k > 0 && r.msgs[k-1].list == list {
		k--
	}
	bad := noDirty[:len(r.msgs)] // read only
	if len(dirty) > 0 {
		bad = r.dirtyMessages(dirty, nil)
	}
	return &History{api: r.API, primary: r.primary, msgs: r.msgs[k:], bad: bad[k:]}
}

// noDirty marks no message: the marks of a History without dirty texts.
var noDirty [maxRecords]bool

// Len returns how many records the History has: one per message, or per range a Resume left
// unread when the body's list was too long to record them one by one.
func (h *History) Len() int { return len(h.msgs) }

// Message returns the first byte of record j and the first byte of the next (for the last:
// the byte after it).
func (h *History) Message(j int) (from, to int) {
	return int(h.msgs[j].from), int(h.msgs[j].to)
}

// Trimmed returns the Resume for a later body that is this one's bytes up to the start of
// record a, then this one's bytes from the start of record b (b > a) up to at least n, a
// message boundary: the records from a to b dropped. The caller must make sure of those bytes
// (keyed hashes, say). The Resume leaves unread what ResumeAt would of the records from b on,
// each a single clean message with no path cut, ending before a message that starts within n.
// It is nil when there is nothing to leave unread.
func (h *History) Trimmed(a, b, n int) *Resume {
	if a < 0 || b <= a || b >= len(h.msgs) {
		return nil
	}
	shift := h.msgs[b].from - h.msgs[a].from
	var drop int32
	for _, m := range h.msgs[a:b] {
		drop += m.elems
	}
	skips := ranges(nil, h.msgs, b, h.bad, int32(n), shift, drop, true)
	return newResume(h.api, h.primary, skips)
}
