package llmreq

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestHostileBodiesStayProportional parses bodies built to make a parser allocate far more than
// their size (tiny values by the million, deep nesting times many strings, one huge string or
// key) and checks that Parse allocates at most a small multiple of the body, plus a bounded
// cost per text.
func TestHostileBodiesStayProportional(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates tens of MiB")
	}
	const n = 4 << 20
	for _, c := range []struct {
		name string
		body string
		err  error
	}{
		{"numbers", "[" + strings.Repeat("1,", n/2-1) + "1]", nil},
		{"empty strings", "[" + strings.Repeat(`"",`, n/3-1) + `""]`, ErrTooManyTexts},
		{"empty arrays", "[" + strings.Repeat("[],", n/3-1) + "[]]", nil},
		// The keys of a body no API fits are texts: 700,000 of them are too many.
		{"members", "{" + strings.Repeat(`"a":1,`, n/6-1) + `"a":1}`, ErrTooManyTexts},
		{"one long text", `{"messages":[{"role":"user","content":"` + strings.Repeat(`ab\n`, n/4) + `"}]}`, nil},
		{"escapes", `"` + strings.Repeat(`\u0000`, n/6-1) + `"`, nil},
		{"huge key", `{"` + strings.Repeat("k", n) + `":["a","b","c"]}`, nil},
		{"deep and wide", strings.Repeat("[", MaxDepth-1) + strings.Repeat(`"x",`, 60000) + `"x"` + strings.Repeat("]", MaxDepth-1), nil},
	} {
		body := []byte(c.body)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse("/v1/chat/completions", body)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, c.err) && !(c.err == nil && err == nil) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		// Ten bytes per body byte for the index and its doubling, plus at most MaxTexts texts of
		// about 400 bytes each (Text, path, bookkeeping, doubling).
		if limit := uint64(10*len(body) + MaxTexts*400); alloc > limit {
			t.Errorf("%s: %d-byte body allocated %d bytes (limit %d)", c.name, len(body), alloc, limit)
		}
		t.Logf("%s: %.1f MiB body, %.1f MiB allocated", c.name, float64(len(body))/(1<<20), float64(alloc)/(1<<20))
	}
}

// TestPooledTextsCleared: the texts of a small body are collected in the
// tape's buffer, which goes back to the pool; none of them stays there,
// and the request's own texts do not share it.
func TestPooledTextsCleared(t *testing.T) {
	tp := new(tape)
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"canary 7d1f"},{"role":"assistant","content":"x"}]}`)
	req, err := tp.parse("/v1/chat/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Texts) != 2 || req.Texts[0].Value != "canary 7d1f" {
		t.Fatalf("texts %+v", req.Texts)
	}
	if cap(tp.texts) == 0 {
		t.Fatal("the tape kept no buffer: the small-body path was not taken")
	}
	for i, tx := range tp.texts[:cap(tp.texts)] {
		if tx != (Text{}) {
			t.Fatalf("pooled buffer entry %d still holds %+v", i, tx)
		}
	}
	req.Texts[0].Value = "changed"
	if tp.texts[:1][0].Value != "" {
		t.Fatal("the request's texts share the pooled buffer")
	}
}
