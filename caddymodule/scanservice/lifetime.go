package scanservice

import "sync"

// users counts who holds a config's engine and store: the config itself,
// and each request in flight. Caddy cleans a replaced config up while its
// server may still be finishing requests (a paid scan may be waiting on its
// settlement), so Cleanup only drops the config's hold: the engine and
// store go back to their pools when the last holder is done, and a request
// always finishes on the config it started with.
type users struct {
	mu   sync.Mutex
	n    int          // holders; the config's own hold is one of them
	free func() error // returns the engine and store; run once, at zero
	err  error        // what free returned
}

// start sets the config's own hold; free runs when every hold is dropped.
func (u *users) start(free func() error) {
	u.mu.Lock()
	u.n, u.free = 1, free
	u.mu.Unlock()
}

// acquire takes a hold for one request; false once every hold was dropped
// (the config is gone).
func (u *users) acquire() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n == 0 {
		return false
	}
	u.n++
	return true
}

// release drops one hold, and frees what is held with the last one.
func (u *users) release() error {
	u.mu.Lock()
	if u.n == 0 {
		u.mu.Unlock()
		return nil
	}
	u.n--
	free := u.n == 0 && u.free != nil
	u.mu.Unlock()
	if !free {
		return nil
	}
	err := u.free()
	u.mu.Lock()
	u.err = err
	u.mu.Unlock()
	return err
}
