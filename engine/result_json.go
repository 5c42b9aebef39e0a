package engine

import (
	"encoding/base64"
	"slices"
	"strconv"

	"github.com/promptwall/promptwall/jsonstr"
)

// AppendJSON appends r in the shape of docs/SPEC.md section 8, byte for byte what
// encoding/json writes for it (HTML-safe escapes, category_counts keys
// sorted), without reflection: the command line writes one per input line.
// With sanitizedBase64 the sanitized copy is written as "sanitized_base64",
// for inputs given as raw bytes whose copy may not be valid UTF-8.
func AppendJSON(dst []byte, r Result, sanitizedBase64 bool) []byte {
	dst = appendJSONFields(dst, r)
	if sanitizedBase64 {
		dst = append(dst, `,"sanitized_base64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, r.Sanitized)
		return append(dst, `"}`...)
	}
	dst = append(dst, `,"sanitized":`...)
	dst = jsonstr.Append(dst, r.Sanitized, true)
	return append(dst, '}')
}

// AppendJSONQuoted is AppendJSON with r.Sanitized given as the JSON string
// literal quoted, which must be what jsonstr.Append writes for it
// (jsonstr.DecodeAt says when a literal is): a caller that read the text
// as that literal and got it back unchanged copies it instead of encoding
// the text again.
func AppendJSONQuoted(dst []byte, r Result, quoted []byte) []byte {
	dst = appendJSONFields(dst, r)
	dst = append(dst, `,"sanitized":`...)
	dst = append(dst, quoted...)
	return append(dst, '}')
}

// appendJSONFields appends r's object up to its sanitized copy: the
// verdict, matches and category counts.
func appendJSONFields(dst []byte, r Result) []byte {
	dst = append(dst, `{"verdict":`...)
	dst = jsonstr.Append(dst, string(r.Verdict), true)
	dst = append(dst, `,"matches":[`...)
	for i, m := range r.Matches {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"rule":`...)
		dst = jsonstr.Append(dst, m.Rule, true)
		dst = append(dst, `,"category":`...)
		dst = jsonstr.Append(dst, m.Category, true)
		dst = append(dst, `,"severity":`...)
		dst = jsonstr.Append(dst, string(m.Severity), true)
		dst = append(dst, `,"start":`...)
		dst = strconv.AppendInt(dst, int64(m.Start), 10)
		dst = append(dst, `,"end":`...)
		dst = strconv.AppendInt(dst, int64(m.End), 10)
		dst = append(dst, `,"views":[`...)
		for j, v := range m.Views {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.Append(dst, v, true)
		}
		dst = append(dst, "]}"...)
	}
	dst = append(dst, `],"category_counts":{`...)
	keys := make([]string, 0, len(r.CategoryCounts))
	for k := range r.CategoryCounts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonstr.Append(dst, k, true)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(r.CategoryCounts[k]), 10)
	}
	return append(dst, '}')
}
