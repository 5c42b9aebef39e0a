package scanservice

import (
	"context"
	"sync"
	"time"

	"github.com/promptwall/promptwall/store"
)

// unreserved remembers the payments whose reservation failed with an error
// in this server. The store may have taken the reservation all the same (a
// commit the network held lands later), while the client was told to retry.
// This server never sent such a payment to the facilitator, so when one
// turns up settling in its name it is released, not settled: charging it
// is the client's to choose, by retrying with it.
//
// However late the held commit lands: no other server takes up a payment
// of this one while it is alive (reconcileOnce), so none can be settling
// it while it is released. Once this server is gone, so is what it
// remembers, and a payment it left is settled as any left in flight: its
// client's retry is given the scan it was charged for.
type unreserved struct {
	mu sync.Mutex
	m  map[string]time.Time // when the reservation failed
}

// At most maxUnreserved keys, each for unreservedFor: a commit is not held
// longer than the network's timeouts. A key forgotten is settled by
// reconciliation as any payment left in flight.
const (
	unreservedFor = time.Hour
	maxUnreserved = 10_000
)

func (u *unreserved) put(key string, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]time.Time{}
	}
	if len(u.m) >= maxUnreserved {
		for k, at := range u.m {
			if now.Sub(at) > unreservedFor {
				delete(u.m, k)
			}
		}
		if len(u.m) >= maxUnreserved {
			return
		}
	}
	u.m[key] = now
}

func (u *unreserved) has(key string, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	at, ok := u.m[key]
	return ok && now.Sub(at) <= unreservedFor
}

func (u *unreserved) drop(key string) {
	u.mu.Lock()
	if len(u.m) > 0 {
		delete(u.m, key)
	}
	u.mu.Unlock()
}

// releaseUnsent releases p if this server's reservation of it failed and it
// was never sent: see unreserved. The caller holds p's claim in this
// process. It reports whether p was released.
func (h *Handler) releaseUnsent(ctx context.Context, p store.Payment) (bool, error) {
	if p.Owner != h.store.id || !h.store.unreserved.has(p.Key, h.now()) {
		return false, nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := h.store.Release(rctx, p.Key); err != nil {
		return false, err
	}
	h.store.unreserved.drop(p.Key)
	return true, nil
}
