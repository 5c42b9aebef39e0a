package firewall

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/promptwall/promptwall/llmreq"
)

// API families, as llmreq names them.
const (
	familyAnthropic = llmreq.FamilyAnthropic
	familyGemini    = llmreq.FamilyGemini
	familyOllama    = llmreq.FamilyOllama
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
	if fe.status == http.StatusRequestEntityTooLarge && family == familyAnthropic {
		// The type Anthropic's own API uses for 413.
		typ = "request_too_large"
	}
	writeError(w, family, fe.status, typ, fe.code, "", fe.message)
}

type openAIError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	} `json:"error"`
}

type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// ollamaError is the shape Ollama's own API answers errors in; its
// clients show the message, where an OpenAI-shaped object would read as
// "[object Object]".
type ollamaError struct {
	Error string `json:"error"`
}

type geminiError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

// writeError writes one JSON error. OpenAI's shape serves the openai and
// generic families: it is what OpenAI-compatible clients parse.
func writeError(w http.ResponseWriter, family string, status int, typ, code, param, msg string) {
	var v any
	switch family {
	case familyAnthropic:
		var e anthropicError
		e.Type = "error"
		e.Error.Type, e.Error.Message = typ, msg
		v = e
	case familyOllama:
		v = ollamaError{Error: msg}
	case familyGemini:
		var e geminiError
		e.Error.Code, e.Error.Message, e.Error.Status = status, msg, "INVALID_ARGUMENT"
		switch status {
		case http.StatusRequestEntityTooLarge:
			e.Error.Status = "OUT_OF_RANGE"
		case http.StatusForbidden:
			e.Error.Status = "PERMISSION_DENIED"
		}
		v = e
	default:
		var e openAIError
		e.Error.Message, e.Error.Type, e.Error.Code = msg, typ, code
		if param != "" {
			e.Error.Param = &param
		}
		v = e
	}
	body, _ := json.Marshal(v)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	// Retrying the same request gets the same verdict: tell the SDKs
	// (OpenAI's and Anthropic's honour this header) not to.
	h.Set("X-Should-Retry", "false")
	w.WriteHeader(status)
	w.Write(body)
}
