package scanservice

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"filippo.io/edwards25519"
	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/x402"
)

// SignInConfig turns on wallet proofs for pre-checks the way x402's
// sign-in-with-x extension does (CAIP-122, Solana ed25519 only): GET
// /precheck hands out a challenge, and a POST /precheck whose
// SIGN-IN-WITH-X header proves the caller wallet is charged to that
// wallet's own counter only, not to its client address's.
type SignInConfig struct {
	// Origin is the service's public origin as its clients see it, e.g.
	// https://scan.example.com (behind a TLS-terminating proxy, the
	// outside URL). A proof must name its host as domain and its origin
	// in uri, so a signature made for another site does not count here.
	// Required.
	Origin string `json:"origin,omitempty"`

	// Secret keys the challenges' nonces (HMAC-SHA256), so challenges
	// need no server state. Servers behind one name should share it; it
	// may be a placeholder such as {env.SIWX_SECRET}. Default: random per
	// config load, which voids the challenges of the last five minutes
	// on a reload.
	Secret string `json:"secret,omitempty"`
}

// signInHeader carries a proof, as x402's sign-in-with-x names it.
const signInHeader = "Sign-In-With-X"

// signInLifetime is how long a challenge may be signed and used: the
// extension's default.
const signInLifetime = 5 * time.Minute

// maxSignInHeader bounds the header decoded: a proof is a few hundred
// bytes, and nothing larger is read.
const maxSignInHeader = 4096

// signInStatement is the human-readable line of every challenge.
const signInStatement = "Prove this wallet to use its free pre-checks of the prompt-injection scan."

// signIn is the provisioned sign-in: origin, the nonce key and the chain.
type signIn struct {
	origin  *url.URL
	key     []byte
	chainID string
}

// newSignIn provisions cfg (nil: sign-in is off) for network.
func newSignIn(cfg *SignInConfig, network x402.Network, repl *caddy.Replacer) (*signIn, error) {
	if cfg == nil {
		return nil, nil
	}
	origin := strings.TrimSuffix(repl.ReplaceAll(cfg.Origin, ""), "/")
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("precheck_sign_in origin %q is not an origin such as https://scan.example.com", cfg.Origin)
	}
	key := []byte(repl.ReplaceAll(cfg.Secret, ""))
	if cfg.Secret == "" {
		key = make([]byte, 32)
		rand.Read(key)
	} else if len(key) < 16 {
		return nil, errors.New("precheck_sign_in secret must be at least 16 bytes")
	}
	return &signIn{origin: u, key: key, chainID: network.CAIP2}, nil
}

// signInInfo is the server's half of a challenge, info in the extension.
type signInInfo struct {
	Domain         string `json:"domain"`
	URI            string `json:"uri"`
	Version        string `json:"version"`
	Nonce          string `json:"nonce"`
	IssuedAt       string `json:"issuedAt"`
	ExpirationTime string `json:"expirationTime"`
	Statement      string `json:"statement"`
	RequestID      string `json:"requestId"`
}

// signInChain is one entry of supportedChains.
type signInChain struct {
	ChainID         string `json:"chainId"`
	Type            string `json:"type"`
	SignatureScheme string `json:"signatureScheme"`
}

// signInChallenge is the extension's value: extensions["sign-in-with-x"].
type signInChallenge struct {
	Info            signInInfo    `json:"info"`
	SupportedChains []signInChain `json:"supportedChains"`
}

// challenge makes a new challenge for the resource at path. Its nonce is
// the MAC of the fields that make it unique and bound in time, so a proof
// can be checked without remembering what was handed out.
func (s *signIn) challenge(path string, now time.Time) signInChallenge {
	var id [8]byte
	rand.Read(id[:])
	info := signInInfo{
		Domain:         s.origin.Host,
		URI:            s.origin.String() + path,
		Version:        "1",
		IssuedAt:       now.UTC().Format("2006-01-02T15:04:05.000Z"),
		ExpirationTime: now.Add(signInLifetime).UTC().Format("2006-01-02T15:04:05.000Z"),
		Statement:      signInStatement,
		RequestID:      hex.EncodeToString(id[:]),
	}
	info.Nonce = s.nonce(info.IssuedAt, info.ExpirationTime, info.RequestID)
	return signInChallenge{Info: info, SupportedChains: []signInChain{{ChainID: s.chainID, Type: "ed25519", SignatureScheme: "siws"}}}
}

// nonce is 32 hex characters, as the extension wants: the first 16 bytes
// of HMAC-SHA256 over the challenge's times and request id.
func (s *signIn) nonce(issuedAt, expires, requestID string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("promptwall sign-in-with-x nonce\x00" + issuedAt + "\x00" + expires + "\x00" + requestID))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// signInProof is the client's SIGN-IN-WITH-X payload: the challenge's
// fields echoed, plus the wallet and its signature.
type signInProof struct {
	Domain         string   `json:"domain"`
	Address        string   `json:"address"`
	Statement      string   `json:"statement"`
	URI            string   `json:"uri"`
	Version        string   `json:"version"`
	ChainID        string   `json:"chainId"`
	Type           string   `json:"type"`
	Nonce          string   `json:"nonce"`
	IssuedAt       string   `json:"issuedAt"`
	ExpirationTime string   `json:"expirationTime"`
	NotBefore      string   `json:"notBefore"`
	RequestID      string   `json:"requestId"`
	Resources      []string `json:"resources"`
	Signature      string   `json:"signature"`
}

