package integration

import (
	"bytes"
	"cmp"
	"testing"
)

// rtControlCases send benign requests that must arrive byte for byte,
// labelled safe: through each site, and with the media the issue says
// pass (images, audio). Without them, a firewall that refused everything
// would pass every case.
func rtControlCases(t *testing.T) []rtCase {
	var cases []rtCase
	for _, s := range rtShapes {
		path := chatPath
		if s.name == "handle_path" {
			path = "/openai" + chatPath
		}
		cases = append(cases, rtCase{name: "Control/benign_site_" + cmp.Or(s.name, "plain"), site: s.name, path: path,
			body: chatBody(rtUser("What is the capital of France?")), check: checkForwardedIntact})
	}
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	audio, audioType := multipartBody(t,
		formPart{name: "model", data: []byte("whisper-1")},
		formPart{name: "prompt", data: []byte("A talk about rivers.")},
		formPart{name: "file", filename: "speech.mp3", contentType: "audio/mpeg", data: []byte("ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00")})
	return append(cases,
		rtCase{name: "Control/chat_image_passes", path: chatPath, check: checkForwardedIntact, body: chatBody(rtUser([]any{
			obj{"type": "text", "text": "What is in this picture?"},
			obj{"type": "image_url", "image_url": obj{"url": "data:image/png;base64," + png}}}))},
		rtCase{name: "Control/anthropic_image_passes", path: anthropicPath, check: checkForwardedIntact, body: anthropicBody(rtUser([]any{
			obj{"type": "image", "source": obj{"type": "base64", "media_type": "image/png", "data": png}},
			obj{"type": "text", "text": "What is in this picture?"}}))},
		rtCase{name: "Control/gemini_image_passes", path: geminiPath, check: checkForwardedIntact, body: geminiBody(
			obj{"text": "What is in this picture?"}, obj{"inlineData": obj{"mimeType": "image/png", "data": png}})},
		rtCase{name: "Control/benign_text_file_passes", path: chatPath, check: checkForwardedIntact, body: chatBody(rtUser([]any{
			obj{"type": "text", "text": "Summarize the file."},
			obj{"type": "file", "file": obj{"filename": "notes.txt", "file_data": "data:text/plain;base64," + rtBase64([]byte("Rivers of France: the Loire, the Seine."))}}}))},
		rtCase{name: "Control/multipart_audio_passes", path: "/v1/audio/transcriptions", headers: [][2]string{{"Content-Type", audioType}},
			body: audio, check: checkForwardedIntact},
	)
}

func checkForwardedIntact(t *testing.T, c *rtCase, status int, resp []byte, got []recordedRequest) {
	if len(got) != 1 || status != 200 {
		t.Fatalf("benign request: status %d, upstream got %d requests; want 200 and 1", status, len(got))
	}
	if !bytes.Equal(got[0].Body, c.body) || got[0].Header.Get("Prompt-Firewall-Verdict") != "safe" {
		t.Errorf("benign request not passed intact and labelled: body %s, verdict %q (want the client's bytes, safe)", got[0].Body, got[0].Header.Get("Prompt-Firewall-Verdict"))
	}
}
