package nearest

import (
	"strings"
	"testing"
)

func TestWord(t *testing.T) {
	opts := []string{"rulebook", "on_malicious", "on_suspicious", "roles", "max_body", "safe_cache", "max_upload"}
	for _, tc := range []struct{ in, want string }{
		{"max_bdy", "max_body"},
		{"maxbody", "max_body"},
		{"max-body", "max_body"},
		{"on_malicous", "on_malicious"},
		{"rulbeook", "rulebook"},
		{"role", "roles"},
		{"Roles", "roles"},
		{"mode", ""},
		{"strict", ""},
		{"", ""},
		{"max_upload", "max_upload"},
		{strings.Repeat("x", 1000), ""},
	} {
		if got := Word(tc.in, opts); got != tc.want {
			t.Errorf("Word(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if h := Hint("rols", opts); h != " (did you mean 'roles'?)" {
		t.Errorf("hint %q", h)
	}
	if h := Hint("zzz", opts); h != "" {
		t.Errorf("hint %q", h)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"abc", "acb", 1}, {"roles", "roles", 0}, {"flaw", "lawn", 2},
	} {
		if d := distance(tc.a, tc.b); d != tc.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.d)
		}
		if d := distance(tc.b, tc.a); d != tc.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.b, tc.a, d, tc.d)
		}
	}
}
