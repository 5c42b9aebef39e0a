package llmresp

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/promptwall/promptwall/llmreq"
)

// The API names are llmreq's, so the firewall passes string(req.API).
func TestAPINamesAreLlmreqs(t *testing.T) {
	for _, c := range []struct {
		ours   API
		theirs llmreq.API
	}{
		{OpenAIChat, llmreq.OpenAIChat}, {OpenAIResponses, llmreq.OpenAIResponses},
		{OpenAICompletions, llmreq.OpenAICompletions}, {OpenAIEmbeddings, llmreq.OpenAIEmbeddings},
		{AnthropicMessages, llmreq.AnthropicMessages}, {AnthropicComplete, llmreq.AnthropicComplete},
		{Gemini, llmreq.Gemini}, {OllamaChat, llmreq.OllamaChat}, {OllamaGenerate, llmreq.OllamaGenerate},
		{OllamaEmbed, llmreq.OllamaEmbed}, {Generic, llmreq.Generic},
	} {
		if string(c.ours) != string(c.theirs) {
			t.Errorf("%q != llmreq's %q", c.ours, c.theirs)
		}
	}
	if len(llmreq.APIs)+1 != 11 {
		t.Errorf("llmreq has %d APIs: add the new one here", len(llmreq.APIs))
	}
}

// The family names are llmreq's, so the firewall passes its family as it is.
func TestFamilyNamesAreLlmreqs(t *testing.T) {
	if FamilyAnthropic != llmreq.FamilyAnthropic || FamilyGemini != llmreq.FamilyGemini || FamilyOllama != llmreq.FamilyOllama {
		t.Errorf("families %q %q %q, llmreq's %q %q %q", FamilyAnthropic, FamilyGemini, FamilyOllama,
			llmreq.FamilyAnthropic, llmreq.FamilyGemini, llmreq.FamilyOllama)
	}
}

// Each stream error frames as one event of its stream's format, which Pieces reports as the
// upstream's error, in the shape the official SDK tests (see StreamError).
func TestStreamErrorShapes(t *testing.T) {
	f := Failure{Code: "prompt_injection_detected", Message: "Response blocked by prompt firewall", Seq: 42}
	for _, c := range []struct {
		api    API
		format Format
		ctype  string
		name   string // the SSE event name
		check  func(m map[string]any) bool
	}{
		{OpenAIChat, FormatSSE, "text/event-stream", "", func(m map[string]any) bool {
			e, _ := m["error"].(map[string]any)
			return e["message"] == f.Message && e["type"] == "invalid_request_error" && e["code"] == f.Code
		}},
		{OpenAIResponses, FormatSSE, "text/event-stream", "error", func(m map[string]any) bool {
			e, _ := m["error"].(map[string]any)
			return m["type"] == "error" && m["sequence_number"] == 42.0 && m["message"] == f.Message &&
				m["code"] == f.Code && e["message"] == f.Message && e["type"] == "invalid_request_error"
		}},
		{AnthropicMessages, FormatSSE, "text/event-stream", "error", func(m map[string]any) bool {
			e, _ := m["error"].(map[string]any)
			return m["type"] == "error" && e["type"] == "invalid_request_error" && e["message"] == f.Message
		}},
		{Gemini, FormatSSE, "text/event-stream", "", func(m map[string]any) bool {
			e, _ := m["error"].(map[string]any)
			return e["code"] == 400.0 && e["status"] == "INVALID_ARGUMENT" && e["message"] == f.Message
		}},
		{OllamaChat, FormatNDJSON, "application/x-ndjson", "", func(m map[string]any) bool { return m["error"] == f.Message }},
		{OllamaGenerate, FormatNDJSON, "application/x-ndjson", "", func(m map[string]any) bool { return m["error"] == f.Message }},
	} {
		raw := StreamError(c.api, c.format, f, true)
		evs, err := frame(t, c.api, c.ctype, [][]byte{raw})
		if err != nil || len(evs) != 1 || evs[0].Partial || evs[0].Name != c.name || evs[0].Raw != string(raw) {
			t.Errorf("%s: %v %+v", c.api, err, evs)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(evs[0].Data), &m); err != nil || !c.check(m) {
			t.Errorf("%s: shape %s", c.api, evs[0].Data)
		}
		e := &Event{Raw: raw, Name: evs[0].Name, Data: []byte(evs[0].Data)}
		if _, info, err := Pieces(c.api, e, nil); err != nil || !info.UpstreamError {
			t.Errorf("%s: Pieces does not see an error: %v", c.api, err)
		}
	}
	// Gemini without alt=sse: the error closes the array, after elements or as the only one.
	for _, started := range []bool{false, true} {
		body := `[{"candidates":[]}`
		if !started {
			body = ""
		}
		body += string(StreamError(Gemini, FormatJSONArray, f, started))
		evs, err := frame(t, Gemini, "application/json", [][]byte{[]byte(body)})
		if err != nil || len(evs) < 2 || concat(evs) != body {
			t.Fatalf("array error, started %v: %v %+v", started, err, evs)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(evs[len(evs)-2].Data), &m); err != nil || m["error"] == nil {
			t.Errorf("array error: %s", evs[len(evs)-2].Data)
		}
	}
}