// verify checks a SIGN-IN-WITH-X header at now: one of our challenges,
// still valid, for this origin and chain, signed by the wallet it names.
// Whether its nonce was used before is the store's to say (chargeProven).
func (s *signIn) verify(header string, now time.Time) (*signInProof, error) {
	if len(header) > maxSignInHeader {
		return nil, fmt.Errorf("the %s header is over %d bytes", signInHeader, maxSignInHeader)
	}
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(header, "=")); err != nil {
			return nil, fmt.Errorf("the %s header is not base64", signInHeader)
		}
	}
	var p signInProof
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("the %s header is not a JSON proof", signInHeader)
	}
	u, err := url.Parse(p.URI)
	switch {
	case p.Domain != s.origin.Host:
		return nil, fmt.Errorf("the proof is for domain %q, not %q", p.Domain, s.origin.Host)
	case err != nil || u.Scheme != s.origin.Scheme || u.Host != s.origin.Host:
		return nil, fmt.Errorf("the proof's uri is not under %s", s.origin)
	case p.Version != "1":
		return nil, errors.New(`the proof's version is not "1"`)
	case p.ChainID != s.chainID || p.Type != "ed25519":
		return nil, fmt.Errorf("the proof must be an ed25519 signature of a wallet on %s", s.chainID)
	}
	want := s.nonce(p.IssuedAt, p.ExpirationTime, p.RequestID)
	if !hmac.Equal([]byte(p.Nonce), []byte(want)) {
		return nil, errors.New("the proof's nonce is not one of this service's challenges; GET /precheck for a new one")
	}
	issued, err1 := time.Parse(time.RFC3339Nano, p.IssuedAt)
	expires, err2 := time.Parse(time.RFC3339Nano, p.ExpirationTime)
	if err1 != nil || err2 != nil {
		return nil, errors.New("the proof's times are not RFC 3339")
	}
	if now.Before(issued) || !now.Before(expires) || now.Sub(issued) >= signInLifetime {
		return nil, errors.New("the challenge has expired; GET /precheck for a new one")
	}
	if p.NotBefore != "" {
		nb, err := time.Parse(time.RFC3339Nano, p.NotBefore)
		if err != nil || now.Before(nb) {
			return nil, errors.New("the proof is not valid yet")
		}
	}
	pub, err := x402.ParsePublicKey(p.Address)
	if err != nil {
		return nil, errors.New("the proof's address is not a Solana address")
	}
	if weakKey(pub) {
		return nil, errors.New("the proof's address is not a wallet's key")
	}
	sig, err := x402.Base58Decode(p.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub[:], []byte(p.message()), sig) {
		return nil, errors.New("the proof's signature does not verify")
	}
	return &p, nil
}

// weakKey reports whether k is off the curve or of small order: nobody
// holds such a key, and signatures under one can be made without any
// key, for every message (x402's verifier refuses them too).
func weakKey(k x402.PublicKey) bool {
	p, err := new(edwards25519.Point).SetBytes(k[:])
	if err != nil {
		return true
	}
	return new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1
}

// message is the Sign-In With Solana text the wallet signed (CAIP-122),
// line for line as x402's client writes it.
func (p *signInProof) message() string {
	var b strings.Builder
	b.WriteString(p.Domain + " wants you to sign in with your Solana account:\n" + p.Address + "\n\n")
	if p.Statement != "" {
		b.WriteString(p.Statement + "\n\n")
	}
	_, ref, _ := strings.Cut(p.ChainID, ":")
	b.WriteString("URI: " + p.URI + "\nVersion: " + p.Version + "\nChain ID: " + ref +
		"\nNonce: " + p.Nonce + "\nIssued At: " + p.IssuedAt)
	if p.ExpirationTime != "" {
		b.WriteString("\nExpiration Time: " + p.ExpirationTime)
	}
	if p.NotBefore != "" {
		b.WriteString("\nNot Before: " + p.NotBefore)
	}
	if p.RequestID != "" {
		b.WriteString("\nRequest ID: " + p.RequestID)
	}
	if len(p.Resources) > 0 {
		b.WriteString("\nResources:")
		for _, r := range p.Resources {
			b.WriteString("\n- " + r)
		}
	}
	return b.String()
}

// readProof verifies the SIGN-IN-WITH-X header of a pre-check for caller:
// nil without one (or with sign-in off, which offers none). On a bad
// proof it has answered 401 and returns false.
func (h *Handler) readProof(w http.ResponseWriter, r *http.Request, caller string) (*signInProof, bool) {
	hdr := r.Header.Get(signInHeader)
	if hdr == "" || h.signIn == nil {
		return nil, true
	}
	p, err := h.signIn.verify(hdr, h.now())
	if err == nil && p.Address != caller {
		err = errors.New("the proof is for another wallet than caller")
	}
	if err != nil {
		writeError(w, http.StatusUnauthorized, codeInvalidSignIn, err.Error())
		return nil, false
	}
	return p, true
}

// serveSignInMethods answers what /precheck does besides POST when
// sign-in is on: GET (and HEAD) with a challenge, OPTIONS with all the
// methods. It reports whether it answered.
func (h *Handler) serveSignInMethods(w http.ResponseWriter, r *http.Request) bool {
	if h.signIn == nil {
		return false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.serveChallenge(w, r)
	case http.MethodOptions:
		w.Header().Set("Allow", "GET, HEAD, POST, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
	default:
		return false
	}
	return true
}

// serveChallenge answers GET /precheck with a new challenge in the shape
// of an x402 extensions object, so a client's sign-in-with-x code finds it
// where it finds it in a 402.
func (h *Handler) serveChallenge(w http.ResponseWriter, r *http.Request) {
	c := h.signIn.challenge(r.URL.Path, h.now())
	writeJSON(w, http.StatusOK, map[string]any{"extensions": map[string]any{"sign-in-with-x": c}})
}
