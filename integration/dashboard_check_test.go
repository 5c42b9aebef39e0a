package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// This file checks a Grafana dashboard (JSON model) against the metric
// families a server exports: every query names an exported metric, every
// label it selects or groups by is a label of that metric, and every panel
// queries the dashboard's datasource variable. The PromQL reading is
// lenient (a tokenizer and bracket matching, not a full parser), but each
// rule it applies reports its own error.

// family is one exported metric family: its type and the label names its
// series carry.
type family struct {
	typ    dto.MetricType
	labels map[string]bool
}

// scrapeLabels are added by Prometheus when it scrapes a target: a query
// may select and group by them whatever the metric.
var scrapeLabels = map[string]bool{"instance": true, "job": true}

// grafanaBuiltins are the variables Grafana defines itself.
var grafanaBuiltins = map[string]bool{
	"__rate_interval": true, "__interval": true, "__interval_ms": true,
	"__range": true, "__range_s": true, "__range_ms": true,
}

// parseFamilies reads Prometheus text exposition and returns the families
// whose names have prefix.
func parseFamilies(r io.Reader, prefix string) (map[string]family, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := map[string]family{}
	for name, mf := range mfs {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		f := family{typ: mf.GetType(), labels: map[string]bool{}}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				f.labels[l.GetName()] = true
			}
		}
		out[name] = f
	}
	return out, nil
}

// seriesNames are the names a query can select: a histogram's series are
// its _bucket, _sum and _count, a summary's its own name, _sum and _count.
func seriesNames(fams map[string]family) map[string]string {
	out := map[string]string{}
	for name, f := range fams {
		switch f.typ {
		case dto.MetricType_HISTOGRAM:
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				out[name+s] = name
			}
		case dto.MetricType_SUMMARY:
			for _, s := range []string{"", "_sum", "_count"} {
				out[name+s] = name
			}
		default:
			out[name] = name
		}
	}
	return out
}

// dashboardCheck is the outcome of checking a dashboard: the errors, and
// the families its panels' queries use.
type dashboardCheck struct {
	errs []string
	used map[string]bool
}

