package engine

import "github.com/promptwall/promptwall/bufpool"

// A long text's sanitized copy is as large as the text, and a firewall
// that sanitizes a 256 KiB document every request allocated, zeroed and
// collected one each time. The copies ScanCover makes (a Cover's) come
// from bufpool from minPooledCopy on, and Cover.Release gives them back.

// minPooledCopy is the size from which a Cover's copy comes from bufpool.
// Below it the copy is allocated to its size: a pooled buffer is a power
// of two of 4 KiB or more, which a short text's copy would mostly waste.
const minPooledCopy = 32 << 10

// takeCopy returns an empty buffer of capacity n or more for a copy.
func takeCopy(n int) []byte {
	if n >= minPooledCopy {
		return bufpool.Get(n)
	}
	return make([]byte, 0, n)
}

// Release hands the memory of c's sanitized copy (the Sanitized of the
// Result ScanCover returned with c, and what SanitizeScan with c returns
// when it sanitizes every match) back for a later copy. After it, that copy
// must not be used; SanitizeScan takes c for nil. A caller that cannot be
// sure of that need not call it. Release of a nil Cover, or a second time,
// does nothing.
func (c *Cover) Release() {
	if c == nil || c.sanitized == nil {
		return
	}
	bufpool.Put(c.sanitized) // which keeps only its own sizes
	c.sanitized, c.edits = nil, nil
}
