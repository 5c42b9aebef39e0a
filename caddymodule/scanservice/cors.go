package scanservice

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/promptwall/promptwall/mcp"
	"github.com/promptwall/promptwall/x402"
)

// DefaultCORSOrigins lets a page of any origin call the service: the rules
// and the pre-check are public, and a paid scan is bought with a payment in
// a header, never with cookies, so no origin gains anything another lacks.
var DefaultCORSOrigins = []string{"*"}

// corsMaxAge is how long a browser may cache a preflight answer, in
// seconds: Chromium's own cap.
const corsMaxAge = 7200

// corsAllowHeaders are the request headers a page may send: the JSON body's
// type, the x402 payment, X-PAYMENT so that a version 1 client reaches the
// 402 that tells it version 2 is needed rather than a CORS failure, and
// Access-Control-Expose-Headers, which @x402/fetch sets on its paid retry
// (a response header sent as a request header: without it here, the
// browser's preflight of the payment fails), and the MCP revision header
// an MCP client sends after initialize.
var corsAllowHeaders = strings.Join([]string{"Content-Type", x402.HeaderPaymentSignature, headerXPayment,
	"Access-Control-Expose-Headers", mcp.HeaderProtocolVersion}, ", ")

// corsExposeHeaders are the answer headers a page may read.
var corsExposeHeaders = x402.HeaderPaymentRequired + ", " + x402.HeaderPaymentResponse

// checkCORSOrigins validates the configured origins: "*" alone, or origins
// of the form scheme://host[:port], as a browser sends them.
func checkCORSOrigins(origins []string) error {
	for _, o := range origins {
		if o == "*" {
			if len(origins) > 1 {
				return fmt.Errorf("cors_origins: %q with other origins; give either * or a list", o)
			}
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || o != strings.ToLower(o) {
			return fmt.Errorf("cors_origins: %q is not an origin such as https://app.example.com (lower case, no path)", o)
		}
	}
	return nil
}

// corsOrigins is the effective list of allowed origins.
func (h *Handler) corsOrigins() []string {
	if len(h.CORSOrigins) == 0 {
		return DefaultCORSOrigins
	}
	return h.CORSOrigins
}

// cors adds the CORS headers of endpoint to the answer and answers a
// preflight itself, returning true when it did. allow is the endpoint's
// methods. A request from an origin not allowed gets no CORS header, which
// a browser treats as a refusal; nothing else changes for it.
func (h *Handler) cors(w http.ResponseWriter, r *http.Request, allow string) bool {
	hdr := w.Header()
	origins := h.corsOrigins()
	anyOrigin := origins[0] == "*"
	origin := r.Header.Get("Origin")
	allowed := anyOrigin || (origin != "" && slices.Contains(origins, origin))
	if !anyOrigin {
		// The answer depends on the Origin header: caches must know.
		hdr.Add("Vary", "Origin")
	}
	if allowed {
		if anyOrigin {
			hdr.Set("Access-Control-Allow-Origin", "*")
		} else {
			hdr.Set("Access-Control-Allow-Origin", origin)
		}
	}
	preflight := r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != ""
	if !preflight {
		if allowed {
			hdr.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		return false
	}
	hdr.Set("Allow", allow)
	if allowed {
		hdr.Set("Access-Control-Allow-Methods", allow)
		hdr.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		hdr.Set("Access-Control-Max-Age", strconv.Itoa(corsMaxAge))
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// endpointMethods are the methods of each endpoint, for Allow and the
// preflight.
var endpointMethods = map[string]string{
	"rules":    "GET, HEAD, OPTIONS",
	"precheck": "POST, OPTIONS",
	"scan":     "POST, OPTIONS",
	"mcp":      "POST, OPTIONS",
}
