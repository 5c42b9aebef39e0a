#!/usr/bin/env bash
# bench/compare.sh [CORPORA_DIR]
#
# Times `prompt-scan --jsonl` (the Go engine, cmd/prompt-scan: no Caddy
# linked, so the start-up is the engine's) against the straightforward
# V8 implementation `node engine/jsref/scan-jsonl.js` over every *.jsonl corpus
# in CORPORA_DIR (default: PROMPTWALL_CORPORA, else the published corpora in
# bench/corpora, unpacked by bench/corpora.sh). Runs are
# interleaved, best of RUNS (default 3) for each; both outputs must be
# identical byte for byte. MB are 10^6 bytes of the corpus file; the ratio is
# Go throughput / V8 throughput (wall clock, process start included); the CPU
# columns (user + system, best run) help on a busy machine. Needs bash,
# coreutils, go and node.
# PROMPT_SCAN=path uses an already built cmd/prompt-scan instead of building
# one; CADDY=path times `path prompt-scan --jsonl` (a built cmd/caddy, Caddy's
# start-up included) instead.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpora=${1:-${PROMPTWALL_CORPORA:-$("$root/bench/corpora.sh")}}
runs=${RUNS:-3}
[ -d "$corpora" ] || { echo "no corpora directory: $corpora" >&2; exit 2; }
command -v node >/dev/null || { echo "node is not on PATH" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${CADDY:-}" ]; then
	gocmd=("$CADDY" prompt-scan --jsonl)
elif [ -n "${PROMPT_SCAN:-}" ]; then
	gocmd=("$PROMPT_SCAN" --jsonl)
else
	echo "building ./cmd/prompt-scan ..." >&2
	(cd "$root" && go build -o "$tmp/prompt-scan" ./cmd/prompt-scan)
	gocmd=("$tmp/prompt-scan" --jsonl)
fi
js="$root/engine/jsref/scan-jsonl.js"

# fixed N SCALE DECIMALS prints N/SCALE with DECIMALS digits (integers only).
fixed() {
	local n=$1 scale=$2 d=$3 p=1 i
	for ((i = 0; i < d; i++)); do p=$((p * 10)); done
	local v=$(((n * p + scale / 2) / scale))
	if ((d == 0)); then printf '%d' "$v"; else printf '%d.%0*d' $((v / p)) "$d" $((v % p)); fi
}

# timed OUT CMD... runs CMD with the corpus on stdin and prints its wall clock
# and CPU (user + system) milliseconds, from bash's own `time`.
timed() {
	local out=$1 TIMEFORMAT='%3R %3U %3S' t real user sys
	shift
	# prompt-scan's status is the worst verdict (0 to 2); 3 and up are failures.
	local rc=0
	t=$({ time "$@" <"$corpus" >"$out" 2>"$tmp/stderr"; } 2>&1) || rc=$?
	if [ "$rc" -gt 2 ]; then
		echo "$* failed on $corpus:" >&2
		cat "$tmp/stderr" >&2
		exit 1
	fi
	read -r real user sys <<<"$t"
	echo $((10#${real/./})) $((10#${user/./} + 10#${sys/./}))
}

status=0

# Start-up alone (empty input), for reading the small corpora's numbers.
corpus=/dev/null
go_ms=0 js_ms=0
for ((r = 0; r < runs; r++)); do
	res=$(timed "$tmp/go.out" "${gocmd[@]}")
	read -r wall cpu <<<"$res"
	((go_ms == 0 || wall < go_ms)) && go_ms=$wall
	res=$(timed "$tmp/js.out" node "$js")
	read -r wall cpu <<<"$res"
	((js_ms == 0 || wall < js_ms)) && js_ms=$wall
done
echo "go: ${gocmd[*]##*/}"
echo "start-up on empty input (best of $runs): go $(fixed "$go_ms" 1000 3) s, v8 $(fixed "$js_ms" 1000 3) s"
printf '%-26s %7s %6s %7s %7s %8s %8s %7s %8s %8s %7s\n' corpus records MB go_s v8_s go_MB/s v8_MB/s ratio go_cpu_s v8_cpu_s cpu_rat
shopt -s nullglob
files=("$corpora"/*.jsonl)
[ ${#files[@]} -gt 0 ] || { echo "no *.jsonl in $corpora" >&2; exit 2; }
for corpus in "${files[@]}"; do
	name=$(basename "$corpus")
	records=$(grep -c . "$corpus" || true)
	bytes=$(wc -c <"$corpus")
	cat "$corpus" >/dev/null # warm the page cache
	go_ms=0 js_ms=0 go_cpu=0 js_cpu=0
	for ((r = 0; r < runs; r++)); do
		res=$(timed "$tmp/go.out" "${gocmd[@]}") # a failure ends the script
		read -r wall cpu <<<"$res"
		((go_ms == 0 || wall < go_ms)) && go_ms=$wall
		((go_cpu == 0 || cpu < go_cpu)) && go_cpu=$cpu
		res=$(timed "$tmp/js.out" node "$js")
		read -r wall cpu <<<"$res"
		((js_ms == 0 || wall < js_ms)) && js_ms=$wall
		((js_cpu == 0 || cpu < js_cpu)) && js_cpu=$cpu
	done
	go_ms=$((go_ms > 0 ? go_ms : 1)) js_ms=$((js_ms > 0 ? js_ms : 1)) go_cpu=$((go_cpu > 0 ? go_cpu : 1))
	if ! cmp -s "$tmp/go.out" "$tmp/js.out"; then
		status=1
		echo "$name: the outputs differ (first differing line of each below)" >&2
		line=$( (cmp "$tmp/go.out" "$tmp/js.out" || true) | sed -n 's/.* line \([0-9]*\).*/\1/p')
		line=${line:-1}
		echo "go: $(sed -n "${line}p" "$tmp/go.out" | cut -c1-2000)" >&2
		echo "v8: $(sed -n "${line}p" "$tmp/js.out" | cut -c1-2000)" >&2
	fi
	# MB/s = bytes / 10^6 / (ms / 10^3) = bytes / ms / 1000
	printf '%-26s %7d %6s %7s %7s %8s %8s %6sx %8s %8s %6sx\n' "$name" "$records" \
		"$(fixed "$bytes" 1000000 2)" \
		"$(fixed "$go_ms" 1000 3)" "$(fixed "$js_ms" 1000 3)" \
		"$(fixed "$bytes" $((go_ms * 1000)) 1)" "$(fixed "$bytes" $((js_ms * 1000)) 1)" \
		"$(fixed "$js_ms" "$go_ms" 2)" \
		"$(fixed "$go_cpu" 1000 3)" "$(fixed "$js_cpu" 1000 3)" "$(fixed "$js_cpu" "$go_cpu" 2)"
done
exit $status
