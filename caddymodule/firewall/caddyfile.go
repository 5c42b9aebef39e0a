package firewall

import (
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/promptwall/promptwall/caddymodule/nearest"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("prompt_firewall", parseCaddyfile)
	// The firewall must see the body before anything can send it on: before
	// the routing directives (invoke, handle, handle_path, route), whose
	// blocks hold the reverse_proxy of most sites, so a site-level
	// prompt_firewall guards every request of the site, and inside such a
	// block before its reverse_proxy. It comes after the directives that
	// rewrite the request (rewrite, uri, request_header, request_body), so
	// it reads what the upstream will get. No `order` line is needed.
	httpcaddyfile.RegisterDirectiveOrder("prompt_firewall", httpcaddyfile.Before, "invoke")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	f := new(Firewall)
	if err := f.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return f, nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	prompt_firewall [<matcher>] {
//	    rulebook      <file>
//	    on_malicious  block|sanitize|log
//	    on_suspicious block|sanitize|log
//	    roles         <role...>|all
//	    max_body      <size>
//	    safe_cache    <entries>|off
//	    unscannable_files pass|refuse
//	    token_ids     refuse|pass
//	    rule          <id> block|sanitize|log|off
//	    category      <name> block|sanitize|log|off
//	    websocket     refuse|pass|scan
//	    max_upload    <size>
//	    response_on_malicious  block|sanitize|log|off
//	    response_on_suspicious block|sanitize|log|off
//	    mcp {
//	        pin_tools
//	    }
//	}
//
// Every subdirective is optional, and so is the block. rulebook defaults to
// the embedded prompt-injection-rules/v1; on_malicious to block;
// on_suspicious to sanitize; roles to user tool function tool_definition
// (roles are user, tool, function, tool_definition, system, developer,
// assistant; all is every one);
// max_body to 16MiB (a size such as 512KB or 16MiB, or a number of bytes);
// safe_cache to 65536 entries (off: scan every text of every request);
// websocket to refuse (pass: WebSocket upgrades go on unscanned; scan:
// the client's messages are scanned, a blocked one closes the connection);
// max_upload, the largest multipart body, to 512MiB; unscannable_files
// (documents of types no reader knows, files the provider fetches) to pass,
// counted in the Prompt-Firewall-Unscanned header; token_ids (prompts
// given as token ids) to refuse. rule and category,
// each repeatable, set the action of one rule's or one category's matches
// (off: no action, still reported); a rule's action overrides its
// category's, which overrides on_malicious and on_suspicious, and a
// request takes the strongest action of its matches. response_on_malicious
// and response_on_suspicious (default off: the response is not touched)
// scan the model's answers to LLM API requests and act on them; rule and
// category apply to them too. mcp (a block, maybe empty) makes the route
// the guard of an MCP server: every request is JSON-RPC, scanned both ways
// with the actions above; pin_tools refuses a session's changed tool list.
func (f *Firewall) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "rulebook":
			if !d.AllArgs(&f.Rulebook) {
				return d.ArgErr()
			}
		case "on_malicious", "on_suspicious":
			name := d.Val()
			var action string
			if !d.AllArgs(&action) {
				return d.ArgErr()
			}
			switch action {
			case ActionBlock, ActionSanitize, ActionLog:
			default:
				return d.Errf("%s: unknown action '%s' (want block, sanitize or log)", name, action)
			}
			if name == "on_malicious" {
				f.OnMalicious = action
			} else {
				f.OnSuspicious = action
			}
		case "roles":
			roles := d.RemainingArgs()
			if len(roles) == 0 {
				return d.ArgErr()
			}
			for _, r := range roles {
				if r != "all" && !isRole(r) {
					return d.Errf("roles: unknown role '%s'%s (want %s, or all alone)", r,
						nearest.Hint(r, allRoleNames), strings.Join(allRoleNames, ", "))
				}
				if r == "all" && len(roles) > 1 {
					return d.Err("roles: 'all' stands alone")
				}
			}
			f.Roles = append(f.Roles, roles...)
		case "max_body":
			var s string
			if !d.AllArgs(&s) {
				return d.ArgErr()
			}
			size, err := humanize.ParseBytes(s)
			if err != nil || size == 0 || size > 1<<62 {
				return d.Errf("max_body: want a size such as 16MiB, 512KB or a number of bytes (at least 1), got '%s'", s)
			}
			f.MaxBody = int64(size)
		case "safe_cache":
			var s string
			if !d.AllArgs(&s) {
				return d.ArgErr()
			}
			if s == "off" {
				f.SafeCache = -1
				continue
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > maxSafeCache {
				return d.Errf("safe_cache: want a number of entries from 1 to %d, or off; got '%s'", maxSafeCache, s)
			}
			f.SafeCache = n
		case "unscannable_files", "token_ids":
			name := d.Val()
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			if v != UnscannedPass && v != UnscannedRefuse {
				return d.Errf("%s: unknown value '%s' (want pass or refuse)", name, v)
			}
			if name == "token_ids" {
				f.TokenIDs = v
			} else {
				f.UnscannableFiles = v
			}
		case "rule", "category":
			what := d.Val()
			var name, action string
			if !d.AllArgs(&name, &action) {
				return d.ArgErr()
			}
			if _, ok := parseAction(action); !ok {
				return d.Errf("%s %s: unknown action '%s' (want block, sanitize, log or off)", what, name, action)
			}
			m := &f.RuleActions
			if what == "category" {
				m = &f.CategoryActions
			}
			if *m == nil {
				*m = map[string]string{}
			}
			if _, dup := (*m)[name]; dup {
				return d.Errf("%s %s: given twice", what, name)
			}
			(*m)[name] = action
		case "response_on_malicious", "response_on_suspicious":
			name := d.Val()
			var action string
			if !d.AllArgs(&action) {
				return d.ArgErr()
			}
			if _, ok := parseAction(action); !ok {
				return d.Errf("%s: unknown action '%s' (want block, sanitize, log or off)", name, action)
			}
			if name == "response_on_malicious" {
				f.ResponseOnMalicious = action
			} else {
				f.ResponseOnSuspicious = action
			}
		case "websocket":
			if !d.AllArgs(&f.WebSocket) {
				return d.ArgErr()
			}
			switch f.WebSocket {
			case WebSocketRefuse, WebSocketPass, WebSocketScan:
			default:
				return d.Errf("websocket: unknown value '%s' (want refuse, pass or scan)", f.WebSocket)
			}
		case "max_upload":
			var s string
			if !d.AllArgs(&s) {
				return d.ArgErr()
			}
			size, err := humanize.ParseBytes(s)
			if err != nil || size == 0 || size > 1<<62 {
				return d.Errf("max_upload: want a size such as 512MiB, got '%s'", s)
			}
			f.MaxUpload = int64(size)
		case "mcp":
			if d.NextArg() {
				return d.ArgErr()
			}
			if f.MCP != nil {
				return d.Err("mcp: given twice")
			}
			f.MCP = new(MCPOptions)
			for nesting := d.Nesting(); d.NextBlock(nesting); {
				switch d.Val() {
				case "pin_tools":
					if d.NextArg() {
						return d.ArgErr()
					}
					f.MCP.PinTools = true
				default:
					return d.Errf("unrecognized mcp option '%s' (want pin_tools)", d.Val())
				}
			}
		default:
			return d.Errf("unrecognized prompt_firewall subdirective '%s'%s", d.Val(), nearest.Hint(d.Val(), subdirectives))
		}
	}
	return nil
}

// subdirectives are the options UnmarshalCaddyfile takes, which an unknown
// one is compared with (a test holds the two together).
var subdirectives = []string{"rulebook", "on_malicious", "on_suspicious", "roles", "max_body", "safe_cache",
	"unscannable_files", "token_ids", "rule", "category", "websocket", "max_upload",
	"response_on_malicious", "response_on_suspicious", "mcp"}

// Interface guard
var _ caddyfile.Unmarshaler = (*Firewall)(nil)