func TestErrorBody(t *testing.T) {
	f := Failure{Status: http.StatusForbidden, Code: "c", Message: "m"}
	for api, want := range map[API]string{
		OpenAIChat:        `{"error":{"message":"m","type":"invalid_request_error","param":null,"code":"c"}}`,
		OpenAIResponses:   `{"error":{"message":"m","type":"invalid_request_error","param":null,"code":"c"}}`,
		AnthropicMessages: `{"type":"error","error":{"type":"invalid_request_error","message":"m"}}`,
		Gemini:            `{"error":{"code":403,"message":"m","status":"PERMISSION_DENIED"}}`,
		OllamaChat:        `{"error":"m"}`,
	} {
		status, body := ErrorBody(api, f)
		if status != http.StatusForbidden || string(body) != want {
			t.Errorf("%s: %d %s, want %s", api, status, body, want)
		}
	}
	if status, _ := ErrorBody(OpenAIChat, Failure{}); status != http.StatusBadRequest {
		t.Errorf("default status %d", status)
	}
}

func TestChannelsWhole(t *testing.T) {
	var c Channels
	if _, ok := c.Whole("a", ""); ok {
		t.Error("a channel without deltas")
	}
	c.Delta("a", "Hi", "Hi")
	c.Delta("a", " https://x.example/?d=1", " [link removed]")
	c.Delta("b", "x", "y")
	if s, ok := c.Whole("a", "Hi https://x.example/?d=1"); !ok || s != "Hi [link removed]" {
		t.Errorf("whole a: %q %v", s, ok)
	}
	if _, ok := c.Whole("a", "Hi https://x.example/?d=2"); ok {
		t.Error("a whole text that is not the deltas'")
	}
	if s, ok := c.Whole("b", "x"); !ok || s != "y" {
		t.Errorf("whole b: %q %v", s, ok)
	}
}

func TestInfoSeqAndType(t *testing.T) {
	d := `{"type":"response.output_text.delta","sequence_number":17,"delta":"x"}`
	_, info, err := Pieces(OpenAIResponses, &Event{Raw: []byte(d), Data: []byte(d), Name: "ignored"}, nil)
	if err != nil || info.Seq != 17 || info.Type != "response.output_text.delta" || info.UpstreamError || info.Done {
		t.Errorf("%+v %v", info, err)
	}
	d = `{"sequence_number":1.5}`
	if _, info, _ := Pieces(OpenAIResponses, &Event{Raw: []byte(d), Data: []byte(d)}, nil); info.Seq != -1 {
		t.Errorf("a fractional sequence number: %d", info.Seq)
	}
}
