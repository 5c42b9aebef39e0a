package llmreq

import "slices"

// OpenAI request bodies: Chat Completions (and Ollama's /api/chat, which reads messages the same
// way), legacy completions, embeddings. Every rule ends in w.all or w.unknown for shapes and
// members it does not know, so an unexpected shape costs precision (a few extra strings
// scanned), never coverage.

// openaiChat: messages, tools and the legacy functions; other root members per rootMember.
func (w *walker) openaiChat(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "messages"):
			w.at(k, v, RoleUnknown, w.chatMessages)
		case w.keyIs(k, "tools"), w.keyIs(k, "functions"):
			w.at(k, v, RoleToolDefinition, w.definitions)
		case w.keyIs(k, "response_format"):
			// A JSON schema the model is asked to follow: read like a tool's.
			w.at(k, v, RoleSystem, w.definitions)
		default:
			if w.kind(v) == kindArray && w.keyIs(k, "system") {
				w.want |= 1 << rulesAnthropic // system blocks
			}
			w.rootMember(k, v)
		}
	})
}

func (w *walker) chatMessages(msgs int, _ string) {
	w.runEnd()
	w.history(msgs, RoleUnknown, w.chatMessage, w.all)
	w.runEnd()
}

// chatMessage: content, tool calls and every other member but the role and Ollama's images
// (base64 media), with the message's role.
func (w *walker) chatMessage(m int, _ string) {
	if w.kind(m) != kindObject {
		w.runStep("")
		w.all(m, RoleUnknown)
		return
	}
	role := w.chatRole(m)
	w.runStep(role)
	w.eachMember(m, func(k, v int) {
		switch {
		case w.keyIs(k, "content"):
			w.at(k, v, role, w.openaiContent)
		case w.keyIs(k, "role"), w.keyIs(k, "images"):
		case w.keyIs(k, "tool_calls"):
			w.at(k, v, role, w.chatToolCalls)
		case w.keyIs(k, "function_call"):
			w.at(k, v, role, w.chatFunctionCall)
		case w.keyIs(k, "refusal"), w.keyIs(k, "thinking"), w.keyIs(k, "name"), w.keyIs(k, "tool_name"), // thinking, tool_name: Ollama's
			w.keyIs(k, "tool_call_id"): // self-hosted chat templates render it
			w.at(k, v, role, w.all)
		default:
			w.unknown(k, v, role)
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
			w.at(k, v, role, w.chatFunctionCall)
		case w.keyIs(k, "id"), w.keyIs(k, "type"), w.keyIs(k, "index"):
		default:
			w.unknown(k, v, role)
		}
	})
}

// chatFunctionCall: {"name", "arguments"} (custom tools: "input"); the arguments are model-written
// JSON in a string (OpenAI) or an object (Ollama), read whole. The name must be one of the
// tools', which are scanned as definitions.
func (w *walker) chatFunctionCall(f int, role string) {
	if w.kind(f) != kindObject {
		w.all(f, role)
		return
	}
	w.eachMember(f, func(k, v int) {
		switch {
		case w.keyIs(k, "arguments"), w.keyIs(k, "input"):
			w.at(k, v, role, w.all)
		case w.keyIs(k, "name"), w.keyIs(k, "index"):
		default:
			w.unknown(k, v, role)
		}
	})
}

// openaiContent: a string, null, an array of parts (one group), or (unexpected) anything else.
func (w *walker) openaiContent(c int, role string) {
	switch w.kind(c) {
	case kindArray:
		g := w.beginContent()
		w.eachElement(c, func(n, p int) { w.atIndex(n, p, role, w.openaiPart) })
		w.endContent(g)
	case kindObject:
		w.openaiPart(c, role)
	default:
		w.runText(c, role)
	}
}

