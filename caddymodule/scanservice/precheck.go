package scanservice

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/store"
)

// DefaultPrecheckAddressDailyLimit is how many free pre-checks one client
// address gets per UTC day, whatever wallets its requests name. It is ten
// wallets' worth of the per-wallet limit: an office or a carrier-grade NAT
// behind one address rarely has more than ten wallets each using up its
// free day, while a script minting wallets is held to ten wallets' worth
// instead of no bound at all.
const DefaultPrecheckAddressDailyLimit = 1000

// limitAddressDaily names the address bound in a refused pre-check's Quota
// and in its 429 answer, next to store.LimitDaily and store.LimitInterval.
const limitAddressDaily store.Limit = "address_daily_limit"

// limitSignInUsed names the refusal of a proof whose challenge was used
// before: a replay, answered 401 and not 429.
const limitSignInUsed store.Limit = "sign_in_used"

// unknownAddress is the one bucket of every request whose client address
// Caddy could not tell (a Unix socket listener without
// trusted_proxies_unix): they share one bound rather than escape it.
const unknownAddress = "ip:unknown"

// chargePrecheck charges one free pre-check to the caller wallet and to
// the client address's bucket in one atomic step of the store: both or,
// when either refuses, neither. clientAddr is the client's IP as
// clientAddress gives it. A refusal's Quota names the limit with the
// longest wait (the address bound on a tie, since another wallet would not
// help) and that wait; Used is the wallet's count.
func (h *Handler) chargePrecheck(ctx context.Context, caller, clientAddr string) (store.Quota, error) {
	counters := []store.Counter{{Key: caller, Limit: h.limit, Interval: h.interval}}
	if h.addrLimit > 0 {
		counters = append(counters, store.Counter{Key: addressKey(clientAddr), Limit: h.addrLimit})
	}
	qs, err := h.store.PrecheckAll(ctx, h.now(), counters...)
	if err != nil {
		return store.Quota{}, err
	}
	q := qs[0]
	if len(qs) > 1 && qs[1].Exceeded != "" && qs[1].RetryAfter >= q.RetryAfter {
		q.Exceeded = limitAddressDaily
		q.RetryAfter = qs[1].RetryAfter
	}
	return q, nil
}

// chargeProvenPrecheck charges a pre-check of the wallet p proves: to the
// wallet's proven counter, with the wallet's limit and interval, and to
// the proof's nonce, once; not to any address, and not to the counter of
// unproven pre-checks naming the wallet, which anybody can spend. Both in
// one store step: a proof refused by the wallet's limits is not used up,
// and a replayed one (Exceeded limitSignInUsed) charges the wallet nothing.
// The nonce's counter allows one use a day and outlives the challenge, so
// no challenge is used twice, across midnight either.
func (h *Handler) chargeProvenPrecheck(ctx context.Context, p *signInProof) (store.Quota, error) {
	qs, err := h.store.PrecheckAll(ctx, h.now(),
		store.Counter{Key: "proven:" + p.Address, Limit: h.limit, Interval: h.interval},
		store.Counter{Key: "nonce:" + p.Nonce, Limit: 1, Interval: 2 * signInLifetime})
	if err != nil {
		return store.Quota{}, err
	}
	q := qs[0]
	if qs[1].Exceeded != "" {
		q.Exceeded = limitSignInUsed
	}
	return q, nil
}

// refusalMessage explains a refused pre-check's limit to its caller.
func (h *Handler) refusalMessage(q store.Quota) string {
	switch q.Exceeded {
	case store.LimitDaily:
		return fmt.Sprintf("this wallet has used its %d free pre-checks of the UTC day; they renew at 00:00 UTC", h.limit)
	case limitAddressDaily:
		msg := fmt.Sprintf("this network address (an IPv4 address or an IPv6 /64) has used its %d free pre-checks of the UTC day, whatever the wallet; they renew at 00:00 UTC", h.addrLimit)
		if h.signIn != nil {
			msg += "; a wallet proven with sign-in-with-x (GET /precheck for a challenge) is not held to it"
		}
		return msg
	default:
		return fmt.Sprintf("pre-checks from one wallet must be at least %v apart", h.interval)
	}
}

// clientAddress is the request's client IP as Caddy determined it, which
// honours the server's trusted_proxies, or else the connection's peer.
func clientAddress(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// addressKey is the store counter of a client IP: the IPv4 address itself,
// or the /64 of an IPv6 address, since one subscriber is given a whole /64
// and can use any address in it. IPv4-mapped IPv6 addresses count as their
// IPv4 address. Anything else falls into unknownAddress, so the keys kept
// are few and short whatever a request says.
func addressKey(addr string) string {
	addr, _, _ = strings.Cut(addr, "%") // an IPv6 zone names a local interface
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return unknownAddress
	}
	a = a.Unmap()
	if a.Is4() {
		return "ip:" + a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return unknownAddress
	}
	return "ip:" + p.String()
}

// dailyLimit resolves a configured per-day limit: 0 is the default, a
// negative number none (the store's 0).
func dailyLimit(configured, def int) int {
	switch {
	case configured == 0:
		return def
	case configured < 0:
		return 0
	default:
		return configured
	}
}
