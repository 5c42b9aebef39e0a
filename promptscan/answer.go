package promptscan

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/promptwall/promptwall/engine"
	"github.com/promptwall/promptwall/jsonstr"
)

// lineBuffers are the storage one line's work reuses from the last.
type lineBuffers struct {
	text        []byte // a decoded text that had escapes
	members     []member
	failedSplit bool // the last line was not a JSON object
	compact     bytes.Buffer
}

// scanLine appends the answer to input line n to out, and reports the
// verdict and whether the line could be scanned: a line that cannot is
// answered with its other fields and an error. A nil line (a blank one)
// has no answer.
func (b *lineBuffers) scanLine(eng *engine.Engine, line []byte, n int, out []byte) ([]byte, engine.Verdict, bool) {
	if line == nil {
		return out, engine.Safe, true
	}
	start := len(out)
	out, v, err := b.answer(eng, line, out)
	if err == nil {
		return out, v, true
	}
	out = out[:start]
	if b.failedSplit {
		out = append(out, '{') // not an object: no fields to keep
	} else {
		out = b.appendOthers(out)
	}
	out = append(out, `"error":{"line":`...)
	out = strconv.AppendInt(out, int64(n), 10)
	out = append(out, `,"message":`...)
	out = jsonstr.Append(out, err.Error(), false)
	return append(out, "}}\n"...), engine.Safe, false
}

// answer appends the answer to a line that is not blank.
func (b *lineBuffers) answer(eng *engine.Engine, line []byte, out []byte) ([]byte, engine.Verdict, error) {
	members, err := splitObject(line, b.members[:0], &b.text)
	b.failedSplit = err != nil
	if err != nil {
		return out, "", err
	}
	b.members = members
	var text, textLit []byte
	isB64, found, canonical := false, false, false
	for _, m := range members {
		if isText(m.key) {
			if len(m.value) == 0 || m.value[0] != '"' {
				return out, "", fmt.Errorf("%q must be a string", m.key)
			}
			text, textLit, canonical = m.text, m.value, m.canonical
			isB64, found = string(m.key) == "text_base64", true
		}
	}
	if isB64 {
		if text, err = base64.StdEncoding.DecodeString(string(text)); err != nil {
			return out, "", fmt.Errorf("text_base64: %w", err)
		}
	}
	if !found {
		return out, "", errors.New(`needs a "text" or "text_base64" string`)
	}
	res := eng.Scan(text)
	out = b.appendOthers(out)
	out = append(out, `"result":`...)
	if !isB64 && len(res.Matches) == 0 && canonical {
		// The sanitized copy is the text, and the line wrote it as the
		// answer would: copy the literal rather than encode it again.
		out = engine.AppendJSONQuoted(out, res, textLit)
	} else {
		out = engine.AppendJSON(out, res, isB64)
	}
	return append(out, "}\n"...), res.Verdict, nil
}

// appendOthers opens an answer with the line's fields but its text, each
// followed by a comma.
func (b *lineBuffers) appendOthers(out []byte) []byte {
	out = append(out, '{')
	for _, m := range b.members {
		if isText(m.key) {
			continue
		}
		out = append(out, m.rawKey...)
		out = append(out, ':')
		out = appendCompact(out, m.value, &b.compact)
		out = append(out, ',')
	}
	return out
}
