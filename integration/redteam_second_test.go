package integration

import (
	"fmt"
	"strings"
)

// rtSecondCases: the bypasses a second red team found after the first
// round of fixes, kept as regressions.
func rtSecondCases() []rtCase {
	P := rtPayload
	var esc strings.Builder
	for _, r := range P {
		fmt.Fprintf(&esc, `\u%04x`, r)
	}
	padded := []byte(strings.Repeat(" ", 600) + `{"model":"llama3","prompt":"` + esc.String() + `","stream":false}`)
	return []rtCase{
		// JSON padded past any sniffing window, its payload in escapes,
		// sent as raw media: Ollama and llama.cpp parse it all the same.
		{name: "Second/padded_json_octet_stream", path: "/api/generate", body: padded,
			headers: [][2]string{{"Content-Type", "application/octet-stream"}}},
		{name: "Second/padded_json_image", path: "/api/generate", body: padded,
			headers: [][2]string{{"Content-Type", "image/png"}}},
		// Token ids outside the known prompt members (SGLang, vLLM).
		{name: "Second/input_ids_generic", path: "/generate", body: rtJSON(obj{"input_ids": []int{0, 1, 2, 3}}), refuse: true},
		// A tool result's id, which self-hosted chat templates render.
		{name: "Second/tool_call_id", path: chatPath, body: chatBody(rtUser("hi"),
			obj{"role": "assistant", "tool_calls": []any{obj{"id": "c1", "type": "function", "function": obj{"name": "f", "arguments": "{}"}}}},
			obj{"role": "tool", "tool_call_id": P, "content": "ok"})},
		// A PDF in a shape no walker knows, as a data URL (Mistral's document_url).
		{name: "Second/document_url_data_pdf", path: chatPath, body: chatBody(rtUser([]any{
			obj{"type": "text", "text": "Summarize."},
			obj{"type": "document_url", "document_url": "data:application/pdf;base64," + rtBase64(makePDF(P))}}))},
		// Realtime over WebRTC sets up a session the firewall never sees.
		{name: "Second/realtime_calls", path: "/v1/realtime/client_secrets",
			body: rtJSON(obj{"session": obj{"type": "realtime", "model": "gpt-realtime", "instructions": P}}), refuse: true},
	}
}