// openaiPart handles the content parts of both Chat Completions and Responses. Parts that carry
// media (images, audio) hold no text; files with a text media type are decoded; a part of a type
// this package does not know has every string and key but its type scanned.
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
		w.partMembers(p, role, func(k, v int) bool {
			switch {
			case w.keyIs(k, "text"):
				w.groupText(k, v, role)
			case w.keyIs(k, "annotations"):
				w.at(k, v, role, w.all)
			default:
				return w.keyIs(k, "logprobs") || w.keyIs(k, "cache_control")
			}
			return true
		})
	case "refusal":
		w.partMembers(p, role, func(k, v int) bool {
			if w.keyIs(k, "refusal") {
				w.at(k, v, role, w.all)
				return true
			}
			return false
		})
	case "image_url", "input_image", "input_audio", "computer_screenshot":
		// Media: no text; a member media parts do not have is scanned all the same.
		w.partMembers(p, role, func(k, v int) bool {
			return w.keyIs(k, "image_url") || w.keyIs(k, "input_audio") || w.keyIs(k, "detail") ||
				w.keyIs(k, "file_id") || w.keyIs(k, "url")
		})
	case "file":
		// Chat: {"type": "file", "file": {"file_data", "filename", "file_id"}}
		w.partMembers(p, role, func(k, v int) bool {
			if w.keyIs(k, "file") {
				w.at(k, v, role, w.openaiFile)
				return true
			}
			return false
		})
	case "input_file":
		w.openaiFile(p, role)
	case "document_url":
		// Mistral: {"type": "document_url", "document_url": a data URL or a URL the provider
		// fetches, "document_name"}
		name, _ := w.uniqueString(p, "document_name")
		w.partMembers(p, role, func(k, v int) bool {
			switch {
			case w.keyIs(k, "document_url"):
				w.at(k, v, role, func(v int, role string) { w.documentURL(v, role, name) })
			case w.keyIs(k, "document_name"):
				w.at(k, v, role, w.all)
			default:
				return false
			}
			return true
		})
	default:
		if isOneOf(typ, anthropicOnly) || hasSuffix(typ, "_tool_result") {
			w.want |= 1 << rulesAnthropic
		}
		w.allBut(p, role)
	}
}

func isOneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// partMembers visits the members of part p but its type: f handles the members it knows (true);
// any other is scanned whole.
func (w *walker) partMembers(p int, role string, f func(k, v int) bool) {
	w.eachMember(p, func(k, v int) {
		if w.kind(v) == kindString && w.keyIs(k, "type") {
			return
		}
		if !f(k, v) {
			w.unknown(k, v, role)
		}
	})
}

// openaiFile: a file part's file ({"file_data", "filename", "file_id"}; Responses' input_file
// has the same members, plus file_url). The filename is put before the model with the file.
func (w *walker) openaiFile(f int, role string) {
	if w.kind(f) != kindObject {
		w.all(f, role)
		return
	}
	name := ""
	if s, ok := w.uniqueString(f, "filename"); ok {
		name = s
	}
	w.partMembers(f, role, func(k, v int) bool {
		switch {
		case w.keyIs(k, "file_data"):
			w.at(k, v, role, func(v int, role string) { w.file(v, role, "", name) })
		case w.keyIs(k, "filename"):
			w.at(k, v, role, w.all)
		case w.keyIs(k, "file_url"):
			w.at(k, v, role, func(v int, role string) { w.remote(v, role, typeOfName(name)) })
		case w.keyIs(k, "file_id"), w.keyIs(k, "detail"):
			// a file uploaded before: scanned, if at all, when it was uploaded
		default:
			return false
		}
		return true
	})
}

// openaiCompletions: prompt is a string, strings, or token ids; suffix is the text after the
// insertion point. vLLM's prompt_embeds is a prompt as tensors.
func (w *walker) openaiCompletions(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "prompt"):
			w.at(k, v, RoleUser, w.completionPrompt)
		case w.keyIs(k, "suffix"):
			w.at(k, v, RoleUser, w.all)
		case w.keyIs(k, "prompt_embeds"):
			w.at(k, v, RoleUser, func(int, string) { w.tokenIDHere() })
		default:
			w.rootMember(k, v)
		}
	})
}

// completionPrompt: strings are texts; an array of integers, or of integer arrays, is token ids.
func (w *walker) completionPrompt(p int, role string) {
	w.all(p, role)
	if w.kind(p) != kindArray {
		return
	}
	if w.hasNumber(p) {
		w.tokenIDHere()
	}
	w.eachElement(p, func(n, e int) {
		if w.kind(e) == kindArray && w.hasNumber(e) {
			mark := w.pushIndex(n)
			w.tokenIDHere()
			w.pop(mark)
		}
	})
}

// tokenIDHere reports the current path as a prompt of token ids, up to MaxTokenIDs of them.
func (w *walker) tokenIDHere() {
	p := string(w.path)
	if len(w.tokenIDs) < MaxTokenIDs && !slices.Contains(w.tokenIDs, p) {
		w.tokenIDs = append(w.tokenIDs, p)
	}
}

// hasNumber reports whether array a has a number element.
func (w *walker) hasNumber(a int) bool {
	found := false
	w.eachElement(a, func(_, e int) { found = found || w.kind(e) == kindNumber })
	return found
}

// openaiEmbeddings: input (OpenAI) or prompt (Ollama's old /api/embeddings) is a string,
// strings, or token arrays, which are not reported (see the package doc).
func (w *walker) openaiEmbeddings(root int) {
	w.eachMember(root, func(k, v int) {
		if w.keyIs(k, "input") || w.keyIs(k, "prompt") {
			w.at(k, v, RoleUser, w.all)
			return
		}
		w.rootMember(k, v)
	})
}
