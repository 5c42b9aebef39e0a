package scanservice

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/promptwall/promptwall/x402"
)

// request is a decoded /precheck or /scan body.
type request struct {
	Text   string
	Caller string
}

// readRequest reads and checks a body against the published caps and
// shape. On failure it has answered (400 or 413) and returns false. It is
// called before anything is charged, so a request that cannot be answered
// never costs a pre-check or a payment.
func readRequest(w http.ResponseWriter, r *http.Request, wantCaller bool) (request, bool) {
	for _, line := range r.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(line, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				// Bodies are 64 KiB at most: a client can send them as
				// they are, and nothing here inflates a hostile one.
				w.Header().Set("Accept-Encoding", "identity")
				writeError(w, http.StatusUnsupportedMediaType, codeUnsupportedEncoding,
					fmt.Sprintf("Content-Encoding %q is not accepted; send the body unencoded (identity)", c))
				return request{}, false
			}
		}
	}
	if r.ContentLength > MaxBodyBytes {
		// The body is not read. A client waiting for 100-continue has
		// not sent it: closing the connection answers at once. A client
		// sending its body is left to net/http, which drains a little
		// and closes gently, so that it reads the 413 rather than a
		// reset.
		if strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
			w.Header().Set("Connection", "close")
		}
		writeError(w, http.StatusRequestEntityTooLarge, codeBodyTooLarge,
			fmt.Sprintf("the body is %d bytes; at most %d are accepted", r.ContentLength, MaxBodyBytes))
		return request{}, false
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
		if err != nil {
			if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
				// A request_body max_size in front is smaller than ours.
				writeError(w, http.StatusRequestEntityTooLarge, codeBodyTooLarge,
					fmt.Sprintf("the body is over %d bytes", mbe.Limit))
				return request{}, false
			}
			writeError(w, http.StatusBadRequest, codeInvalidJSON, "the body could not be read")
			return request{}, false
		}
	}
	if len(body) > MaxBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, codeBodyTooLarge,
			fmt.Sprintf("the body is over %d bytes", MaxBodyBytes))
		return request{}, false
	}

	// Decode into raw fields so that keys match exactly ("text", not
	// "Text") and a missing field can be told from a wrong type.
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		writeError(w, http.StatusBadRequest, codeInvalidJSON, `the body must be a JSON object such as {"text": "..."}`)
		return request{}, false
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, codeInvalidJSON, "the body holds more than one JSON value")
		return request{}, false
	}
	var req request
	raw, ok := fields["text"]
	if !ok || string(raw) == "null" {
		writeError(w, http.StatusBadRequest, codeMissingText, `the body has no "text"`)
		return request{}, false
	}
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &req.Text) != nil {
		writeError(w, http.StatusBadRequest, codeInvalidText, `"text" must be a string`)
		return request{}, false
	}
	if n := utf16Len(req.Text); n > MaxTextUnits {
		writeError(w, http.StatusRequestEntityTooLarge, codeTextTooLarge,
			fmt.Sprintf("the text is %d UTF-16 units long; at most %d are accepted", n, MaxTextUnits))
		return request{}, false
	}
	if wantCaller {
		raw, ok := fields["caller"]
		if !ok || len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &req.Caller) != nil || !isAddress(req.Caller) {
			writeError(w, http.StatusBadRequest, codeInvalidCaller,
				`"caller" must be your Solana wallet address (base58, 32 bytes)`)
			return request{}, false
		}
	}
	return req, true
}

// utf16Len is the JavaScript length of s: characters outside the Basic
// Multilingual Plane count two. encoding/json has already replaced invalid
// UTF-8 and lone surrogates with U+FFFD, which counts one.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// isAddress reports whether s is a Solana address: base58 of exactly 32
// bytes.
func isAddress(s string) bool {
	_, err := x402.ParsePublicKey(s)
	return err == nil
}
