#!/usr/bin/env bash
# bench/verdicts.sh OLD_CADDY [CORPUS]
#
# What a change to what prompt_firewall scans does to benign traffic: sends
# every body of a corpus of chat bodies (default: the published
# chat_bodies_benign.jsonl in PROMPTWALL_CORPORA, else in bench/corpora) through the firewall of OLD_CADDY (an older build) and
# of this checkout's ./cmd/caddy, both with default options but every
# action "log", and counts the verdicts each gave, body by body. Prints the
# counts of each pair of verdicts, then the line numbers of the bodies whose
# verdicts differ. PATH_PREFIX (/v1/chat/completions) is the request path.
# Everything listens on 127.0.0.1 and stops when the script ends.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/proclib.sh"
old=${1:?usage: bench/verdicts.sh OLD_CADDY [CORPUS]}
corpus=${2:-${PROMPTWALL_CORPORA:-$("$root/bench/corpora.sh")}/chat_bodies_benign.jsonl}
path=${PATH_PREFIX:-/v1/chat/completions}
base=${PORT_BASE:-19200}
up_port=$base old_port=$((base + 1)) new_port=$((base + 2))


(cd "$root" && go build -o "$tmp/caddy" ./cmd/caddy && go build -o "$tmp/fwload" ./bench/fwload)

# start NAME BINARY PORT runs one log-mode firewall site.
start() {
	cat >"$tmp/Caddyfile.$1" <<CADDY
{
	admin off
	persist_config off
}

http://127.0.0.1:$3 {
	prompt_firewall {
		on_malicious log
		on_suspicious log
		max_body 64MiB
	}
	reverse_proxy 127.0.0.1:$up_port
}
CADDY
	XDG_DATA_HOME=$tmp/data.$1 XDG_CONFIG_HOME=$tmp/config.$1 \
		"$2" run --config "$tmp/Caddyfile.$1" --adapter caddyfile >"$tmp/$1.log" 2>&1 &
	pids+=($!)
}
start old "$old" "$old_port"
start new "$tmp/caddy" "$new_port"
for port in "$old_port" "$new_port"; do
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
done
"$tmp/fwload" verdicts -upstream "127.0.0.1:$up_port" -corpus "$corpus" -path "$path" \
	-target "old=http://127.0.0.1:$old_port" -target "new=http://127.0.0.1:$new_port"
