package llmreq

// Anthropic Messages: system (a string or text blocks), messages[].content (a string or blocks).
// Blocks: text; image (no text, unless its base64 source has a text media type); document (text
// source data, base64 files, content-source blocks, title, context); tool_use input (written by
// the model); tool_result content (RoleTool); thinking; search_result; server tool results and
// MCP tool results (RoleTool, any inner shape). Unknown blocks, and unknown members of known
// blocks, have every string and key but their type scanned.
func (w *walker) anthropicMessages(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "system"):
			w.at(k, v, RoleSystem, w.anthropicContent)
		case w.keyIs(k, "messages"):
			w.at(k, v, RoleUnknown, w.anthropicMessageList)
		case w.keyIs(k, "tools"):
			w.at(k, v, RoleToolDefinition, w.definitions)
		case w.keyIs(k, "mcp_servers"):
			w.at(k, v, RoleToolDefinition, w.anthropicMCPServers)
		case w.keyIs(k, "output_format"):
			w.at(k, v, RoleSystem, w.definitions)
		default:
			w.rootMember(k, v)
		}
	})
}

func (w *walker) anthropicMessageList(msgs int, _ string) {
	w.runEnd()
	w.history(msgs, RoleUnknown, w.anthropicMessage, w.all)
	w.runEnd()
}

func (w *walker) anthropicMessage(m int, role string) {
	if w.kind(m) != kindObject {
		w.runStep("")
		w.all(m, role)
		return
	}
	role = w.chatRole(m)
	w.runStep(role)
	w.eachMember(m, func(k, v int) {
		switch {
		case w.keyIs(k, "content"):
			w.at(k, v, role, w.anthropicContent)
		case w.keyIs(k, "role"):
		default:
			w.unknown(k, v, role)
		}
	})
}

// anthropicContent: a string, or blocks (one group).
func (w *walker) anthropicContent(c int, role string) {
	switch w.kind(c) {
	case kindArray:
		g := w.beginContent()
		w.eachElement(c, func(n, b int) { w.atIndex(n, b, role, w.anthropicBlock) })
		w.endContent(g)
	case kindObject:
		w.anthropicBlock(c, role)
	default:
		w.runText(c, role)
	}
}

// blockInert are the members of a known block that carry no text: cache settings, identifiers,
// flags, signatures. A tool result's tool_use_id is not: self-hosted chat templates render it.
func (w *walker) blockInert(k int) bool {
	return w.keyIs(k, "cache_control") || w.keyIs(k, "id") || w.keyIs(k, "is_error") ||
		w.keyIs(k, "signature")
}

