package llmreq

import "strings"

// Token ids outside the members the API rules know: servers that generate from token ids
// (SGLang's /generate input_ids, vLLM's token-in API token_ids, Triton and TensorRT-LLM
// input_ids) take them under names of their own. In a generic body and in any member the rules
// do not know, an array of two or more integers, or an array of integer arrays, under a name
// that says token ids is a prompt no scanner can read, and its path is listed in
// Request.TokenIDs.

// tokenNames are the member names of token-id prompts; names ending in "_ids" or "_tokens" are
// too, unless they are sampling settings (tokenSettings).
var tokenNames = []string{"input_ids", "token_ids", "prompt_token_ids", "tokens", "prompt"}

// tokenSettings are names of token-id arrays that steer sampling and are never put before the
// model: stop tokens (vLLM, SGLang, TGI), tokens allowed or banned from the output (vLLM,
// Hugging Face generate), tokens suppressed at the start of the output (Whisper), and decoder
// ids forced into the output (Hugging Face). Objects (logit_bias) are not arrays, so are never
// token ids.
var tokenSettings = []string{"stop_token_ids", "eos_token_ids", "allowed_token_ids",
	"banned_token_ids", "bad_words_ids", "suppress_tokens", "begin_suppress_tokens",
	"forced_decoder_ids", "stop_tokens"}

// isTokenName reports whether key k names a token-id prompt.
func (w *walker) isTokenName(k int) bool {
	key := strings.ToLower(string(w.decoded(k)))
	if isOneOf(key, tokenSettings) {
		return false
	}
	return isOneOf(key, tokenNames) || strings.HasSuffix(key, "_ids") || strings.HasSuffix(key, "_tokens")
}

// fallbackTokenIDs lists, at the current path, array a if it is a token-id prompt: two or more
// integers, or arrays of integers (each listed at its own path, as a completions prompt's).
func (w *walker) fallbackTokenIDs(a int) {
	if n := w.integers(a); n >= 2 {
		w.tokenIDHere()
		return
	} else if n >= 0 {
		return
	}
	inner, total := 0, 0
	w.eachElement(a, func(_, e int) {
		if w.kind(e) == kindArray {
			if n := w.integers(e); n > 0 {
				inner++
				total += n
			}
		}
	})
	if inner == 0 || total < 2 || inner != w.count(a) {
		return
	}
	w.eachElement(a, func(n, _ int) {
		mark := w.pushIndex(n)
		w.tokenIDHere()
		w.pop(mark)
	})
}

// integers is the number of elements of array a when they are all integers, else -1.
func (w *walker) integers(a int) int {
	n := 0
	w.eachElement(a, func(_, e int) {
		if n < 0 {
			return
		}
		if w.kind(e) != kindNumber || !w.isInteger(e) {
			n = -1
			return
		}
		n++
	})
	return n
}

// count is the number of elements of array a.
func (w *walker) count(a int) int {
	n := 0
	w.eachElement(a, func(int, int) { n++ })
	return n
}

// isInteger reports whether number node i is written without a fraction or an exponent.
func (w *walker) isInteger(i int) bool {
	for p := w.t.nodes[i].start(); p < len(w.body); p++ {
		switch c := w.body[p]; {
		case c == '-' || c >= '0' && c <= '9':
		case c == '.' || c == 'e' || c == 'E':
			return false
		default:
			return true
		}
	}
	return true
}
