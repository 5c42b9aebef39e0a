package llmreq

import (
	"regexp"
	"testing"
)

// notText matches the JSON paths of the strings a known API may leave out: identifiers, model
// names, discriminators, media bytes and references, settings. Every other string of the real
// bodies in the table tests must be a text, so a rule that drops prose fails here.
var notText = regexp.MustCompile(`(?i)(^|\.)(model|encoding_format|id|type|role|call_id|tool_use_id|tool_call_id|status|name|tool_name|` +
	`url|detail|data|format|media_type|mime_type|file_data|file_uri|filename|fileUri|mimeType|signature|` +
	`thoughtSignature|encrypted_content|image_url|user|tool_choice|keep_alive|previous_response_id|` +
	`anthropic_version|category|threshold|outcome|source|stop|stopSequences|images)(\[\d+\])*$|` +
	`^(images|stop)\[\d+\]$|\.images\[\d+\]$|^stopSequences\[\d+\]$|^generationConfig\.|^safetySettings|^options\.|` +
	`^metadata\.|^input\[\d+\]\.result$`) // inert settings; image_generation_call's image

func TestKnownAPIsLeaveOutOnlyNonText(t *testing.T) {
	for _, c := range allAPICases() {
		r, err := Parse(c.path, []byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if r.API == Generic {
			continue
		}
		found := map[int32]bool{}
		for _, x := range r.Texts {
			found[x.start] = true
		}
		for _, s := range everyString(t, []byte(c.body)) {
			if !found[s.start] && !notText.MatchString(s.Path) {
				t.Errorf("%s: %s = %q is not a text", c.name, s.Path, s.Value)
			}
		}
	}
}

// everyString lists every string value of body with its path, as the generic rule sees it.
func everyString(t *testing.T, body []byte) []Text {
	tp := &tape{}
	if err := tp.scan(body); err != nil {
		t.Fatal(err)
	}
	w := walker{t: tp, body: body}
	w.all(0, RoleUnknown)
	w.finish()
	var values []Text
	for _, x := range w.texts {
		if !x.Key {
			values = append(values, x)
		}
	}
	return values
}
