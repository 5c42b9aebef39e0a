package firewall

import (
	"net/http"
	"strings"
)

// scrubClientHeaders removes every Prompt-Firewall-* field a client sent,
// wherever a proxy could pick it up: header fields, trailer fields, the
// Trailer field that announces them, and the Connection field. Caddy's
// reverse_proxy deletes the fields a request's Connection names as
// hop-by-hop, so `Connection: Prompt-Firewall-Verdict` would otherwise drop
// the verdict the firewall sets later.
func scrubClientHeaders(r *http.Request) {
	// Header names are case-insensitive on the wire, whatever case the map
	// holds them in.
	for k := range r.Header {
		if hasOwnPrefix(k) {
			delete(r.Header, k)
		}
	}
	scrubTrailers(r)
	if _, ok := r.Header["Trailer"]; ok {
		dropTokens(r.Header, "Trailer", hasOwnPrefix)
	}
	if _, ok := r.Header["Connection"]; ok {
		dropTokens(r.Header, "Connection", hasOwnPrefix)
	}
}

// scrubTrailers removes Prompt-Firewall-* trailer fields. Trailers arrive
// with the end of the body, announced or not: it runs again once a body has
// been read, and at the end of a body that streams through.
func scrubTrailers(r *http.Request) {
	for k := range r.Trailer {
		if hasOwnPrefix(k) {
			delete(r.Trailer, k)
		}
	}
}

func hasOwnPrefix(name string) bool {
	return len(name) >= len(headerPrefix) && asciiEqualFold(name[:len(headerPrefix)], headerPrefix)
}

// dropTokens rewrites the comma-separated list field name of h without the
// tokens drop matches, over all its lines; a list left empty is removed.
// The lines are untouched when nothing matches.
func dropTokens(h http.Header, name string, drop func(string) bool) {
	lines := h[name]
	var kept []string
	changed := false
	for _, line := range lines {
		for tok := range strings.SplitSeq(line, ",") {
			tok = strings.TrimSpace(tok)
			switch {
			case tok == "":
			case drop(tok):
				changed = true
			default:
				kept = append(kept, tok)
			}
		}
	}
	if !changed {
		return
	}
	if len(kept) == 0 {
		delete(h, name)
		return
	}
	h[name] = []string{strings.Join(kept, ", ")}
}

// bodyDigestFields are request fields that vouch for the body's bytes: a
// rewritten body no longer matches them. Want-*-Digest fields ask for
// digests of the response and stay.
var bodyDigestFields = []string{
	"Content-Md5",
	"Digest",
	"Content-Digest",
	"Repr-Digest",
	"X-Amz-Content-Sha256",
	"X-Goog-Hash",
}

// dropBodyDigests removes the digests of a body the firewall rewrote, from
// the headers and the trailers: an upstream that checks them would refuse
// the sanitized copy, and one that only logs them would record a digest of
// bytes it never got. The firewall does not compute new ones: it would then
// vouch for the client's other bytes. A request signed with AWS SigV4 (its
// signature covers the body's hash) cannot be sanitized either way: the
// upstream refuses the rewritten copy.
func dropBodyDigests(r *http.Request) {
	for _, h := range []http.Header{r.Header, r.Trailer} {
		for k := range h {
			if isDigestField(k) {
				delete(h, k)
			}
		}
	}
	if _, ok := r.Header["Trailer"]; ok {
		dropTokens(r.Header, "Trailer", isDigestField)
	}
}

func isDigestField(name string) bool {
	for _, d := range bodyDigestFields {
		if asciiEqualFold(name, d) {
			return true
		}
	}
	// S3-style checksums: x-amz-checksum-crc32, -sha256, ...
	const amz = "X-Amz-Checksum-"
	return len(name) > len(amz) && asciiEqualFold(name[:len(amz)], amz)
}

// headerTokens returns the comma-separated tokens of every line of field
// name, trimmed, empty ones left out.
func headerTokens(h http.Header, name string) []string {
	var out []string
	for _, line := range h.Values(name) {
		for tok := range strings.SplitSeq(line, ",") {
			if tok = strings.TrimSpace(tok); tok != "" {
				out = append(out, tok)
			}
		}
	}
	return out
}
