package scanservice

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/x402"
)

// mintedWallet is the i-th of a script's made-up wallets: any 32 bytes
// are a valid address, no key needed.
func mintedWallet(i int) string {
	var b [32]byte
	copy(b[:], "minted wallet")
	binary.BigEndian.PutUint64(b[24:], uint64(i))
	return x402.Base58Encode(b[:])
}

// precheckFrom sends one pre-check for caller from client address addr.
// With via set, the request comes from the proxy via and addr is the
// client IP Caddy determined from it, as with trusted_proxies.
func (th *testHandler) precheckFrom(caller, addr, via string) *httptest.ResponseRecorder {
	b, _ := json.Marshal(map[string]string{"text": "hello", "caller": caller})
	r := httptest.NewRequest("POST", "/precheck", strings.NewReader(string(b)))
	r.RemoteAddr = net.JoinHostPort(addr, "4711")
	if via != "" {
		r.RemoteAddr = net.JoinHostPort(via, "443")
		ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: addr})
		r = r.WithContext(ctx)
	}
	w := httptest.NewRecorder()
	th.ServeHTTP(w, r, nextHandler)
	return w
}

// refusedLimit is the limit a 429 body names.
func refusedLimit(w *httptest.ResponseRecorder) string {
	var e apiError
	json.Unmarshal(w.Body.Bytes(), &e)
	return e.Error.Limit
}

