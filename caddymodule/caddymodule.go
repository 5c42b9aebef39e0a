// Package caddymodule plugs promptwall into Caddy: importing it registers
// the http.handlers.prompt_firewall and http.handlers.prompt_scan modules
// with their Caddyfile directives (subpackages firewall and scanservice),
// the promptwall.stores.sqlite and .postgres store backends (stores),
// and the `caddy prompt-scan` command (command.go; the command itself is
// package promptscan).
package caddymodule

import (
	_ "github.com/promptwall/promptwall/caddymodule/firewall"
	_ "github.com/promptwall/promptwall/caddymodule/scanservice"
	_ "github.com/promptwall/promptwall/caddymodule/warmstart"
)
