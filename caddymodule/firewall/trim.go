package firewall

import (
	"hash/maphash"
	"math/bits"
	"sync"

	"github.com/promptwall/promptwall/llmreq"
)

// The trim table: the resume table's memory of a client's last body,
// for a body that lost its oldest messages. A client near its context
// limit drops them (a sliding-window client with every request), so the
// body no longer begins with the bytes of the one before and no prefix
// fits; but what it kept is the earlier body's bytes, a few messages
// earlier: body[:F] + body[F+Δ:E] + the new turn, F the start of the
// first message dropped, F+Δ that of the first kept.
//
// Per client and URL path, the table keeps a recent body's message list
// (the last trimmed one, or one an eighth new since the entry before)
// (llmreq.History: offsets and counts, its messages with a match marked)
// and keyed hashes of it: of the bytes before each of its first
// trimHeads messages (the head a trim keeps: a system message, say), of
// the first trimLead bytes of each message (to find the first kept one),
// and of each message's bytes. A body that no Resume of the resume table
// fits is tried against it: a head that matches gives F, the hash of
// its trimLead bytes at F a candidate for the first kept message, and the
// hashes of the messages from there on, taken at their offsets less Δ,
// how far the kept bytes are the earlier body's. llmreq.History.Trimmed
// makes the Resume. The rules are the resume table's: keyed hashes
// (its seed), no text, per client, a message with a match never left
// unread.
//
// An entry holds 53 bytes per message (its record, 36; a mark; two
// hashes) and 8 per KiB of body (its prefix hashes), for a list of at
// most 1024 messages in a body of at most trimMaxBody: 18 KiB for a
// 256 KiB conversation of 300 messages, 86 KiB at most.
type trimTable struct {
	mask  uint64
	slots []*trimEntry
	locks [64]sync.Mutex
}

// trimEntry is the record of a client's last body.
type trimEntry struct {
	key   uint64 // the client's key and the URL path
	hist  *llmreq.History
	sums  []uint64          // the body's prefix hashes
	heads [trimHeads]uint64 // of the bytes before each of the first messages
	msgs  []trimHashes      // of each message
}

// trimHashes are the hashes of one message: of its first trimLead bytes
// (0: too few to hash), and of its bytes.
type trimHashes struct{ lead, piece uint64 }

const (
	trimHeads   = 4        // the first messages a trim may start with
	trimLead    = 64       // the bytes that find the first kept message
	trimTries   = 4        // candidates for it verified
	trimShare   = 256      // safe-text cache entries per client entry
	trimStale   = 8        // a body 1/8 new since its client's entry replaces it
	trimMinBody = 16 << 10 // smaller bodies are cheap to read whole: not recorded
	// trimMinMessages is the shortest message list recorded: a head, a
	// message dropped, one kept.
	trimMinMessages = 3
	trimMaxBody     = 4 << 20 // larger bodies are not recorded
)

func newTrimTable(entries int) *trimTable {
	n := 1 << bits.Len(uint(max(entries, 1)-1))
	return &trimTable{mask: uint64(n - 1), slots: make([]*trimEntry, n)}
}

// trimKey is the key of client's entry for urlPath.
func (t *resumeTable) trimKey(client uint64, urlPath string) uint64 {
	return maphash.Comparable(t.seed, [2]uint64{client, hashString(t.seed, urlPath)})
}

// entry returns key's entry, or nil.
func (t *trimTable) entry(key uint64) *trimEntry {
	i := key & t.mask
	mu := &t.locks[i%uint64(len(t.locks))]
	mu.Lock()
	e := t.slots[i]
	mu.Unlock()
	if e == nil || e.key != key {
		return nil
	}
	return e
}

func (t *trimTable) put(e *trimEntry) {
	i := e.key & t.mask
	mu := &t.locks[i%uint64(len(t.locks))]
	mu.Lock()
	t.slots[i] = e
	mu.Unlock()
}

// headSum hashes body[:at] after the prefix hashes sums of its whole
// blocks, for client's requests to urlPath.
func (t *resumeTable) headSum(client uint64, urlPath string, sums []uint64, body []byte, at int) uint64 {
	k := at / resumeBlock
	sum := hashString(t.seed, urlPath) ^ client
	if k > 0 {
		sum = sums[k-1]
	}
	return t.tailSum(sum, body, k, at)
}

// trim is how a body was found to be an earlier one, trimmed: its bytes
// before from are the earlier body's, and so are those from from to to,
// shift bytes later in the earlier body. The zero trim found nothing.
type trim struct {
	res      *llmreq.Resume
	prev     *trimEntry
	from, to int
	shift    int
}

