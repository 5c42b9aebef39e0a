package integration

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"testing"

	"github.com/promptwall/promptwall/filetext/pdftest"
)

// makePDF writes a one-page PDF whose uncompressed content stream shows
// text (the recording upstream reads its Tj strings).
func makePDF(text string) []byte { return pdftest.Document(false, text) }

type formPart struct {
	name, filename, contentType string
	data                        []byte
}

// multipartBody builds a form and returns it with its Content-Type.
func multipartBody(t *testing.T, parts ...formPart) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := fmt.Sprintf(`form-data; name="%s"`, p.name)
		if p.filename != "" {
			cd += fmt.Sprintf(`; filename="%s"`, p.filename)
		}
		h.Set("Content-Disposition", cd)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(p.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), w.FormDataContentType()
}

// rtFileCases: files the model reads, inline or uploaded.
func rtFileCases(t *testing.T) []rtCase {
	P := rtPayload
	txt := rtBase64([]byte(P))
	pdf := rtBase64(makePDF(P))
	textURL := "data:text/plain;base64," + txt
	pdfURL := "data:application/pdf;base64," + pdf

	audio, audioType := multipartBody(t,
		formPart{name: "model", data: []byte("whisper-1")},
		formPart{name: "prompt", data: []byte(P)},
		formPart{name: "file", filename: "speech.mp3", contentType: "audio/mpeg", data: []byte("ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00")})
	batchLine := string(rtJSON(obj{"custom_id": "r1", "method": "POST", "url": chatPath, "body": obj{"model": "gpt-4o", "messages": []any{rtUser(P)}}}))
	benignLine := string(rtJSON(obj{"custom_id": "r0", "method": "POST", "url": chatPath, "body": obj{"model": "gpt-4o", "messages": []any{rtUser("Hello")}}}))
	batch, batchType := multipartBody(t,
		formPart{name: "purpose", data: []byte("batch")},
		formPart{name: "file", filename: "batch.jsonl", contentType: "application/jsonl", data: []byte(benignLine + "\n" + batchLine + "\n")})
	doc, docType := multipartBody(t,
		formPart{name: "purpose", data: []byte("user_data")},
		formPart{name: "file", filename: "notes.txt", contentType: "text/plain", data: []byte(P)})
	pdfDoc, pdfDocType := multipartBody(t,
		formPart{name: "purpose", data: []byte("user_data")},
		formPart{name: "file", filename: "notes.pdf", contentType: "application/pdf", data: makePDF(P)})
	anthropicFile, anthropicFileType := multipartBody(t,
		formPart{name: "file", filename: "notes.txt", contentType: "text/plain", data: []byte(P)})
	image, imageType := multipartBody(t,
		formPart{name: "model", data: []byte("gpt-image-1")},
		formPart{name: "prompt", data: []byte(P)},
		formPart{name: "image", filename: "in.png", contentType: "image/png", data: []byte("\x89PNG\r\n\x1a\n")})

	// A file past the default max_body, then the text field.
	large, largeType := multipartBody(t,
		formPart{name: "file", filename: "long.mp3", contentType: "audio/mpeg", data: make([]byte, 17<<20)},
		formPart{name: "prompt", data: []byte(P)})
	// Gemini's resumable-free upload: JSON metadata, then the file.
	related := "--rt\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" +
		`{"file":{"display_name":"notes.txt"}}` + "\r\n--rt\r\nContent-Type: text/plain\r\n\r\n" + P + "\r\n--rt--\r\n"

	chatFile := func(data string) []byte {
		return chatBody(rtUser([]any{obj{"type": "text", "text": "Summarize the file."},
			obj{"type": "file", "file": obj{"filename": "notes", "file_data": data}}}))
	}
	responsesFile := func(data, name string) []byte {
		return responsesBody(rtUser([]any{obj{"type": "input_text", "text": "Summarize the file."},
			obj{"type": "input_file", "filename": name, "file_data": data}}))
	}
	fcoFile := func(data, name string) []byte {
		return responsesBody(rtUser("Read the report."),
			obj{"type": "function_call", "call_id": "c1", "name": "get_report", "arguments": "{}"},
			obj{"type": "function_call_output", "call_id": "c1", "output": []any{obj{"type": "input_file", "filename": name, "file_data": data}}})
	}
	anthropicDoc := func(mediaType, data string) []byte {
		return anthropicBody(rtUser([]any{obj{"type": "document", "source": obj{"type": "base64", "media_type": mediaType, "data": data}},
			obj{"type": "text", "text": "Summarize the document."}}))
	}
	geminiInline := func(mime, data string) []byte {
		return geminiBody(obj{"text": "Summarize the file."}, obj{"inlineData": obj{"mimeType": mime, "data": data}})
	}
	mp := func(ct string) [][2]string { return [][2]string{{"Content-Type", ct}} }

	return []rtCase{
		// Base64 files with a text media type.
		{name: "TextFile/chat_file_data", path: chatPath, body: chatFile(textURL)},
		{name: "TextFile/responses_input_file", path: responsesPath, body: responsesFile(textURL, "notes.txt")},
		{name: "TextFile/responses_function_call_output", path: responsesPath, body: fcoFile(textURL, "report.txt")},
		{name: "TextFile/anthropic_base64_document", path: anthropicPath, body: anthropicDoc("text/plain", txt)},
		{name: "TextFile/gemini_inlineData", path: geminiPath, body: geminiInline("text/plain", txt)},
		{name: "TextFile/gemini_inlineData_json", path: geminiPath, body: geminiInline("application/json", rtBase64(rtJSON(obj{"note": P})))},
		{name: "TextFile/anthropic_tool_result_document", path: anthropicPath, body: anthropicBody(rtUser("Read the report."),
			obj{"role": "assistant", "content": []any{obj{"type": "tool_use", "id": "toolu_1", "name": "get_report", "input": obj{}}}},
			rtUser([]any{obj{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{
				obj{"type": "document", "source": obj{"type": "base64", "media_type": "text/plain", "data": txt}}}}}))},
		{name: "TextFile/anthropic_text_source", path: anthropicPath, body: anthropicBody(rtUser([]any{
			obj{"type": "document", "source": obj{"type": "text", "media_type": "text/plain", "data": P}}}))},
		{name: "TextFile/gemini_functionResponse_inlineData", path: geminiPath, body: geminiBody(obj{"functionResponse": obj{
			"name": "get_report", "response": obj{"ok": true}, "parts": []any{obj{"inlineData": obj{"mimeType": "text/plain", "data": txt}}}}})},
		{name: "TextFile/chat_file_data_csv", path: chatPath, body: chatFile("data:text/csv;base64," + rtBase64([]byte("id,note\n1,"+P+"\n")))},

		// PDFs, uncompressed, in each API.
		{name: "PDF/chat_file_data", path: chatPath, body: chatFile(pdfURL)},
		{name: "PDF/responses_input_file", path: responsesPath, body: responsesFile(pdfURL, "notes.pdf")},
		{name: "PDF/responses_function_call_output", path: responsesPath, body: fcoFile(pdfURL, "report.pdf")},
		{name: "PDF/anthropic_base64_document", path: anthropicPath, body: anthropicDoc("application/pdf", pdf)},
		{name: "PDF/gemini_inlineData", path: geminiPath, body: geminiInline("application/pdf", pdf)},

		// Multipart forms on LLM endpoints.
		{name: "Multipart/audio_transcriptions_prompt", path: "/v1/audio/transcriptions", headers: mp(audioType), body: audio},
		{name: "Multipart/images_edits_prompt", path: "/v1/images/edits", headers: mp(imageType), body: image},
		{name: "Multipart/files_batch_jsonl", path: "/v1/files", headers: mp(batchType), body: batch},
		{name: "Multipart/files_text_document", path: "/v1/files", headers: mp(docType), body: doc},
		{name: "Multipart/files_pdf_document", path: "/v1/files", headers: mp(pdfDocType), body: pdfDoc},
		{name: "Multipart/anthropic_files_text", path: "/v1/files", headers: [][2]string{{"Content-Type", anthropicFileType},
			{"Anthropic-Version", "2023-06-01"}, {"Anthropic-Beta", "files-api-2025-04-14"}}, body: anthropicFile},
		{name: "Multipart/gemini_upload_related", path: "/upload/v1beta/files?uploadType=multipart",
			headers: mp("multipart/related; boundary=rt"), body: []byte(related)},
		{name: "Multipart/large_file_then_prompt", path: "/v1/audio/transcriptions", headers: mp(largeType), body: large},
		{name: "Multipart/uploads_part_text", path: "/v1/uploads/upload_1/parts", headers: mp(docType), body: doc},
	}
}
