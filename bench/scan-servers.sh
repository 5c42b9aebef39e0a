#!/usr/bin/env bash
# bench/scan-servers.sh
#
# prompt_scan on SQLite and on one PostgreSQL shared by 1, 2 and 4
# servers, side by side in one run: paid scans per second and pre-checks
# per second, per CPU second, latency, and what the store costs a request.
# Builds ./cmd/caddy and bench/scanload, starts the Go x402 facilitator
# (scanload facilitator), a private PostgreSQL (Debian's initdb and pg_ctl,
# in a temp dir on a free loopback port, fsync on, as the postgres user
# when run as root), one caddy on SQLite and four on PostgreSQL, each with
# one loopback site:
#   prompt_scan { pay_to, facilitator, store sqlite <file> | store postgres {env.DATABASE_URL},
#                 precheck_address_daily_limit unlimited }
# (every request comes from one address). The configurations are sqlite
# (its one server) and postgres with the first 1, 2 and 4 of the four
# servers on one database; scanload servers spreads CONC clients round
# robin over a configuration's servers and runs, in interleaved rounds
# (the order alternating), PAID paid scans and PRECHECKS pre-checks
# against each. The servers of a configuration not under load are idle
# (heartbeats only). See bench/README.md for the columns.
#
# Environment: RUNS (3), CONC (64), PAID (1000), PRECHECKS (3000), TEXTS
# (100 per corpus file), PAID_RATE and PRECHECK_RATE (requests a second a
# round sends, whatever the latency; default 0: as fast as the servers
# answer, each client sending its next request when its last is
# answered), SERVERS ("1 2 4": the PostgreSQL configurations),
# POOL (the pgx pool size of each server, pool_max_conns in the DSN;
# default pgx's own), PORT_BASE (19400: uses PORT_BASE..PORT_BASE+30),
# and those of bench/scanlib.sh (PROMPTWALL_CORPORA, STORE_DIR, CADDY).
# Admin APIs listen on loopback from PORT_BASE+11 (sqlite) and
# PORT_BASE+12.. (postgres a, b, c, d), so /debug/pprof/ can profile a
# server during a run. Needs bash, go and PostgreSQL's server packages.
# Everything stops when the script ends.
set -euo pipefail

# shellcheck source=bench/scanlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/scanlib.sh"
base=${PORT_BASE:-19400}
read -r -a configs <<<"${SERVERS:-1 2 4}"
npg=0
for n in "${configs[@]}"; do
	[[ $n =~ ^[1-9][0-9]?$ ]] || { echo "SERVERS: not a server count: $n" >&2; exit 2; }
	npg=$((n > npg ? n : npg))
done
[ "$npg" -le 9 ] || { echo "SERVERS: at most 9 servers" >&2; exit 2; }

# start_postgres PORT starts a private PostgreSQL on 127.0.0.1:PORT with
# its data under stores, as store/pgtest does but with fsync on (a commit
# costs here what it costs SQLite with synchronous=FULL), creates the
# database scan, and sets pg_pid to the postmaster's pid.
start_postgres() {
	local port=$1 bin as=()
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -x "$bin/initdb" ] || { echo "no PostgreSQL server programs under /usr/lib/postgresql (install Debian's postgresql package)" >&2; exit 2; }
	pg_dir=$stores/pg
	mkdir -p "$pg_dir"
	if [ "$(id -u)" -eq 0 ]; then # PostgreSQL refuses to run as root
		chmod 711 "$stores"
		chown postgres: "$pg_dir"
		as=(runuser -u postgres --)
	fi
	"${as[@]}" "$bin/initdb" -D "$pg_dir/data" -U postgres -A trust -E UTF8 --no-sync >"$tmp/initdb.log" 2>&1 ||
		{ cat "$tmp/initdb.log" >&2; exit 1; }
	"${as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $pg_dir -c max_connections=500" start >/dev/null ||
		{ cat "$pg_dir/log" >&2; exit 1; }
	cleanups+=("$(printf '%q ' "${as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop) >/dev/null")
	pg_pid=$(head -n 1 "$pg_dir/data/postmaster.pid")
	"$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres scan
	pg_version=$("$bin/postgres" --version)
}

build_caddy
need_prompt_scan "$caddy"
start_facilitator "$base"
pg_port=$((base + 30))
start_postgres "$pg_port"
dsn="postgres://postgres@127.0.0.1:$pg_port/scan?sslmode=disable${POOL:+&pool_max_conns=$POOL}"

lift='precheck_address_daily_limit unlimited'
args=()
# server NAME PORT ADMIN STORE_LINE starts one caddy and names it to scanload.
server() {
	DATABASE_URL=$dsn start_caddy "$1" "$caddy" "$2" "$3" "$4" "$lift"
	args+=(-server "$1=http://127.0.0.1:$2" -admin "$1=http://127.0.0.1:$3" -pid "$1=$started")
	names+=("$1")
}
names=()
server sqlite $((base + 1)) $((base + 11)) "store sqlite \"$stores/scan.db\""
# Start the PostgreSQL servers one by one: the first creates the schema.
for i in $(seq "$npg"); do
	name=pg$i
	server "$name" $((base + 1 + i)) $((base + 11 + i)) 'store postgres {env.DATABASE_URL}'
	wait_port $((base + 1 + i)) || { cat "$tmp/$name.log" >&2; exit 1; }
done
wait_port $((base + 1)) || { cat "$tmp/sqlite.log" >&2; exit 1; }

args+=(-config "sqlite=sqlite")
for n in "${configs[@]}"; do
	list=pg1
	for i in $(seq 2 "$n"); do list+=",pg$i"; done
	args+=(-config "postgres=$list")
done
args+=(-shared-pid "postgres=$pg_pid")

echo "caddy: $caddy ($("$caddy" version | head -c 60)); $pg_version; DSN pool: ${POOL:-pgx default}"
machine
status=0
"$tmp/scanload" servers -facilitator "http://127.0.0.1:$fac_port" -corpora "$corpora" \
	-c "${CONC:-64}" -runs "${RUNS:-3}" -paid "${PAID:-1000}" -prechecks "${PRECHECKS:-3000}" -texts "${TEXTS:-100}" \
	-paid-rate "${PAID_RATE:-0}" -precheck-rate "${PRECHECK_RATE:-0}" \
	"${args[@]}" || status=$?
[ "$status" -eq 0 ] || show_logs "${names[@]}"
exit "$status"
