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

// An Ollama message is read as an OpenAI chat message (chatMessage knows Ollama's "thinking");
// its content is a string, but OpenAI-style parts from a confused client still count.
func (w *walker) ollamaMessages(msgs int, _ string) {
	w.list(msgs, RoleUnknown, w.chatMessage, w.all)
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
