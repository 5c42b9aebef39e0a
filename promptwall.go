// Package promptwall is the input firewall for LLM APIs, as Caddy modules.
//
// Importing this package (as `xcaddy build --with
// github.com/promptwall/promptwall@v0.0.0=<checkout>` and xcaddy's
// development mode in the checkout's root do) registers
// http.handlers.prompt_firewall, http.handlers.prompt_scan, the
// promptwall.stores modules and the `caddy prompt-scan` command; see package
// caddymodule. The engine, rulebook, request parsing and payment packages
// know nothing of Caddy and can be used on their own.
package promptwall

import (
	_ "github.com/promptwall/promptwall/caddymodule"
)
