package engine

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// vector is one line of testdata/vectors.jsonl (copied from the published
// conformance set).
type vector struct {
	ID         string          `json:"id"`
	Text       *string         `json:"text"`
	TextBase64 *string         `json:"text_base64"`
	Expect     json.RawMessage `json:"expect"`
}

type expectation struct {
	Verdict         Verdict        `json:"verdict"`
	Matches         []Match        `json:"matches"`
	CategoryCounts  map[string]int `json:"category_counts"`
	Sanitized       *string        `json:"sanitized"`
	SanitizedBase64 *string        `json:"sanitized_base64"`
}

func loadVectors(t testing.TB) []vector {
	f, err := os.Open("testdata/vectors.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func (v vector) input(t testing.TB) []byte {
	if v.TextBase64 != nil {
		b, err := base64.StdEncoding.DecodeString(*v.TextBase64)
		if err != nil {
			t.Fatalf("%s: %v", v.ID, err)
		}
		return b
	}
	return []byte(*v.Text)
}

// TestConformanceVectors: every published vector gives exactly its result.
func TestConformanceVectors(t *testing.T) {
	vs := loadVectors(t)
	if len(vs) != 3112 {
		t.Fatalf("got %d vectors, want 3112", len(vs))
	}
	e := Default()
	failed := 0
	for _, v := range vs {
		var want expectation
		if err := json.Unmarshal(v.Expect, &want); err != nil {
			t.Fatal(err)
		}
		in := v.input(t)
		got := e.Scan(in)
		wantSan := ""
		gotSan := string(got.Sanitized)
		if want.SanitizedBase64 != nil {
			b, _ := base64.StdEncoding.DecodeString(*want.SanitizedBase64)
			wantSan = string(b)
		} else {
			wantSan = *want.Sanitized
			gotSan = jsonRoundTrip(gotSan)
		}
		if want.Matches == nil {
			want.Matches = []Match{}
		}
		gotMatches := got.Matches
		if gotMatches == nil {
			gotMatches = []Match{}
		}
		if want.CategoryCounts == nil {
			want.CategoryCounts = map[string]int{}
		}
		gotCounts := got.CategoryCounts
		if gotCounts == nil {
			gotCounts = map[string]int{}
		}
		if got.Verdict != want.Verdict || !reflect.DeepEqual(gotMatches, want.Matches) ||
			!reflect.DeepEqual(gotCounts, want.CategoryCounts) || gotSan != wantSan {
			failed++
			if failed <= 10 {
				gj, _ := json.Marshal(got)
				t.Errorf("vector %s (input %q):\n got  %s\n want %s", v.ID, in, gj, v.Expect)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d vectors differ", failed, len(vs))
	}
}

// jsonRoundTrip is what a JSON string of s decodes to: the vectors hold
// sanitized copies as JSON strings, where invalid UTF-8 became U+FFFD.
func jsonRoundTrip(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}
