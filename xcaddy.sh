#!/usr/bin/env bash
# xcaddy.sh [OUTPUT] — builds Caddy with promptwall through xcaddy, as a
# custom build with other plugins would (add more --with lines below). It
# runs the README's command:
#
#   xcaddy build v2.11.9 --with github.com/promptwall/promptwall@v0.0.0=<checkout>
#
# The version matters: for a module named without one, the go command asks
# the module proxy for its versions, and a proxy that refuses an unpublished
# module (403) ends the build. With one, the replacement to this checkout
# answers, and the proxy is not asked about promptwall. xcaddy itself comes
# from the module proxy, pinned, into .tools/ (not committed).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$root/caddy}
case $out in /*) ;; *) out=$PWD/$out ;; esac
caddy_version=v2.11.9
xcaddy_version=v0.4.5

export GOBIN="$root/.tools"
if [ ! -x "$GOBIN/xcaddy" ] || [ "$("$GOBIN/xcaddy" version 2>/dev/null | cut -d' ' -f1)" != "$xcaddy_version" ]; then
	go install "github.com/caddyserver/xcaddy/cmd/xcaddy@$xcaddy_version"
fi

# From outside the checkout, as any other build directory would be.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$GOBIN/xcaddy" build "$caddy_version" \
	--output "$out" \
	--with "github.com/promptwall/promptwall@v0.0.0=$root"
# The whole list first: a reader that stops early would end caddy by SIGPIPE.
modules=$("$out" list-modules)
for m in http.handlers.prompt_firewall http.handlers.prompt_scan; do
	if ! grep -qx "$m" <<<"$modules"; then
		echo "xcaddy.sh: $out has no $m" >&2
		exit 1
	fi
done
echo "built $out"
