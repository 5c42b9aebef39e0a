package llmreq

import "slices"

// Tool definitions: names, descriptions and JSON schemas of the tools a request offers the
// model. The provider renders them into the prompt, so they are instructions like a system
// prompt, and agents load them from third-party MCP servers: RoleToolDefinition.

// definitions records the strings of tool definitions, and the keys that are not schema or tool
// vocabulary (property names above all: the model reads them). The values of "type" members (the
// tool kind, JSON-schema types) are vocabulary, not prose, and are left out to keep the scan
// from drowning in "object" and "string".
func (w *walker) definitions(i int, role string) {
	switch w.kind(i) {
	case kindString:
		w.emit(i, role)
	case kindArray:
		w.eachElement(i, func(n, e int) {
			if w.kind(e) < kindNumber {
				w.atIndex(n, e, role, w.definitions)
			}
		})
	case kindObject:
		w.eachMember(i, func(k, v int) {
			vocab := w.isInert(k, schemaVocabulary)
			if vocab && (w.kind(v) >= kindNumber || (w.kind(v) == kindString && w.keyIs(k, "type"))) {
				return
			}
			mark := w.pushKey(k)
			if !vocab {
				w.emitKey(k, role)
			}
			w.definitions(v, role)
			w.pop(mark)
		})
	}
}

// schemaVocabulary are the keys of JSON Schema and of the tool definitions of every API: names
// the schema language gives, not the request's author.
var schemaVocabulary = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{
		// JSON Schema
		"type", "properties", "required", "items", "prefixItems", "enum", "const", "default",
		"title", "description", "format", "minimum", "maximum", "exclusiveMinimum",
		"exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "minItems",
		"maxItems", "uniqueItems", "minProperties", "maxProperties", "additionalProperties",
		"patternProperties", "propertyNames", "anyOf", "oneOf", "allOf", "not", "if", "then",
		"else", "$ref", "$defs", "definitions", "$schema", "$id", "$comment", "examples",
		"example", "nullable", "propertyOrdering", "contentEncoding", "contentMediaType",
		"deprecated", "readOnly", "writeOnly", "dependentRequired", "dependentSchemas",
		"unevaluatedProperties", "unevaluatedItems", "contains", "minContains", "maxContains",
		// OpenAI Chat and Responses tools
		"function", "name", "parameters", "strict", "custom", "grammar", "syntax", "definition",
		"server_label", "server_url", "server_description", "connector_id", "allowed_tools",
		"require_approval", "headers", "authorization", "tool_names", "never", "always",
		"read_only", "display_width", "display_height", "environment", "container", "file_ids",
		"vector_store_ids", "filters", "max_num_results", "ranking_options", "ranker",
		"score_threshold", "user_location", "search_context_size", "city", "country", "region",
		"timezone", "background", "input_fidelity", "input_image_mask", "moderation",
		"output_compression", "output_format", "partial_images", "quality", "size", "format",
		// Anthropic
		"input_schema", "cache_control", "ttl", "max_uses", "allowed_domains", "blocked_domains",
		"display_width_px", "display_height_px", "display_number", "input_examples",
		"defer_loading", "url", "tool_configuration", "enabled", "authorization_token",
		// Gemini
		"functionDeclarations", "function_declarations", "parametersJsonSchema",
		"parameters_json_schema", "response", "responseJsonSchema", "response_json_schema",
		"behavior", "googleSearch", "google_search", "googleSearchRetrieval",
		"google_search_retrieval", "codeExecution", "code_execution", "urlContext", "url_context",
		"retrieval", "enum_values", "any_of", "property_ordering", "min_items", "max_items",
		"min_length", "max_length", "min_properties", "max_properties",
	} {
		m[s] = true
	}
	return m
}()

// unreadableMCP is the Unreadable of a provider-side MCP server: the provider lists its tools and
// calls them itself, so their definitions and outputs reach the model unscanned.
const unreadableMCP = "remote MCP server: the provider reads its tools and their outputs"

// responsesTools: tool definitions, and each remote MCP server among them ({"type": "mcp",
// "server_url"} or a connector's "connector_id") recorded as a Document.
func (w *walker) responsesTools(l int, role string) {
	w.definitions(l, role)
	w.mcpServers(l, "mcp", "server_url", "connector_id")
}

// anthropicMCPServers: the MCP server list ({"type": "url", "url", "name", ...}), whose strings
// are definitions, and each server a Document.
func (w *walker) anthropicMCPServers(l int, role string) {
	w.definitions(l, role)
	w.mcpServers(l, "", "url")
}

// mcpServers records as a Document each element of list l (of type typ, when typ is not "")
// that names a server by one of the members keys (the first given).
func (w *walker) mcpServers(l int, typ string, keys ...string) {
	if w.kind(l) != kindArray {
		return
	}
	w.eachElement(l, func(n, e int) {
		if w.kind(e) != kindObject {
			return
		}
		if t, ok := w.uniqueString(e, "type"); typ != "" && (!ok || t != typ) {
			return
		}
		mark := w.pushIndex(n)
		done := false
		w.eachMember(e, func(k, v int) {
			if done || w.kind(v) != kindString || !slices.ContainsFunc(keys, func(s string) bool { return w.keyIs(k, s) }) {
				return
			}
			done = true
			mk := w.pushKey(k)
			w.document(v, RoleToolDefinition, "", nil, unreadableMCP)
			w.pop(mk)
		})
		w.pop(mark)
	})
}
