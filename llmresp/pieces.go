package llmresp

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// Kind says what a piece is.
type Kind uint8

const (
	KindText      Kind = iota + 1 // assistant text
	KindRefusal                   // OpenAI refusals
	KindReasoning                 // reasoning, thinking, thought summaries
	KindToolArgs                  // tool call arguments or input (JSON text), Gemini's executable code
	KindToolName                  // the name of the tool called
)

func (k Kind) String() string {
	return [...]string{"", "text", "refusal", "reasoning", "tool_args", "tool_name"}[k]
}

// Piece is one text the model wrote, in one event.
type Piece struct {
	// Channel names the stream the piece belongs to, stable over the response: the pieces of
	// one channel, in event order, are one text (deltas), to be fed to one stream scanner.
	// E.g. "choices[0].content", "output[1].arguments", "content[2]",
	// "candidates[0].text", "message.content" (the package doc lists them all).
	Channel string
	Kind    Kind
	// Text is the decoded string; for a JSON piece, the JSON value's bytes as they came.
	Text string
	// Whole: the piece repeats its channel's whole text rather than adding to it (OpenAI
	// Responses' *.done events, output_item and content_part events, response.completed and
	// the non-streamed response). Channels.Whole says what to put in its place.
	Whole bool
	// JSON: the value is a JSON object or array, not a string (Gemini functionCall.args,
	// Ollama tool_calls arguments, Anthropic tool_use input). Its replacement must be JSON.
	JSON bool

	start, end int // the value in Event.Data
}

// Info is what Pieces learned about an event besides its pieces.
type Info struct {
	Type string // the event's type member (Responses, Anthropic) or SSE name; "" without one
	// Done: OpenAI's "data: [DONE]" terminator.
	Done bool
	// UpstreamError: the event is the provider's own error ({"error": ...}, type "error").
	UpstreamError bool
	// Seq is Responses' sequence_number, -1 without one (StreamError needs the next).
	Seq int
	// Unknown: a Responses or Anthropic event of a type no walker knows; its pieces are all
	// its strings but ids and opaque payloads, on channel "event.<type>".
	Unknown bool
}

// Pieces appends the pieces of ev for api to dst. An event without Data has none. Data that is
// not valid JSON is ErrBadEvent (but OpenAI's [DONE]), and JSON that is not an object is
// ErrShape: the firewall refuses both, since a client may read text there. A Responses or
// Anthropic event of a type no walker knows (a hosted tool's, one to come) is read whole: all its
// strings but ids and opaque payloads are pieces (Info.Unknown); known events without text
// (ping, message_stop, a status event) have none. Chat, Gemini and Ollama members no walker
// knows are not read.
func Pieces(api API, ev *Event, dst []Piece) ([]Piece, Info, error) {
	info := Info{Type: ev.Name, Seq: -1}
	d := ev.Data
	if d == nil {
		return dst, info, nil
	}
	if bytes.Equal(bytes.TrimSpace(d), []byte("[DONE]")) && (api == OpenAIChat || api == OpenAICompletions || api == OpenAIResponses) {
		info.Done = true
		return dst, info, nil
	}
	if !json.Valid(d) {
		return dst, info, ErrBadEvent
	}
	root := skipWS(d, 0)
	if d[root] != '{' {
		return dst, info, ErrShape
	}
	w := pw{b: d, out: dst}
	// One pass over the root for what every API's events may carry (the last of duplicates).
	typ, seq := -1, -1
	members(d, root, func(k []byte, v int) {
		switch string(k) {
		case "type":
			typ = v
		case "sequence_number":
			seq = v
		case "error":
			info.UpstreamError = true
		}
	})
	if t, ok := str(d, typ); ok {
		info.Type = t
	}
	info.Seq = num(d, seq, -1)
	info.UpstreamError = info.UpstreamError || info.Type == "error"
	switch api {
	case OpenAIChat, OpenAICompletions:
		w.chat(root)
	case OpenAIResponses:
		w.responsesEvent(root, info.Type)
	case AnthropicMessages:
		w.anthropicEvent(root, info.Type)
	case AnthropicComplete:
		w.add("completion", KindText, get(d, root, "completion"))
	case Gemini:
		w.gemini(root)
	case OllamaChat:
		w.ollamaMessage(root)
	case OllamaGenerate:
		w.add("response", KindText, get(d, root, "response"))
		w.add("thinking", KindReasoning, get(d, root, "thinking"))
	}
	info.Unknown = w.unknown
	// Body order, whatever order the walkers read members in.
	added := w.out[len(dst):]
	slices.SortStableFunc(added, func(a, b Piece) int { return a.start - b.start })
	return w.out, info, nil
}

