package llmreq

import (
	"bytes"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/promptwall/promptwall/jsonstr"
)

// JSON string literals are decoded and encoded by package jsonstr, with encoding/json's exact
// semantics, so a text's Value is what any Go upstream (and the scan service) would see, and a
// rewritten literal is what json.Marshal would write with HTML escaping off.

// walker navigates a scanned body and collects texts. The API rules (openai.go, anthropic.go,
// gemini.go, ollama.go) are written against its small vocabulary: members of an object, elements
// of an array, a unique string member, emit one string, emit every string under a value.
type walker struct {
	t       *tape
	body    []byte
	texts   []Text
	path    []byte // the JSON path of the value being visited
	scratch []byte // decoded keys and member strings that are compared, not kept

	// Paths and values of the texts are collected into two buffers and made strings once at the
	// end (finish), so a request costs a handful of allocations however many texts it has. A
	// value whose literal has no escape and is valid UTF-8 is not copied at all: it is the body's
	// bytes (see Parse).
	paths, values []byte
	spans         []textSpan
	tooMany       int // offset of the text over MaxTexts, or -1

	info      *APIInfo // the API whose walker runs
	secondary bool     // another walker owns the root's unknown members
	want      uint32   // rules bits: walkers asked for by parts of their API's (see run)

	// Groups (see the package doc): groups counts them, group is the current content list's,
	// inText is set while a text part's text is visited.
	groups, group int
	inText        bool
	// runG is the group of the current run of messages of role runRole (groups.go), when runOn.
	runG    [3]int
	runRole string
	runOn   bool

	docs      []Document
	isImage   bool // an Anthropic image's source is being visited
	fileTypes []fileType
	// The long literals, for Rewrite's edits, and their marks.
	lits     []litMarks
	marks    []jsonstr.Mark
	tokenIDs []string
	fallback int    // > 0 inside a generic body or an unknown member: token ids are looked for
	fileBuf  []byte // a file's decoded literal

	// Message lists (resume.go): what the walk of each element left; what skip nodes stood
	// for; whether the element's first run step (stepped) continued a run (joined); the role
	// of the run a skip node ended, which the message after it must not continue; whether a
	// skip node was met where it cannot be taken.
	msgs                                []message
	skipped, skippedTexts, skippedPaths int
	stepped, joined, misread            bool
	afterSkip, stepRole                 string // stepRole: the role of the element's first run step
	short                               int    // path bytes pathLimit's cuts to 64 took (appendTextPath)
	long                                int    // texts whose path is longer than MaxPathLen
}

// textSpan locates a text's path in paths and its value in values, or in the body when inBody.
type textSpan struct {
	path0, path1, val0, val1 int
	inBody                   bool
}

func (w *walker) kind(i int) uint8 { return w.t.nodes[i].kind() }

// next returns the index of the node after the subtree of node i.
func (w *walker) next(i int) int {
	if n := w.t.nodes[i]; n.container() {
		return int(n.b)
	}
	return i + 1
}

// decoded returns the value of string node i, in scratch space that the next call reuses.
func (w *walker) decoded(i int) []byte {
	n := w.t.nodes[i]
	s := w.body[n.start()+1 : n.end()-1]
	if !n.escaped() {
		return s // invalid UTF-8 never equals the ASCII names it is compared with
	}
	w.scratch = jsonstr.Unquote(w.scratch[:0], s)
	return w.scratch
}

// keyIs reports whether the decoded key node k equals name the way encoding/json matches a key
// to a struct field: exactly or case-insensitively (Unicode simple folding, as bytes.EqualFold).
// Go upstreams (Ollama) accept "Messages" for "messages", so the walkers do too; for other
// upstreams matching more keys only means scanning more. name is lower case ASCII.
func (w *walker) keyIs(k int, name string) bool {
	n := w.t.nodes[k]
	if !n.escaped() {
		key := w.body[n.start()+1 : n.end()-1]
		if len(key) == len(name) && string(key) == name {
			return true
		}
		// An ASCII key can only fold to a name of its own length; only non-ASCII letters
		// (the Kelvin sign, the long s) fold across lengths. Most keys differ in length from
		// the name they are compared with, so this rejects them without folding; the tape
		// knows whether the key is ASCII.
		if len(key) != len(name) && n.ascii() {
			return false
		}
		return bytes.EqualFold(key, []byte(name))
	}
	return bytes.EqualFold(w.decoded(k), []byte(name))
}

