#!/usr/bin/env bash
# bench/compare.sh [CORPORA_DIR]
#
# Times `caddy prompt-scan --jsonl` (the Go engine) against the straightforward
# V8 implementation `node engine/jsref/scan-jsonl.js` over every *.jsonl corpus
# in CORPORA_DIR (default: ../shared/corpora beside the repository). Runs are
# interleaved, best of RUNS (default 3) for each; both outputs must be
# identical byte for byte. MB are 10^6 bytes of the corpus file; the ratio is
# Go throughput / V8 throughput. Needs bash, coreutils, go and node.
# CADDY=path uses an already built binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpora=${1:-$root/../shared/corpora}
runs=${RUNS:-3}
[ -d "$corpora" ] || { echo "no corpora directory: $corpora" >&2; exit 2; }
command -v node >/dev/null || { echo "node is not on PATH" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
caddy=${CADDY:-}
if [ -z "$caddy" ]; then
	echo "building ./cmd/caddy ..." >&2
	(cd "$root" && go build -o "$tmp/caddy" ./cmd/caddy)
	caddy=$tmp/caddy
fi
js="$root/engine/jsref/scan-jsonl.js"

# now_ns prints a monotonic-enough wall clock in nanoseconds.
now_ns() { date +%s%N; }

# fixed N SCALE DECIMALS prints N/SCALE with DECIMALS digits (integers only).
fixed() {
	local n=$1 scale=$2 d=$3 p=1 i
	for ((i = 0; i < d; i++)); do p=$((p * 10)); done
	local v=$(((n * p + scale / 2) / scale))
	if ((d == 0)); then printf '%d' "$v"; else printf '%d.%0*d' $((v / p)) "$d" $((v % p)); fi
}

# timed OUT CMD... runs CMD with the corpus on stdin and prints its nanoseconds.
timed() {
	local out=$1 t0 t1
	shift
	t0=$(now_ns)
	"$@" <"$corpus" >"$out"
	t1=$(now_ns)
	echo $((t1 - t0))
}

status=0
printf '%-28s %8s %8s %9s %9s %9s %9s %7s\n' corpus records MB go_s v8_s go_MB/s v8_MB/s ratio
shopt -s nullglob
files=("$corpora"/*.jsonl)
[ ${#files[@]} -gt 0 ] || { echo "no *.jsonl in $corpora" >&2; exit 2; }
for corpus in "${files[@]}"; do
	name=$(basename "$corpus")
	records=$(grep -c . "$corpus" || true)
	bytes=$(wc -c <"$corpus")
	cat "$corpus" >/dev/null # warm the page cache
	best_go=0 best_js=0
	for ((r = 0; r < runs; r++)); do
		t=$(timed "$tmp/go.out" "$caddy" prompt-scan --jsonl)
		((best_go == 0 || t < best_go)) && best_go=$t
		t=$(timed "$tmp/js.out" node "$js")
		((best_js == 0 || t < best_js)) && best_js=$t
	done
	if ! cmp -s "$tmp/go.out" "$tmp/js.out"; then
		status=1
		echo "$name: the outputs differ (first differing line of each below)" >&2
		line=$( (cmp "$tmp/go.out" "$tmp/js.out" || true) | sed -n 's/.* line \([0-9]*\).*/\1/p')
		line=${line:-1}
		echo "go: $(sed -n "${line}p" "$tmp/go.out" | cut -c1-2000)" >&2
		echo "v8: $(sed -n "${line}p" "$tmp/js.out" | cut -c1-2000)" >&2
	fi
	# MB/s = bytes / 10^6 / (ns / 10^9) = bytes * 1000 / ns
	printf '%-28s %8d %8s %9s %9s %9s %9s %6sx\n' "$name" "$records" \
		"$(fixed "$bytes" 1000000 2)" \
		"$(fixed "$best_go" 1000000000 3)" "$(fixed "$best_js" 1000000000 3)" \
		"$(fixed $((bytes * 1000)) "$best_go" 1)" "$(fixed $((bytes * 1000)) "$best_js" 1)" \
		"$(fixed "$best_js" "$best_go" 2)"
done
exit $status
