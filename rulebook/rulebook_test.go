package rulebook

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultIsThePublishedDocument(t *testing.T) {
	want, err := os.ReadFile("prompt-injection-rules-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	rb := Default()
	if !bytes.Equal(rb.Raw, want) {
		t.Fatal("embedded document differs from the published file")
	}
	if rb.ID != "prompt-injection-rules/v1" || len(rb.Rules) != 26 || len(rb.Categories) != 8 {
		t.Fatalf("got id %q, %d rules, %d categories", rb.ID, len(rb.Rules), len(rb.Categories))
	}
	if rb.Rules[0].ID != "IO-1" || rb.Rules[25].ID != "OB-1" || rb.Categories[0].Name != "instruction_override" {
		t.Fatalf("order lost: %s %s %s", rb.Rules[0].ID, rb.Rules[25].ID, rb.Categories[0].Name)
	}
}

const customHead = `{"rules_id":"custom/v1","version":"1","categories":{"a":"A","b":"B"},"rules":[`

func TestParseErrorsNameTheRule(t *testing.T) {
	for _, tc := range []struct{ rules, want string }{
		{`{"id":"X-1","category":"a","severity":"malicious","pattern":"x","flags":"i"},{"id":"X-1","category":"a","severity":"malicious","pattern":"y","flags":"i"}`, "rule X-1: duplicate id"},
		{`{"id":"X-2","category":"a","severity":"bad","pattern":"x","flags":"i"}`, `rule X-2: unknown severity "bad"`},
		{`{"id":"X-3","category":"zz","severity":"suspicious","pattern":"x","flags":"i"}`, `rule X-3: category "zz" is not defined`},
		{`{"id":"X-4","category":"a","severity":"suspicious","pattern":"(unclosed","flags":"i"}`, "rule X-4: pattern does not compile"},
		{`{"id":"X-5","category":"a","severity":"suspicious","pattern":"a{2,1}","flags":"i"}`, "rule X-5: pattern does not compile"},
		{`{"id":"X-6","category":"a","severity":"suspicious","pattern":"x","flags":"iu"}`, "rule X-6: flags"},
		{`{"id":"","category":"a","severity":"suspicious","pattern":"x","flags":"i"}`, "rule #1: missing id"},
	} {
		_, err := Parse([]byte(customHead + tc.rules + `]}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.rules, err, tc.want)
		}
	}
}

func TestParseRefusesBadDocuments(t *testing.T) {
	for _, doc := range []string{``, `[]`, `{"rules_id":"x"}`, `{"rules_id":"x","categories":{},"rules":[]}`, customHead + `]} trailing`, `{"rules_id":"x","categories":[1],"rules":[]}`} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%q: parsed", doc)
		}
	}
}

func TestLoadCustomFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	doc := customHead + `{"id":"C-1","category":"b","severity":"malicious","pattern":"\\bopen sesame\\b","flags":"i"}]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	rb, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if rb.ID != "custom/v1" || len(rb.Rules) != 1 || rb.Rules[0].Category != "b" || string(rb.Raw) != doc {
		t.Fatalf("got %+v", rb)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "loading rulebook") {
		t.Fatalf("missing file: %v", err)
	}
}

// FuzzParse: no document makes the loader panic, and what it accepts is valid.
func FuzzParse(f *testing.F) {
	f.Add(Default().Raw)
	f.Add([]byte(customHead + `{"id":"C-1","category":"b","severity":"malicious","pattern":"a(?=b)|\\1[^\\s]{2,}?","flags":"i"}]}`))
	f.Add([]byte(customHead + `{"id":"C-2","category":"a","severity":"suspicious","pattern":"[\\u0000-\\uffff]*$","flags":"ims"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		rb, err := Parse(doc)
		if err != nil {
			return
		}
		ids := map[string]bool{}
		for _, r := range rb.Rules {
			if ids[r.ID] || r.Severity.Rank() == 0 {
				t.Fatalf("accepted an invalid rule %+v", r)
			}
			ids[r.ID] = true
		}
	})
}