// pw collects pieces.
type pw struct {
	b       []byte
	out     []Piece
	whole   bool
	unknown bool // generic read an event of a type no walker knows
}

// inertKeys are members of an event of unknown type that carry no text a model wrote: ids,
// discriminators, opaque signatures and encrypted or base64 payloads.
var inertKeys = map[string]bool{"id": true, "type": true, "item_id": true, "call_id": true,
	"object": true, "status": true, "model": true, "signature": true, "encrypted_content": true,
	"role": true, "partial_image_b64": true, "result": true, "logprobs": true}

// generic adds every string value under v but those of inertKeys as a KindText piece of ch,
// for events of types to come: what no walker knows is scanned, not passed.
func (w *pw) generic(v int, ch string) {
	switch w.b[v] {
	case '"':
		w.add(ch, KindText, v)
	case '{':
		members(w.b, v, func(name []byte, m int) {
			if !inertKeys[string(name)] {
				w.generic(m, ch)
			}
		})
	case '[':
		elems(w.b, v, func(_, e int) { w.generic(e, ch) })
	}
}

// add adds the value at b[v] as a piece when it is a string (or, for tool arguments, an
// object or array). null, numbers and absent values are no piece.
func (w *pw) add(ch string, k Kind, v int) {
	if v < 0 {
		return
	}
	switch w.b[v] {
	case '"':
		s, _ := str(w.b, v)
		w.out = append(w.out, Piece{Channel: ch, Kind: k, Text: s, Whole: w.whole, start: v, end: valueEnd(w.b, v)})
	case '{', '[':
		if k == KindToolArgs {
			e := valueEnd(w.b, v)
			w.out = append(w.out, Piece{Channel: ch, Kind: k, Text: string(w.b[v:e]), Whole: w.whole, JSON: true, start: v, end: e})
		}
	}
}

// all calls add for every member named key of the object at b[o] (a duplicate key is read by
// some client: every one is a piece).
func (w *pw) all(o int, key string, ch string, k Kind) {
	members(w.b, o, func(name []byte, v int) {
		if string(name) == key {
			w.add(ch, k, v)
		}
	})
}

func idx(s string, i int) string { return s + "[" + strconv.Itoa(i) + "]" }

// chat reads Chat Completions chunks and completions (and legacy completions' choices[i].text).
func (w *pw) chat(root int) {
	b := w.b
	each(b, root, "choices", func(arr int) {
		elems(b, arr, func(k, c int) {
			ch := idx("choices", num(b, get(b, c, "index"), k))
			w.all(c, "text", ch+".text", KindText)
			for _, m := range []string{"delta", "message"} {
				members(b, c, func(name []byte, msg int) {
					if string(name) == m {
						w.chatMessage(msg, ch)
					}
				})
			}
		})
	})
}

func (w *pw) chatMessage(m int, ch string) {
	b := w.b
	members(b, m, func(name []byte, v int) {
		switch string(name) {
		case "content":
			if b[v] == '[' { // content parts, as some compatible servers send
				elems(b, v, func(_, p int) {
					w.all(p, "text", ch+".content", KindText)
					w.all(p, "refusal", ch+".refusal", KindRefusal)
				})
				return
			}
			w.add(ch+".content", KindText, v)
		case "refusal":
			w.add(ch+".refusal", KindRefusal, v)
		case "reasoning_content", "reasoning":
			w.add(ch+".reasoning", KindReasoning, v)
		case "audio":
			w.all(v, "transcript", ch+".audio", KindText)
		case "function_call":
			w.all(v, "name", ch+".function_call.name", KindToolName)
			w.all(v, "arguments", ch+".function_call.arguments", KindToolArgs)
		case "tool_calls":
			elems(b, v, func(j, tc int) {
				tch := idx(ch+".tool_calls", num(b, get(b, tc, "index"), j))
				members(b, tc, func(name []byte, f int) {
					switch string(name) {
					case "function":
						w.all(f, "name", tch+".name", KindToolName)
						w.all(f, "arguments", tch+".arguments", KindToolArgs)
					case "custom":
						w.all(f, "name", tch+".name", KindToolName)
						w.all(f, "input", tch+".arguments", KindToolArgs)
					}
				})
			})
		}
	})
}

