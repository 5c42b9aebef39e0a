package firewall

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/promptwall/promptwall/llmreq"
	"github.com/promptwall/promptwall/llmresp"
)

// CodePromptInjection is the OpenAI-shape error code of a blocked request.
const CodePromptInjection = "prompt_injection_detected"

// blockMessage names the rules and categories that matched, never text.
func blockMessage(o *outcome) string {
	var b strings.Builder
	b.WriteString("Request blocked by prompt firewall: prompt injection detected (rules ")
	b.WriteString(strings.Join(o.rules, ", "))
	b.WriteString("; categories ")
	b.WriteString(strings.Join(o.categories, ", "))
	b.WriteString(")")
	return b.String()
}

// writeBlock answers a blocked request with 400 in the error shape of its
// API family, so the official SDKs raise their usual bad-request error.
func writeBlock(w http.ResponseWriter, family string, o *outcome) {
	writeError(w, family, http.StatusBadRequest, "invalid_request_error", CodePromptInjection, o.param(), blockMessage(o))
}

// writeFailure answers a request refused before scanning.
func writeFailure(w http.ResponseWriter, family string, fe *failure) {
	typ := "invalid_request_error"
	if fe.status == http.StatusRequestEntityTooLarge && family == llmreq.FamilyAnthropic {
		// The type Anthropic's own API uses for 413.
		typ = "request_too_large"
	}
	writeError(w, family, fe.status, typ, fe.code, "", fe.message)
}

// writeError writes one JSON error. OpenAI's shape serves the openai and
// generic families: it is what OpenAI-compatible clients parse.
func writeError(w http.ResponseWriter, family string, status int, typ, code, param, msg string) {
	body := llmresp.FamilyErrorBody(family, llmresp.Failure{Status: status, Type: typ, Code: code, Param: param, Message: msg})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	// Retrying the same request gets the same verdict: tell the SDKs
	// (OpenAI's and Anthropic's honour this header) not to.
	h.Set("X-Should-Retry", "false")
	w.WriteHeader(status)
	w.Write(body)
}
