#!/usr/bin/env bash
# bench/response-stream.sh
#
# What prompt_firewall's response scanning adds to a streamed answer. Builds
# ./cmd/caddy and bench/streamload, and runs one caddy with four loopback
# sites in front of streamload's fake upstream (it serves the upstream
# itself, so that send and arrival times come from one clock):
#   plain           reverse_proxy alone
#   request         prompt_firewall (defaults: the request scanned, the
#                   response not) + reverse_proxy
#   log             the same with response_on_malicious log and
#                   response_on_suspicious log (scanned, never held)
#   block-sanitize  response_on_malicious block, response_on_suspicious
#                   sanitize (each event held until the text in it is final)
# then streams the benign chat corpus's answers through each in alternating
# rounds (streamload): paced (an event every 10-30 ms: the delay each event
# gets beyond what the hold-back requires, and the time to first byte) and
# as fast as they go (caddy's CPU time per KiB of text and of wire bytes).
#
# Environment: APIS (openai; "openai,anthropic" for both), MODES
# (paced,fast), ROUNDS (3), STREAMS (16 paced streams at a time), DURATION
# (20s a paced round), GAP (10ms-30ms), CONNS (4 fast streams at a time),
# FAST_DURATION (3s), ANSWERS (300), PORT_BASE (19500: uses PORT_BASE..+5;
# caddy's admin API, for /debug/pprof/, on PORT_BASE+5), CADDY=path to time
# an already built binary, PROMPTWALL_CORPORA. Needs bash and go.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/proclib.sh"
base=${PORT_BASE:-19500}
up_port=$base


build_caddy
(cd "$root" && go build -o "$tmp/streamload" ./bench/streamload)

site() { # site PORT FIREWALL_BLOCK
	printf '\nhttp://127.0.0.1:%s {\n%s\treverse_proxy 127.0.0.1:%s\n}\n' "$1" "$2" "$up_port"
}
{
	printf '{\n\tadmin 127.0.0.1:%s\n\tpersist_config off\n}\n' $((base + 5))
	site $((base + 1)) ''
	site $((base + 2)) $'\tprompt_firewall\n'
	site $((base + 3)) $'\tprompt_firewall {\n\t\tresponse_on_malicious log\n\t\tresponse_on_suspicious log\n\t}\n'
	site $((base + 4)) $'\tprompt_firewall {\n\t\tresponse_on_malicious block\n\t\tresponse_on_suspicious sanitize\n\t}\n'
} >"$tmp/Caddyfile"
XDG_DATA_HOME=$tmp/data XDG_CONFIG_HOME=$tmp/config \
	"$caddy" run --config "$tmp/Caddyfile" --adapter caddyfile >"$tmp/caddy.log" 2>&1 &
caddy_pid=$!
pids+=($caddy_pid)

echo "caddy: $("$caddy" version | head -c 60); go: $(go env GOVERSION); cpus: $(getconf _NPROCESSORS_ONLN); load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/streamload" -upstream "127.0.0.1:$up_port" -cpu-pid "$caddy_pid" \
	-target "plain=http://127.0.0.1:$((base + 1))" \
	-target "request=http://127.0.0.1:$((base + 2))" \
	-target "log=http://127.0.0.1:$((base + 3))" \
	-target "block-sanitize=http://127.0.0.1:$((base + 4))" \
	-holding block-sanitize \
	-api "${APIS:-openai}" -mode "${MODES:-paced,fast}" -rounds "${ROUNDS:-3}" \
	-streams "${STREAMS:-16}" -d "${DURATION:-20s}" -gap "${GAP:-10ms-30ms}" \
	-c "${CONNS:-4}" -fast-d "${FAST_DURATION:-3s}" -answers "${ANSWERS:-300}" ||
	{ echo "--- caddy log:"; tail -20 "$tmp/caddy.log"; exit 1; }
