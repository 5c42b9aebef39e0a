package engine

import (
	"testing"

	"github.com/promptwall/promptwall/rulebook"
)

// BenchmarkCompileDefault measures what a process pays once at start.
func BenchmarkCompileDefault(b *testing.B) {
	for i := 0; i < b.N; i++ {
		rb, err := rulebook.Parse(rulebook.Default().Raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := New(rb); err != nil {
			b.Fatal(err)
		}
	}
}
