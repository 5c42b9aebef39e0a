package firewall

import (
	"hash/maphash"
	"math/bits"
	"net"
	"net/http"
	"sync"
)

// The safe-text cache. Chat APIs are stateless: every turn of a
// conversation sends its whole history again, so without a memory the
// firewall scans the first message of a long chat once per turn, and a
// document pasted into it (real material scans at about 100 MB/s) costs
// milliseconds on every turn. The cache remembers the texts in which a scan
// found no match at all, so that a text sent again by the same client is
// not scanned again. A text with any match is scanned every time.
//
// It holds no text: only keyed hashes (hash/maphash, seeded at random per
// handler, so neither an attacker nor a later process can compute them).
// A text is found only by a full 64-bit hash of it; a text whose hash
// equals another's by chance (2^-64 per lookup) would be taken for safe.
//
// Entries are per client, keyed by the credentials a request carries
// (Authorization, X-Api-Key, X-Goog-Api-Key, Api-Key, the query) and its
// remote address: whether a text is cached shows in a request's timing, and
// that must not tell one client what another sent.
//
// A long text is looked up by a tag hashed from its length, its head and
// its tail, and its full hash is computed only once the tag has been seen
// before: a text sent once (a new document) costs hashing a few KiB, not
// a second pass over all of it. It is then cached from its second scan
// and found from its third sending on. A short text's tag is its full
// hash: it is found from its second sending.
type safeCache struct {
	client, tag, sum maphash.Seed
	mask             uint64
	slots            []cacheSlot
	locks            [64]sync.Mutex // slot i is under locks[i%64]
}

// cacheSlot is one entry: the tag of a text, and for a long text its full
// hash, 0 until its second scan (sums are never 0: see fullSum).
type cacheSlot struct{ tag, sum uint64 }

// tagSpan is how much of a long text's head, and of its tail, its tag
// hashes; a text of at most twice that is hashed whole.
const tagSpan = 2 << 10

// DefaultSafeCache is the default number of entries: 1 MiB of them.
// maxSafeCache bounds the option: 1 GiB.
const (
	DefaultSafeCache = 1 << 16
	maxSafeCache     = 1 << 26
)

// newSafeCache returns a cache of entries entries rounded up to a power of
// two.
func newSafeCache(entries int) *safeCache {
	n := 1 << bits.Len(uint(max(entries, 1)-1))
	return &safeCache{
		client: maphash.MakeSeed(),
		tag:    maphash.MakeSeed(),
		sum:    maphash.MakeSeed(),
		mask:   uint64(n - 1),
		slots:  make([]cacheSlot, n),
	}
}

// credentialHeaders are the request headers that carry an API key, in the
// APIs the firewall knows.
var credentialHeaders = []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key"}

// clientKey is the key of the request's client: its credentials and its
// address.
func (c *safeCache) clientKey(r *http.Request) uint64 {
	var h maphash.Hash
	h.SetSeed(c.client)
	for _, name := range credentialHeaders {
		for _, v := range r.Header[name] {
			h.WriteString(name)
			h.WriteByte(0)
			h.WriteString(v)
			h.WriteByte(0)
		}
	}
	h.WriteString(r.URL.RawQuery) // Gemini's ?key=
	h.WriteByte(0)
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	h.WriteString(host)
	return h.Sum64()
}

// probe is what a lookup learned, for remember.
type probe struct {
	tag  uint64
	seen bool   // a long text whose tag was there: its next safe scan caches it
	sum  uint64 // its full hash, when computed
}

// lookup reports whether text is cached for client.
func (c *safeCache) lookup(client uint64, text string) (p probe, hit bool) {
	p.tag = c.tagOf(client, text)
	s := c.load(p.tag)
	if s.tag != p.tag {
		return p, false
	}
	if len(text) <= 2*tagSpan {
		return p, true // the tag is the full hash
	}
	p.seen = true
	if s.sum == 0 {
		return p, false
	}
	p.sum = c.fullSum(client, text)
	return p, s.sum == p.sum
}

// remember records that a scan found no match in text, which lookup
// returned p for.
func (c *safeCache) remember(p *probe, client uint64, text string) {
	s := cacheSlot{tag: p.tag}
	if p.seen { // a long text, seen before: worth its full hash now
		if p.sum == 0 {
			p.sum = c.fullSum(client, text)
		}
		s.sum = p.sum
	}
	c.store(s)
}

// load returns the entry in tag's slot; store puts s in its tag's slot.
func (c *safeCache) load(tag uint64) cacheSlot {
	slot, mu := c.slot(tag)
	mu.Lock()
	defer mu.Unlock()
	return *slot
}

func (c *safeCache) store(s cacheSlot) {
	slot, mu := c.slot(s.tag)
	mu.Lock()
	defer mu.Unlock()
	*slot = s
}

// slot returns tag's slot and the lock it is under.
func (c *safeCache) slot(tag uint64) (*cacheSlot, *sync.Mutex) {
	i := tag & c.mask
	return &c.slots[i], &c.locks[i%uint64(len(c.locks))]
}

// tagOf hashes a short text whole, and a long one's length, head and tail.
// The client's key is mixed in after hashing: one call of hashString
// costs a third of streaming the key and the text through a maphash.Hash.
// For one client, two texts share a tag only when their hashes collide.
func (c *safeCache) tagOf(client uint64, text string) uint64 {
	if len(text) <= 2*tagSpan {
		return hashString(c.tag, text) ^ client
	}
	head := hashString(c.tag, text[:tagSpan])
	tail := hashString(c.tag, text[len(text)-tagSpan:])
	return (head ^ bits.RotateLeft64(tail, 29) ^ uint64(len(text))*0x9e3779b97f4a7c15) ^ client
}

// fullSum hashes all of a long text; never 0, which marks no sum.
func (c *safeCache) fullSum(client uint64, text string) uint64 {
	return max(hashString(c.sum, text)^client, 1)
}
