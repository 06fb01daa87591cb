#!/usr/bin/env bash
# A three-node Meridian cluster on loopback, for development and tests: a redis-server,
# a throwaway PostgreSQL (initdb in a temporary directory) and three `meridian serve`
# nodes on ports BASE, BASE+1 and BASE+2, with authentication off (--auth none).
# It prints the nodes' URLs and a line starting with "cluster ready" once every node's
# /readyz answers 200, and stops everything (removing the temporary directory) on
# SIGINT/SIGTERM or as soon as any of its servers exits.
#
#   Deploy/cluster-local.sh [--base-port PORT] [--redis-port PORT] [--postgres-port PORT]
#                           [--threads N] [--ready-timeout SECONDS] [-- NODE-ARGUMENTS...]
#
# Ports: BASE defaults to 8080 ($CLUSTER_BASE_PORT); Redis and PostgreSQL take free ports
# unless given ($CLUSTER_REDIS_PORT, $CLUSTER_POSTGRES_PORT). Nodes run with --threads 1
# ($CLUSTER_THREADS). Arguments after -- go to every node (e.g. -- --log-level debug).
# The binary is $MERIDIAN_BIN, default .build/release/meridian. PostgreSQL's binaries are
# found on PATH, else in the newest /usr/lib/postgresql/*/bin ($PG_BIN overrides).
set -euo pipefail

usage() {
    sed -n '9,10p' "$0" | sed 's/^# *//' >&2
    exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
base_port=${CLUSTER_BASE_PORT:-8080}
redis_port=${CLUSTER_REDIS_PORT:-}
postgres_port=${CLUSTER_POSTGRES_PORT:-}
threads=${CLUSTER_THREADS:-1}
ready_timeout=60
node_args=()
while [ $# -gt 0 ]; do
    case $1 in
        --base-port) base_port=${2:?}; shift 2 ;;
        --redis-port) redis_port=${2:?}; shift 2 ;;
        --postgres-port) postgres_port=${2:?}; shift 2 ;;
        --threads) threads=${2:?}; shift 2 ;;
        --ready-timeout) ready_timeout=${2:?}; shift 2 ;;
        --) shift; node_args=("$@"); break ;;
        -h|--help) usage ;;
        *) echo "$0: unknown argument $1" >&2; usage ;;
    esac
done
for number in "$base_port" "$threads" "$ready_timeout" ${redis_port:+"$redis_port"} ${postgres_port:+"$postgres_port"}; do
    case $number in
        ''|*[!0-9]*) echo "$0: not a number: $number" >&2; exit 2 ;;
    esac
done

say() { printf '%s\n' "$*"; }
fail() { printf '%s: %s\n' "$0" "$*" >&2; exit 1; }

# What it needs, each named with the Debian package that provides it; nothing is installed here.
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=("redis-server (apt-get install redis-server)")
command -v curl >/dev/null 2>&1 || missing+=("curl (apt-get install curl)")
command -v setsid >/dev/null 2>&1 || missing+=("setsid (apt-get install util-linux)")
if [ -z "$redis_port" ] || [ -z "$postgres_port" ]; then
    command -v python3 >/dev/null 2>&1 || missing+=("python3, to find free ports (apt-get install python3)")
fi
pg_bin=${PG_BIN:-}
if [ -z "$pg_bin" ]; then
    if command -v initdb >/dev/null 2>&1; then
        pg_bin=$(dirname "$(readlink -f "$(command -v initdb)")")
    else
        pg_bin=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
    fi
fi
for tool in initdb postgres pg_isready createdb; do
    if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/$tool" ]; then
        missing+=("PostgreSQL's $tool (apt-get install postgresql)")
        break
    fi
