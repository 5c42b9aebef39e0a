package llmreq

// Ollama's native API. /api/chat reads messages as OpenAI Chat does (openaiChat: content, a
// string; thinking; images, base64 media; tool_calls[].function.arguments, an object).
// /api/generate: prompt and suffix (user), system and template (system: the template wraps the
// prompt and is put before the model like a system prompt); context is the token ids of an
// earlier exchange, which no scanner can read; images are media.
func (w *walker) ollamaGenerate(root int) {
	w.eachMember(root, func(k, v int) {
		switch {
		case w.keyIs(k, "prompt"):
			w.at(k, v, RoleUser, w.completionPrompt)
		case w.keyIs(k, "suffix"):
			w.at(k, v, RoleUser, w.all)
		case w.keyIs(k, "system"), w.keyIs(k, "template"):
			w.at(k, v, RoleSystem, w.all)
		case w.keyIs(k, "context"):
			if w.kind(v) == kindArray && w.hasNumber(v) {
				mark := w.pushKey(k)
				w.tokenIDHere()
				w.pop(mark)
				return
			}
			w.at(k, v, RoleUser, w.all)
		case w.keyIs(k, "format"):
			// A JSON schema the output must follow.
			w.at(k, v, RoleSystem, w.definitions)
		default:
			w.rootMember(k, v)
		}
	})
}
