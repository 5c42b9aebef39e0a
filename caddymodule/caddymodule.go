// Package caddymodule plugs promptwall into Caddy: importing it registers
// the http.handlers.prompt_firewall and http.handlers.prompt_scan modules
// with their Caddyfile directives, and the `caddy prompt-scan` command.
package caddymodule
