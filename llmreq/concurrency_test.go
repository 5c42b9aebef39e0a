package llmreq

import (
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentParse checks that the pooled index and buffers are never shared between
// concurrent requests: every goroutine must get exactly what a lone Parse gets (run with -race).
func TestConcurrentParse(t *testing.T) {
	cases := allAPICases()
	want := make([]string, len(cases))
	for i, c := range cases {
		r, err := Parse(c.path, []byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = fmt.Sprint(r.API, r.Texts)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 50; round++ {
				i := (g*7 + round) % len(cases)
				r, err := Parse(cases[i].path, []byte(cases[i].body))
				if err != nil {
					t.Error(err)
					return
				}
				if got := fmt.Sprint(r.API, r.Texts); got != want[i] {
					t.Errorf("%s: concurrent Parse differs:\n%s\n%s", cases[i].name, got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
