package rulebook

import "fmt"

// Compiled is a rulebook whose patterns are ready to match.
type Compiled struct{}

// Compile compiles every rule's pattern.
func Compile(rb *Rulebook) (*Compiled, error) { return &Compiled{}, nil }

func compileFlags(f string) (string, error) {
	for _, c := range f {
		if c != 'i' && c != 'g' {
			return "", fmt.Errorf("unsupported flag %q", c)
		}
	}
	return f, nil
}