// responsesEvent reads an OpenAI Responses streaming event, or a whole response.
func (w *pw) responsesEvent(root int, typ string) {
	b := w.b
	oi := num(b, get(b, root, "output_index"), 0)
	ci := num(b, get(b, root, "content_index"), 0)
	out := idx("output", oi)
	part := idx(out+".content", ci)
	delta := true
	switch typ {
	case "response.output_text.delta":
		w.all(root, "delta", part, KindText)
	case "response.refusal.delta":
		w.all(root, "delta", part, KindRefusal)
	case "response.reasoning_text.delta":
		w.all(root, "delta", part, KindReasoning)
	case "response.reasoning_summary_text.delta":
		w.all(root, "delta", idx(out+".summary", num(b, get(b, root, "summary_index"), 0)), KindReasoning)
	case "response.function_call_arguments.delta", "response.mcp_call_arguments.delta",
		"response.custom_tool_call_input.delta", "response.code_interpreter_call_code.delta":
		w.all(root, "delta", out+".arguments", KindToolArgs)
	case "response.audio.transcript.delta":
		w.all(root, "delta", "audio.transcript", KindText)
	default:
		delta = false
	}
	if delta {
		return
	}
	w.whole = true
	switch typ {
	case "response.output_text.done":
		w.all(root, "text", part, KindText)
	case "response.refusal.done":
		w.all(root, "refusal", part, KindRefusal)
	case "response.reasoning_text.done":
		w.all(root, "text", part, KindReasoning)
	case "response.reasoning_summary_text.done":
		w.all(root, "text", idx(out+".summary", num(b, get(b, root, "summary_index"), 0)), KindReasoning)
	case "response.reasoning_summary_part.added", "response.reasoning_summary_part.done":
		members(b, root, func(name []byte, p int) {
			if string(name) == "part" {
				w.all(p, "text", idx(out+".summary", num(b, get(b, root, "summary_index"), 0)), KindReasoning)
			}
		})
	case "response.function_call_arguments.done", "response.mcp_call_arguments.done":
		w.all(root, "arguments", out+".arguments", KindToolArgs)
		w.all(root, "name", out+".name", KindToolName)
	case "response.custom_tool_call_input.done":
		w.all(root, "input", out+".arguments", KindToolArgs)
	case "response.code_interpreter_call_code.done":
		w.all(root, "code", out+".arguments", KindToolArgs)
	case "response.audio.transcript.done":
		w.all(root, "transcript", "audio.transcript", KindText)
	case "response.content_part.added", "response.content_part.done":
		members(b, root, func(name []byte, p int) {
			if string(name) == "part" {
				w.responsesPart(p, part)
			}
		})
	case "response.output_item.added", "response.output_item.done":
		members(b, root, func(name []byte, it int) {
			if string(name) == "item" {
				w.responsesItem(it, out)
			}
		})
	case "response.created", "response.in_progress", "response.completed", "response.incomplete",
		"response.failed", "response.queued":
		members(b, root, func(name []byte, r int) {
			if string(name) == "response" {
				w.responsesOutput(r)
			}
		})
	case "error":
	default:
		if typ == "response" || typ == "" && get(b, root, "output") >= 0 {
			w.responsesOutput(root) // a non-streamed response
			return
		}
		// A type to come, or a hosted tool's event (its status events carry only ids;
		// output_text.annotation.added carries a URL a client shows).
		w.unknown, w.whole = true, false
		w.generic(root, "event."+typ)
	}
}

func (w *pw) responsesOutput(r int) {
	members(w.b, r, func(name []byte, o int) {
		if string(name) == "output" {
			elems(w.b, o, func(k, it int) { w.responsesItem(it, idx("output", k)) })
		}
	})
}

func (w *pw) responsesItem(it int, out string) {
	b := w.b
	typ, _ := str(b, get(b, it, "type"))
	switch typ {
	case "message":
		members(b, it, func(name []byte, c int) {
			if string(name) == "content" {
				elems(b, c, func(k, p int) { w.responsesPart(p, idx(out+".content", k)) })
			}
		})
	case "function_call", "mcp_call":
		w.all(it, "name", out+".name", KindToolName)
		w.all(it, "arguments", out+".arguments", KindToolArgs)
	case "custom_tool_call":
		w.all(it, "name", out+".name", KindToolName)
		w.all(it, "input", out+".arguments", KindToolArgs)
	case "code_interpreter_call":
		w.all(it, "code", out+".arguments", KindToolArgs)
	case "reasoning":
		members(b, it, func(name []byte, v int) {
			switch string(name) {
			case "summary":
				elems(b, v, func(k, p int) { w.all(p, "text", idx(out+".summary", k), KindReasoning) })
			case "content":
				elems(b, v, func(k, p int) { w.all(p, "text", idx(out+".content", k), KindReasoning) })
			}
		})
	}
}

func (w *pw) responsesPart(p int, ch string) {
	typ, _ := str(w.b, get(w.b, p, "type"))
	switch typ {
	case "refusal":
		w.all(p, "refusal", ch, KindRefusal)
	case "reasoning_text":
		w.all(p, "text", ch, KindReasoning)
	default: // output_text, and parts of types to come that carry text
		w.all(p, "text", ch, KindText)
	}
}

