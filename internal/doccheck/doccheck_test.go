package doccheck

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const doc = "# T\n\n## One\n\n`a` and `b <size>`.\n\n```caddyfile\nx {\n\topt1 <n>\n\topt2\n}\n```\n\n### Sub\n\n`c`\n\n## Two\n\n`d`\n" +
	"\n| `m_total` | counter | `verdict`, `action` | x |\n| `n_seconds` | histogram | | y |\n"

func TestSection(t *testing.T) {
	one := Section(doc, "One")
	if got := Missing(one, []string{"a", "b", "c", "d"}); !slices.Equal(got, []string{"d"}) {
		t.Errorf("Missing in One = %q, want [d]: the section ends at the next heading of its level", got)
	}
	if got := Missing(Section(doc, "Sub"), []string{"a", "c"}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("Missing in Sub = %q, want [a]", got)
	}
	if Section(doc, "Three") != "" {
		t.Error("a missing section is not empty")
	}
}

func TestMissingLines(t *testing.T) {
	block := Block(doc, "caddyfile", "x {")
	if got := MissingLines(block, []string{"opt1", "opt2", "opt3"}); !slices.Equal(got, []string{"opt3"}) {
		t.Errorf("MissingLines = %q, want [opt3]", got)
	}
	if Block(doc, "caddyfile", "y {") != "" {
		t.Error("Block found a block that does not start so")
	}
}

type inner struct {
	URL string `json:"url,omitempty"`
}

type config struct {
	Plain   string        `json:"plain,omitempty"`
	Nested  *inner        `json:"nested,omitempty"`
	Timeout time.Duration `json:"timeout,omitempty"`
	Skip    string        `json:"-"`
	NoTag   string
	hidden  string
	Map     map[string]int `json:"map"`
}

func TestTables(t *testing.T) {
	if got := Missing(Tables(doc), []string{"a", "m_total"}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("Missing in Tables = %q, want [a]: only table rows count", got)
	}
}

func TestColumn(t *testing.T) {
	text := "| `a` | `b` |\n| `c \\| d` | `e` |\n"
	if got := Missing(Column(text, 1), []string{"a", "b", "e"}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("Missing in column 1 = %q, want [a]", got)
	}
	if got := Column(text, 0); got != " `a` \n `c | d` \n" {
		t.Errorf("Column 0 = %q", got)
	}
}

func TestJSONFields(t *testing.T) {
	got := JSONFields(config{hidden: ""})
	want := []string{"plain", "nested", "nested.url", "timeout", "map"}
	if !slices.Equal(got, want) {
		t.Errorf("JSONFields = %q, want %q", got, want)
	}
}

func TestMetrics(t *testing.T) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "m_total", Help: "h"}, []string{"verdict", "action"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "n_seconds", Help: "h"})
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "g", Help: "h"}, []string{"x"})
	ms := Metrics(c, h)
	if len(ms) != 2 || ms[0].Name != "m_total" || !slices.Equal(ms[0].Labels, []string{"verdict", "action"}) || ms[1].Labels != nil {
		t.Fatalf("Metrics = %+v", ms)
	}
	if got := MissingMetrics(doc, ms); len(got) != 0 {
		t.Errorf("MissingMetrics = %q, want none", got)
	}
	c2 := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "m_total", Help: "h"}, []string{"verdict", "rule"})
	if got := MissingMetrics(doc, Metrics(c2, g)); !slices.Equal(got, []string{"m_total label rule", "g"}) {
		t.Errorf("MissingMetrics = %q, want a missing label and a missing metric", got)
	}
}

func TestSourceStrings(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nconst (\n\tcodeA = \"a_code\"\n\tother = \"no\"\n)\n\ntype failure struct{ s int; code, msg string }\n\nvar e = &failure{400, \"b_code\", \"m\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nconst codeT = \"test_only\"\n"), 0o644)
	got, err := SourceStrings(dir, "code", "failure", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"a_code", "b_code"}) {
		t.Errorf("SourceStrings = %q, want [a_code b_code]", got)
	}
}

func TestREADME(t *testing.T) {
	r, err := README()
	if err != nil || Section(r, "Install") == "" {
		t.Fatalf("README: %v, or it has no Install section", err)
	}
}
