package llmreq

// Ollama's native API. /api/chat: messages[] with role, content (a string), thinking, images
// (base64: no text) and tool_calls[].function.arguments (an object, not a string as in OpenAI).
// /api/generate: prompt and suffix (user), system and template (system: the template wraps the
// prompt and is put before the model like a system prompt); images and context are not texts.
func (w *walker) ollamaChat(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "messages"):
			w.at(k, v, RoleUnknown, w.ollamaMessages)
		case w.keyIs(k, "tools"):
			w.at(k, v, RoleSystem, w.definitions)
		}
	})
}

func (w *walker) ollamaMessages(msgs int, _ string) {
	if w.kind(msgs) != kindArray {
		w.all(msgs, RoleUnknown)
		return
	}
	w.eachElement(msgs, func(n, m int) {
		w.atIndex(n, m, RoleUnknown, func(m int, _ string) {
			if w.kind(m) != kindObject {
				w.all(m, RoleUnknown)
				return
			}
			role := w.chatRole(m)
			w.eachMember(m, func(k, v int) {
				switch {
				case w.keyIs(k, "content"):
					// A string in Ollama; OpenAI-style parts from a confused client still count.
					w.at(k, v, role, w.openaiContent)
				case w.keyIs(k, "thinking"):
					w.at(k, v, role, w.all)
				case w.keyIs(k, "tool_calls"):
					w.at(k, v, role, w.chatToolCalls)
				}
			})
		})
	})
}

func (w *walker) ollamaGenerate(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "prompt"), w.keyIs(k, "suffix"):
			w.at(k, v, RoleUser, w.all)
		case w.keyIs(k, "system"), w.keyIs(k, "template"):
			w.at(k, v, RoleSystem, w.all)
		}
	})
}
