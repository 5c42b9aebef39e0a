package firewall

import (
	"encoding/json"
	"strconv"
	"strings"
)

// idKey is the canonical form of a JSON-RPC id, by which the guard matches
// a server's answer to the client's request: a number by its exact value
// (1, 1.0, 10e-1 and 1e0 are one id, as a client that parses ids as
// numbers reads them), a string by its text (mcpmsg gives it unescaped
// and re-encoded), and the two kinds never equal. Ids that clients might
// read as the same value although they differ here (a string "1" for the
// SDK's Number(id), two integers past 2^53 that round alike) are not the
// same id to the guard: pin_tools drops a result whose id equals no id the
// client waits for, so such an alias never reaches the client.
func idKey(id json.RawMessage) string {
	s := strings.TrimSpace(string(id))
	switch {
	case s == "" || s == "null":
		return "z"
	case s[0] == '"':
		return "s" + s
	case s[0] == '-' || '0' <= s[0] && s[0] <= '9':
		if k, ok := numberKey(s); ok {
			return k
		}
	}
	return "r" + s
}

// numberKey writes a JSON number as "n", a sign, its significant digits
// and a decimal exponent: equal values, equal keys. ok is false for what
// is no JSON number or has an exponent beyond any id's.
func numberKey(s string) (key string, ok bool) {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	intPart, rest := s[:i], s[i:]
	if intPart == "" || len(intPart) > 1 && intPart[0] == '0' {
		return "", false
	}
	var frac string
	if strings.HasPrefix(rest, ".") {
		j := 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		if j == 1 {
			return "", false
		}
		frac, rest = rest[1:j], rest[j:]
	}
	exp := 0
	if rest != "" {
		if rest[0] != 'e' && rest[0] != 'E' {
			return "", false
		}
		e, err := strconv.Atoi(strings.TrimPrefix(rest[1:], "+"))
		if err != nil || rest[1:] == "" || e > 1<<20 || e < -(1<<20) {
			return "", false
		}
		exp = e
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if trimmed := strings.TrimRight(digits, "0"); len(trimmed) < len(digits) {
		exp += len(digits) - len(trimmed)
		digits = trimmed
	}
	if digits == "" {
		return "n0", true // -0 and 0.0e5 are 0
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return "n" + sign + digits + "e" + strconv.Itoa(exp), true
}
