package llmreq

import (
	"unicode/utf8"

	"github.com/promptwall/promptwall/jsonstr"
)

// JSON string literals are decoded and encoded by package jsonstr, with encoding/json's exact
// semantics, so a text's Value is what any Go upstream (and the scan service) would see, and a
// rewritten literal is what json.Marshal would write with HTML escaping off.

// appendLiteral appends the value of the string literal lit (quotes included) to dst.
func appendLiteral(dst, lit []byte, flags uint8) []byte {
	s := lit[1 : len(lit)-1]
	if flags&flagEscape == 0 && utf8.Valid(s) {
		return append(dst, s...)
	}
	return jsonstr.Unquote(dst, s)
}
