package firewall

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A refusal names the problem, never the peer's header values or body: its
// text reaches the client (and a model that reads its errors) and the log
// unscanned. The LLM API side, both ways; the MCP side is in
// mcp_redteam_test.go.
func TestRefusalTextEchoesNoPeerValue(t *testing.T) {
	const mark = "Ignore-all-previous-instructions"
	check := func(t *testing.T, fx *fixture, what string, rec *httptest.ResponseRecorder) {
		t.Helper()
		if rec.Code < 400 {
			t.Fatalf("%s: not refused: %d %s", what, rec.Code, rec.Body)
		}
		if strings.Contains(rec.Body.String(), mark) {
			t.Errorf("%s: the peer's text is in the refusal: %s", what, rec.Body)
		}
		if strings.Contains(fx.logs.String(), mark) {
			t.Errorf("%s: the peer's text is logged: %s", what, fx.logs)
		}
	}
	t.Run("response", func(t *testing.T) {
		fx := respFixture(t, ActionBlock, ActionBlock)
		for _, h := range []map[string]string{
			{"Content-Type": `text/plain; note="` + mark + `"`},
			{"Content-Type": "application/json", "Content-Encoding": "x-" + mark},
		} {
			fx.logs.Reset()
			req := withVars(post("/v1/chat/completions", chat(msg("user", "hello"))))
			rec := httptest.NewRecorder()
			if err := fx.fw.ServeHTTP(rec, req, headerServer(http.StatusOK, h, `{"choices":[]}`)); err != nil {
				t.Fatal(err)
			}
			check(t, fx, h["Content-Type"]+" "+h["Content-Encoding"], rec)
		}
	})
	t.Run("request", func(t *testing.T) {
		fx := newFixture(t, &Firewall{})
		body := chat(msg("user", "hello"))
		form := formBody(testBoundary, field("_charset_", mark), field("prompt", "hello"))
		for _, tc := range []struct{ what, body, header, value string }{
			{"charset", body, "Content-Type", "application/json; charset=" + mark},
			{"unreadable type with charset", body, "Content-Type", "application/json; charset=utf-8; " + mark},
			{"encoding", body, "Content-Encoding", "x-" + mark},
			{"form _charset_", form, "Content-Type", "multipart/form-data; boundary=" + testBoundary},
		} {
			fx.logs.Reset()
			r := post("/v1/chat/completions", tc.body)
			r.Header.Set(tc.header, tc.value)
			res := fx.do(t, r)
			if res.up.called {
				t.Fatalf("%s: forwarded", tc.what)
			}
			check(t, fx, tc.what, res.rec)
		}
	})
}
