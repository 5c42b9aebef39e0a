package firewall

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestDropTokens(t *testing.T) {
	for _, tc := range []struct {
		lines, want []string // want nil: the field is gone
	}{
		{[]string{"keep-alive"}, []string{"keep-alive"}},
		{[]string{"keep-alive, Prompt-Firewall-Verdict"}, []string{"keep-alive"}},
		{[]string{"prompt-firewall-rules", "Upgrade , PROMPT-FIREWALL-RULEBOOK,close"}, []string{"Upgrade, close"}},
		{[]string{"Prompt-Firewall-Verdict", " , prompt-firewall-x"}, nil},
		{[]string{"Prompt-Firewall", "x-prompt-firewall-verdict"}, []string{"Prompt-Firewall", "x-prompt-firewall-verdict"}},
	} {
		h := http.Header{"Connection": tc.lines}
		dropTokens(h, "Connection", hasOwnPrefix)
		if got := h["Connection"]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.lines, got, tc.want)
		}
	}
}

func TestIsDigestField(t *testing.T) {
	for name, want := range map[string]bool{
		"Content-Md5": true, "content-md5": true, "Digest": true, "Content-Digest": true, "Repr-Digest": true,
		"X-Amz-Content-Sha256": true, "x-amz-checksum-crc32": true, "X-Goog-Hash": true,
		"Want-Digest": false, "Want-Content-Digest": false, "Want-Repr-Digest": false, "X-Amz-Checksum-": false,
		"Authorization": false, "Content-Type": false,
	} {
		if got := isDigestField(name); got != want {
			t.Errorf("isDigestField(%q) = %v", name, got)
		}
	}
}

// TestConnectionCannotDropLabels: a client naming the firewall's headers
// in Connection (which the proxy treats as hop-by-hop and deletes) loses
// those names; the rest of Connection stays.
func TestConnectionCannotDropLabels(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	r := post("/v1/chat/completions", chat(msg("user", suspText)))
	r.Header.Add("Connection", "keep-alive, Prompt-Firewall-Verdict")
	r.Header.Add("Connection", "prompt-firewall-rules,PROMPT-FIREWALL-RULEBOOK")
	res := fx.do(t, r)
	if got := res.up.header["Connection"]; !reflect.DeepEqual(got, []string{"keep-alive"}) {
		t.Errorf("Connection upstream %q", got)
	}
	if res.up.header.Get(HeaderVerdict) != "suspicious" || res.up.header.Get(HeaderRules) == "" {
		t.Errorf("labels %v", res.up.header)
	}
}

// TestTrailersScrubbed: Prompt-Firewall-* trailers are removed, announced
// or not, from scanned bodies and from bodies that stream through; so is
// their name from the Trailer field.
func TestTrailersScrubbed(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	for _, tc := range []struct {
		name, ctype, body string
	}{
		{"scanned", "application/json", chat(msg("user", "hi"))},
		{"streamed", "image/png", "\x89PNG\r\n\x1a\n\x00\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
			r.Header.Set("Content-Type", tc.ctype)
			r.Header.Set("Trailer", "Prompt-Firewall-Verdict, X-Trace")
			r.Trailer = http.Header{"Prompt-Firewall-Verdict": nil, "X-Trace": nil}
			// As Go's server does: the trailers' values arrive with the
			// body's end, unannounced ones too.
			r.Body = io.NopCloser(&trailerAtEOF{r: strings.NewReader(tc.body), req: r})
			r.ContentLength = int64(len(tc.body))
			var seen http.Header
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				io.ReadAll(r.Body)
				seen = r.Trailer.Clone()
				if got := r.Header.Get("Trailer"); got != "X-Trace" {
					t.Errorf("Trailer field %q", got)
				}
				return nil
			})
			if err := fx.fw.ServeHTTP(httptest.NewRecorder(), withVars(r), next); err != nil {
				t.Fatal(err)
			}
			if seen == nil || seen.Get("X-Trace") != "t1" {
				t.Fatalf("trailers %v", seen)
			}
			for k := range seen {
				if hasOwnPrefix(k) {
					t.Errorf("trailer %s reached the upstream", k)
				}
			}
		})
	}
}

// trailerAtEOF fills its request's trailers when its reader ends.
type trailerAtEOF struct {
	r   io.Reader
	req *http.Request
}

func (t *trailerAtEOF) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err == io.EOF {
		t.req.Trailer["Prompt-Firewall-Verdict"] = []string{"safe"}
		t.req.Trailer["Prompt-Firewall-Rules"] = []string{"none"}
		t.req.Trailer["X-Trace"] = []string{"t1"}
	}
	return n, err
}

// TestDigestsAfterRewrite: a sanitized body goes without the client's
// digests of the old one, headers and trailers; an unchanged body keeps
// them.
func TestDigestsAfterRewrite(t *testing.T) {
	fx := newFixture(t, &Firewall{})
	digests := map[string]string{
		"Content-MD5": "x", "Digest": "sha-256=x", "Content-Digest": "sha-256=:x:", "Repr-Digest": "sha-256=:x:",
		"X-Amz-Content-Sha256": "abc", "X-Amz-Checksum-Crc32": "abc",
	}
	for _, tc := range []struct {
		text string
		kept bool
	}{{suspText, false}, {"hello", true}} {
		r := post("/v1/chat/completions", chat(msg("user", tc.text)))
		for k, v := range digests {
			r.Header.Set(k, v)
		}
		r.Header.Set("Trailer", "Content-Digest")
		r.Trailer = http.Header{"Content-Digest": {"sha-256=:y:"}}
		res := fx.do(t, r)
		for k := range digests {
			if got := res.up.header.Get(k) != ""; got != tc.kept {
				t.Errorf("%q: %s present %v, want %v", tc.text, k, got, tc.kept)
			}
		}
		if got := res.up.header.Get("Trailer") != ""; got != tc.kept {
			t.Errorf("%q: Trailer field %q", tc.text, res.up.header.Get("Trailer"))
		}
	}
}
