package llmreq

// Anthropic Messages: system (a string or text blocks), messages[].content (a string or blocks).
// Blocks: text; image (no text); document (text source data, content-source blocks, title,
// context); tool_use input (written by the model); tool_result content (RoleTool); thinking;
// search_result; server tool results (RoleTool). Unknown blocks have every string but their type
// scanned.
func (w *walker) anthropicMessages(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "system"):
			w.at(k, v, RoleSystem, w.anthropicContent)
		case w.keyIs(k, "messages"):
			w.at(k, v, RoleUnknown, w.anthropicMessageList)
		case w.keyIs(k, "tools"):
			w.at(k, v, RoleSystem, w.definitions)
		}
	})
}

func (w *walker) anthropicMessageList(msgs int, _ string) {
	w.list(msgs, RoleUnknown, w.anthropicMessage, w.all)
}

func (w *walker) anthropicMessage(m int, role string) {
	if w.kind(m) != kindObject {
		w.all(m, role)
		return
	}
	w.membersNamed(m, "content", w.chatRole(m), w.anthropicContent)
}

// anthropicContent: a string, or blocks.
func (w *walker) anthropicContent(c int, role string) {
	switch w.kind(c) {
	case kindArray:
		w.eachElement(c, func(n, b int) { w.atIndex(n, b, role, w.anthropicBlock) })
	case kindObject:
		w.anthropicBlock(c, role)
	default:
		w.all(c, role)
	}
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
	switch typ {
	case "text":
		w.membersNamed(b, "text", role, w.all)
	case "image", "redacted_thinking", "container_upload":
		// image bytes or URL; encrypted thinking; a file id
	case "document":
		w.eachMember(b, func(k, v int) {
			switch {
			case w.keyIs(k, "source"):
				w.at(k, v, role, w.anthropicSource)
			case w.keyIs(k, "title"), w.keyIs(k, "context"):
				// Both are put before the model with the document.
				w.at(k, v, role, w.all)
			}
		})
	case "search_result":
		w.eachMember(b, func(k, v int) {
			switch {
			case w.keyIs(k, "title"):
				w.at(k, v, role, w.all)
			case w.keyIs(k, "content"):
				w.at(k, v, role, w.anthropicContent)
			}
		})
	case "tool_use", "server_tool_use", "mcp_tool_use":
		w.membersNamed(b, "input", role, w.all)
	case "tool_result", "mcp_tool_result":
		w.membersNamed(b, "content", RoleTool, w.anthropicContent)
	case "thinking":
		w.membersNamed(b, "thinking", role, w.all)
	default:
		if hasSuffix(typ, "_tool_result") {
			// web_search_tool_result, web_fetch_tool_result, code_execution_tool_result, ...:
			// returned by a tool, whatever their inner shape.
			w.membersNamed(b, "content", RoleTool, w.anthropicToolOutput)
			return
		}
		w.allBut(b, role)
	}
}

// anthropicToolOutput: the content of a server tool result, blocks or any other shape.
func (w *walker) anthropicToolOutput(c int, role string) {
	if w.kind(c) == kindArray {
		w.eachElement(c, func(n, b int) { w.atIndex(n, b, role, w.anthropicToolOutputBlock) })
		return
	}
	w.anthropicToolOutputBlock(c, role)
}

// anthropicToolOutputBlock scans known text blocks precisely and any other result (a web search
// hit with title and url, a fetched document, stdout) whole.
func (w *walker) anthropicToolOutputBlock(b int, role string) {
	switch typ, _ := w.uniqueString(b, "type"); typ {
	case "text", "image", "document", "search_result":
		w.anthropicBlock(b, role)
	default:
		w.allBut(b, role)
	}
}

// anthropicSource: a document's source. Text sources are text; content sources hold blocks;
// base64 (PDF), url and file sources are bytes or references.
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
		w.membersNamed(s, "data", role, w.all)
	case "content":
		w.membersNamed(s, "content", role, w.anthropicContent)
	case "base64", "url", "file":
	default:
		w.allBut(s, role)
	}
}
