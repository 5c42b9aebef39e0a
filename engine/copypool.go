package engine

import "sync"

// A long text's sanitized copy is as large as the text, and a firewall
// that sanitizes a 256 KiB document every request allocated, zeroed and
// collected one each time. The copies ScanCover makes (a Cover's) can be
// handed back with Cover.Release for a later one to reuse.

// minPooledCopy is the size from which a Cover's copy comes from the pool;
// below it an allocation is cheaper than the pool's traffic.
const minPooledCopy = 32 << 10

// maxPooledCopy bounds the copies kept for reuse.
const maxPooledCopy = 4 << 20

var copyPool sync.Pool // *[]byte, length 0

// takeCopy returns an empty buffer of capacity n or more for a copy.
func takeCopy(n int) []byte {
	if n >= minPooledCopy {
		if p, ok := copyPool.Get().(*[]byte); ok && cap(*p) >= n {
			return *p
		}
	}
	return make([]byte, 0, n)
}

// Release hands the memory of c's sanitized copy (the Sanitized of the
// Result ScanCover returned with c, and what SanitizeScan with c returns
// when it sanitizes every match) back for a later copy. After it, that copy
// must not be used, nor c given to SanitizeScan again (it is then taken for
// nil). A caller that cannot be sure of that need not call it. Release of
// a nil Cover, or a second time, does nothing.
func (c *Cover) Release() {
	if c == nil || c.sanitized == nil {
		return
	}
	if b := c.sanitized; cap(b) >= minPooledCopy && cap(b) <= maxPooledCopy {
		putCopy(b)
	}
	c.sanitized, c.edits, c.size = nil, nil, -1
}

// putCopy pools b, apart from Release so that only a put allocates its
// pointer.
func putCopy(b []byte) {
	b = b[:0]
	copyPool.Put(&b)
}
