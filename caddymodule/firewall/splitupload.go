package firewall

import (
	"net/http"
	"strings"
)

var errSplitUpload = &failure{http.StatusUnsupportedMediaType, "unscannable_file",
	"Request blocked by prompt firewall: a chunk of a split upload is scanned alone, never the file the chunks make"}

// splitUpload reports whether r carries one chunk of a file the provider
// joins from several requests: a part of an OpenAI Upload
// (/v1/uploads/{id}/parts, joined by .../complete), or a Gemini resumable
// upload request other than a single "upload, finalize" at offset 0. Each
// chunk is scanned as it comes, but a prompt split across two chunks is
// in neither, so the request also counts as a file not scanned.
func splitUpload(r *http.Request) bool {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if i := strings.Index(p, "/uploads/"); i >= 0 && strings.HasSuffix(p[i:], "/parts") {
		return true
	}
	cmds := headerTokens(r.Header, "X-Goog-Upload-Command")
	if !hasToken(cmds, "upload") {
		return false // start, query, cancel, or no resumable upload: no file bytes
	}
	offsets := r.Header.Values("X-Goog-Upload-Offset")
	whole := hasToken(cmds, "finalize") && len(offsets) == 1 && strings.TrimSpace(offsets[0]) == "0"
	return !whole
}
