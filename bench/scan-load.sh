#!/usr/bin/env bash
# bench/scan-load.sh OLD_CADDY
#
# Throughput of prompt_scan's paid scans and free pre-checks, an older
# build (OLD_CADDY, e.g. one built from an earlier commit) against this
# checkout's, measured in one run. Builds ./cmd/caddy and bench/scanload,
# starts the Go x402 facilitator (scanload facilitator: settles every
# payment that passes the local checks, no chain) and two caddies, old and
# new, each with one loopback site:
#   prompt_scan { pay_to, facilitator, store sqlite <own temp dir> }
# and, in a build that has it (probed with caddy adapt),
# precheck_address_daily_limit unlimited: every request comes from one
# address.
# then scanload load sends each, in interleaved runs (the order alternating),
# PAID paid scans (each by a fresh wallet with its own signed payment; the
# 402 offer fetched once) and PRECHECKS pre-checks (each from a made-up
# wallet of its own, so the per-wallet limits never refuse one), from CONC
# concurrent clients. Prints per kind and binary the best run's rate, p50,
# p99 and caddy's CPU per request, and the new/old ratio of the best rates
# (with the run-by-run range). Every answer must be a 200 with a verdict, a
# paid one with the PAYMENT-RESPONSE of a settlement, and the facilitator
# must have settled exactly one payment per paid scan answered; otherwise
# the script exits 1.
#
# Environment: RUNS (3), CONC (8), PAID (1000), PRECHECKS (3000), TEXTS (100
# per corpus file), PROMPTWALL_CORPORA (default: bench/corpora, unpacked
# by bench/corpora.sh: injection_jailbreak.jsonl and benign_prompts.jsonl),
# STORE_DIR (where the two SQLite stores go, default a temp dir under
# TMPDIR: the file system decides what a durable commit costs), PORT_BASE
# (19300: uses PORT_BASE..PORT_BASE+4), CADDY=path to time an already built
# binary as "new". Each caddy's admin listens on loopback
# (PORT_BASE+3 old, PORT_BASE+4 new), so /debug/pprof/ can profile it
# during a run. Needs bash and go. Everything stops when the script ends.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OLD_CADDY" >&2; exit 2; }
old=$1
[ -x "$old" ] || { echo "not an executable: $old" >&2; exit 2; }
# shellcheck source=bench/scanlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/scanlib.sh"
base=${PORT_BASE:-19300}
old_port=$((base + 1)) new_port=$((base + 2))

build_caddy
new=$caddy
need_prompt_scan "$old"
need_prompt_scan "$new"
start_facilitator "$base"

# options BINARY prints the options this load needs that BINARY has: all
# requests come from one address, so a per-address pre-check limit (builds
# that have one) must be lifted. An option BINARY does not know fails its
# adapter, and is left out.
options() {
	local opt='precheck_address_daily_limit unlimited'
	site 1 "store sqlite \"$stores/probe.db\"" "$opt" >"$tmp/Caddyfile.probe"
	if "$1" adapt --config "$tmp/Caddyfile.probe" --adapter caddyfile >/dev/null 2>&1; then
		echo "$opt"
	fi
}

# start NAME BINARY PORT ADMIN_PORT runs BINARY with one prompt_scan site
# and its own store, and leaves its pid in started.
start() {
	local name=$1 bin=$2 opts=() line
	mkdir -p "$stores/$name"
	while IFS= read -r line; do opts+=("$line"); done < <(options "$bin")
	echo "$name: prompt_scan with pay_to, facilitator, store sqlite${opts[*]:+, ${opts[*]}}"
	start_caddy "$name" "$bin" "$3" "$4" "store sqlite \"$stores/$name/scan.db\"" ${opts[@]+"${opts[@]}"}
}

start old "$old" "$old_port" $((base + 3))
old_pid=$started
start new "$new" "$new_port" $((base + 4))
new_pid=$started
wait_port "$old_port" || { cat "$tmp/old.log" >&2; exit 1; }
wait_port "$new_port" || { cat "$tmp/new.log" >&2; exit 1; }

echo "old: $old ($("$old" version | head -c 60))"
echo "new: $new ($("$new" version | head -c 60))"
machine
status=0
"$tmp/scanload" load -facilitator "http://127.0.0.1:$fac_port" -corpora "$corpora" \
	-c "${CONC:-8}" -runs "${RUNS:-3}" -paid "${PAID:-1000}" -prechecks "${PRECHECKS:-3000}" -texts "${TEXTS:-100}" \
	-target "old=http://127.0.0.1:$old_port" -target-pid "old=$old_pid" \
	-target "new=http://127.0.0.1:$new_port" -target-pid "new=$new_pid" || status=$?
[ "$status" -eq 0 ] || show_logs old new
exit "$status"