func (c *dashboardCheck) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// checkDashboard checks the dashboard JSON raw against fams.
func checkDashboard(raw []byte, fams map[string]family) *dashboardCheck {
	c := &dashboardCheck{used: map[string]bool{}}
	var dash struct {
		Panels     []map[string]any `json:"panels"`
		Templating struct {
			List []map[string]any `json:"list"`
		} `json:"templating"`
		SchemaVersion int    `json:"schemaVersion"`
		UID           string `json:"uid"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		c.errorf("not a dashboard: %v", err)
		return c
	}
	if dash.SchemaVersion < 39 {
		c.errorf("schemaVersion %d, want 39 or later", dash.SchemaVersion)
	}
	if dash.UID == "" {
		c.errorf("no uid")
	}

	// The variables: a Prometheus datasource variable, and the query
	// variables, which must use it.
	vars := map[string]bool{}
	dsVar := ""
	for _, v := range dash.Templating.List {
		name, _ := v["name"].(string)
		vars[name] = true
		switch v["type"] {
		case "datasource":
			if v["query"] == "prometheus" {
				dsVar = name
			}
		}
	}
	if dsVar == "" {
		c.errorf("no datasource variable of type prometheus")
	}
	usesVar := func(ds any) bool {
		m, ok := ds.(map[string]any)
		return ok && m["type"] == "prometheus" && dsVar != "" &&
			(m["uid"] == "${"+dsVar+"}" || m["uid"] == "$"+dsVar)
	}
	for _, v := range dash.Templating.List {
		if v["type"] != "query" {
			continue
		}
		name, _ := v["name"].(string)
		where := "variable " + name
		if !usesVar(v["datasource"]) {
			c.errorf("%s: datasource %v does not use the datasource variable", where, v["datasource"])
		}
		q := v["query"]
		if m, ok := q.(map[string]any); ok {
			q = m["query"]
		}
		qs, _ := q.(string)
		c.checkVariableQuery(where, qs, fams, vars)
	}

	// The panels, rows' nested panels included.
	ids := map[float64]string{}
	var walk func(panels []any)
	walk = func(panels []any) {
		for _, pv := range panels {
			p, _ := pv.(map[string]any)
			title, _ := p["title"].(string)
			where := fmt.Sprintf("panel %q", title)
			id, ok := p["id"].(float64)
			if !ok {
				c.errorf("%s: no numeric id", where)
			} else if other, dup := ids[id]; dup {
				c.errorf("%s: id %v is also panel %q's", where, id, other)
			} else {
				ids[id] = title
			}
			if gp, ok := p["gridPos"].(map[string]any); !ok {
				c.errorf("%s: no gridPos", where)
			} else if x, w := gp["x"].(float64), gp["w"].(float64); w <= 0 || x+w > 24 {
				c.errorf("%s: gridPos x %v w %v is outside the 24 columns", where, x, w)
			}
			if nested, ok := p["panels"].([]any); ok {
				walk(nested)
			}
			if p["type"] == "row" {
				continue
			}
			if !usesVar(p["datasource"]) {
				c.errorf("%s: datasource %v does not use the datasource variable", where, p["datasource"])
			}
			targets, _ := p["targets"].([]any)
			if len(targets) == 0 {
				c.errorf("%s: no query", where)
			}
			refs := map[string]bool{}
			for _, tv := range targets {
				t, _ := tv.(map[string]any)
				ref, _ := t["refId"].(string)
				if refs[ref] {
					c.errorf("%s: refId %q twice", where, ref)
				}
				refs[ref] = true
				if ds, ok := t["datasource"]; ok && !usesVar(ds) {
					c.errorf("%s %s: datasource %v does not use the datasource variable", where, ref, ds)
				}
				expr, _ := t["expr"].(string)
				if strings.TrimSpace(expr) == "" {
					c.errorf("%s %s: no expr", where, ref)
					continue
				}
				c.checkExpr(where+" "+ref, expr, fams, vars, true)
			}
		}
	}
	top := make([]any, len(dash.Panels))
	for i, p := range dash.Panels {
		top[i] = p
	}
	walk(top)
	return c
}

var labelValuesRe = regexp.MustCompile(`(?s)^\s*label_values\((.*)\)\s*$`)
var queryResultRe = regexp.MustCompile(`(?s)^\s*query_result\((.*)\)\s*$`)

// checkVariableQuery checks a Prometheus query variable's query:
// label_values(label), label_values(selector, label) or query_result(expr).
func (c *dashboardCheck) checkVariableQuery(where, q string, fams map[string]family, vars map[string]bool) {
	if m := queryResultRe.FindStringSubmatch(q); m != nil {
		c.checkExpr(where, m[1], fams, vars, false)
		return
	}
	m := labelValuesRe.FindStringSubmatch(q)
	if m == nil {
		c.errorf("%s: query %q is neither label_values(...) nor query_result(...)", where, q)
		return
	}
	args := m[1]
	// The label is after the last comma outside braces and strings.
	split := -1
	toks := tokenize(args)
	depth := 0
	for i, t := range toks {
		switch t.text {
		case "{", "(":
			depth++
		case "}", ")":
			depth--
		case ",":
			if depth == 0 && t.kind == tokPunct {
				split = i
			}
		}
	}
	if split < 0 {
		label := strings.TrimSpace(args)
		if !scrapeLabels[label] && !anyHasLabel(fams, label) {
			c.errorf("%s: label_values(%s): no metric has that label", where, label)
		}
		return
	}
	label := strings.TrimSpace(args[toks[split].pos+1:])
	sel := args[:toks[split].pos]
	refs := c.checkExpr(where, sel, fams, vars, false)
	for _, r := range refs {
		if !r.hasLabel(label) {
			c.errorf("%s: label_values(..., %s): %s has no label %s", where, label, r.describe(), label)
		}
	}
}

func anyHasLabel(fams map[string]family, label string) bool {
	for _, f := range fams {
		if f.labels[label] {
			return true
		}
	}
	return false
}

type tokKind int

const (
	tokIdent tokKind = iota
	tokString
	tokNumber
	tokRange // [...] with its content
	tokVar   // $name or ${name}
	tokPunct
)

type token struct {
	kind tokKind
	text string // a string's unquoted content, a range's content
	pos  int
}

// tokenize splits PromQL (with Grafana variables) into tokens.
func tokenize(s string) []token {
	var toks []token
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		case ch == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case ch == '"' || ch == '\'' || ch == '`':
			j := i + 1
			var b strings.Builder
			for j < len(s) && s[j] != ch {
				if s[j] == '\\' && ch != '`' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
				j++
			}
			toks = append(toks, token{tokString, b.String(), i})
			i = j + 1
		case ch == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				j = len(s) - i - 1
			}
			toks = append(toks, token{tokRange, strings.TrimSpace(s[i+1 : i+j]), i})
			i += j + 1
		case ch == '$':
			j := i + 1
			if j < len(s) && s[j] == '{' {
				k := strings.IndexByte(s[j:], '}')
				if k < 0 {
					k = len(s) - j - 1
				}
				toks = append(toks, token{tokVar, s[j+1 : j+k], i})
				i = j + k + 1
				continue
			}
			for j < len(s) && isIdentByte(s[j], false) {
				j++
			}
			toks = append(toks, token{tokVar, s[i+1 : j], i})
			i = j
		case isIdentByte(ch, true):
			j := i
			for j < len(s) && isIdentByte(s[j], false) {
				j++
			}
			toks = append(toks, token{tokIdent, s[i:j], i})
			i = j
		case ch >= '0' && ch <= '9' || ch == '.':
			j := i
			for j < len(s) && (isIdentByte(s[j], false) || s[j] == '.') {
				j++
			}
			toks = append(toks, token{tokNumber, s[i:j], i})
			i = j
		default:
			// Two-character operators first.
			if i+1 < len(s) {
				switch two := s[i : i+2]; two {
				case "=~", "!~", "!=", "==", "<=", ">=":
					toks = append(toks, token{tokPunct, two, i})
					i += 2
					continue
				}
			}
			toks = append(toks, token{tokPunct, string(ch), i})
			i++
		}
	}
	return toks
}

