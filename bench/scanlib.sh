# bench/scanlib.sh: what bench/scan-load.sh and bench/scan-servers.sh share,
# sourced by them (not run), over bench/proclib.sh (root, tmp, pids,
# cleanups, build_caddy). It sets corpora and stores, which go when the
# script exits.
#
# Environment: PROMPTWALL_CORPORA (default: the published corpora in
# bench/corpora, unpacked by bench/corpora.sh), STORE_DIR (where the stores go, default a temp dir under
# TMPDIR: the file system decides what a durable commit costs), CADDY
# (an already built binary to use instead of building ./cmd/caddy).

. "$(dirname "${BASH_SOURCE[0]}")/proclib.sh"
corpora=${PROMPTWALL_CORPORA:-$("$root/bench/corpora.sh")}
[ -d "$corpora" ] || { echo "no corpora directory: $corpora (set PROMPTWALL_CORPORA)" >&2; exit 2; }

stores=$(mktemp -d "${STORE_DIR:-${TMPDIR:-/tmp}}/scanload.XXXXXX")
dirs+=("$stores")

# need_prompt_scan BINARY fails unless BINARY has the prompt_scan module.
need_prompt_scan() {
	# (Not a pipe into grep -q: with pipefail, grep's early exit would fail it.)
	"$1" list-modules >"$tmp/modules"
	grep -qx 'http.handlers.prompt_scan' "$tmp/modules" ||
		{ echo "$1 has no http.handlers.prompt_scan" >&2; exit 2; }
}

# start_facilitator PORT builds bench/scanload into tmp, starts its
# facilitator on PORT and sets merchant, the pay_to address.
start_facilitator() {
	(cd "$root" && go build -o "$tmp/scanload" ./bench/scanload)
	"$tmp/scanload" facilitator -addr "127.0.0.1:$1" 2>"$tmp/facilitator.log" &
	pids+=($!)
	fac_port=$1
	merchant=$("$tmp/scanload" address "scanload merchant")
	# The caddies ask the facilitator what it supports when they start.
	wait_port "$fac_port"
}

# site PORT STORE_LINE [LINE...] is the Caddyfile site of prompt_scan on
# PORT with its store line (store sqlite "<file>", store postgres <dsn>)
# and the extra option LINEs.
site() {
	local port=$1 storeline=$2 line
	shift 2
	printf 'http://127.0.0.1:%s {\n\tprompt_scan {\n' "$port"
	printf '\t\tpay_to %s\n\t\tfacilitator http://127.0.0.1:%s\n\t\t%s\n' "$merchant" "$fac_port" "$storeline"
	for line in "$@"; do printf '\t\t%s\n' "$line"; done
	printf '\t}\n}\n'
}

# start_caddy NAME BINARY PORT ADMIN_PORT STORE_LINE [LINE...] runs BINARY
# with one prompt_scan site (see site) and its admin API on loopback, and
# leaves its pid in started; its log is tmp/NAME.log.
start_caddy() {
	local name=$1 bin=$2 port=$3 admin=$4
	shift 4
	{
		printf '{\n\tadmin 127.0.0.1:%s\n\tpersist_config off\n}\n\n' "$admin"
		site "$port" "$@"
	} >"$tmp/Caddyfile.$name"
	XDG_DATA_HOME=$tmp/data.$name XDG_CONFIG_HOME=$tmp/config.$name \
		"$bin" run --config "$tmp/Caddyfile.$name" --adapter caddyfile >"$tmp/$name.log" 2>&1 &
	started=$!
	pids+=($started)
}

# wait_port PORT waits for something to listen on 127.0.0.1:PORT.
wait_port() {
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$1" >&2
	return 1
}

# show_logs NAME... prints the end of each named caddy's log.
show_logs() {
	local name
	for name in "$@"; do
		echo "--- last lines of the $name caddy's log:" >&2
		tail -n 5 "$tmp/$name.log" >&2
	done
}

# machine prints what the figures depend on besides the code.
machine() {
	echo "go: $(go env GOVERSION); cpus: $(getconf _NPROCESSORS_ONLN); stores on: $(df -PT "$stores" | awk 'NR == 2 {print $2}'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}