done
binary=${MERIDIAN_BIN:-"$here/../.build/release/meridian"}
case $binary in /*) ;; *) binary="$PWD/$binary" ;; esac
[ -x "$binary" ] || missing+=("meridian at $binary (swift build -c release --product meridian, or set MERIDIAN_BIN)")
as_postgres=()
if [ "$(id -u)" = 0 ]; then
    # PostgreSQL refuses to run as root.
    if ! id postgres >/dev/null 2>&1 || ! command -v runuser >/dev/null 2>&1; then
        missing+=("the postgres user and runuser, to run PostgreSQL as root (apt-get install postgresql util-linux)")
    fi
    as_postgres=(runuser -u postgres --)
fi
if [ ${#missing[@]} -gt 0 ]; then
    printf '%s: missing:\n' "$0" >&2
    printf '  %s\n' "${missing[@]}" >&2
    exit 1
fi

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

redis_port=${redis_port:-$(free_port)}
postgres_port=${postgres_port:-$(free_port)}
node_ports=("$base_port" $((base_port + 1)) $((base_port + 2)))
for port in "$redis_port" "$postgres_port" "${node_ports[@]}"; do
    if in_use "$port"; then fail "port $port is in use"; fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/meridian-cluster.XXXXXX")
logs="$tmp/logs"
pg_root="$tmp/postgres"
mkdir -p "$logs" "$pg_root"
# The servers' children get their own sessions (setsid) so that a Ctrl-C reaches this
# script only, and the nodes stop before the stores they flush to.
pids=()
names=()
postgres_pid=
stopping=

alive() { kill -0 "$1" 2>/dev/null; }

# Waits until none of the given processes is alive, for at most $1 tenths of a second.
wait_gone() {
    local tenths=$1
    shift
    local pid left
    while [ "$tenths" -gt 0 ]; do
        left=0
        for pid in "$@"; do alive "$pid" && left=1; done
        [ "$left" = 0 ] && return 0
        sleep 0.1
        tenths=$((tenths - 1))
    done
    return 1
}

stop_all() {
    local status=${1:-0}
    [ -n "$stopping" ] && return
    stopping=1
    # Keep cleaning up even if whoever reads the output has gone.
    trap '' INT TERM PIPE
    say "stopping the cluster" || true
    local node_pids=() store_pids=() i pid
    for i in "${!pids[@]}"; do
        case ${names[$i]} in node*) node_pids+=("${pids[$i]}") ;; *) store_pids+=("${pids[$i]}") ;; esac
    done
    # The nodes first: they close their clients with 1001 and flush to PostgreSQL.
    for pid in "${node_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait_gone 400 "${node_pids[@]}" || true
    for i in "${!pids[@]}"; do
        alive "${pids[$i]}" || continue
        case ${names[$i]} in
            node*) ;;
            # The postmaster itself (runuser would kill it two seconds after a signal): SIGINT is a fast shutdown.
            postgres) kill -INT "${postgres_pid:-${pids[$i]}}" 2>/dev/null || true ;;
            *) kill -TERM "${pids[$i]}" 2>/dev/null || true ;;
        esac
    done
    wait_gone 200 "${store_pids[@]}" ${postgres_pid:+"$postgres_pid"} || true
    for pid in "${pids[@]}" ${postgres_pid:+"$postgres_pid"}; do
        if alive "$pid"; then
            echo "$0: process $pid did not stop; killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    wait 2>/dev/null || true
    rm -rf "$tmp"
    say "cluster stopped" || true
    exit "$status"
}
trap 'stop_all 130' INT
trap 'stop_all 143' TERM
trap 'stop_all $?' EXIT

# Starts NAME DIRECTORY COMMAND... in the background, in DIRECTORY, with its output in
# $logs/NAME.log. The subshell execs setsid, which execs the command: $! is the server's.
start() {
    local name=$1 dir=$2
    shift 2
    (cd "$dir" && exec setsid "$@" </dev/null >"$logs/$name.log" 2>&1) &
    pids+=($!)
    names+=("$name")
}

# The name of a started process that has exited, if any.
exited() {
    local i
    for i in "${!pids[@]}"; do
        if ! alive "${pids[$i]}"; then
            printf '%s\n' "${names[$i]}"
            return 0
        fi
    done
    return 1
}

died() {
    local name=$1
    echo "$0: $name exited; the end of its log ($logs/$name.log):" >&2
    tail -n 30 "$logs/$name.log" >&2 || true
    stop_all 1
}

# Polls CHECK... every tenth of a second until it succeeds, for at most $ready_timeout seconds,
# giving up early when a started process exits.
await() {
    local what=$1
    shift
    local tenths=$((ready_timeout * 10)) name
    until "$@" >/dev/null 2>&1; do
        if name=$(exited); then died "$name"; fi
        [ "$tenths" -gt 0 ] || { echo "$0: $what not ready after $ready_timeout s" >&2; stop_all 1; }
        sleep 0.1
        tenths=$((tenths - 1))
    done
}

redis_ping() {
    local reply
    exec 3<>"/dev/tcp/127.0.0.1/$redis_port" || return 1
    printf 'PING\r\n' >&3
    read -r -t 2 reply <&3 || true
    exec 3<&-
    [ "${reply%$'\r'}" = "+PONG" ]
}

# Redis: nothing to keep, so no snapshots and no append-only file.
start redis "$tmp" redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$tmp"
await "redis-server" redis_ping

# PostgreSQL: user and database meridian, password meridian, on TCP loopback only; without
# fsync, as nothing of it outlives the script.
pg_password=meridian
(umask 077 && printf '%s\n' "$pg_password" >"$pg_root/password")
if [ ${#as_postgres[@]} -gt 0 ]; then
    chmod 0711 "$tmp"
    chown -R postgres: "$pg_root"
fi
chmod 0700 "$pg_root"
(cd "$pg_root" && "${as_postgres[@]}" "$pg_bin/initdb" -D "$pg_root/data" -U meridian --pwfile="$pg_root/password" \
    --auth=scram-sha-256 --encoding=UTF8 --no-locale >"$logs/initdb.log" 2>&1) \
    || { tail -n 30 "$logs/initdb.log" >&2; fail "initdb failed"; }
start postgres "$pg_root" "${as_postgres[@]}" "$pg_bin/postgres" -D "$pg_root/data" -p "$postgres_port" \
    -c listen_addresses=127.0.0.1 -c unix_socket_directories="$pg_root" -c fsync=off -c full_page_writes=off
await "PostgreSQL" "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$postgres_port"
postgres_pid=$(head -n 1 "$pg_root/data/postmaster.pid")
PGPASSWORD=$pg_password "$pg_bin/createdb" -h 127.0.0.1 -p "$postgres_port" -U meridian meridian \
    || fail "could not create the database"

redis_url="redis://127.0.0.1:$redis_port"
store_url="postgres://meridian:$pg_password@127.0.0.1:$postgres_port/meridian"
for i in 0 1 2; do
    port=${node_ports[$i]}
    start "node$((i + 1))" "$PWD" "$binary" serve --host 127.0.0.1 --port "$port" --auth none --threads "$threads" \
        --cluster "$redis_url" --store "$store_url" --advertise "127.0.0.1:$port" "${node_args[@]}"
done
for i in 0 1 2; do
    await "node $((i + 1))" curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${node_ports[$i]}/readyz"
done

say "redis: $redis_url"
say "postgres: $store_url"
for i in 0 1 2; do
    say "node $((i + 1)): ws://127.0.0.1:${node_ports[$i]}/ (dashboard http://127.0.0.1:${node_ports[$i]}/)"
done
say "directory: $tmp (logs in $logs; removed on exit)"
say "cluster ready: ws://127.0.0.1:${node_ports[0]}/ ws://127.0.0.1:${node_ports[1]}/ ws://127.0.0.1:${node_ports[2]}/ (Ctrl-C stops it)"

# Until a signal, or until any server exits.
while true; do
    wait -n || true
    if name=$(exited); then died "$name"; fi
done
