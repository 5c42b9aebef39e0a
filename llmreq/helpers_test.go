package llmreq

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// want is one expected text.
type want struct {
	path, role, value string
}

// apiCase is a real request body and the texts it must yield, in order.
type apiCase struct {
	name  string
	path  string
	body  string
	api   API
	texts []want
}

func runAPICases(t *testing.T, cases []apiCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Parse(c.path, []byte(c.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if r.API != c.api {
				t.Errorf("API = %q, want %q", r.API, c.api)
			}
			got := make([]want, len(r.Texts))
			for i, x := range r.Texts {
				got[i] = want{x.Path, x.Role, x.Value}
			}
			if os.Getenv("LLMREQ_PRINT") != "" && fmt.Sprint(got) != fmt.Sprint(c.texts) {
				fmt.Printf("=== %s\n", c.name)
				for _, g := range got {
					fmt.Printf("\t\t\t{%q, %s, %q},\n", g.path, roleName(g.role), g.value)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.texts) {
				t.Errorf("texts:\n got  %s\n want %s", show(got), show(c.texts))
			}
			checkTexts(t, []byte(c.body), r)
		})
	}
}

func roleName(r string) string {
	switch r {
	case RoleUser:
		return "RoleUser"
	case RoleSystem:
		return "RoleSystem"
	case RoleDeveloper:
		return "RoleDeveloper"
	case RoleAssistant:
		return "RoleAssistant"
	case RoleTool:
		return "RoleTool"
	case RoleFunction:
		return "RoleFunction"
	case RoleToolDefinition:
		return "RoleToolDefinition"
	}
	return "RoleUnknown"
}

func show(ws []want) string {
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "\n   %s (%q) = %q", w.path, w.role, w.value)
	}
	return b.String()
}

// checkTexts verifies, independently of the package's own decoder, that every text's literal is
// where it claims, decodes (by encoding/json) to its Value, and sits at its Path in the tree
// encoding/json builds (when the body has no duplicate keys, which make a tree ambiguous).
func checkTexts(t *testing.T, body []byte, r *Request) {
	t.Helper()
	tree, err := decodeTree(body)
	if err != nil {
		t.Fatalf("encoding/json refuses a body Parse accepted: %v", err)
	}
	dups := hasDuplicateKeys(body)
	prev := int32(-1)
	for i, x := range r.Texts {
		if x.start <= prev {
			t.Errorf("text %d (%s) out of body order", i, x.Path)
		}
		prev = x.start
		var v string
		if err := json.Unmarshal(body[x.start:x.end], &v); err != nil {
			t.Errorf("text %d (%s): literal %q: %v", i, x.Path, body[x.start:x.end], err)
			continue
		}
		switch {
		case x.IsFile():
			if r.MediaType(&x) == "" {
				t.Errorf("text %d (%s): a file text without a media type", i, x.Path)
			}
			if content, ok := fileContent(v); !ok {
				t.Errorf("text %d (%s): file literal %q does not decode", i, x.Path, v)
			} else if utf8.Valid(content) && x.enc&(encLatin1|enc1252) == 0 && string(content) != x.Value {
				t.Errorf("text %d (%s): Value %q, the file holds %q", i, x.Path, x.Value, content)
			}
		case v != x.Value:
			t.Errorf("text %d (%s): Value %q, encoding/json decodes %q", i, x.Path, x.Value, v)
		}
		if x.Key != strings.HasSuffix(x.Path, "#key") && !shortened(x.Path) {
			t.Errorf("text %d (%s): Key %v", i, x.Path, x.Key)
		}
		if dups || shortened(x.Path) {
			continue // ambiguous tree, or a shortened path
		}
		if x.Key {
			p := strings.TrimSuffix(x.Path, "#key")
			if _, err := resolve(tree, p); err != nil {
				t.Errorf("text %d: key path %q: %v", i, x.Path, err)
			} else if k := lastKey(t, p); k != v {
				t.Errorf("text %d: key path %q names key %q, text is %q", i, x.Path, k, v)
			}
			continue
		}
		at, err := resolve(tree, x.Path)
		if err != nil {
			t.Errorf("text %d: path %q: %v", i, x.Path, err)
		} else if at != v {
			t.Errorf("text %d: path %q holds %#v, text is %q", i, x.Path, at, v)
		}
	}
}

