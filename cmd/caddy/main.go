// Command caddy is Caddy with its standard modules plus promptwall's
// prompt_firewall and prompt_scan handlers and the prompt-scan subcommand.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/promptwall/promptwall/caddymodule"
)

func main() {
	caddycmd.Main()
}
