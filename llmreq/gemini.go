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

// geminiNorm is s in lower case without underscores, as geminiKeyIs compares.
func geminiNorm(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

func (w *walker) gemini(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.geminiKeyIs(k, "contents"):
			w.at(k, v, RoleUser, w.geminiContents)
		case w.geminiKeyIs(k, "systeminstruction"):
			w.at(k, v, RoleSystem, w.geminiContent)
		case w.geminiKeyIs(k, "tools"):
			w.at(k, v, RoleToolDefinition, w.definitions)
		case w.geminiKeyIs(k, "generationconfig"):
			w.at(k, v, RoleSystem, w.geminiGenerationConfig)
		default:
			if !w.secondary && !w.geminiInert(k, w.info.inert) {
				w.unknown(k, v, RoleUnknown)
			}
		}
	})
}

// geminiInert is isInert with Gemini's names (set holds them normalized).
func (w *walker) geminiInert(k int, set map[string]bool) bool {
	var buf [32]byte
	name, ok := foldKey(buf[:0], w.decoded(k))
	return ok && set[string(name)]
}

// foldKey appends key to dst as Gemini compares names: ASCII letters lower-cased, underscores
// dropped; ok is false when key is longer than dst's capacity (no name of the tables is).
func foldKey(dst, key []byte) (_ []byte, ok bool) {
	if len(key) > cap(dst)-len(dst) {
		return dst, false
	}
	for _, c := range key {
		if c == '_' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}

// geminiGenerationConfig: sampling settings, but for the response schemas, which the model is
// asked to follow and reads like a tool's.
func (w *walker) geminiGenerationConfig(c int, role string) {
	if w.kind(c) != kindObject {
		w.all(c, role)
		return
	}
	w.eachMember(c, func(k, v int) {
		switch {
		case w.geminiKeyIs(k, "responseschema"), w.geminiKeyIs(k, "responsejsonschema"):
			w.at(k, v, role, w.definitions)
		case w.kind(v) >= kindNumber, w.geminiInert(k, generationInert):
		default:
			w.unknown(k, v, role)
		}
	})
}

// generationInert are generationConfig's settings that hold no text (normalized names).
var generationInert = map[string]bool{"stopsequences": true, "responsemimetype": true,
	"responsemodalities": true, "thinkingconfig": true, "speechconfig": true, "mediaresolution": true,
	"routingconfig": true, "modelselectionconfig": true, "imageconfig": true}

func (w *walker) geminiContents(cs int, role string) {
	if w.kind(cs) != kindArray {
		// One content where a list belongs: still a content, with its own role.
		if w.kind(cs) == kindObject {
			role = w.geminiRole(cs)
		}
		w.geminiContent(cs, role)
		return
	}
	w.runEnd()
	w.history(cs, role, func(c int, _ string) {
		r := w.geminiRole(c)
		if w.kind(c) != kindObject {
			r = ""
		}
		w.runStep(r)
		w.geminiContent(c, w.geminiRole(c))
	}, nil)
	w.runEnd()
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
// some clients send for systemInstruction) is a text too; any other member is scanned.
func (w *walker) geminiContent(c int, role string) {
	if w.kind(c) != kindObject {
		w.all(c, role)
		return
	}
	w.eachMember(c, func(k, v int) {
		switch {
		case w.geminiKeyIs(k, "parts"):
			w.at(k, v, role, w.geminiParts)
		case w.geminiKeyIs(k, "role"):
		default:
			w.unknown(k, v, role)
		}
	})
}

// geminiParts: the parts of one content, whose texts are one group.
func (w *walker) geminiParts(ps int, role string) {
	g := w.beginContent()
	w.list(ps, role, w.geminiPart, w.geminiPart)
	w.endContent(g)
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
		case w.geminiKeyIs(k, "text"):
			w.groupText(k, v, role)
		case w.geminiKeyIs(k, "executablecode"):
			w.at(k, v, role, w.memberValues) // {"language", "code"}
		case w.geminiKeyIs(k, "functioncall"):
			w.at(k, v, role, w.geminiFunctionCall)
		case w.geminiKeyIs(k, "functionresponse"):
			w.at(k, v, RoleTool, w.geminiFunctionResponse)
		case w.geminiKeyIs(k, "codeexecutionresult"):
			w.at(k, v, RoleTool, w.geminiCodeResult)
		case w.geminiKeyIs(k, "inlinedata"):
			w.at(k, v, role, w.geminiBlob)
		case w.geminiKeyIs(k, "filedata"):
			w.at(k, v, role, w.geminiFileData)
		case w.geminiKeyIs(k, "thought"), w.geminiKeyIs(k, "thoughtsignature"),
			w.geminiKeyIs(k, "videometadata"), w.geminiKeyIs(k, "mediaresolution"):
			// file references; flags and opaque signatures
		default:
			w.unknown(k, v, role)
		}
	})
}