func (w *walker) anthropicBlock(b int, role string) {
	if w.kind(b) != kindObject {
		w.all(b, role)
		return
	}
	typ, ok := w.uniqueString(b, "type")
	if !ok {
		w.allBut(b, role)
		return
	}
	// Members of the block that f does not handle are scanned whole, with role.
	members := func(role string, f func(k, v int) bool) {
		w.partMembers(b, role, func(k, v int) bool {
			return f(k, v) || w.blockInert(k)
		})
	}
	switch typ {
	case "text":
		members(role, func(k, v int) bool {
			if w.keyIs(k, "text") {
				w.groupText(k, v, role)
				return true
			}
			return false
		})
	case "image", "document":
		members(role, func(k, v int) bool {
			switch {
			case w.keyIs(k, "source"):
				w.isImage = typ == "image"
				w.at(k, v, role, w.anthropicSource)
				w.isImage = false
			case w.keyIs(k, "title"), w.keyIs(k, "context"):
				// Both are put before the model with the document.
				w.at(k, v, role, w.all)
			default:
				return w.keyIs(k, "citations") // {"enabled": true}
			}
			return true
		})
	case "redacted_thinking", "container_upload":
		// encrypted thinking; a file id
		members(role, func(k, v int) bool { return w.keyIs(k, "data") || w.keyIs(k, "file_id") })
	case "search_result":
		members(role, func(k, v int) bool {
			switch {
			case w.keyIs(k, "content"):
				w.at(k, v, role, w.anthropicContent)
			case w.keyIs(k, "title"), w.keyIs(k, "source"):
				w.at(k, v, role, w.all)
			default:
				return w.keyIs(k, "citations")
			}
			return true
		})
	case "tool_use", "server_tool_use", "mcp_tool_use":
		members(role, func(k, v int) bool {
			if w.keyIs(k, "input") {
				w.at(k, v, role, w.all)
				return true
			}
			return w.keyIs(k, "name")
		})
	case "thinking":
		members(role, func(k, v int) bool {
			if w.keyIs(k, "thinking") {
				w.at(k, v, role, w.all)
				return true
			}
			return false
		})
	default:
		if typ == "tool_result" || hasSuffix(typ, "_tool_result") {
			// tool_result, mcp_tool_result, web_search_tool_result, web_fetch_tool_result,
			// code_execution_tool_result, ...: returned by a tool, whatever their inner shape.
			members(RoleTool, func(k, v int) bool {
				switch {
				case w.keyIs(k, "content"):
					w.at(k, v, RoleTool, w.anthropicToolOutput)
				case w.keyIs(k, "tool_use_id"): // the message's, as the message carries it
					w.at(k, v, role, w.all)
				default:
					return false
				}
				return true
			})
			return
		}
		if isOneOf(typ, openaiOnly) {
			w.want |= 1 << rulesChat
		}
		w.allBut(b, role)
	}
}

// anthropicToolOutput: the content of a tool result: a string, blocks or any other shape.
func (w *walker) anthropicToolOutput(c int, role string) {
	if w.kind(c) == kindArray {
		g := w.beginGroup()
		w.eachElement(c, func(n, b int) { w.atIndex(n, b, role, w.anthropicToolOutputBlock) })
		w.endGroup(g)
		return
	}
	w.anthropicToolOutputBlock(c, role)
}

// anthropicToolOutputBlock scans known content blocks precisely and any other result (a web
// search hit with title and url, a fetched document, stdout) whole.
func (w *walker) anthropicToolOutputBlock(b int, role string) {
	switch typ, _ := w.uniqueString(b, "type"); typ {
	case "text", "image", "document", "search_result":
		w.anthropicBlock(b, role)
	default:
		w.allBut(b, role)
	}
}

// anthropicSource: a document's or an image's source. Text sources are text; content sources
// hold blocks; base64 sources are files (text media types are decoded); url and file sources are
// references.
func (w *walker) anthropicSource(s int, role string) {
	if w.kind(s) != kindObject {
		w.all(s, role)
		return
	}
	typ, ok := w.uniqueString(s, "type")
	if !ok {
		w.allBut(s, role)
		return
	}
	switch typ {
	case "text":
		w.partMembers(s, role, func(k, v int) bool {
			if w.keyIs(k, "data") {
				w.at(k, v, role, w.all)
				return true
			}
			return w.keyIs(k, "media_type")
		})
	case "content":
		w.partMembers(s, role, func(k, v int) bool {
			if w.keyIs(k, "content") {
				w.at(k, v, role, w.anthropicContent)
				return true
			}
			return false
		})
	case "base64":
		mt, _ := w.uniqueString(s, "media_type")
		w.partMembers(s, role, func(k, v int) bool {
			if w.keyIs(k, "data") {
				w.at(k, v, role, func(v int, role string) { w.file(v, role, mt, "") })
				return true
			}
			return w.keyIs(k, "media_type")
		})
	case "url":
		w.partMembers(s, role, func(k, v int) bool {
			if w.keyIs(k, "url") {
				w.at(k, v, role, func(v int, role string) { w.remote(v, role, "") })
				return true
			}
			return false
		})
	case "file":
		// a file uploaded before: scanned, if at all, when it was uploaded
	default:
		w.allBut(s, role)
	}
}