// anthropicEvent reads an Anthropic Messages streaming event, or a whole message.
func (w *pw) anthropicEvent(root int, typ string) {
	b := w.b
	ch := idx("content", num(b, get(b, root, "index"), 0))
	switch typ {
	case "content_block_start":
		members(b, root, func(name []byte, blk int) {
			if string(name) != "content_block" {
				return
			}
			if typ, _ := str(b, get(b, blk, "type")); typ == "tool_use" || typ == "server_tool_use" || typ == "mcp_tool_use" {
				// The SDK replaces the start's input ({}) by the deltas' JSON, where a
				// text block's deltas extend its start's text: the input is a text apart.
				w.all(blk, "name", ch+".name", KindToolName)
				w.all(blk, "input", ch+".start", KindToolArgs)
				return
			}
			w.anthropicBlock(blk, ch)
		})
	case "content_block_delta":
		members(b, root, func(name []byte, d int) {
			if string(name) != "delta" {
				return
			}
			dt, _ := str(b, get(b, d, "type"))
			switch dt {
			case "text_delta":
				w.all(d, "text", ch, KindText)
			case "input_json_delta":
				w.all(d, "partial_json", ch, KindToolArgs)
			case "thinking_delta":
				w.all(d, "thinking", ch, KindReasoning)
			case "signature_delta":
			default: // citations_delta (a cited URL and text a client shows), types to come
				w.unknown = true
				w.generic(d, ch+"."+dt)
			}
		})
	case "message_start":
		members(b, root, func(name []byte, m int) {
			if string(name) == "message" {
				w.anthropicMessage(m)
			}
		})
	case "message":
		w.anthropicMessage(root)
	case "content_block_stop", "message_delta", "message_stop", "ping", "error":
	default:
		w.unknown = true
		w.generic(root, "event."+typ)
	}
}

func (w *pw) anthropicMessage(m int) {
	members(w.b, m, func(name []byte, c int) {
		if string(name) == "content" {
			elems(w.b, c, func(k, blk int) { w.anthropicBlock(blk, idx("content", k)) })
		}
	})
}

func (w *pw) anthropicBlock(blk int, ch string) {
	typ, _ := str(w.b, get(w.b, blk, "type"))
	switch typ {
	case "text":
		w.all(blk, "text", ch, KindText)
	case "thinking":
		w.all(blk, "thinking", ch, KindReasoning)
	case "tool_use", "server_tool_use", "mcp_tool_use":
		w.all(blk, "name", ch+".name", KindToolName)
		w.all(blk, "input", ch, KindToolArgs)
	}
}

// gemini reads a GenerateContentResponse (a streamed chunk or the whole answer). Parts of one
// candidate are one text across chunks, so the channel has no part index.
func (w *pw) gemini(root int) {
	b := w.b
	each(b, root, "candidates", func(arr int) {
		elems(b, arr, func(k, c int) {
			ch := idx("candidates", num(b, get(b, c, "index"), k))
			members(b, c, func(name []byte, content int) {
				if string(name) != "content" {
					return
				}
				members(b, content, func(name []byte, parts int) {
					if string(name) != "parts" {
						return
					}
					elems(b, parts, func(_, p int) {
						if t := get(b, p, "thought"); t >= 0 && b[t] == 't' {
							w.all(p, "text", ch+".thought", KindReasoning)
						} else {
							w.all(p, "text", ch+".text", KindText)
						}
						members(b, p, func(name []byte, v int) {
							switch string(name) {
							case "functionCall", "function_call":
								w.all(v, "name", ch+".functionCall.name", KindToolName)
								w.all(v, "args", ch+".functionCall.args", KindToolArgs)
							case "executableCode", "executable_code":
								w.all(v, "code", ch+".code", KindToolArgs)
							}
						})
					})
				})
			})
		})
	})
}

// ollamaMessage reads an /api/chat chunk or answer.
func (w *pw) ollamaMessage(root int) {
	b := w.b
	members(b, root, func(name []byte, m int) {
		if string(name) != "message" {
			return
		}
		w.all(m, "content", "message.content", KindText)
		w.all(m, "thinking", "message.thinking", KindReasoning)
		members(b, m, func(name []byte, tcs int) {
			if string(name) != "tool_calls" {
				return
			}
			elems(b, tcs, func(j, tc int) {
				ch := idx("message.tool_calls", j)
				members(b, tc, func(name []byte, f int) {
					if string(name) == "function" {
						w.all(f, "name", ch+".name", KindToolName)
						w.all(f, "arguments", ch+".arguments", KindToolArgs)
					}
				})
			})
		})
	})
}
