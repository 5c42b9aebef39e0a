package scanservice

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"time"
)

// Lost answers, recovered by payment-identifier (x402 extension): a client
// that resends a payment carrying an identifier, with the same text, after
// its answer was lost in transit, gets the same scan again. The extension
// asks for the answer to be kept; this one holds the text, which is never
// kept. What is kept instead, in memory only and for replayWindow, is a
// keyed MAC of the text under a key made at start and never written: it
// tells the same text again from another, and nothing else, and it is gone
// with the process.
const (
	replayWindow = 10 * time.Minute
	maxReplays   = 100_000 // about 10 MB at most
)

type replays struct {
	mu  sync.Mutex
	key [32]byte
	m   map[string]replay
}

type replay struct {
	mac   [sha256.Size]byte
	until time.Time
}

func newReplays() *replays {
	r := &replays{m: map[string]replay{}}
	rand.Read(r.key[:]) // never fails (crypto/rand)
	return r
}

func (r *replays) mac(paymentKey, text string) [sha256.Size]byte {
	m := hmac.New(sha256.New, r.key[:])
	m.Write([]byte(paymentKey))
	m.Write([]byte{0})
	m.Write([]byte(text))
	var out [sha256.Size]byte
	copy(out[:], m.Sum(nil))
	return out
}

// put remembers that paymentKey's scan was of text, until now+replayWindow.
// When full it drops what expired; if still full, it remembers nothing (a
// resend then gets 402, as without the extension).
func (r *replays) put(paymentKey, text string, now time.Time) {
	mac := r.mac(paymentKey, text)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= maxReplays {
		for k, v := range r.m {
			if now.After(v.until) {
				delete(r.m, k)
			}
		}
		if len(r.m) >= maxReplays {
			return
		}
	}
	r.m[paymentKey] = replay{mac: mac, until: now.Add(replayWindow)}
}

// match reports whether paymentKey's scan was of text, within the window.
func (r *replays) match(paymentKey, text string, now time.Time) bool {
	mac := r.mac(paymentKey, text)
	r.mu.Lock()
	v, ok := r.m[paymentKey]
	r.mu.Unlock()
	return ok && !now.After(v.until) && hmac.Equal(v.mac[:], mac[:])
}