// geminiFunctionCall: {"id", "name", "args"}; the args object is read whole, keys and values.
func (w *walker) geminiFunctionCall(f int, role string) {
	if w.kind(f) != kindObject {
		w.all(f, role)
		return
	}
	w.eachMember(f, func(k, v int) {
		switch {
		case w.geminiKeyIs(k, "args"):
			w.at(k, v, role, w.all)
		case w.geminiKeyIs(k, "id"), w.geminiKeyIs(k, "name"):
		default:
			w.unknown(k, v, role)
		}
	})
}

// geminiFunctionResponse: everything a tool returned, RoleTool: the response object whole, its
// parts (files included) as parts, any other member whole.
func (w *walker) geminiFunctionResponse(f int, role string) {
	if w.kind(f) != kindObject {
		w.all(f, role)
		return
	}
	w.eachMember(f, func(k, v int) {
		switch {
		case w.geminiKeyIs(k, "parts"):
			w.at(k, v, role, w.geminiParts)
		case w.geminiKeyIs(k, "response"):
			w.at(k, v, role, w.all)
		case w.geminiKeyIs(k, "name"):
			w.at(k, v, role, w.all)
		case w.geminiKeyIs(k, "id"), w.geminiKeyIs(k, "willcontinue"), w.geminiKeyIs(k, "scheduling"):
		default:
			w.unknown(k, v, role)
		}
	})
}

// geminiCodeResult: {"outcome", "output"}; the outcome is an enum.
func (w *walker) geminiCodeResult(r int, role string) {
	if w.kind(r) != kindObject {
		w.all(r, role)
		return
	}
	w.eachMember(r, func(k, v int) {
		if !w.geminiKeyIs(k, "outcome") {
			w.at(k, v, role, w.all)
		}
	})
}

// geminiBlob: inline data {"mimeType", "data"}: a file, decoded when its type is text.
func (w *walker) geminiBlob(b int, role string) {
	if w.kind(b) != kindObject {
		w.all(b, role)
		return
	}
	mt := ""
	w.eachMember(b, func(k, v int) {
		if w.geminiKeyIs(k, "mimetype") && w.kind(v) == kindString {
			mt = string(w.decoded(v))
		}
	})
	w.eachMember(b, func(k, v int) {
		switch {
		case w.geminiKeyIs(k, "data"):
			w.at(k, v, role, func(v int, role string) { w.file(v, role, mt, "") })
		case w.geminiKeyIs(k, "mimetype"):
		default:
			w.unknown(k, v, role)
		}
	})
}

// geminiFileData: a file by URI {"mimeType", "fileUri"}, which the provider fetches.
func (w *walker) geminiFileData(f int, role string) {
	if w.kind(f) != kindObject {
		w.all(f, role)
		return
	}
	mt := ""
	w.eachMember(f, func(k, v int) {
		if w.geminiKeyIs(k, "mimetype") && w.kind(v) == kindString {
			mt = string(w.decoded(v))
		}
	})
	w.eachMember(f, func(k, v int) {
		if w.geminiKeyIs(k, "fileuri") {
			w.at(k, v, role, func(v int, role string) { w.remote(v, role, mt) })
		}
	})
}
