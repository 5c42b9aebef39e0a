package chatbody

import (
	"fmt"
	"strings"
)

// AgentSystem is the system prompt of the agent shape.
const AgentSystem = "You are a research assistant working inside the user's project. " +
	"Use the tools to look things up before you answer: search the documentation, read files, " +
	"fetch pages and run short Python snippets when a calculation helps. Quote what the tools " +
	"return when it matters, say which source you used, and keep answers concise."

// AgentTools are the agent shape's tool definitions: four function tools
// with JSON schemas, as an agent framework sends them on every request
// (the firewall scans tool definitions by default).
const AgentTools = `[` +
	`{"type":"function","function":{"name":"search_docs","description":"Search the project's documentation and notes, and return the passages that match best.","parameters":{"type":"object","properties":{"query":{"type":"string","description":"What to look for, in plain words."},"max_results":{"type":"integer","minimum":1,"maximum":20,"description":"How many passages to return (default 5)."}},"required":["query"],"additionalProperties":false}}},` +
	`{"type":"function","function":{"name":"read_file","description":"Read a text file of the project and return its contents.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"The file's path, relative to the project's root."},"start_line":{"type":"integer","minimum":1,"description":"The first line to return."},"end_line":{"type":"integer","minimum":1,"description":"The last line to return."}},"required":["path"],"additionalProperties":false}}},` +
	`{"type":"function","function":{"name":"fetch_url","description":"Fetch a web page and return its main text, without navigation and scripts.","parameters":{"type":"object","properties":{"url":{"type":"string","format":"uri","description":"The page's address, http or https."},"max_bytes":{"type":"integer","minimum":1024,"description":"The most text to return."}},"required":["url"],"additionalProperties":false}}},` +
	`{"type":"function","function":{"name":"run_python","description":"Run a short Python 3 program in a sandbox and return what it prints.","parameters":{"type":"object","properties":{"code":{"type":"string","description":"The program."},"timeout_seconds":{"type":"number","minimum":1,"maximum":60,"description":"How long it may run (default 10)."}},"required":["code"],"additionalProperties":false}}}` +
	`]`

// agent builds an agent conversation from Material.
type agent struct {
	m    *Material
	r    rng
	next int // the next corpus message a tool result takes text from
	call int // tool calls made
}

// doc returns a tool result of at most n bytes: corpus message contents
// (answers with their code, lists and explanations, and questions)
// joined with blank lines, as a search or a file read returns documents.
func (a *agent) doc(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(a.m.Messages[a.next].Content)
		b.WriteString("\n\n")
		a.next = (a.next + 1) % len(a.m.Messages)
	}
	return strings.TrimSpace(cut(b.String(), n))
}

// toolCall returns an assistant message calling one of AgentTools, with
// arguments drawn from the user's question.
func (a *agent) toolCall(question string) (message []byte, id string) {
	a.call++
	id = fmt.Sprintf("call_%016x", a.r.next())
	var name string
	var args map[string]any
	switch a.r.intn(3) {
	case 0:
		name, args = "search_docs", map[string]any{"query": firstLine(question, 120), "max_results": 1 + a.r.intn(10)}
	case 1:
		name, args = "read_file", map[string]any{"path": fmt.Sprintf("docs/notes/section-%03d.md", a.r.intn(400))}
	default:
		name, args = "fetch_url", map[string]any{"url": fmt.Sprintf("https://docs.example.com/guide/%d/page-%d.html", a.r.intn(40), a.r.intn(200)), "max_bytes": 65536}
	}
	c := toolCall{ID: id, Type: "function"}
	c.Function.Name, c.Function.Arguments = name, string(encode(args))
	return encode(wireMessage{Role: "assistant", ToolCalls: []toolCall{c}}), id
}

// Agent is an agent conversation of about n bytes (at least n-64, at most
// n, for n from 4 KiB): AgentSystem and AgentTools, then turns of a user
// question (a benign prompt of the corpus, chosen by seed, one with a
// word of at least eight ASCII letters for Stamp), one or two
// tool calls each answered by a tool message of 2-16 KiB of corpus text,
// and the assistant's answer (a corpus answer). The last turn ends with its
// tool message, its result cut to fill the body: the request an agent
// sends to have the model read a tool's result.
func (m *Material) Agent(n int, seed uint64) []byte {
	a := &agent{m: m, r: rng(seed)}
	a.next = a.r.intn(len(m.Messages))
	tools := []byte(AgentTools)
	msgs := [][]byte{msg("system", AgentSystem)}
	size := bodyOverhead + len(tools) + len(msgs[0])
	add := func(e []byte) { msgs, size = append(msgs, e), size+1+len(e) }
	// reserve is what a turn needs beyond its question and results: room
	// for an answer, the next question and a call.
	const reserve = 16 << 10
	// maxAnswer bounds an answer, so that it fits the reserve.
	const maxAnswer = 8 << 10
	for {
		// A question that leaves room for a call and a result.
		question := m.Prompts[a.r.intn(len(m.Prompts))]
		for try := 0; (len(question)+1024 > n-size || !stampable(question)) && try < 1000; try++ {
			question = m.Prompts[a.r.intn(len(m.Prompts))]
		}
		add(msg("user", cut(question, max(n-size-1024, 0))))
		for range 1 + a.r.intn(2) {
			call, id := a.toolCall(question)
			add(call)
			room := n - size - 1 - len(`{"role":"tool","content":"","tool_call_id":""}`) - len(id)
			want, last := 2<<10+a.r.intn(14<<10), false
			if want+reserve > room {
				want, last = room, true
			}
			// Cut the result to fit: its encoded length exceeds the text's
			// by its escapes.
			text := a.doc(max(want, 0))
			for {
				result := encode(wireMessage{Role: "tool", Content: &text, ToolCallID: id})
				over := size + 1 + len(result) - n
				if over <= 0 || text == "" {
					add(result)
					break
				}
				text = cut(text, max(len(text)-over, 0))
			}
			if last {
				return assemble(nil, msgs, tools)
			}
		}
		answer := msg("assistant", cut(m.Messages[(a.next|1)%len(m.Messages)].Content, maxAnswer))
		if size+1+len(answer)+4<<10 > n {
			return assemble(nil, msgs, tools) // no room for another turn
		}
		add(answer)
	}
}

// stampable reports whether s has stampLen ASCII letters in a row.
func stampable(s string) bool {
	run := 0
	for i := 0; i < len(s) && run < stampLen; i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			run++
		} else {
			run = 0
		}
	}
	return run == stampLen
}
