// Package nearest finds the word a user most likely meant: the Caddyfile
// parsers name it in the error for an unknown option ("did you mean").
package nearest

// Word returns the candidate nearest to w by edit distance (insertions,
// deletions, substitutions and swaps of adjacent letters), if it is near
// enough to be a slip: at most one edit for words of up to four letters,
// two up to eight, three beyond. It returns "" otherwise. Ties go to the
// earlier candidate.
func Word(w string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := distance(w, c)
		if d <= allowed(len(c)) && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// Hint is ` (did you mean 'x'?)` for Word's answer, or "".
func Hint(w string, candidates []string) string {
	if n := Word(w, candidates); n != "" {
		return " (did you mean '" + n + "'?)"
	}
	return ""
}

func allowed(n int) int {
	switch {
	case n <= 4:
		return 1
	case n <= 8:
		return 2
	default:
		return 3
	}
}

// distance is the optimal string alignment distance of a and b, in bytes:
// option names are ASCII. Inputs longer than 64 bytes are not compared (an
// option name is short; a hostile token must not cost quadratic time).
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	var rows [3][65]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
