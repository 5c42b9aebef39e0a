# bench/proclib.sh: the process plumbing every load script shares, sourced
# by them (not run). It sets root and tmp, stops every process in pids,
# then runs every command in cleanups and removes tmp and the folders in
# dirs, when the script exits; build_caddy sets caddy.
#
# Environment: CADDY (an already built binary to use instead of building
# ./cmd/caddy).

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanups=()
dirs=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for c in "${cleanups[@]}"; do eval "$c" || true; done
	rm -rf "$tmp" "${dirs[@]}"
}
trap cleanup EXIT

# build_caddy sets caddy to CADDY, or to ./cmd/caddy built into tmp.
build_caddy() {
	caddy=${CADDY:-}
	if [ -z "$caddy" ]; then
		echo "building ./cmd/caddy ..." >&2
		(cd "$root" && go build -o "$tmp/caddy" ./cmd/caddy)
		caddy=$tmp/caddy
	fi
}
