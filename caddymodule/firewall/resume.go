package firewall

import (
	"hash/maphash"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/promptwall/promptwall/llmreq"
)

// The resume table: the safe-text cache's memory of whole messages. A
// chat client resends its conversation with every turn, so a long
// request is mostly bytes the firewall saw from that client a turn ago;
// the safe-text cache spares scanning their texts, but finding the texts
// still means parsing them. The resume table spares that too: it
// remembers, by a keyed hash of a body's first bytes, which runs of
// messages in them held no text with a match (llmreq.Resume), and a later
// body of the same client that begins with the same bytes is parsed
// without them (llmreq.ParseResumed). A resent history then costs hashing
// its bytes: about 6 µs for 256 KiB (BenchmarkPrefixes).
//
// Its rules are the cache's. It holds no text: the hashes, and offsets
// and counts. It is per client: the client's key seeds every hash, with
// the URL path (the API the body is read as). A message with a match is
// never left unread: its texts are scanned every time. The hashes are
// keyed (hash/maphash, seeded at random per handler) and 64 bits long: a
// body whose prefix hashes like another's by chance (2^-64) would be
// taken for it.
//
// Prefixes are hashed at multiples of resumeBlock, in one pass over the
// body: the hash of the first k blocks chains the hash of the first k-1
// with that of block k. A Resume is kept for a few places where the next
// body of the conversation is likely to part from this one (llmreq's
// Boundaries: the end of the last message, or the start of one of the
// last few), under the hash of the blocks before the place, with the
// place and a hash of the bytes from the last block to it. A body is
// resumed by the entry of its longest prefix of whole blocks whose bytes
// up to the place match. Each block has two slots: one for the end of the
// last message (a turn added), one for the others (turns edited or
// regenerated).
type resumeTable struct {
	trims *trimTable // trim.go
	seed  maphash.Seed
	mask  uint64
	slots []resumeSlot
	// keys[i] is the key of slots[i], written under its lock and read
	// without it too: find passes over a slot of another key with one
	// load, and a body seen first probes two slots a block.
	keys  []atomic.Uint64
	locks [64]sync.Mutex // slot i is under locks[i%64]
}

// resumeSlot is the entry of the Resume res for a body whose first at
// bytes are those hashed: its key (in resumeTable.keys) of the whole
// blocks before at and the slot's way, tail of the rest.
type resumeSlot struct {
	tail uint64
	at   int
	res  *llmreq.Resume
}

// resumeBlock is the granularity of the hashed prefixes, in bytes.
const resumeBlock = 1 << 10

// resumeShare is how many safe-text cache entries there are for one slot
// of the resume table: a request keeps a few Resumes, a long one
// hundreds of texts. The default cache has 8192 slots.
const resumeShare = 8

// sumsPool holds the prefix hashes of a request, 2 KiB for 256 KiB.
var sumsPool = sync.Pool{New: func() any { return new([]uint64) }}

func getSums() *[]uint64 { return sumsPool.Get().(*[]uint64) }

// putSums returns sums to the pool unless a huge body made it large.
func putSums(sums *[]uint64) {
	if cap(*sums) <= 1<<14 {
		sumsPool.Put(sums)
	}
}

// resumePlaces is how many of a body's last messages a Resume is kept at,
// besides its end.
const resumePlaces = 6

// newResumeTable returns a table of entries slots, rounded up to a power
// of two.
func newResumeTable(entries int) *resumeTable {
	n := 1 << bits.Len(uint(max(entries, 1)-1))
	return &resumeTable{seed: maphash.MakeSeed(), mask: uint64(n - 1), slots: make([]resumeSlot, n), keys: make([]atomic.Uint64, n),
		trims: newTrimTable(max(entries*resumeShare/trimShare, 1))}
}

// prefixes appends to dst[:0] the hashes of body's first k*resumeBlock
// bytes, k = 1, 2, ..., for client's requests to urlPath.
func (t *resumeTable) prefixes(dst []uint64, client uint64, urlPath string, body []byte) []uint64 {
	dst = dst[:0]
	h := hashString(t.seed, urlPath) ^ client
	for off := resumeBlock; off <= len(body); off += resumeBlock {
		h = chain(h, hashBytes(t.seed, body[off-resumeBlock:off]))
		dst = append(dst, h)
	}
	return dst
}

