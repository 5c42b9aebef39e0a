// Package engine applies a rulebook to texts exactly as SPEC.md defines.
package engine

import (
	"github.com/promptwall/promptwall/rulebook"
)

// Engine scans texts with one compiled rulebook. It is safe for concurrent use.
type Engine struct {
	rb *rulebook.Rulebook
}

// New compiles a rulebook into an engine.
func New(rb *rulebook.Rulebook) (*Engine, error) {
	return &Engine{rb: rb}, nil
}

// Rulebook returns the engine's rulebook.
func (e *Engine) Rulebook() *rulebook.Rulebook { return e.rb }

// Scan scans one text given as bytes (meant to be UTF-8; see SPEC section 1).
func (e *Engine) Scan(text []byte) Result {
	panic("engine: not implemented yet")
}

// ScanString is Scan for a string.
func (e *Engine) ScanString(text string) Result { return e.Scan([]byte(text)) }
