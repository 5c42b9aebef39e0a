#!/usr/bin/env bash
# bench/firewall-load.sh
#
# What prompt_firewall costs in front of reverse_proxy. Builds ./cmd/caddy
# and bench/fwload, starts a fast fake LLM upstream (fwload upstream) and one
# caddy with two sites on loopback:
#   plain     reverse_proxy to the upstream
#   firewall  prompt_firewall (defaults) + the same reverse_proxy
# then loads both in alternating rounds with the same OpenAI chat bodies
# (fwload load): a 4 KiB multi-turn chat and a 256 KiB long-context message.
# Prints req/s, p50, p99, max and caddy's CPU time per request per site and
# size (median of the rounds), and the firewall/plain throughput ratio, p99
# and CPU differences: each the median of the rounds' own (a firewall round
# against the plain round just before it), with the ratios' range. The CPU
# column is the least sensitive to other load on the machine: it counts
# only caddy's own user+system time.
#
# Environment: CONNS (16), DURATION (3s per round), ROUNDS (7), SIZES
# (4k,256k; 256k-doc: 256 KiB of real messages from the published corpora
# instead of the prose; PROMPTWALL_CORPORA or bench/corpora; the real
# shapes of the same corpora: 4k-chat, agent, agent-4k, 256k-chat, and resent, each
# connection a client resending its own conversation with one more turn
# each request, and slide, the same kept to 200-201 KiB by dropping its
# oldest turn each request: see bench/README.md and fwload's documentation), HEADERS
# (sdk: the headers the openai npm client sends; minimal: Content-Type
# only), PORT_BASE (19100: uses PORT_BASE..PORT_BASE+3),
# CADDY=path to time an already built binary. Needs bash and go.
# REPEAT=1 sends the same body every time; by default each request's last
# user message gets a new stamp, so that it is a new turn of the chat: its
# history is what the firewall saw before, its question is new, and the
# 256 KiB message is new every time (fwload -repeat).
# COMPARE=path to another build (an older commit's) adds a second caddy with
# the firewall site alone, loaded in the same alternating rounds as
# "compare": two builds measured this way see the same moments of the
# machine, so their ratio is far steadier than two runs of the script (on a
# shared machine those wander by 5-10%).
# FIREWALL_OPTIONS: Caddyfile lines for the prompt_firewall block of both
# builds (e.g. "safe_cache off" to scan every message of every request).
# Everything listens on 127.0.0.1 and stops when the script ends.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/proclib.sh"
conns=${CONNS:-16}
duration=${DURATION:-3s}
rounds=${ROUNDS:-7}
sizes=${SIZES:-4k,256k}
headers=${HEADERS:-sdk}
base=${PORT_BASE:-19100}
up_port=$base plain_port=$((base + 1)) fw_port=$((base + 2)) cmp_port=$((base + 3))
compare=${COMPARE:-}
fw_options=${FIREWALL_OPTIONS:-}


build_caddy
# has_firewall BINARY exits unless the build has the firewall module.
has_firewall() {
	# (Not a pipe into grep -q: with pipefail, grep's early exit would fail it.)
	"$1" list-modules >"$tmp/modules"
	grep -qx 'http.handlers.prompt_firewall' "$tmp/modules" ||
		{ echo "$1 has no http.handlers.prompt_firewall" >&2; exit 2; }
}
has_firewall "$caddy"
[ -z "$compare" ] || has_firewall "$compare"
(cd "$root" && go build -o "$tmp/fwload" ./bench/fwload)

"$tmp/fwload" upstream -addr "127.0.0.1:$up_port" 2>"$tmp/upstream.log" &
pids+=($!)

# start NAME BINARY SITE... runs BINARY with one loopback site per SITE,
# "plain:PORT" (reverse_proxy alone) or "firewall:PORT" (prompt_firewall
# first), and leaves its pid in started.
start() {
	local name=$1 bin=$2 site
	shift 2
	printf '{\n\tadmin off\n\tpersist_config off\n}\n' >"$tmp/Caddyfile.$name"
	for site in "$@"; do
		printf '\nhttp://127.0.0.1:%s {\n' "${site#*:}"
		if [ "${site%%:*}" = firewall ]; then
			if [ -n "$fw_options" ]; then
				printf '\tprompt_firewall {\n%s\n\t}\n' "$fw_options"
			else
				printf '\tprompt_firewall\n'
			fi
		fi
		printf '\treverse_proxy 127.0.0.1:%s\n}\n' "$up_port"
	done >>"$tmp/Caddyfile.$name"
	XDG_DATA_HOME=$tmp/data.$name XDG_CONFIG_HOME=$tmp/config.$name \
		"$bin" run --config "$tmp/Caddyfile.$name" --adapter caddyfile >"$tmp/$name.log" 2>&1 &
	started=$!
	pids+=($started)
}

start caddy "$caddy" "plain:$plain_port" "firewall:$fw_port"
caddy_pid=$started
targets=(-target "plain=http://127.0.0.1:$plain_port/v1/chat/completions"
	-target "firewall=http://127.0.0.1:$fw_port/v1/chat/completions")
ports=("$plain_port" "$fw_port")
if [ -n "$compare" ]; then
	start compare "$compare" "firewall:$cmp_port"
	targets+=(-target "compare=http://127.0.0.1:$cmp_port/v1/chat/completions" -target-pid "compare=$started")
	ports+=("$cmp_port")
fi

# Wait for the sites.
for port in "${ports[@]}"; do
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
done

echo "caddy: $("$caddy" version | head -c 60); go: $(go env GOVERSION); cpus: $(getconf _NPROCESSORS_ONLN)"
repeat=()
[ -z "${REPEAT:-}" ] || repeat=(-repeat)
"$tmp/fwload" load -cpu-pid "$caddy_pid" -c "$conns" -d "$duration" -rounds "$rounds" -size "$sizes" -headers "$headers" ${repeat[@]+"${repeat[@]}"} \
	"${targets[@]}"
