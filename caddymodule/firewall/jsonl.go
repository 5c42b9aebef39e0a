package firewall

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/promptwall/promptwall/llmreq"
)

var (
	errInvalidJSONL = &failure{http.StatusBadRequest, "invalid_jsonl",
		"Request blocked by prompt firewall: a line of the JSON Lines file is not valid JSON"}
	errAmbiguousBatch = &failure{http.StatusBadRequest, "invalid_jsonl",
		"Request blocked by prompt firewall: a batch request line names its url more than once"}
)

// maxFormTexts bounds the texts of all the scan units of one body: a file
// of many small lines must not turn max_body into many times its size.
const maxFormTexts = 4 * llmreq.MaxTexts

// scanUnit is one piece of a non-JSON body that is scanned as a request:
// a text field or document (one text), an extracted PDF text, or one line
// of a JSON Lines file. Its bytes are data[start:end] of its part; a
// sanitized unit's replacement is spliced there.
type scanUnit struct {
	part       int // index in form.parts
	start, end int
	req        *llmreq.Request
	raw        bool // one text, replaced as raw text rather than as JSON
	readonly   bool // extracted text: the file cannot be rewritten
	out        *outcome
	repl       map[int]string // the sanitized texts, for Rewrite
}

// textUnit makes the unit of a whole text, scanned as role user: a form
// field or a document is what the user sent the model.
func textUnit(part int, path, text string, end int, readonly bool) scanUnit {
	req := &llmreq.Request{API: apiForm, Texts: []llmreq.Text{{Path: path, Role: llmreq.RoleUser, Value: text}}}
	return scanUnit{part: part, end: end, req: req, raw: true, readonly: readonly}
}

// apiForm labels the log entries of non-JSON bodies.
const apiForm llmreq.API = "form"

// jsonlUnits parses a JSON Lines file: every line not blank must be valid
// JSON, else the file is refused. A line in the shape of a batch request
// ({"custom_id", "method", "url", "body"}) has each of its bodies parsed as
// a request to its url, as the batch runs it; any other line (a fine-tuning
// example's {"messages": [...]}, say) is parsed as a request itself.
func jsonlUnits(part int, name string, data []byte) ([]scanUnit, *failure) {
	var units []scanUnit
	line := 0
	for start := 0; start < len(data); line++ {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start
		}
		b := data[start:end]
		if len(bytes.TrimSpace(b)) > 0 {
			us, fe := lineUnits(b, name+"["+strconv.Itoa(line)+"]")
			if fe != nil {
				return nil, fe
			}
			for _, u := range us {
				u.part, u.start, u.end = part, u.start+start, u.end+start
				units = append(units, u)
			}
		}
		start = end + 1
	}
	return units, nil
}

// lineUnits parses one line; the units' offsets are the line's.
func lineUnits(line []byte, prefix string) ([]scanUnit, *failure) {
	if !json.Valid(line) {
		return nil, errInvalidJSONL
	}
	url, bodies, fe := batchMembers(line)
	if fe != nil {
		return nil, fe
	}
	if len(bodies) == 0 {
		u, fe := parseUnit("", line, prefix)
		if fe != nil {
			return nil, fe
		}
		u.end = len(line)
		return []scanUnit{u}, nil
	}
	units := make([]scanUnit, 0, len(bodies))
	for _, sp := range bodies {
		u, fe := parseUnit(url, line[sp[0]:sp[1]], prefix+".body")
		if fe != nil {
			return nil, fe
		}
		u.start, u.end = sp[0], sp[1]
		units = append(units, u)
	}
	return units, nil
}

// batchMembers finds the url and the object bodies of a batch request
// line: every "body" member counts (a duplicated key is read first by some
// parsers and last by others); a url given twice is refused.
func batchMembers(line []byte) (url string, bodies [][2]int, fe *failure) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", nil, nil // not an object: parsed whole
	}
	seenURL := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", nil, errInvalidJSONL
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "", nil, errInvalidJSONL
		}
		end := int(dec.InputOffset())
		switch key {
		case "url":
			if seenURL {
				return "", nil, errAmbiguousBatch
			}
			seenURL = true
			json.Unmarshal(raw, &url) // not a string: no url, the body's shape decides
		case "body":
			if len(raw) > 0 && raw[0] == '{' {
				bodies = append(bodies, [2]int{end - len(raw), end})
			}
		}
	}
	return url, bodies, nil
}

// parseUnit parses body as a request to urlPath, its texts' paths
// prefixed for the block's param and the log.
func parseUnit(urlPath string, body []byte, prefix string) (scanUnit, *failure) {
	req, err := llmreq.Parse(urlPath, body)
	if err != nil {
		return scanUnit{}, parseFailure(err)
	}
	for i := range req.Texts {
		t := &req.Texts[i]
		switch {
		case t.Path == "":
			t.Path = prefix
		case t.Path[0] == '[':
			t.Path = prefix + t.Path
		default:
			t.Path = prefix + "." + t.Path
		}
	}
	return scanUnit{req: req, end: len(body)}, nil
}

// jsonTextUnits reads a text that is JSON as JSON, so that the scan sees
// its strings decoded (a \u0049gnore is read as Ignore): a text whose
// every line is JSON is JSON Lines (a batch line read as such), else a
// valid JSON document is one unit.
// ok is false for any other text, which is scanned as it is.
func jsonTextUnits(part int, name string, data []byte) (units []scanUnit, ok bool, fe *failure) {
	if !looksJSON(data) {
		return nil, false, nil
	}
	units, fe = jsonlUnits(part, name, data)
	if fe != errInvalidJSONL {
		return units, fe == nil, fe
	}
	if json.Valid(data) { // JSON across lines
		u, fe := parseUnit("", data, name)
		u.part = part
		return []scanUnit{u}, fe == nil, fe
	}
	return nil, false, nil
}

// parseFailure maps an llmreq.Parse error to the request's refusal.
func parseFailure(err error) *failure {
	switch {
	case errors.Is(err, llmreq.ErrTooDeep):
		return errTooDeep
	case errors.Is(err, llmreq.ErrTooManyTexts), errors.Is(err, llmreq.ErrTooLarge):
		return errTooManyTexts
	}
	return errInvalidJSON
}

// jsonStringUnit reads a text that is one JSON string as that string
// decoded, for a parser that reads the text as JSON: the scan of the text
// as it is does not see what \u escapes spell. ok is false for any other
// text. The unit is read only: the text is rewritten, if at all, as text.
func jsonStringUnit(part int, name string, data []byte) (u scanUnit, ok bool) {
	b := bytes.TrimSpace(skipBlank(data))
	if len(b) == 0 || b[0] != '"' {
		return u, false
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return u, false
	}
	return textUnit(part, name, s, len(data), true), true
}
