package llmreq

// The fallback: whatever shape the API rules do not know is scanned whole, keys and values, so
// that an unexpected shape costs precision, never coverage.

// all records every string value and every object key under node i (i itself if it is a
// string) with role. This is the fallback for any shape the API rules do not know, and the rule
// for objects the model reads whole (tool arguments and results): whatever the shape, no string
// goes unscanned.
func (w *walker) all(i int, role string) {
	switch w.kind(i) {
	case kindString:
		if w.isDataURL(i) {
			w.dataURL(i, role) // dataurl.go
			return
		}
		w.emit(i, role)
	case kindObject:
		if w.fileShaped(i, role) {
			return
		}
		w.eachMember(i, func(k, v int) {
			mark := w.pushKey(k)
			w.emitKey(k, role)
			if w.kind(v) == kindArray && w.fallback > 0 && w.isTokenName(k) {
				w.fallbackTokenIDs(v) // tokenids.go
			}
			if w.kind(v) == kindString && w.keyIs(k, "document_url") && !w.isDataURL(v) {
				w.remote(v, role, "") // Mistral OCR's document, in a shape no rule knows
			}
			if w.kind(v) < kindNumber {
				w.all(v, role)
			}
			w.pop(mark)
		})
	case kindArray:
		w.eachElement(i, func(n, e int) {
			if w.kind(e) >= kindNumber {
				return
			}
			mark := w.pushIndex(n)
			w.all(e, role)
			w.pop(mark)
		})
	}
}

// allBut is all for an object of unknown shape whose discriminator "type" is a known word and
// not a text; every other string and key under it is recorded.
func (w *walker) allBut(i int, role string) {
	if w.kind(i) != kindObject {
		w.all(i, role)
		return
	}
	w.eachMember(i, func(k, v int) {
		if w.kind(v) == kindString && w.keyIs(k, "type") {
			return
		}
		w.unknown(k, v, role)
	})
}

// unknown scans member (k, v) of a shape the rules do not know: its key and all of its value,
// where token ids are looked for (tokenids.go).
func (w *walker) unknown(k, v int, role string) {
	mark := w.pushKey(k)
	w.emitKey(k, role)
	w.fallback++
	if w.kind(v) == kindArray && w.isTokenName(k) {
		w.fallbackTokenIDs(v)
	}
	w.all(v, role)
	w.fallback--
	w.pop(mark)
}

// rootMember handles a root member the API's walker has no rule for: inert members are left
// out, any other is scanned whole, unless another walker owns the root's unknown members.
func (w *walker) rootMember(k, v int) {
	if w.secondary || w.isInert(k, w.info.inert) {
		return
	}
	w.unknown(k, v, RoleUnknown)
}

// isInert reports whether key k is exactly one of the names of set (an escaped key decoded).
// Inert names match exactly, where rules match keys as encoding/json does: a key that only
// folds to an inert name is scanned, which costs time, not coverage.
func (w *walker) isInert(k int, set map[string]bool) bool {
	key := w.decoded(k)
	return commonInertName(string(key)) || set[string(key)]
}

// commonInertName reports whether s is one of commonInert, without hashing: most root members of
// a request are these.
func commonInertName(s string) bool {
	switch s {
	case "model", "stream", "stream_options", "temperature", "top_p", "top_k", "n",
		"max_tokens", "seed", "user", "metadata", "service_tier", "store", "logprobs", "top_logprobs",
		"presence_penalty", "frequency_penalty", "stop", "logit_bias", "parallel_tool_calls",
		"tool_choice", "safety_identifier", "prompt_cache_key":
		return true
	}
	return false
}

// memberValues scans the member values of an object whose keys are the API's own names: all
// of each value, keys below included.
func (w *walker) memberValues(o int, role string) {
	if w.kind(o) != kindObject {
		w.all(o, role)
		return
	}
	w.eachMember(o, func(k, v int) {
		if w.kind(v) < kindNumber {
			w.at(k, v, role, w.all)
		}
	})
}