func isIdentByte(b byte, first bool) bool {
	return b == '_' || b == ':' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || !first && '0' <= b && b <= '9'
}

var aggregations = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "stddev": true, "stdvar": true,
	"topk": true, "bottomk": true, "quantile": true, "count_values": true, "group": true,
	"limitk": true, "limit_ratio": true,
}

var keywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "offset": true, "and": true, "or": true, "unless": true, "atan2": true,
}

// rangeFuncs take a range of a counter (or of a histogram's buckets, sum
// and count): the only place such a series belongs in a dashboard.
var rangeFuncs = map[string]bool{"rate": true, "increase": true, "irate": true}

// selRef is one metric selector of a query.
type selRef struct {
	name     string   // series name; "" for a {__name__=~...} selector
	families []string // the families it selects
	pos      int      // token index
	fams     map[string]family
}

func (r selRef) describe() string {
	if r.name != "" {
		return r.name
	}
	return "{" + strings.Join(r.families, ",") + "}"
}

// hasLabel reports whether the series r selects can carry label: one of
// the family's labels, a scrape label, or le on a histogram's buckets. A
// nameless selector has the labels of any family it selects.
func (r selRef) hasLabel(label string) bool {
	if scrapeLabels[label] || label == "__name__" {
		return true
	}
	if label == "le" && strings.HasSuffix(r.name, "_bucket") {
		return true
	}
	for _, f := range r.families {
		if r.fams[f].labels[label] {
			return true
		}
	}
	return false
}

