package integration

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// checkerFamilies is exposition text with the shape of the server's
// metrics, for the checker's own tests.
const checkerFamilies = `# TYPE promptwall_firewall_requests_total counter
promptwall_firewall_requests_total{action="block",host="_other",phase="request",verdict="malicious"} 1
# TYPE promptwall_firewall_matches_total counter
promptwall_firewall_matches_total{host="_other",phase="request",rule="IO-1"} 1
# TYPE promptwall_firewall_scan_duration_seconds histogram
promptwall_firewall_scan_duration_seconds_bucket{phase="request",le="0.001"} 1
promptwall_firewall_scan_duration_seconds_bucket{phase="request",le="+Inf"} 1
promptwall_firewall_scan_duration_seconds_sum{phase="request"} 0.0001
promptwall_firewall_scan_duration_seconds_count{phase="request"} 1
# TYPE promptwall_scan_requests_total counter
promptwall_scan_requests_total{code="200",endpoint="precheck"} 1
# TYPE caddy_admin_http_requests_total counter
caddy_admin_http_requests_total{code="200"} 1
`

// checkerDashboard is a dashboard with a row holding a nested panel and a
// panel beside it; edit changes its JSON tree before it is encoded.
func checkerDashboard(t *testing.T, edit func(d map[string]any)) []byte {
	t.Helper()
	ds := func() map[string]any { return map[string]any{"type": "prometheus", "uid": "${datasource}"} }
	panel := func(id int, expr string) map[string]any {
		return map[string]any{
			"id": id, "type": "timeseries", "title": "p" + string(rune('0'+id)), "datasource": ds(),
			"gridPos": map[string]any{"h": 8, "w": 12, "x": 0, "y": 0},
			"targets": []any{map[string]any{"refId": "A", "datasource": ds(), "expr": expr}},
		}
	}
	d := map[string]any{
		"uid": "test", "schemaVersion": 39,
		"templating": map[string]any{"list": []any{
			map[string]any{"name": "datasource", "type": "datasource", "query": "prometheus"},
			map[string]any{"name": "job", "type": "query", "datasource": ds(),
				"query": map[string]any{"query": `label_values({__name__=~"promptwall_.+"}, job)`}},
			map[string]any{"name": "host", "type": "query", "datasource": ds(),
				"query": `label_values(promptwall_firewall_requests_total{job=~"$job"}, host)`},
		}},
		"panels": []any{
			map[string]any{"id": 1, "type": "row", "title": "row", "collapsed": true,
				"gridPos": map[string]any{"h": 1, "w": 24, "x": 0, "y": 0},
				"panels":  []any{panel(2, `sum by (verdict, action) (rate(promptwall_firewall_requests_total{job=~"$job", host=~"$host"}[$__rate_interval]))`)}},
			panel(3, `histogram_quantile(0.99, sum(rate(promptwall_firewall_scan_duration_seconds_bucket{instance=~".+"}[$__rate_interval])) by (le))`),
		},
	}
	if edit != nil {
		edit(d)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// setExpr sets the query of the nested panel.
func setExpr(expr string) func(map[string]any) {
	return func(d map[string]any) {
		row := d["panels"].([]any)[0].(map[string]any)
		p := row["panels"].([]any)[0].(map[string]any)
		p["targets"].([]any)[0].(map[string]any)["expr"] = expr
	}
}

// setVarQuery sets the query of the host variable.
func setVarQuery(q string) func(map[string]any) {
	return func(d map[string]any) {
		d["templating"].(map[string]any)["list"].([]any)[2].(map[string]any)["query"] = q
	}
}

// TestDashboardChecker: the checker passes a sound dashboard and reports
// each kind of mistake, in nested panels and variables alike.
func TestDashboardChecker(t *testing.T) {
	fams, err := parseFamilies(strings.NewReader(checkerFamilies), "promptwall_")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fams["caddy_admin_http_requests_total"]; ok {
		t.Fatal("parseFamilies kept a family without the prefix")
	}

	sound := checkDashboard(checkerDashboard(t, nil), fams)
	if len(sound.errs) > 0 {
		t.Fatalf("a sound dashboard: %q", sound.errs)
	}
	if got := slices.Sorted(maps.Keys(sound.used)); !slices.Equal(got, []string{
		"promptwall_firewall_requests_total", "promptwall_firewall_scan_duration_seconds",
	}) {
		t.Errorf("used families %v", got)
	}

	const sel = `{job=~"$job"}[$__rate_interval]`
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
		raw  string // instead of edit: the whole file
		want string
	}{
		{name: "unknown metric", edit: setExpr(`sum(rate(promptwall_firewall_blocks_total` + sel + `))`),
			want: "promptwall_firewall_blocks_total is not a metric the server exports"},
		{name: "another exporter's metric", edit: setExpr(`sum(rate(caddy_admin_http_requests_total` + sel + `))`),
			want: "caddy_admin_http_requests_total is not a metric the server exports"},
		{name: "metric as a function argument", edit: setExpr(`topk(5, rate(promptwall_firewall_bogus_total` + sel + `))`),
			want: "promptwall_firewall_bogus_total is not a metric"},
		{name: "unknown label in a selector", edit: setExpr(`sum(rate(promptwall_firewall_requests_total{route="chat"}[$__rate_interval]))`),
			want: "promptwall_firewall_requests_total has no label route"},
		{name: "unknown label in by before the argument", edit: setExpr(`sum by (route) (rate(promptwall_firewall_requests_total` + sel + `))`),
			want: "by (route): promptwall_firewall_requests_total has no label route"},
		{name: "unknown label in by after the argument", edit: setExpr(`sum(rate(promptwall_firewall_requests_total` + sel + `)) by (verdict, route)`),
			want: "promptwall_firewall_requests_total has no label route"},
		{name: "another metric's label", edit: setExpr(`sum by (endpoint) (rate(promptwall_firewall_requests_total` + sel + `))`),
			want: "has no label endpoint"},
		{name: "unknown label in without", edit: setExpr(`sum without (route) (rate(promptwall_firewall_requests_total` + sel + `))`),
			want: "without (route)"},
		{name: "unknown label in on", edit: setExpr(`rate(promptwall_firewall_requests_total` + sel + `) / on (route) rate(promptwall_scan_requests_total` + sel + `)`),
			want: "on (route): no selector has label route"},
		{name: "le of a counter", edit: setExpr(`sum by (le) (rate(promptwall_firewall_requests_total` + sel + `))`),
			want: "promptwall_firewall_requests_total has no label le"},
		{name: "histogram by its family name", edit: setExpr(`sum(rate(promptwall_firewall_scan_duration_seconds` + sel + `))`),
			want: "promptwall_firewall_scan_duration_seconds is a HISTOGRAM: select its _bucket"},
		{name: "buckets of a counter", edit: setExpr(`sum(rate(promptwall_firewall_requests_total_bucket` + sel + `))`),
			want: "promptwall_firewall_requests_total_bucket is not a metric"},
		{name: "counter outside rate", edit: setExpr(`sum(promptwall_firewall_requests_total{job=~"$job"})`),
			want: "outside rate() or increase()"},
		{name: "histogram sum outside rate", edit: setExpr(`promptwall_firewall_scan_duration_seconds_sum`),
			want: "outside rate() or increase()"},
		{name: "fixed range", edit: setExpr(`sum(rate(promptwall_firewall_requests_total{job=~"$job"}[5m]))`),
			want: "over [5m], want [$__rate_interval]"},
		{name: "undefined variable", edit: setExpr(`sum(rate(promptwall_firewall_requests_total{instance=~"$instnace"}[$__rate_interval]))`),
			want: "variable $instnace is not defined"},
		{name: "unbalanced", edit: setExpr(`sum(rate(promptwall_firewall_requests_total` + sel + `)`),
			want: "unbalanced"},
		{name: "no query", edit: setExpr(" "), want: "no expr"},
		{name: "duplicate panel id in a row", edit: func(d map[string]any) {
			d["panels"].([]any)[1].(map[string]any)["id"] = 2
		}, want: "id 2 is also panel"},
		{name: "panel on a fixed datasource", edit: func(d map[string]any) {
			d["panels"].([]any)[1].(map[string]any)["datasource"] = map[string]any{"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
		}, want: `panel "p3": datasource map[type:prometheus uid:P1809F7CD0C75ACF3] does not use the datasource variable`},
		{name: "query on another datasource", edit: func(d map[string]any) {
			row := d["panels"].([]any)[0].(map[string]any)
			p := row["panels"].([]any)[0].(map[string]any)
			p["targets"].([]any)[0].(map[string]any)["datasource"] = map[string]any{"type": "loki", "uid": "${datasource}"}
		}, want: `panel "p2" A: datasource`},
		{name: "panel without datasource", edit: func(d map[string]any) {
			delete(d["panels"].([]any)[1].(map[string]any), "datasource")
		}, want: `panel "p3": datasource <nil>`},
		{name: "panel without queries", edit: func(d map[string]any) {
			delete(d["panels"].([]any)[1].(map[string]any), "targets")
		}, want: `panel "p3": no query`},
		{name: "panel past the grid", edit: func(d map[string]any) {
			d["panels"].([]any)[1].(map[string]any)["gridPos"] = map[string]any{"h": 8, "w": 12, "x": 18, "y": 0}
		}, want: "outside the 24 columns"},
		{name: "no datasource variable", edit: func(d map[string]any) {
			l := d["templating"].(map[string]any)["list"].([]any)
			d["templating"].(map[string]any)["list"] = l[1:]
		}, want: "no datasource variable"},
		{name: "old schema", edit: func(d map[string]any) { d["schemaVersion"] = 16 }, want: "schemaVersion 16"},
		{name: "variable: unknown metric", edit: setVarQuery(`label_values(promptwall_firewall_verdicts_total, host)`),
			want: "variable host: promptwall_firewall_verdicts_total is not a metric"},
		{name: "variable: unknown label", edit: setVarQuery(`label_values(promptwall_firewall_requests_total{job=~"$job"}, route)`),
			want: "variable host: label_values(..., route): promptwall_firewall_requests_total has no label route"},
		{name: "variable: unknown label in its selector", edit: setVarQuery(`label_values(promptwall_firewall_requests_total{route="x"}, host)`),
			want: "promptwall_firewall_requests_total has no label route"},
		{name: "variable: a label alone no metric has", edit: setVarQuery(`label_values(route)`),
			want: "label_values(route): no metric has that label"},
		{name: "variable: a name pattern that matches nothing", edit: setVarQuery(`label_values({__name__=~"promptwal_.+"}, job)`),
			want: "names no metric the server exports"},
		{name: "variable: another query kind", edit: setVarQuery(`metrics(promptwall_.*)`),
			want: "neither label_values(...) nor query_result(...)"},
		{name: "variable: query_result of an unknown metric", edit: setVarQuery(`query_result(promptwall_nothing)`),
			want: "promptwall_nothing is not a metric"},
		{name: "variable on a fixed datasource", edit: func(d map[string]any) {
			d["templating"].(map[string]any)["list"].([]any)[1].(map[string]any)["datasource"] = "Prometheus"
		}, want: "variable job: datasource Prometheus does not use the datasource variable"},
		{name: "not JSON", raw: `{"panels": [`, want: "not a dashboard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.raw)
			if tc.raw == "" {
				raw = checkerDashboard(t, tc.edit)
			}
			c := checkDashboard(raw, fams)
			if !slices.ContainsFunc(c.errs, func(e string) bool { return strings.Contains(e, tc.want) }) {
				t.Errorf("want an error with %q, got %q", tc.want, c.errs)
			}
		})
	}
}