// findTrim returns the Resume of body (prefix hashes sums), sent by
// client to urlPath, as its last body trimmed, if it is one.
func (t *resumeTable) findTrim(client uint64, urlPath string, sums []uint64, body []byte) trim {
	e := t.trims.entry(t.trimKey(client, urlPath))
	if e == nil {
		return trim{}
	}
	h := e.hist
	tries := 0 // candidates verified, each costing a hash of the body at most
	for a := min(trimHeads, h.Len()) - 1; a >= 0 && tries < trimTries; a-- {
		fa, _ := h.Message(a)
		if fa+trimLead > len(body) || t.headSum(client, urlPath, sums, body, fa) != e.heads[a] {
			continue
		}
		lead := hashBytes(t.seed, body[fa:fa+trimLead])
		for b := a + 1; b < h.Len() && tries < trimTries; b++ {
			if e.msgs[b].lead != lead || lead == 0 {
				continue
			}
			tries++
			fb, _ := h.Message(b)
			shift, n := fb-fa, fb
			for j := b; j < h.Len(); j++ {
				from, to := h.Message(j)
				if to-shift > len(body) || hashBytes(t.seed, body[from-shift:to-shift]) != e.msgs[j].piece {
					break
				}
				n = to
			}
			if res := h.Trimmed(a, b, n); res != nil {
				return trim{res: res, prev: e, from: fa, to: n - shift, shift: shift}
			}
		}
	}
	return trim{}
}

// keepTrim records req's body (prefix hashes sums), sent by client to
// urlPath, as the client's last, unless it only adds to the last by less
// than 1/trimStale of its length; dirty as keep's. The hashes of messages
// whose bytes the client's last body held at a known offset (tr, or a
// prefix their prefix hashes share) are taken from its entry.
func (t *resumeTable) keepTrim(client uint64, urlPath string, sums []uint64, body []byte, req *llmreq.Request, dirty []int, tr trim) {
	key := t.trimKey(client, urlPath)
	if len(body) < trimMinBody || len(body) > trimMaxBody {
		return
	}
	prev := tr.prev
	if prev == nil {
		prev = t.trims.entry(key)
	}
	// same: the body's bytes before it are prev's.
	same := tr.from
	if prev != nil {
		k := 0
		for k < len(sums) && k < len(prev.sums) && sums[k] == prev.sums[k] {
			k++
		}
		same = max(same, k*resumeBlock)
		if tr.res == nil && len(body)-same < len(body)/trimStale {
			// The body is prev's and a little more (a turn added): prev
			// will do for a later trim, which reads the little more.
			return
		}
	}
	// A list of two keeps nothing a trim could resume but its second
	// message, and a body of two is mostly a long document, which each
	// request would hash again for nothing (25 µs in 256 KiB).
	h := req.History(dirty)
	if h == nil || h.Len() < trimMinMessages {
		return
	}
	e := &trimEntry{key: key, hist: h, sums: append([]uint64(nil), sums...), msgs: make([]trimHashes, h.Len())}
	_, end := h.Message(h.Len() - 1)
	i := 0 // prev's record
	for j := range h.Len() {
		from, to := h.Message(j)
		if j < trimHeads {
			e.heads[j] = t.headSum(client, urlPath, sums, body, from)
		}
		// A hash of bytes this body holds where the last one did, shift
		// bytes later, is the last one's.
		shift, lo, hi := 0, 0, same
		if tr.res != nil && from >= tr.from {
			shift, lo, hi = tr.shift, tr.from, tr.to
		}
		// prev's records, in order, at offsets that grow with j's.
		known := false
		if prev != nil {
			for ; i < prev.hist.Len(); i++ {
				if f, _ := prev.hist.Message(i); f >= from+shift {
					break
				}
			}
			if i < prev.hist.Len() {
				f, pt := prev.hist.Message(i)
				known = f == from+shift && pt == to+shift
			}
		}
		if known && from >= lo && to <= hi {
			e.msgs[j].piece = prev.msgs[i].piece
		} else {
			e.msgs[j].piece = hashBytes(t.seed, body[from:to])
		}
		switch {
		case from+trimLead > end:
		case known && from+trimLead <= hi && prev.msgs[i].lead != 0:
			e.msgs[j].lead = prev.msgs[i].lead
		default:
			e.msgs[j].lead = hashBytes(t.seed, body[from:from+trimLead])
		}
	}
	t.trims.put(e)
}
