package llmreq

// OpenAI request bodies: Chat Completions, Responses, legacy completions, embeddings. Every rule
// ends in w.all for shapes it does not know, so an unexpected shape costs precision (a few extra
// strings scanned), never coverage.

// openaiChat: messages[].content (string or parts), refusal, tool_calls[].function.arguments,
// the legacy function_call.arguments; each with the message's role.
func (w *walker) openaiChat(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "messages"):
			w.at(k, v, RoleUnknown, w.chatMessages)
		case w.keyIs(k, "tools"), w.keyIs(k, "functions"):
			w.at(k, v, RoleSystem, w.definitions)
		}
	})
}

func (w *walker) chatMessages(msgs int, _ string) {
	w.list(msgs, RoleUnknown, w.chatMessage, w.all)
}

func (w *walker) chatMessage(m int, _ string) {
	if w.kind(m) != kindObject {
		w.all(m, RoleUnknown)
		return
	}
	role := w.chatRole(m)
	w.eachMember(m, func(k, v int) {
		switch {
		case w.keyIs(k, "content"):
			w.at(k, v, role, w.openaiContent)
		case w.keyIs(k, "refusal"), w.keyIs(k, "thinking"): // thinking: Ollama's
			w.at(k, v, role, w.all)
		case w.keyIs(k, "tool_calls"):
			w.at(k, v, role, w.chatToolCalls)
		case w.keyIs(k, "function_call"):
			w.at(k, v, role, w.chatFunctionCall)
		}
	})
}

func (w *walker) chatToolCalls(calls int, role string) {
	w.list(calls, role, w.chatToolCall, w.all)
}

func (w *walker) chatToolCall(c int, role string) {
	if w.kind(c) != kindObject {
		w.all(c, role)
		return
	}
	w.eachMember(c, func(k, v int) {
		switch {
		case w.keyIs(k, "function"):
			w.at(k, v, role, w.chatFunctionCall)
		case w.keyIs(k, "custom"): // custom tools: {"name", "input"}
			w.at(k, v, role, func(v int, role string) { w.membersNamed(v, "input", role, w.all) })
		}
	})
}

// chatFunctionCall: {"name", "arguments"}; the arguments are model-written JSON in a string.
func (w *walker) chatFunctionCall(f int, role string) {
	if w.kind(f) != kindObject {
		w.all(f, role)
		return
	}
	w.membersNamed(f, "arguments", role, w.all)
}

// membersNamed visits, with f, the value of every member of object i named name.
func (w *walker) membersNamed(i int, name, role string, f func(int, string)) {
	if w.kind(i) != kindObject {
		w.all(i, role)
		return
	}
	w.eachMember(i, func(k, v int) {
		if w.keyIs(k, name) {
			w.at(k, v, role, f)
		}
	})
}

// openaiContent: a string, null, an array of parts, or (unexpected) anything else.
func (w *walker) openaiContent(c int, role string) {
	switch w.kind(c) {
	case kindArray:
		w.eachElement(c, func(n, p int) { w.atIndex(n, p, role, w.openaiPart) })
	case kindObject:
		w.openaiPart(c, role)
	default:
		w.all(c, role)
	}
}

// openaiPart handles the content parts of both Chat Completions and Responses. Parts that carry
// media (images, audio, files) hold no text; a part of a type this package does not know has
// every string but its type scanned.
func (w *walker) openaiPart(p int, role string) {
	if w.kind(p) != kindObject {
		w.all(p, role)
		return
	}
	typ, ok := w.uniqueString(p, "type")
	if !ok {
		w.allBut(p, role)
		return
	}
	switch typ {
	case "text", "input_text", "output_text", "summary_text", "reasoning_text":
		w.membersNamed(p, "text", role, w.all)
	case "refusal":
		w.membersNamed(p, "refusal", role, w.all)
	case "image_url", "input_image", "input_audio", "file", "input_file", "computer_screenshot":
		// media: no text
	default:
		w.allBut(p, role)
	}
}

// openaiResponses: instructions (system), input (a string from the user, or items).
func (w *walker) openaiResponses(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "instructions"):
			w.at(k, v, RoleSystem, w.responsesInput)
		case w.keyIs(k, "input"):
			w.at(k, v, RoleUser, w.responsesInput)
		case w.keyIs(k, "tools"):
			w.at(k, v, RoleSystem, w.definitions)
		case w.keyIs(k, "prompt"):
			// A stored prompt's variables are substituted into it: user-supplied text.
			w.at(k, v, RoleUser, func(v int, role string) { w.membersNamed(v, "variables", role, w.openaiContentValues) })
		}
	})
}

// openaiContentValues: every member value of an object is content (prompt variables).
func (w *walker) openaiContentValues(o int, role string) {
	if w.kind(o) != kindObject {
		w.all(o, role)
		return
	}
	w.eachMember(o, func(k, v int) { w.at(k, v, role, w.openaiContent) })
}

// responsesInput: a string has the default role; an array holds items.
func (w *walker) responsesInput(in int, role string) {
	w.list(in, role, w.responsesItem, w.openaiContent)
}

// responsesItem handles one input item. Messages (with or without "type": "message") take their
// role; a message without a role is RoleUnknown. Tool calls are written by the model (assistant);
// tool outputs are RoleTool.
func (w *walker) responsesItem(it int, defRole string) {
	if w.kind(it) != kindObject {
		w.openaiContent(it, defRole)
		return
	}
	typ, ok := w.uniqueString(it, "type")
	if !ok && w.has(it, "type") {
		w.allBut(it, RoleUnknown)
		return
	}
	switch typ {
	case "", "message":
		role := w.chatRole(it)
		w.membersNamed(it, "content", role, w.openaiContent)
	case "function_call", "mcp_call":
		w.membersNamed(it, "arguments", RoleAssistant, w.all)
		if typ == "mcp_call" {
			w.membersNamed(it, "output", RoleTool, w.all)
		}
	case "custom_tool_call":
		w.membersNamed(it, "input", RoleAssistant, w.all)
	case "reasoning":
		w.membersNamed(it, "summary", RoleAssistant, w.openaiContent)
		w.membersNamed(it, "content", RoleAssistant, w.openaiContent)
	case "item_reference":
		// an id
	default:
		switch {
		case hasSuffix(typ, "_output"):
			// function_call_output, custom_tool_call_output, local_shell_call_output, ...
			w.membersNamed(it, "output", RoleTool, w.openaiContent)
		default:
			role := RoleUnknown
			if hasSuffix(typ, "_call") {
				role = RoleAssistant
			}
			w.eachMember(it, func(k, v int) {
				if w.kind(v) == kindString && (w.keyIs(k, "type") || w.keyIs(k, "id") || w.keyIs(k, "call_id") || w.keyIs(k, "status")) {
					return
				}
				w.at(k, v, role, w.all)
			})
		}
	}
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// openaiCompletions: prompt is a string, strings, or token arrays (numbers: no text); suffix is
// the text after the insertion point.
func (w *walker) openaiCompletions(root int) {
	w.eachMember(root, func(k, v int) {
		if w.keyIs(k, "prompt") || w.keyIs(k, "suffix") {
			w.at(k, v, RoleUser, w.all)
		}
	})
}

// openaiEmbeddings: input is a string, strings, or token arrays.
func (w *walker) openaiEmbeddings(root int) {
	w.membersNamed(root, "input", RoleUser, w.all)
}