// fileContent decodes a file literal's content independently of the package: a data URL, or
// base64 of either alphabet, padded or not.
func fileContent(s string) ([]byte, bool) {
	if len(s) >= 5 && strings.EqualFold(s[:5], "data:") {
		header, data, ok := strings.Cut(s[5:], ",")
		if !ok {
			return nil, false
		}
		if !strings.HasSuffix(strings.ToLower(header), ";base64") {
			u, err := url.PathUnescape(data)
			return []byte(u), err == nil
		}
		s = data
	}
	s = strings.TrimRight(s, "=")
	for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := e.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// lastKey is the key the last step of path p names (a path of resolve's syntax).
func lastKey(t *testing.T, p string) string {
	t.Helper()
	last := ""
	for p != "" {
		switch {
		case strings.HasPrefix(p, `["`):
			end := 2
			for ; end < len(p) && p[end] != '"'; end++ {
				if p[end] == '\\' {
					end++
				}
			}
			if err := json.Unmarshal([]byte(p[1:end+1]), &last); err != nil {
				t.Fatalf("path %q: %v", p, err)
			}
			p = p[min(end+2, len(p)):]
		case p[0] == '[':
			p = p[strings.IndexByte(p, ']')+1:]
		default:
			p = strings.TrimPrefix(p, ".")
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			last, p = p[:end], p[end:]
		}
	}
	return last
}

// decodeTree decodes body with encoding/json, numbers kept as text (1e999 is valid JSON but
// overflows a float64).
func decodeTree(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return tree, nil
}

// shortened reports whether p looks like a path cut to MaxPathLen or, past the path budget, 64
// bytes (the cut moves to character boundaries, losing up to 3 bytes on each side).
func shortened(p string) bool {
	n := len(p)
	return strings.Contains(p, "…") && ((n <= MaxPathLen && n > MaxPathLen-8) || (n <= 64 && n > 64-8))
}

// resolve follows a path of the package's syntax (a.b[3]["x y"].c) in an encoding/json tree.
func resolve(v any, path string) (any, error) {
	for p := path; p != ""; {
		switch {
		case strings.HasPrefix(p, `["`):
			// A quoted key: find the end of the JSON string literal.
			end := 2
			for ; end < len(p) && p[end] != '"'; end++ {
				if p[end] == '\\' {
					end++
				}
			}
			if end >= len(p) || end+1 >= len(p) || p[end+1] != ']' {
				return nil, fmt.Errorf("bad quoted key in %q", p)
			}
			var key string
			if err := json.Unmarshal([]byte(p[1:end+1]), &key); err != nil {
				return nil, err
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%q: not an object", p)
			}
			if v, ok = m[key]; !ok {
				return nil, fmt.Errorf("no key %q", key)
			}
			p = p[end+2:]
		case p[0] == '[':
			end := strings.IndexByte(p, ']')
			n, err := strconv.Atoi(p[1:end])
			if err != nil {
				return nil, err
			}
			a, ok := v.([]any)
			if !ok || n >= len(a) {
				return nil, fmt.Errorf("%q: not an array or out of range", p)
			}
			v, p = a[n], p[end+1:]
		default:
			p = strings.TrimPrefix(p, ".")
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%q: not an object", p)
			}
			if v, ok = m[p[:end]]; !ok {
				return nil, fmt.Errorf("no key %q", p[:end])
			}
			p = p[end:]
		}
	}
	return v, nil
}

// hasDuplicateKeys reports whether some object of body has two members with the same key.
func hasDuplicateKeys(body []byte) bool {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				markValue(stack)
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			markValue(stack)
		default:
			markValue(stack)
		}
	}
}

type frame struct {
	obj  bool
	keys map[string]bool
	key  bool // the next token in this object is a key
}

// markValue notes that a value ended: in an object, a key comes next.
func markValue(stack []*frame) {
	if n := len(stack); n > 0 && stack[n-1].obj {
		stack[n-1].key = true
	}
}