// checkExpr checks one query and returns its selectors.
// A panel's query reads counters and histograms through rate() or
// increase() (inPanel); a variable's selector only lists label values.
func (c *dashboardCheck) checkExpr(where, expr string, fams map[string]family, vars map[string]bool, inPanel bool) []selRef {
	for _, m := range regexp.MustCompile(`\$\{?([A-Za-z0-9_]+)`).FindAllStringSubmatch(expr, -1) {
		if !vars[m[1]] && !grafanaBuiltins[m[1]] {
			c.errorf("%s: variable $%s is not defined", where, m[1])
		}
	}
	toks := tokenize(expr)
	series := seriesNames(fams)

	// Matching brackets.
	match := make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		match[i] = -1
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(", "{":
			stack = append(stack, i)
		case ")", "}":
			if len(stack) == 0 {
				c.errorf("%s: unbalanced %q", where, t.text)
				return nil
			}
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if want := map[string]string{")": "(", "}": "{"}[t.text]; toks[open].text != want {
				c.errorf("%s: %q closed by %q", where, toks[open].text, t.text)
				return nil
			}
			match[open], match[i] = i, open
		}
	}
	if len(stack) > 0 {
		c.errorf("%s: unbalanced %q", where, toks[stack[len(stack)-1]].text)
		return nil
	}
	punct := func(i int, s string) bool {
		return i >= 0 && i < len(toks) && toks[i].kind == tokPunct && toks[i].text == s
	}
	ident := func(i int, names ...string) bool {
		return i >= 0 && i < len(toks) && toks[i].kind == tokIdent && slices.Contains(names, toks[i].text)
	}

	// The label lists of by, without, on and ignoring, and of
	// group_left/group_right when given.
	type grouping struct {
		kw     string
		at     int // the keyword's index
		labels []string
	}
	var groups []grouping
	inList := make([]bool, len(toks))
	for i := range toks {
		if ident(i, "by", "without", "on", "ignoring", "group_left", "group_right") && punct(i+1, "(") {
			g := grouping{kw: toks[i].text, at: i}
			for j := i + 2; j < match[i+1]; j++ {
				inList[j] = true
				if toks[j].kind == tokIdent {
					g.labels = append(g.labels, toks[j].text)
				} else if !punct(j, ",") {
					c.errorf("%s: %s (...) holds %q", where, g.kw, toks[j].text)
				}
			}
			groups = append(groups, g)
		}
	}

	// The selectors, each with its matchers, the function it is an
	// argument of, and its range.
	var refs []selRef
	enclosingCall := func(i int) string {
		// The function whose parentheses hold token i directly.
		depth := 0
		for j := i - 1; j >= 0; j-- {
			switch {
			case punct(j, ")"):
				depth++
			case punct(j, "("):
				if depth > 0 {
					depth--
					continue
				}
				if j > 0 && toks[j-1].kind == tokIdent && !keywords[toks[j-1].text] {
					return toks[j-1].text
				}
				return ""
			}
		}
		return ""
	}
	checkMatchers := func(open int, r selRef) {
		for j := open + 1; j < match[open]; {
			if punct(j, ",") {
				j++
				continue
			}
			if toks[j].kind != tokIdent || j+2 >= match[open] || toks[j+1].kind != tokPunct || toks[j+2].kind != tokString {
				c.errorf("%s: cannot read the matcher at %q", where, toks[j].text)
				return
			}
			label, op := toks[j].text, toks[j+1].text
			if !slices.Contains([]string{"=", "!=", "=~", "!~"}, op) {
				c.errorf("%s: matcher %s %s", where, label, op)
			}
			if label != "__name__" && !r.hasLabel(label) {
				c.errorf("%s: %s has no label %s", where, r.describe(), label)
			}
			j += 3
		}
	}
	for i, t := range toks {
		var r selRef
		switch {
		case t.kind == tokIdent && !inList[i] && !keywords[t.text] && !aggregations[t.text] && !punct(i+1, "("):
			// An identifier that is no function, keyword or grouping
			// label: a metric name, unless it is a label in braces.
			if insideBraces(toks, match, i) {
				continue
			}
			r = selRef{name: t.text, pos: i, fams: fams}
			fam, ok := series[t.text]
			if !ok {
				if _, isFam := fams[t.text]; isFam {
					c.errorf("%s: %s is a %s: select its _bucket, _sum or _count", where, t.text, fams[t.text].typ)
				} else {
					c.errorf("%s: %s is not a metric the server exports", where, t.text)
				}
				continue
			}
			r.families = []string{fam}
			if punct(i+1, "{") {
				checkMatchers(i+1, r)
			}
		case punct(i, "{") && !(i > 0 && toks[i-1].kind == tokIdent && !keywords[toks[i-1].text]):
			// A selector without a name: its __name__ matcher names it.
			r = selRef{pos: i, fams: fams}
			for j := i + 1; j+2 < match[i]; j++ {
				if toks[j].kind == tokIdent && toks[j].text == "__name__" && toks[j+2].kind == tokString {
					op, v := toks[j+1].text, toks[j+2].text
					re, err := regexp.Compile("^(?:" + v + ")$")
					if op != "=" && op != "=~" || err != nil {
						c.errorf("%s: __name__ %s %q cannot be read", where, op, v)
						break
					}
					seen := map[string]bool{}
					for s, fam := range series {
						if (op == "=" && s == v || op == "=~" && re.MatchString(s)) && !seen[fam] {
							seen[fam] = true
							r.families = append(r.families, fam)
						}
					}
					sort.Strings(r.families)
				}
			}
			if len(r.families) == 0 {
				c.errorf("%s: the selector at %d names no metric the server exports", where, t.pos)
				continue
			}
			checkMatchers(i, r)
		default:
			continue
		}
		if inPanel {
			for _, f := range r.families {
				c.used[f] = true
			}
		}
		// A counter's or a histogram's series is read through rate() or
		// increase(), over Grafana's interval or the dashboard's range.
		if r.name != "" && inPanel {
			fam := fams[r.families[0]]
			if fam.typ == dto.MetricType_COUNTER || fam.typ == dto.MetricType_HISTOGRAM {
				end := i
				if punct(i+1, "{") {
					end = match[i+1]
				}
				fn := enclosingCall(i)
				switch {
				case !rangeFuncs[fn]:
					c.errorf("%s: %s is a %s series outside rate() or increase()", where, r.name, fam.typ)
				case end+1 >= len(toks) || toks[end+1].kind != tokRange:
					c.errorf("%s: %s in %s() has no range", where, r.name, fn)
				case toks[end+1].text != "$__rate_interval" && toks[end+1].text != "$__range":
					c.errorf("%s: %s in %s() over [%s], want [$__rate_interval] or [$__range]", where, r.name, fn, toks[end+1].text)
				}
			}
		}
		refs = append(refs, r)
	}

	// Each grouping label is a label of every selector it groups: an
	// aggregation's argument, or for on and ignoring any selector.
	for _, g := range groups {
		var scope []selRef
		switch g.kw {
		case "by", "without":
			lo, hi := argumentOf(toks, match, g.at)
			if lo < 0 {
				c.errorf("%s: %s (...) belongs to no aggregation", where, g.kw)
				continue
			}
			for _, r := range refs {
				if r.pos > lo && r.pos < hi {
					scope = append(scope, r)
				}
			}
			for _, l := range g.labels {
				for _, r := range scope {
					if !r.hasLabel(l) {
						c.errorf("%s: %s (%s): %s has no label %s", where, g.kw, strings.Join(g.labels, ", "), r.describe(), l)
					}
				}
			}
		default:
			for _, l := range g.labels {
				if !slices.ContainsFunc(refs, func(r selRef) bool { return r.hasLabel(l) }) {
					c.errorf("%s: %s (%s): no selector has label %s", where, g.kw, strings.Join(g.labels, ", "), l)
				}
			}
		}
	}
	return refs
}

// insideBraces reports whether token i is within a selector's braces (a
// label name or value, not a metric).
func insideBraces(toks []token, match []int, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if toks[j].kind == tokPunct && toks[j].text == "{" && match[j] > i {
			return true
		}
	}
	return false
}

// argumentOf returns the bounds (exclusive) of the parentheses holding the
// argument of the aggregation whose by or without clause is at kw:
// `sum by (l) (arg)` or `sum (arg) by (l)`. lo is -1 when there is none.
func argumentOf(toks []token, match []int, kw int) (lo, hi int) {
	isAgg := func(i int) bool { return i >= 0 && toks[i].kind == tokIdent && aggregations[toks[i].text] }
	isOpen := func(i int) bool { return i >= 0 && i < len(toks) && toks[i].kind == tokPunct && toks[i].text == "(" }
	if isAgg(kw - 1) {
		if after := match[kw+1] + 1; isOpen(after) {
			return after, match[after]
		}
		return -1, -1
	}
	if close := kw - 1; close >= 0 && toks[close].text == ")" && match[close] >= 0 && isAgg(match[close]-1) {
		return match[close], close
	}
	return -1, -1
}