// eachMember calls f(key, value) for every member of object node i, in body order. Duplicate
// keys are all visited: parsers disagree on which duplicate wins, so every one is scanned.
func (w *walker) eachMember(i int, f func(k, v int)) {
	end := w.next(i)
	for k := i + 1; k < end; {
		v := k + 1
		f(k, v)
		k = w.next(v)
	}
}

// eachElement calls f(index, node) for every element of array node i.
func (w *walker) eachElement(i int, f func(n, e int)) {
	end := w.next(i)
	for e, n := i+1, 0; e < end; e, n = w.next(e), n+1 {
		if w.kind(e) == kindSkip {
			w.misread = true // only history takes a skip node: this walk would miss its messages
			continue
		}
		f(n, e)
	}
}

// member returns the value node of the first member of object i named name, or -1.
func (w *walker) member(i int, name string) int {
	if w.kind(i) != kindObject {
		return -1
	}
	end := w.next(i)
	for k := i + 1; k < end; k = w.next(k + 1) {
		if w.keyIs(k, name) {
			return k + 1
		}
	}
	return -1
}

// has reports whether object i has a member named name.
func (w *walker) has(i int, name string) bool { return w.member(i, name) >= 0 }

// uniqueString returns the string value of member name of object i when every member of that
// name is a string and they all agree; ok is false otherwise. Discriminators ("role", "type")
// go through it, so a body that says "type":"image_url" and "type":"text" in one part, hoping
// the scanner believes one and the model the other, is treated as unknown and scanned whole.
func (w *walker) uniqueString(i int, name string) (val string, ok bool) {
	if w.kind(i) != kindObject {
		return "", false
	}
	found := false
	end := w.next(i)
	for k := i + 1; k < end; k = w.next(k + 1) {
		if !w.keyIs(k, name) {
			continue
		}
		v := k + 1
		if w.kind(v) != kindString {
			return "", false
		}
		s := w.decoded(v)
		if found && string(s) != val {
			return "", false
		}
		if !found {
			val, found = intern(s), true
		}
	}
	return val, found
}

// Path building. The path of the visited value lives in w.path; push* append one step and return
// the old length, which pop restores.

func (w *walker) pushKey(k int) int {
	mark := len(w.path)
	key := w.decoded(k)
	if n := w.t.nodes[k]; !n.escaped() && !n.ascii() && !jsonstr.ValidUTF8(key) {
		// As decoded (U+FFFD), so that the path does not change when the key is rewritten.
		w.scratch = jsonstr.Unquote(w.scratch[:0], key)
		key = w.scratch
	}
	if isIdent(key) {
		if len(w.path) > 0 {
			w.path = append(w.path, '.')
		}
		w.path = append(w.path, key...)
	} else {
		w.path = append(w.path, '[')
		w.path = jsonstr.Append(w.path, key, false)
		w.path = append(w.path, ']')
	}
	return mark
}

func (w *walker) pushIndex(n int) int {
	mark := len(w.path)
	w.path = append(w.path, '[')
	w.path = strconv.AppendInt(w.path, int64(n), 10)
	w.path = append(w.path, ']')
	return mark
}

func (w *walker) pop(mark int) { w.path = w.path[:mark] }

