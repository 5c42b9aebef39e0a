package llmreq

// OpenAI Responses: instructions (system), input (a string from the user, or items), tools,
// a stored prompt's variables, and the output format's schema.
func (w *walker) openaiResponses(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "instructions"):
			w.at(k, v, RoleSystem, w.responsesInput)
		case w.keyIs(k, "input"):
			w.at(k, v, RoleUser, w.responsesInput)
		case w.keyIs(k, "tools"):
			w.at(k, v, RoleToolDefinition, w.responsesTools)
		case w.keyIs(k, "prompt"):
			w.at(k, v, RoleUser, w.responsesPrompt)
		case w.keyIs(k, "text"):
			// {"format": {"type": "json_schema", "schema": ...}, "verbosity": ...}
			w.at(k, v, RoleSystem, w.definitions)
		default:
			w.rootMember(k, v)
		}
	})
}

// responsesPrompt: a stored prompt ({"id", "version", "variables"}), whose variables are
// substituted into it: user-supplied content. A prompt that is not an object is a legacy one.
func (w *walker) responsesPrompt(p int, role string) {
	if w.kind(p) != kindObject {
		w.completionPrompt(p, role)
		return
	}
	w.eachMember(p, func(k, v int) {
		switch {
		case w.keyIs(k, "variables"):
			w.at(k, v, role, w.openaiContentValues)
		case w.keyIs(k, "id"), w.keyIs(k, "version"):
		default:
			w.unknown(k, v, role)
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
	w.runEnd()
	w.history(in, role, w.responsesItem, w.openaiContent)
	w.runEnd()
}

// responsesItem handles one input item. Messages (with or without "type": "message") take their
// role; a message without a role is RoleUnknown. Tool calls are written by the model
// (assistant), and what a tool returned, in a *_output item or inside a call item, is RoleTool.
func (w *walker) responsesItem(it int, defRole string) {
	if w.kind(it) != kindObject {
		w.runStep("")
		w.openaiContent(it, defRole)
		return
	}
	typ, ok := w.uniqueString(it, "type")
	if !ok && w.has(it, "type") {
		w.runStep("")
		w.allBut(it, RoleUnknown)
		return
	}
	if typ != "" && typ != "message" {
		w.runStep("")
	}
	switch typ {
	case "", "message":
		role := w.chatRole(it)
		w.runStep(role)
		w.itemMembers(it, role, func(k, v int) bool {
			if w.keyIs(k, "content") {
				w.at(k, v, role, w.openaiContent)
				return true
			}
			return w.keyIs(k, "role")
		})
	case "function_call", "custom_tool_call":
		w.itemMembers(it, RoleAssistant, func(k, v int) bool {
			if w.keyIs(k, "arguments") || w.keyIs(k, "input") {
				w.at(k, v, RoleAssistant, w.all)
				return true
			}
			return w.keyIs(k, "name")
		})
	case "reasoning":
		w.itemMembers(it, RoleAssistant, func(k, v int) bool {
			if w.keyIs(k, "summary") || w.keyIs(k, "content") {
				w.at(k, v, RoleAssistant, w.openaiContent)
				return true
			}
			return w.keyIs(k, "encrypted_content")
		})
	case "item_reference":
		w.itemMembers(it, RoleUnknown, func(k, v int) bool { return false })
	case "mcp_list_tools":
		w.itemMembers(it, RoleTool, func(k, v int) bool {
			if w.keyIs(k, "tools") {
				w.at(k, v, RoleToolDefinition, w.definitions)
				return true
			}
			return false
		})
	default:
		if hasSuffix(typ, "_output") {
			// function_call_output, custom_tool_call_output, computer_call_output,
			// local_shell_call_output, ...
			w.itemMembers(it, RoleTool, func(k, v int) bool {
				if w.keyIs(k, "output") {
					w.at(k, v, RoleTool, w.openaiContent)
					return true
				}
				return false
			})
			return
		}
		// A hosted tool's call item (web_search_call, file_search_call,
		// code_interpreter_call, mcp_call, computer_call, ...) holds what
		// the tool was asked and what it returned, side by side and in
		// shapes that change: all of it is the tool's.
		role := RoleUnknown
		if hasSuffix(typ, "_call") {
			role = RoleTool
		}
		image := typ == "image_generation_call"
		w.itemMembers(it, role, func(k, v int) bool {
			if image && w.keyIs(k, "result") {
				return true // the generated image, base64
			}
			mark := w.pushKey(k)
			w.callValue(v, role)
			w.pop(mark)
			return true
		})
	}
}

// itemMembers visits the members of item it but its type, id, call_id and status: f handles the
// members it knows (true); any other is scanned whole with role.
func (w *walker) itemMembers(it int, role string, f func(k, v int) bool) {
	w.eachMember(it, func(k, v int) {
		if w.kind(v) == kindString && (w.keyIs(k, "type") || w.keyIs(k, "id") || w.keyIs(k, "call_id") || w.keyIs(k, "status")) {
			return
		}
		if !f(k, v) {
			w.unknown(k, v, role)
		}
	})
}

// callValue is all for the value of a call item's member: every string and key.
func (w *walker) callValue(v int, role string) {
	switch w.kind(v) {
	case kindObject:
		w.eachMember(v, func(k, v int) {
			mark := w.pushKey(k)
			w.emitKey(k, role)
			w.callValue(v, role)
			w.pop(mark)
		})
	case kindArray:
		w.eachElement(v, func(n, e int) { w.atIndex(n, e, role, w.callValue) })
	case kindString:
		w.emit(v, role)
	}
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }
