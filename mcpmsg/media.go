package mcpmsg

import (
	"encoding/base64"
	"strings"

	"github.com/promptwall/promptwall/filetext"
	"github.com/promptwall/promptwall/llmreq"
)

// minMedia is the shortest base64 value looked at as media: shorter ones
// cost nothing to scan.
const minMedia = 256

// isMedia reports whether text t, at path rest, is the base64 data of an
// image, audio or video: a string member named data or blob whose whole value
// is valid base64 and whose decoded bytes carry a media magic number and are
// not mostly text (a text behind a magic number is read as text).
func isMedia(rest string, t *llmreq.Text) bool {
	if t.Key || t.IsFile() || len(t.Value) < minMedia {
		return false
	}
	if !strings.HasSuffix(rest, ".data") && !strings.HasSuffix(rest, ".blob") {
		return false
	}
	data, err := base64.StdEncoding.DecodeString(t.Value)
	if err != nil {
		return false
	}
	return filetext.Sniff(data) == filetext.Media && !filetext.MostlyText(data)
}
