#!/usr/bin/env bash
# bench/corpora.sh — unpacks the published corpora committed in
# bench/corpora/*.jsonl.gz beside themselves (once; not committed), checks
# them against the sha256 sums of bench/corpora/SOURCES.md, and prints the
# folder. The benchmarks call it when PROMPTWALL_CORPORA is not set.
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/corpora" && pwd)
for gz in "$dir"/*.jsonl.gz; do
	out=${gz%.gz}
	name=$(basename "$out")
	want=$(grep -F "| $name |" "$dir/SOURCES.md" | grep -oE '[0-9a-f]{64}' | head -1)
	if [ -f "$out" ] && [ "$(sha256sum <"$out" | cut -d' ' -f1)" = "$want" ]; then
		continue
	fi
	gzip -dc "$gz" >"$out.tmp"
	got=$(sha256sum <"$out.tmp" | cut -d' ' -f1)
	if [ "$got" != "$want" ]; then
		rm -f "$out.tmp"
		echo "corpora: $name has sha256 $got, SOURCES.md says ${want:-nothing}" >&2
		exit 1
	fi
	mv "$out.tmp" "$out"
done
echo "$dir"
