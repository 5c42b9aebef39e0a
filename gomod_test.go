package promptwall_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestGoDirectiveIsWhatDependenciesNeed: go.mod's go directive is the
// newest go directive among the modules the build loads (Caddy's among
// them), no newer: a newer one makes every older Go fetch a toolchain or
// refuse to build.
func TestGoDirectiveIsWhatDependenciesNeed(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", "all").Output()
	if err != nil {
		t.Fatal(err)
	}
	var main, need, needBy string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var m struct {
			Path, Version, GoVersion string
			Main                     bool
		}
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Main:
			main = m.GoVersion
		case compareGo(m.GoVersion, need) > 0:
			need, needBy = m.GoVersion, m.Path+"@"+m.Version
		}
	}
	if main == "" || need == "" {
		t.Fatalf("go list found no go directive (main %q, dependencies %q)", main, need)
	}
	if main != need {
		t.Errorf("go.mod says go %s; the newest a dependency needs is %s (%s)", main, need, needBy)
	}
}

// compareGo orders Go versions such as 1.25, 1.25.0 and 1.26.0 (1.25
// before 1.25.0, as the go command has it); "" is before every version.
func compareGo(a, b string) int {
	fields := func(v string) []int {
		var n []int
		for _, f := range strings.Split(v, ".") {
			if f == "" {
				continue
			}
			// A prerelease (1.26rc1) counts as its release.
			digits := len(f) - len(strings.TrimLeft(f, "0123456789"))
			i, _ := strconv.Atoi(f[:digits])
			n = append(n, i)
		}
		return n
	}
	x, y := fields(a), fields(b)
	for i := 0; i < max(len(x), len(y)); i++ {
		switch {
		case i >= len(x):
			return -1
		case i >= len(y):
			return 1
		case x[i] != y[i]:
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