// chain returns the hash of a prefix whose bytes before its last block
// hash to h, and whose last block hashes to b (keyed). For a given b it is
// a bijection of h (murmur3's finalizer of h^b): two prefixes that part
// at some block hash alike at a later one only if they do at that block,
// where their keyed hashes differ unpredictably: 2^-64, as with maphash
// of the pair, for a fifth less time (BenchmarkPrefixes).
func chain(h, b uint64) uint64 {
	h ^= b
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

// tailSum hashes body[k*resumeBlock:at], after the hash of the blocks
// before it.
func (t *resumeTable) tailSum(sum uint64, body []byte, k, at int) uint64 {
	return chain(sum, hashBytes(t.seed, body[k*resumeBlock:at]))
}

// lookup returns the Resume of body, whose prefix hashes are sums, sent
// by client to urlPath: the resume table's, or the trim table's when it
// leaves more unread (tr: how the body is the client's last, trimmed). A
// trimmed history may share a short prefix with an earlier body (its
// system message), so the trim table is asked unless most of the body
// is resumed.
func (t *resumeTable) lookup(client uint64, urlPath string, sums []uint64, body []byte) (res *llmreq.Resume, tr trim) {
	if res = t.find(sums, body); res != nil && res.Bytes() >= len(body)/2 {
		return res, trim{}
	}
	if tr = t.findTrim(client, urlPath, sums, body); tr.res != nil && (res == nil || tr.res.Bytes() > res.Bytes()) {
		return tr.res, tr
	}
	return res, trim{}
}

// remember records req's body for later bodies of client's to urlPath:
// the Resumes at its boundaries (keep) and the client's last body
// (keepTrim); dirty are the texts that must be read again (dirtyTexts),
// tr what lookup found.
func (t *resumeTable) remember(client uint64, urlPath string, sums []uint64, body []byte, req *llmreq.Request, dirty []int, tr trim) {
	t.keep(sums, body, req, dirty)
	t.keepTrim(client, urlPath, sums, body, req, dirty, tr)
}

// find returns the Resume of body, whose prefix hashes are sums, for the
// longest prefix that has one.
func (t *resumeTable) find(sums []uint64, body []byte) *llmreq.Resume {
	for k := len(sums); k > 0; k-- {
		for way := range uint64(2) {
			key := sums[k-1] ^ way
			if t.keys[key&t.mask].Load() != key {
				continue
			}
			slot, mu := t.slot(key)
			mu.Lock()
			s, ok := *slot, t.keys[key&t.mask].Load() == key // not taken since
			mu.Unlock()
			if ok && s.res != nil && s.at >= k*resumeBlock && s.at <= len(body) &&
				s.at < (k+1)*resumeBlock && t.tailSum(sums[k-1], body, k, s.at) == s.tail {
				return s.res
			}
		}
	}
	return nil
}

// keep records, for req's body, whose prefix hashes are sums, the Resumes
// that leave its clean runs of messages unread in a later body; dirty are
// the texts that must be read again (their indices in req.Texts: see
// dirtyTexts).
func (t *resumeTable) keep(sums []uint64, body []byte, req *llmreq.Request, dirty []int) {
	// The places past the first block (before it: a small body, cheap to
	// read), with their way.
	var placeBuf [resumePlaces + 1]int
	var wayBuf [resumePlaces + 1]uint64
	places, ways := placeBuf[:0], wayBuf[:0]
	for i, at := range req.Boundaries(resumePlaces) {
		if k := at / resumeBlock; k > 0 && k <= len(sums) {
			places, ways = append(places, at), append(ways, uint64(min(i, 1)))
		}
	}
	var resBuf [resumePlaces + 1]*llmreq.Resume
	for i, res := range req.ResumesAt(resBuf[:0], places, dirty) {
		if res == nil {
			continue
		}
		at, k, way := places[i], places[i]/resumeBlock, ways[i]
		key := sums[k-1] ^ way
		s := resumeSlot{tail: t.tailSum(sums[k-1], body, k, at), at: at, res: res}
		slot, mu := t.slot(key)
		mu.Lock()
		*slot = s
		t.keys[key&t.mask].Store(key)
		mu.Unlock()
	}
}

// slot returns key's slot and the lock it is under.
func (t *resumeTable) slot(key uint64) (*resumeSlot, *sync.Mutex) {
	i := key & t.mask
	return &t.slots[i], &t.locks[i%uint64(len(t.locks))]
}

// dirtyTexts returns the indices of the texts of o's request that a
// Resume must not leave unread: those with a match, alone or as part of
// their message's joined text.
func dirtyTexts(o *outcome) []int {
	var dirty []int
	for _, fl := range o.flagged {
		if fl.index >= 0 {
			dirty = append(dirty, fl.index)
		}
	}
	return append(dirty, o.joined...)
}