func TestAddressKey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"203.0.113.7", "ip:203.0.113.7"},
		{"::ffff:203.0.113.7", "ip:203.0.113.7"},
		{"2001:db8:1:2::1", "ip:2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "ip:2001:db8:1:2::/64"},
		{"2001:DB8:1:2::abcd", "ip:2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "ip:2001:db8:1:3::/64"},
		{"fe80::1%eth0", "ip:fe80::/64"},
		{"::1", "ip:::/64"},
		{"", unknownAddress},
		{"@", unknownAddress},
		{"203.0.113.7:80", unknownAddress},
		{"not an address", unknownAddress},
		{strings.Repeat("1", 10000), unknownAddress},
	} {
		if got := addressKey(tc.in); got != tc.want {
			t.Errorf("addressKey(%.40q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestClientAddress(t *testing.T) {
	for _, tc := range []struct {
		name, remote string
		vars         map[string]any
		want         string
	}{
		{"peer without caddy", "198.51.100.4:5555", nil, "198.51.100.4"},
		{"ipv6 peer", "[2001:db8::7]:5555", nil, "2001:db8::7"},
		{"caddy's client ip wins", "10.0.0.2:5555", map[string]any{caddyhttp.ClientIPVarKey: "203.0.113.9"}, "203.0.113.9"},
		{"empty client ip: the peer", "10.0.0.2:5555", map[string]any{caddyhttp.ClientIPVarKey: ""}, "10.0.0.2"},
		{"unix socket", "@", map[string]any{caddyhttp.ClientIPVarKey: ""}, "@"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/precheck", nil)
			r.RemoteAddr = tc.remote
			if tc.vars != nil {
				r = r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, tc.vars))
			}
			if got := clientAddress(r); got != tc.want {
				t.Fatalf("clientAddress = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPrecheckAddressLimit walks one UTC day of pre-checks from a few
// addresses: the wallet limits hold as before, an address (IPv4, or an
// IPv6 /64) is bounded whatever wallets it names, and a refusal by either
// limit charges neither counter.
func TestPrecheckAddressLimit(t *testing.T) {
	th := newTestHandler(t, &Handler{Free: true, PrecheckDailyLimit: 2, PrecheckAddressDailyLimit: 3})
	start := th.clock.Now()
	const v4, v4b = "203.0.113.7", "198.51.100.1"
	const v6a, v6b, v6c = "2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:db8:1:3::1"
	w := func(i int) string { return mintedWallet(i) }
	for i, st := range []struct {
		name       string
		at         time.Duration
		wallet     string
		addr, via  string
		status     int
		limit      string
		retryAfter string
	}{
		{"first wallet", 0, w(1), v4, "", 200, "", ""},
		{"wallet too soon: address not charged", time.Second, w(1), v4, "", 429, "interval", "4"},
		{"second wallet", time.Second, w(2), v4, "", 200, "", ""},
		{"third wallet: the address's third", time.Second, w(3), v4, "", 200, "", ""},
		{"fourth wallet: address full", time.Second, w(4), v4, "", 429, "address_daily_limit", fmt.Sprint(12*3600 - 1)},
		{"mapped IPv6 is the IPv4 address", time.Second, w(4), "::ffff:" + v4, "", 429, "address_daily_limit", fmt.Sprint(12*3600 - 1)},
		{"through a trusted proxy", time.Second, w(4), v4, "10.0.0.2", 429, "address_daily_limit", fmt.Sprint(12*3600 - 1)},
		{"the proxy's own address is not the client's", time.Second, w(5), v4b, v4, 200, "", ""},
		// Had the refusals charged wallet 4, the interval would refuse it.
		{"refused wallet elsewhere: uncharged", time.Second, w(4), v6a, "", 200, "", ""},
		{"same /64", time.Second, w(6), v6b, "", 200, "", ""},
		{"too soon and address full: the longer wait", 2 * time.Second, w(2), v4, "", 429, "address_daily_limit", fmt.Sprint(12*3600 - 2)},
		{"third from the /64", 10 * time.Second, w(1), v6b, "", 200, "", ""},
		{"/64 full", 11 * time.Second, w(7), v6a, "", 429, "address_daily_limit", fmt.Sprint(12*3600 - 11)},
		{"next /64 is another address", 11 * time.Second, w(7), v6c, "", 200, "", ""},
		{"wallet's day used up", 20 * time.Second, w(1), v6c, "", 429, "daily_limit", fmt.Sprint(12*3600 - 20)},
		{"wallet and address both full: the address is named", 20 * time.Second, w(1), v4, "", 429, "address_daily_limit", fmt.Sprint(12*3600 - 20)},
		{"next UTC day", 12 * time.Hour, w(4), v4, "", 200, "", ""},
		{"next UTC day, used-up wallet", 12 * time.Hour, w(1), v4, "", 200, "", ""},
	} {
		th.clock.set(start.Add(st.at))
		r := th.precheckFrom(st.wallet, st.addr, st.via)
		if r.Code != st.status || refusedLimit(r) != st.limit || r.Header().Get("Retry-After") != st.retryAfter {
			t.Fatalf("step %d (%s): %d limit %q Retry-After %q %s; want %d %q %q",
				i, st.name, r.Code, refusedLimit(r), r.Header().Get("Retry-After"), r.Body, st.status, st.limit, st.retryAfter)
		}
		if r.Code == 429 && (errorCode(t, r) != "rate_limited" || !strings.Contains(r.Body.String(), `"retry_after":`+st.retryAfter)) {
			t.Fatalf("step %d (%s): 429 body %s", i, st.name, r.Body)
		}
		if st.limit == "address_daily_limit" && !strings.Contains(r.Body.String(), "3 free pre-checks") {
			t.Fatalf("step %d (%s): message does not give the bound: %s", i, st.name, r.Body)
		}
	}
}

// TestPrecheckAddressUnlimited: with the address limit off, wallets from
// one address are bounded by their own limits only, and no address
// counter is kept.
func TestPrecheckAddressUnlimited(t *testing.T) {
	th := newTestHandler(t, &Handler{Free: true, PrecheckAddressDailyLimit: -1})
	for i := range 20 {
		if r := th.precheckFrom(mintedWallet(i), "203.0.113.7", ""); r.Code != 200 {
			t.Fatalf("pre-check %d: %d %s", i, r.Code, r.Body)
		}
	}
	if r := th.precheckFrom(mintedWallet(0), "203.0.113.7", ""); r.Code != 429 || refusedLimit(r) != "interval" {
		t.Fatalf("a wallet again: %d %s, want its interval", r.Code, r.Body)
	}
	q, err := th.store.Precheck(context.Background(), addressKey("203.0.113.7"), th.clock.Now(), 0, 0)
	if err != nil || !q.Allowed || q.Used != 1 {
		t.Fatalf("the address's counter: %+v %v, want a fresh one", q, err)
	}
}

// FuzzAddressKey: whatever a client address says, its key is short and
// either the unknown bucket or a canonical address or /64 that maps to
// itself.
func FuzzAddressKey(f *testing.F) {
	for _, s := range []string{"203.0.113.7", "::ffff:1.2.3.4", "2001:db8::1%eth0", "@", "", "1.2.3.4:5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := addressKey(s)
		if len(k) > len("ip:")+len("ffff:ffff:ffff:ffff::/64") || !strings.HasPrefix(k, "ip:") {
			t.Fatalf("addressKey(%q) = %q", s, k)
		}
		if k == unknownAddress {
			return
		}
		if again := addressKey(strings.TrimSuffix(k[3:], "/64")); again != k {
			t.Fatalf("addressKey(%q) = %q, but its address gives %q", s, k, again)
		}
	})
}

// TestPrecheckAddressConcurrent: a script sends many pre-checks at once,
// each with a freshly minted wallet, from one address. Exactly the bound
// pass; every refused wallet is uncharged (it passes at once from another
// address) and every passed one is charged (its interval refuses it).
func TestPrecheckAddressConcurrent(t *testing.T) {
	const n, bound = 120, 40
	th := newTestHandler(t, &Handler{Free: true, PrecheckAddressDailyLimit: bound})
	codes := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := th.precheckFrom(mintedWallet(i), "2001:db8:77::1", "")
			codes[i] = r.Code
			if r.Code == 429 && refusedLimit(r) != "address_daily_limit" {
				t.Errorf("pre-check %d refused by %q", i, refusedLimit(r))
			}
		}()
	}
	close(start)
	wg.Wait()
	passed := 0
	for _, c := range codes {
		if c == 200 {
			passed++
		} else if c != 429 {
			t.Fatalf("status %d", c)
		}
	}
	if passed != bound {
		t.Fatalf("%d concurrent pre-checks from one address with bound %d: %d passed", n, bound, passed)
	}
	for i, c := range codes {
		r := th.precheckFrom(mintedWallet(i), fmt.Sprintf("198.51.100.%d", i), "")
		if c == 200 && (r.Code != 429 || refusedLimit(r) != "interval") {
			t.Errorf("wallet %d passed, yet is not charged: %d %s", i, r.Code, r.Body)
		}
		if c == 429 && r.Code != 200 {
			t.Errorf("wallet %d was refused, yet is charged: %d %s", i, r.Code, r.Body)
		}
	}
}

// BenchmarkPrecheck is the throughput of charged pre-checks, each with a
// new wallet, with the address bound off (one counter, as before the
// bound) and on (two counters in one transaction).
func BenchmarkPrecheck(b *testing.B) {
	for _, bc := range []struct {
		name  string
		limit int
	}{{"address_bound=off", -1}, {"address_bound=on", 1 << 30}} {
		b.Run(bc.name, func(b *testing.B) {
			th := newTestHandler(b, &Handler{Free: true, PrecheckAddressDailyLimit: bc.limit})
			i := 0
			for b.Loop() {
				i++
				if r := th.precheckFrom(mintedWallet(i), "203.0.113.7", ""); r.Code != http.StatusOK {
					b.Fatalf("pre-check %d: %d %s", i, r.Code, r.Body)
				}
			}
		})
	}
}

// set moves the clock to t.
func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
