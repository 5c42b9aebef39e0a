// Package adapttest checks Caddyfile adaptation against golden files, for
// the tests of the promptwall handlers: each testdata/adapt/*.caddyfiletest
// holds a Caddyfile, a separator line and the JSON `caddy adapt` must give.
package adapttest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// update, given to a test binary that imports this package (go test
// -args -update), rewrites the golden files instead of comparing.
var update = flag.Bool("update", false, "rewrite the adapt golden files from the adapter's output")

// Sep splits a golden file into its Caddyfile and its JSON.
const Sep = "\n----------\n"

// Adapt adapts a Caddyfile to indented JSON; a warning is an error.
func Adapt(caddyfileText string) (string, error) {
	out, warns, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfileText), nil)
	if err != nil {
		return "", err
	}
	if len(warns) > 0 {
		return "", fmt.Errorf("adapt warning: %s", warns[0].Message)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "\t"); err != nil {
		return "", err
	}
	return buf.String() + "\n", nil
}

// Golden adapts every golden file under dir and compares; with -update it
// rewrites their JSON halves from the adapter's output instead.
func Golden(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.caddyfiletest"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in %s: %v", dir, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in, want, ok := strings.Cut(string(data), Sep)
			if !ok && !*update {
				t.Fatalf("%s has no %q separator", file, strings.TrimSpace(Sep))
			}
			got, err := Adapt(in)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.WriteFile(file, []byte(in+Sep+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if strings.TrimSpace(got) != strings.TrimSpace(want) {
				t.Errorf("adapted JSON differs\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

// Subdirectives checks that names lists exactly the string labels of the
// cases of the switch over d.Val() in method UnmarshalCaddyfile of file: the
// list the parser suggests from, kept true of the parser itself.
func Subdirectives(t *testing.T, file string, names []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "UnmarshalCaddyfile" || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			if call, ok := sw.Tag.(*ast.CallExpr); !ok || types.ExprString(call.Fun) != "d.Val" {
				return true
			}
			for _, s := range sw.Body.List {
				for _, e := range s.(*ast.CaseClause).List {
					if lit, ok := e.(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						labels = append(labels, v)
					}
				}
			}
			return false
		})
	}
	slices.Sort(labels)
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(labels, want) {
		t.Fatalf("the parser of %s takes %v, its list of subdirectives says %v", file, labels, want)
	}
}