// isIdent reports whether a key can be written after a dot: [A-Za-z_][A-Za-z0-9_]*.
func isIdent(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for i, c := range s {
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

// emit records string node i, at the current path, as a text of role.
func (w *walker) emit(i int, role string) {
	n := w.t.nodes[i]
	if len(w.texts)+w.skippedTexts >= MaxTexts {
		if w.tooMany < 0 {
			w.tooMany = n.start()
		}
		return
	}
	sp := textSpan{path0: len(w.paths)}
	w.appendTextPath()
	sp.path1 = len(w.paths)
	if lit := w.body[n.start()+1 : n.end()-1]; !n.escaped() && (n.ascii() || jsonstr.ValidUTF8(lit)) {
		sp.val0, sp.val1, sp.inBody = n.start()+1, n.end()-1, true
	} else {
		sp.val0 = len(w.values)
		switch {
		case len(lit) >= MinEdited && (n.ascii() || jsonstr.ValidUTF8(lit)):
			m0 := len(w.marks)
			w.values, w.marks = jsonstr.UnquoteMarks(w.growValues(len(lit)), lit, w.marks)
			w.lits = append(w.lits, litMarks{start: int32(n.start()), m0: int32(m0), m1: int32(len(w.marks))})
		case n.ascii():
			w.values = jsonstr.UnquoteValid(w.growValues(len(lit)), lit)
		default:
			w.values = jsonstr.Unquote(w.growValues(len(lit)), lit)
		}
		sp.val1 = len(w.values)
	}
	if sp.inBody && n.end()-n.start()-2 >= MinEdited {
		w.lits = append(w.lits, litMarks{start: int32(n.start()), plain: true})
	}
	t := Text{Role: role, start: int32(n.start()), end: int32(n.end())}
	if w.inText {
		t.Group = int32(w.group)
	}
	w.push(t, sp)
}

// push appends a text and its span, doubling the slices when full (append grows a large slice
// by a quarter, which for a body of many keys allocates several times the final slice).
func (w *walker) push(t Text, sp textSpan) {
	if len(w.texts) == cap(w.texts) {
		w.texts = append(make([]Text, 0, 2*cap(w.texts)+16), w.texts...)
	}
	if len(w.spans) == cap(w.spans) {
		w.spans = append(make([]textSpan, 0, 2*cap(w.spans)+16), w.spans...)
	}
	w.texts = append(w.texts, t)
	w.spans = append(w.spans, sp)
}

// emitKey records key node k, whose member's path is the current path, as a text of role.
func (w *walker) emitKey(k int, role string) {
	mark := len(w.path)
	w.path = append(w.path, "#key"...)
	inText := w.inText
	w.inText = false
	w.emit(k, role)
	w.inText = inText
	w.path = w.path[:mark]
	if n := len(w.texts); n > 0 && int(w.texts[n-1].start) == w.t.nodes[k].start() {
		w.texts[n-1].Key = true
	}
}

// appendTextPath appends the current path to paths, cut to pathLimit. What a cut to 64 bytes
// took from it beyond MaxPathLen's cut goes in short: a message list's walk counts a message's
// path bytes as a body that cuts none of them would (see history).
func (w *walker) appendTextPath() {
	limit := w.pathLimit()
	mark := len(w.paths)
	w.paths = appendPath(grow(w.paths, MaxPathLen), w.path, limit)
	if limit < MaxPathLen && len(w.path) > limit {
		w.short += pathLen(w.path, MaxPathLen) - (len(w.paths) - mark)
	}
	if len(w.path) > MaxPathLen {
		w.long++ // its cut's length is not its path's less a shorter index's digits
	}
}

const ellipsis = "…"

// appendPath appends path, shortened in the middle to limit bytes if longer. The cut falls on
// UTF-8 character boundaries, so the path stays valid UTF-8.
func appendPath(dst, path []byte, limit int) []byte {
	if len(path) <= limit {
		return append(dst, path...)
	}
	head, t := cutPath(path, limit)
	dst = append(dst, path[:head]...)
	dst = append(dst, ellipsis...)
	return append(dst, path[t:]...)
}

// cutPath returns where appendPath cuts a path longer than limit: it keeps path[:head] and
// path[t:].
func cutPath(path []byte, limit int) (head, t int) {
	head = (limit - len(ellipsis)) / 2
	tail := limit - len(ellipsis) - head
	for head > 0 && !utf8.RuneStart(path[head]) {
		head--
	}
	t = len(path) - tail
	for t < len(path) && !utf8.RuneStart(path[t]) {
		t++
	}
	return head, t
}

// pathLen is the length of appendPath's copy of path.
func pathLen(path []byte, limit int) int {
	if len(path) <= limit {
		return len(path)
	}
	head, t := cutPath(path, limit)
	return head + len(ellipsis) + len(path) - t
}

// pathLimit is MaxPathLen until the paths of the texts add up to twice the body's size (plus
// 64 KiB); then it is 64, so a small body of many deeply nested strings cannot make megabytes
// of paths.
func (w *walker) pathLimit() int {
	if len(w.paths)+w.skippedPaths > 2*len(w.body)+64<<10 {
		return 64
	}
	return MaxPathLen
}

// grow makes room for n more bytes in buf, doubling (append grows a large slice by a quarter,
// which for one 16 MiB text allocates five times its size).
func grow(buf []byte, n int) []byte {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	grown := make([]byte, len(buf), max(2*cap(buf), len(buf)+n))
	copy(grown, buf)
	return grown
}

// finish fills in the paths and values of the texts. Values of heldValues
// bytes or more are not copied: the texts' strings are w.values' bytes,
// which finish returns (nil otherwise) for the Request to own.
func (w *walker) finish() (held []byte) {
	paths, values := string(w.paths), ""
	if len(w.values) >= heldValues {
		held = w.values
		values = unsafe.String(unsafe.SliceData(held), len(held))
	} else {
		values = string(w.values)
	}
	for i, sp := range w.spans {
		w.texts[i].Path = paths[sp.path0:sp.path1]
		if sp.inBody {
			w.texts[i].Value = unsafe.String(unsafe.SliceData(w.body[sp.val0:]), sp.val1-sp.val0)
		} else {
			w.texts[i].Value = values[sp.val0:sp.val1]
		}
	}
	return held
}

// at visits value v of member key k with f, with the path extended by the key.
func (w *walker) at(k, v int, role string, f func(int, string)) {
	mark := w.pushKey(k)
	f(v, role)
	w.pop(mark)
}

// list visits each element of node i with each, at its index, when i is an array; any other
// value goes to single whole (an API's shapes say what a lone value in place of a list is).
func (w *walker) list(i int, role string, each, single func(int, string)) {
	if w.kind(i) != kindArray {
		single(i, role)
		return
	}
	w.eachElement(i, func(n, e int) { w.atIndex(n, e, role, each) })
}

// atIndex visits element e (index n) with f, with the path extended by the index.
func (w *walker) atIndex(n, e int, role string, f func(int, string)) {
	mark := w.pushIndex(n)
	f(e, role)
	w.pop(mark)
}

// words are the discriminator values the walkers compare, by length; interning them saves an
// allocation per message and per part. A list of a few words of one length is searched faster
// than a map hashes.
var words = func() (byLen [][]string) {
	for _, s := range []string{
		RoleUser, RoleSystem, RoleDeveloper, RoleAssistant, RoleTool, RoleFunction, "model",
		"text", "input_text", "output_text", "summary_text", "reasoning_text", "refusal", "image_url",
		"input_image", "input_audio", "file", "input_file", "computer_screenshot", "message",
		"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
		"reasoning", "item_reference", "mcp_call", "image", "document", "tool_use", "tool_result",
		"thinking", "redacted_thinking", "search_result", "server_tool_use", "base64", "url", "content",
	} {
		for len(byLen) <= len(s) {
			byLen = append(byLen, nil)
		}
		byLen[len(s)] = append(byLen[len(s)], s)
	}
	return byLen
}()

func intern(b []byte) string {
	if len(b) < len(words) {
		for _, s := range words[len(b)] {
			if string(b) == s {
				return s
			}
		}
	}
	return string(b)
}
