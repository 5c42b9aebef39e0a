package llmresp

import (
	"encoding/json"
	"net/http"
)

// Failure describes the error the firewall answers with.
type Failure struct {
	Status  int    // HTTP status of a non-streamed error (0: 400); Gemini's code in a stream too
	Type    string // OpenAI and Anthropic error type (""; "invalid_request_error")
	Code    string // OpenAI error code, e.g. "prompt_injection_detected"
	Message string
	// Seq is the Responses sequence_number of the error event: one past the last event's.
	Seq int
}

func (f Failure) status() int {
	if f.Status == 0 {
		return http.StatusBadRequest
	}
	return f.Status
}

func (f Failure) typ() string {
	if f.Type == "" {
		return "invalid_request_error"
	}
	return f.Type
}

// These are the shapes of caddymodule/firewall/respond.go (which imports Caddy), repeated here
// so that the package stays pure.
type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

type anthropicError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type geminiError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

func (f Failure) gemini() geminiError {
	var e geminiError
	e.Error.Code, e.Error.Message, e.Error.Status = f.status(), f.Message, "INVALID_ARGUMENT"
	switch f.status() {
	case http.StatusForbidden:
		e.Error.Status = "PERMISSION_DENIED"
	case http.StatusInternalServerError:
		e.Error.Status = "INTERNAL"
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		e.Error.Status = "UNAVAILABLE"
	}
	return e
}

func (f Failure) anthropic() anthropicError {
	var e anthropicError
	e.Type = "error"
	e.Error.Type, e.Error.Message = f.typ(), f.Message
	return e
}

func (f Failure) openai() openAIError {
	return openAIError{Message: f.Message, Type: f.typ(), Code: f.Code}
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// ErrorBody is the non-streamed error answer of api, for a response blocked before any byte of
// it was sent: OpenAI's {"error":{message,type,param,code}}, Anthropic's
// {"type":"error","error":{type,message}}, Gemini's {"error":{code,message,status}}, Ollama's
// {"error":"message"}. Its Content-Type is application/json; its status f.Status (400).
func ErrorBody(api API, f Failure) (status int, body []byte) {
	switch api {
	case AnthropicMessages, AnthropicComplete:
		return f.status(), marshal(f.anthropic())
	case Gemini:
		return f.status(), marshal(f.gemini())
	case OllamaChat, OllamaGenerate, OllamaEmbed:
		return f.status(), marshal(struct {
			Error string `json:"error"`
		}{f.Message})
	}
	return f.status(), marshal(struct {
		Error openAIError `json:"error"`
	}{f.openai()})
}

// StreamError is the event that ends a stream of api framed as format so that the API's
// official SDK raises its error; the firewall writes it and then closes the stream (no
// [DONE], no message_stop). started says whether an element of a streamed JSON array was
// already forwarded (the error is then ",{...}]", else "[{...}]").
//
//   - OpenAI Chat and completions: data: {"error":{...}} (the openai SDK's Stream throws
//     APIError for any data whose error member is set; Vercel ai reads the same shape).
//   - OpenAI Responses: event: error, data {"type":"error","sequence_number":n,"code",
//     "message","param","error":{...}}: the flat shape is the documented error event (Vercel
//     ai parses it), the nested error member makes the openai SDK's Stream throw.
//   - Anthropic: event: error, data {"type":"error","error":{"type","message"}}: the SDK throws
//     APIError for an SSE event named error.
//   - Gemini (alt=sse): data: {"error":{"code","message","status"}}: @google/genai throws
//     ApiError for a chunk whose error has a numeric code 400-599.
//   - Ollama (NDJSON): {"error":"message"}: ollama-js throws Error(message).
func StreamError(api API, format Format, f Failure, started bool) []byte {
	switch format {
	case FormatNDJSON:
		_, b := ErrorBody(api, f)
		return append(b, '\n')
	case FormatJSONArray:
		_, b := ErrorBody(api, f)
		sep := "["
		if started {
			sep = ",\n"
		}
		return append(append([]byte(sep), b...), "\n]"...)
	}
	var out []byte
	switch api {
	case AnthropicMessages, AnthropicComplete:
		out = append([]byte("event: error\ndata: "), marshal(f.anthropic())...)
	case Gemini:
		out = append([]byte("data: "), marshal(f.gemini())...)
	case OllamaChat, OllamaGenerate, OllamaEmbed:
		_, b := ErrorBody(api, f)
		out = append([]byte("data: "), b...)
	case OpenAIResponses:
		oe := f.openai()
		out = append([]byte("event: error\ndata: "), marshal(struct {
			Type    string      `json:"type"`
			Seq     int         `json:"sequence_number"`
			Code    string      `json:"code"`
			Message string      `json:"message"`
			Param   *string     `json:"param"`
			Error   openAIError `json:"error"`
		}{"error", f.Seq, f.Code, f.Message, nil, oe})...)
	default:
		out = append([]byte("data: "), marshal(struct {
			Error openAIError `json:"error"`
		}{f.openai()})...)
	}
	return append(out, "\n\n"...)
}
