#!/usr/bin/env bash
# xcaddy.sh [OUTPUT] — builds Caddy with promptwall through xcaddy, as a
# custom build with other plugins would (add more --with lines below).
#
# xcaddy adds promptwall as a module and asks the Go module proxy for its
# versions, which the proxy cannot know for an unpublished checkout. Naming a
# version (v0.0.0) with a replacement to this directory makes the go command
# take the local copy without asking. xcaddy itself comes from the module
# proxy, pinned, into .tools/ (not committed).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(realpath -m "${1:-$root/caddy}")
caddy_version=v2.11.9
xcaddy_version=v0.4.5

export GOBIN="$root/.tools"
if [ ! -x "$GOBIN/xcaddy" ] || ! "$GOBIN/xcaddy" version 2>/dev/null | grep -q "$xcaddy_version"; then
	go install "github.com/caddyserver/xcaddy/cmd/xcaddy@$xcaddy_version"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$GOBIN/xcaddy" build "$caddy_version" \
	--output "$out" \
	--with "github.com/promptwall/promptwall@v0.0.0=$root"
"$out" list-modules | grep -q '^http.handlers.prompt_firewall$'
echo "built $out"
