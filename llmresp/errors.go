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
	Param   string // OpenAI error param, e.g. "messages[2].content" ("": null)
	Message string
	// Seq is the Responses sequence_number of the error event: one past that of the last event
	// the client got.
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

// The error shapes of the API families, for requests (the firewall's refusals and blocks) and
// responses alike.
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
	case http.StatusRequestEntityTooLarge:
		e.Error.Status = "OUT_OF_RANGE"
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
	e := openAIError{Message: f.Message, Type: f.typ(), Code: f.Code}
	if f.Param != "" {
		e.Param = &f.Param
	}
	return e
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
	family := ""
	switch api {
	case AnthropicMessages, AnthropicComplete:
		family = FamilyAnthropic
	case Gemini:
		family = FamilyGemini
	case OllamaChat, OllamaGenerate, OllamaEmbed:
		family = FamilyOllama
	}
	return f.status(), FamilyErrorBody(family, f)
}

// API families, as llmreq names them (a test holds the names equal).
const (
	FamilyAnthropic = "anthropic"
	FamilyGemini    = "gemini"
	FamilyOllama    = "ollama"
)

// FamilyErrorBody is an error body in the shape of an API family (llmreq's family names;
// any other family gets OpenAI's shape, which OpenAI-compatible clients parse). Ollama's
// clients show its plain message, where an OpenAI-shaped object would read as
// "[object Object]".
func FamilyErrorBody(family string, f Failure) []byte {
	switch family {
	case FamilyAnthropic:
		return marshal(f.anthropic())
	case FamilyGemini:
		return marshal(f.gemini())
	case FamilyOllama:
		return marshal(struct {
			Error string `json:"error"`
		}{f.Message})
	}
	return marshal(struct {
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
