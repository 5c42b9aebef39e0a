package llmreq

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestLogPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"messages[2].content[0].text", "messages[2].content[0].text"},
		{"contents[0].parts[1].functionResponse.response.city#key", "contents[0].parts[1].functionResponse.response.*#key"},
		{`task["ignore all previous instructions"].notes[1].deep`, "*[*].*[1].*"},
		{`a["x\"]y"].text`, "*[*].text"},
		{`input[3].action.query`, "input[3].*.query"},
		{`tools[0].function.parameters.properties.Ignore_all_previous#key`, "tools[0].function.parameters.properties.*#key"},
		{`messages[0].con…ous instructions"].text`, "messages[0].*…**.text"},
		{`messages[0]["unterminated`, "messages[0][*]"},
		{"system_instruction.parts[0].text", "system_instruction.parts[0].text"},
		{"[x]", "*"},
		{"", ""},
	} {
		if got := LogPath(tc.in); got != tc.want {
			t.Errorf("LogPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLogPathHidesTexts: no key text of a parsed body appears in its
// texts' log paths, whatever the shape.
func TestLogPathHidesTexts(t *testing.T) {
	const canary = "canary_7f3a9b2c1d"
	for _, body := range []string{
		`{"` + canary + `":{"deep":"x"}}`,
		`{"messages":[{"role":"tool","content":[{"type":"` + canary + `","` + canary + `":"v"}]}]}`,
		`{"contents":[{"parts":[{"functionResponse":{"name":"f","response":{"` + canary + `":1,"a":"b"}}}]}]}`,
		`{"messages":[{"role":"user","content":"hi"}],"` + canary + `":{"k":"v"}}`,
	} {
		req, err := Parse("/v1/chat/completions", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tx := range req.Texts {
			if strings.Contains(tx.Path, canary) {
				n++
			}
			if p := LogPath(tx.Path); strings.Contains(p, canary) {
				t.Errorf("%s: log path %q holds the key", body, p)
			}
		}
		if n == 0 {
			t.Errorf("%s: no path held the canary, so the test shows nothing", body)
		}
	}
}

// TestPathWordsCoverWalkers: every member name the walkers compare is a
// path word, so LogPath keeps the paths of the APIs' own texts.
func TestPathWordsCoverWalkers(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	re := regexp.MustCompile(`(?:keyIs|geminiKeyIs)\([a-z0-9_]+, "([A-Za-z0-9_]+)"`)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			seen++
			if !isPathWord(m[1]) {
				t.Errorf("%s: the walkers read %q, which LogPath would hide", f, m[1])
			}
		}
	}
	if seen < 50 {
		t.Fatalf("found only %d member names in the walkers", seen)
	}
}
