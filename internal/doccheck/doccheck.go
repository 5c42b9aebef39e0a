// Package doccheck holds the README to the code, for the modules' tests:
// every config field, Caddyfile option, error code, header and metric the
// code defines must be named in the README, so a new one cannot ship
// undocumented. It reads what the code defines by reflection, from
// Prometheus descriptors, or from the package's Go source.
package doccheck

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// README returns the repository's README.md.
func README() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("doccheck: cannot locate the repository")
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "README.md"))
	return string(b), err
}

// Section returns the text under the heading whose title is title (any
// level), up to the next heading of the same or a higher level; "" when
// there is none.
func Section(doc, title string) string {
	lines := strings.SplitAfter(doc, "\n")
	level := 0
	var b strings.Builder
	fence := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		h := 0
		if !fence {
			for h < len(l) && l[h] == '#' {
				h++
			}
			if h == 0 || h >= len(l) || l[h] != ' ' {
				h = 0
			}
		}
		if h > 0 {
			if level > 0 && h <= level {
				break
			}
			if level == 0 && strings.TrimSpace(l[h:]) == title {
				level = h
				continue
			}
		}
		if level > 0 {
			b.WriteString(l)
		}
	}
	return b.String()
}

// Missing returns the names that text does not hold as code, that is
// between backquotes, alone or as the first word of a code span
// (`max_body <size>` names max_body).
func Missing(text string, names []string) []string {
	have := map[string]bool{}
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		span := m[1]
		have[span] = true
		if f := strings.Fields(span); len(f) > 0 {
			have[f[0]] = true
		}
	}
	return absent(have, names)
}

// absent returns the names that have does not hold, in order.
func absent(have map[string]bool, names []string) []string {
	var out []string
	for _, n := range names {
		if !have[n] {
			out = append(out, n)
		}
	}
	return out
}

var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// MissingLines returns the names that no line of block starts with (after
// its indentation): the options of a Caddyfile syntax block.
func MissingLines(block string, names []string) []string {
	have := map[string]bool{}
	for _, l := range strings.Split(block, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			have[f[0]] = true
		}
	}
	return absent(have, names)
}

// Block returns the first fenced code block of text whose language is
// lang and whose first line starts with first.
func Block(text, lang, first string) string {
	parts := strings.Split(text, "```"+lang+"\n")
	for _, p := range parts[1:] {
		body, _, _ := strings.Cut(p, "```")
		if strings.HasPrefix(body, first) {
			return body
		}
	}
	return ""
}

// JSONFields lists the JSON names of v's exported fields, depth first,
// nested structs (and pointers to them) as parent.child. Fields without a
// JSON name, or named "-", are left out.
func JSONFields(v any) []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			out = append(out, prefix+name)
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != reflect.TypeOf(json.RawMessage{}) && !isValue(ft) {
				walk(ft, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeOf(v), "")
	return out
}

// isValue is a struct the config holds as one value (a duration, say).
func isValue(t reflect.Type) bool {
	_, ok := reflect.New(t).Interface().(json.Unmarshaler)
	return ok
}

// Metric is one exported metric family.
type Metric struct {
	Name   string
	Labels []string
}

var (
	descName   = regexp.MustCompile(`fqName: "([^"]+)"`)
	descLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

// Metrics lists the metrics collectors describe, by name.
func Metrics(collectors ...prometheus.Collector) []Metric {
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		for _, c := range collectors {
			c.Describe(ch)
		}
		close(ch)
	}()
	var out []Metric
	for d := range ch {
		s := d.String()
		m := descName.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		mt := Metric{Name: m[1]}
		if l := descLabels.FindStringSubmatch(s); l != nil && strings.TrimSpace(l[1]) != "" {
			for _, lab := range strings.Split(l[1], ",") {
				mt.Labels = append(mt.Labels, strings.TrimSpace(lab))
			}
		}
		if !slices.ContainsFunc(out, func(o Metric) bool { return o.Name == mt.Name }) {
			out = append(out, mt)
		}
	}
	return out
}

// MissingMetrics returns, for each metric the table does not document as
// a row naming it with every one of its labels, why.
func MissingMetrics(text string, metrics []Metric) []string {
	var out []string
	for _, m := range metrics {
		row := ""
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "| `"+m.Name+"`") {
				row = l
			}
		}
		if row == "" {
			out = append(out, m.Name)
			continue
		}
		for _, lab := range Missing(row, m.Labels) {
			out = append(out, m.Name+" label "+lab)
		}
	}
	return out
}

// SourceStrings returns the string constants and literals of the Go
// package in dir (test files excluded) that match: constants whose name
// has the prefix constPrefix (when it is not ""), and the argument at
// index arg of every composite literal of the type named literalType
// (when it is not "").
func SourceStrings(dir, constPrefix, literalType string, arg int) ([]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	add := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if constPrefix == "" {
					break
				}
				for i, id := range n.Names {
					if strings.HasPrefix(id.Name, constPrefix) && i < len(n.Values) {
						add(n.Values[i])
					}
				}
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && literalType != "" && id.Name == literalType && arg < len(n.Elts) {
					add(n.Elts[arg])
				}
			}
			return true
		})
	}
	return out, nil
}

// Tables returns the table rows of text (its lines that start with "|").
func Tables(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "|") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Column returns cell i (from 0) of every table row of text, one a line:
// the JSON column of an options table, say.
func Column(text string, i int) string {
	var b strings.Builder
	for _, l := range strings.Split(Tables(text), "\n") {
		// Cells split at "|" but not at "\|", which a cell escapes.
		cells := strings.Split(strings.ReplaceAll(l, `\|`, "\x00"), "|")
		if i+1 < len(cells) {
			b.WriteString(strings.ReplaceAll(cells[i+1], "\x00", "|"))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
