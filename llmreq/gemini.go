package llmreq

// Gemini generateContent: contents[].parts[] and systemInstruction.parts[]. Google's JSON
// mapping of protocol buffers accepts every field under its lowerCamel name and its original
// snake_case name (systemInstruction and system_instruction), so keys are compared with
// underscores ignored.

// geminiKeyIs compares key node k with name (lower case, no underscores) ignoring case and
// underscores.
func (w *walker) geminiKeyIs(k int, name string) bool {
	key := w.decoded(k)
	j := 0
	for _, c := range key {
		if c == '_' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if j >= len(name) || name[j] != c {
			// Non-ASCII folds (the Kelvin sign for k) are left to keyIs.
			return w.keyIs(k, name)
		}
		j++
	}
	return j == len(name)
}

func (w *walker) gemini(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.geminiKeyIs(k, "contents"):
			w.at(k, v, RoleUser, w.geminiContents)
		case w.geminiKeyIs(k, "systeminstruction"):
			w.at(k, v, RoleSystem, w.geminiContent)
		case w.geminiKeyIs(k, "tools"):
			w.at(k, v, RoleSystem, w.definitions)
		}
	})
}

func (w *walker) geminiContents(cs int, role string) {
	if w.kind(cs) != kindArray {
		// One content where a list belongs: still a content, with its own role.
		if w.kind(cs) == kindObject {
			role = w.geminiRole(cs)
		}
		w.geminiContent(cs, role)
		return
	}
	w.eachElement(cs, func(n, c int) {
		w.atIndex(n, c, role, func(c int, _ string) {
			w.geminiContent(c, w.geminiRole(c))
		})
	})
}

// geminiRole: "user" (the default when missing), "model" is the assistant, the old "function"
// role carried function responses. Anything else, or roles that disagree, is RoleUnknown.
func (w *walker) geminiRole(c int) string {
	if w.kind(c) != kindObject {
		return RoleUnknown
	}
	found := false
	role := RoleUser
	for k, end := c+1, w.next(c); k < end; k = w.next(k + 1) {
		if !w.geminiKeyIs(k, "role") {
			continue
		}
		v := k + 1
		if w.kind(v) != kindString {
			return RoleUnknown
		}
		r := RoleUnknown
		switch string(w.decoded(v)) {
		case "user":
			r = RoleUser
		case "model":
			r = RoleAssistant
		case "function":
			r = RoleTool
		}
		if found && r != role {
			return RoleUnknown
		}
		role, found = r, true
	}
	return role
}

// geminiContent: {"role", "parts"}. A system instruction's role is ignored; a bare string (which
// some clients send for systemInstruction) is a text too.
func (w *walker) geminiContent(c int, role string) {
	if w.kind(c) != kindObject {
		w.all(c, role)
		return
	}
	w.eachMember(c, func(k, v int) {
		if w.geminiKeyIs(k, "parts") {
			w.at(k, v, role, w.geminiParts)
		}
	})
}

func (w *walker) geminiParts(ps int, role string) {
	w.list(ps, role, w.geminiPart, w.geminiPart)
}

// geminiPart: a part sets one of its data fields (text, inlineData, functionCall, ...). Every
// member is looked at, so a part that sets two is covered; a member this package does not know
// is scanned whole (Gemini refuses unknown fields, so it is either a new kind of data or a
// mistake, and scanning it costs little).
func (w *walker) geminiPart(p int, role string) {
	if w.kind(p) != kindObject {
		w.all(p, role)
		return
	}
	w.eachMember(p, func(k, v int) {
		switch {
		case w.geminiKeyIs(k, "text"), w.geminiKeyIs(k, "executablecode"):
			w.at(k, v, role, w.all) // executableCode: {"language", "code"}, the language an enum
		case w.geminiKeyIs(k, "functioncall"):
			w.at(k, v, role, func(v int, role string) { w.geminiMembersNamed(v, "args", role, w.all) })
		case w.geminiKeyIs(k, "functionresponse"):
			w.at(k, v, RoleTool, func(v int, role string) { w.geminiMembersNamed(v, "response", role, w.all) })
		case w.geminiKeyIs(k, "codeexecutionresult"):
			w.at(k, v, RoleTool, func(v int, role string) { w.geminiMembersNamed(v, "output", role, w.all) })
		case w.geminiKeyIs(k, "inlinedata"), w.geminiKeyIs(k, "filedata"), w.geminiKeyIs(k, "thought"),
			w.geminiKeyIs(k, "thoughtsignature"), w.geminiKeyIs(k, "videometadata"), w.geminiKeyIs(k, "partmetadata"),
			w.geminiKeyIs(k, "mediaresolution"):
			// media bytes and references; flags and opaque signatures
		default:
			w.at(k, v, role, w.all)
		}
	})
}

func (w *walker) geminiMembersNamed(i int, name, role string, f func(int, string)) {
	if w.kind(i) != kindObject {
		w.all(i, role)
		return
	}
	w.eachMember(i, func(k, v int) {
		if w.geminiKeyIs(k, name) {
			w.at(k, v, role, f)
		}
	})
}
