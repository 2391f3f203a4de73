#!/bin/bash
# Predictions for busy servers, checked against the A/B (docs/findings.md,
# "Busy servers: the prediction against the A/B"). For each server and
# policy:
#   1. the prediction: the server started with no policy, its load
#      client run in a loop, and `secperf predict -m POLICY --pid SERVER
#      --for $WINDOW` while it serves (read-only);
#   2. the A/B: `secperf overhead -m POLICY --server SERVER -- CLIENT`,
#      whose server.cpu_ms_per_run figure is the server's CPU time per
#      client run, baseline and treatment, with a paired interval.
# The prediction's added % of the server's CPU is read against the A/B's
# server CPU change.
#
# Usage: bash docs/scripts/servers.sh [SERVER...]   (redis nginx postgres;
# default: all three). STEPS="predict" (or "ab") runs one of the two
# steps only, POLICIES="audit seccomp" some of the policies.
# As root. Needs redis-server/redis-benchmark, nginx/ab, PostgreSQL's
# server and pgbench, and the policy files below (.ci/run fetches the
# STIG rules and Docker's profile). Every figure goes to $OUT (one JSON
# file per case) and into $DB.
set -euo pipefail

SECPERF=${SECPERF:-secperf}
OUT=${OUT:-/tmp/secperf-servers}
DB=${DB:-$OUT/servers.db}
WINDOW=${WINDOW:-10}
# Pairs per A/B: a fixed number, so that the server-CPU figure the
# prediction is read against has the same footing in every case (the
# sequential design stops at the client's verdict, after as few as 3).
PAIRS=${PAIRS:-16}
STIG_RULES=${STIG_RULES:-/tmp/secperf-auditd-examples/usr/share/doc/auditd/examples/rules/30-stig.rules}
DOCKER_PROFILE=${DOCKER_PROFILE:-/tmp/secperf-docker-profile/default.json}
mkdir -p "$OUT"

# predict counts through tracefs: mount it for the run, and unmount it
# after if it was not mounted before.
if ! mountpoint -q /sys/kernel/tracing; then
    mount -t tracefs nodev /sys/kernel/tracing
    trap 'umount /sys/kernel/tracing' EXIT
fi

# Debian's STIG rules, less the NetworkManager line (no such directory here).
grep -v -i networkmanager "$STIG_RULES" > "$OUT/stig-here.rules"
policies=(
    "audit:rules=$OUT/stig-here.rules"
    "seccomp:profile=$DOCKER_PROFILE"
    "landlock:ro=/usr:/etc:/lib:/proc,rw=/tmp:/dev:/run"
)
# Each case's stderr (what predict counted, the A/B's progress) goes to
# $OUT/TAG.*.err.

# Each server: its command, how secperf knows it is ready, its client.
server_cmd() {
    case $1 in
    redis) echo "redis-server --port 6390 --save '' --appendonly no" ;;
    nginx)
        mkdir -p /tmp/secperf-nginx/www /tmp/secperf-nginx/logs
        echo hello > /tmp/secperf-nginx/www/index.html
        cat > /tmp/secperf-nginx/nginx.conf <<'EOF'
worker_processes 2;
pid /tmp/secperf-nginx/nginx.pid;
error_log /tmp/secperf-nginx/logs/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path /tmp/secperf-nginx/body;
    proxy_temp_path /tmp/secperf-nginx/proxy;
    fastcgi_temp_path /tmp/secperf-nginx/fastcgi;
    uwsgi_temp_path /tmp/secperf-nginx/uwsgi;
    scgi_temp_path /tmp/secperf-nginx/scgi;
    server { listen 127.0.0.1:8089; root /tmp/secperf-nginx/www; }
}
EOF
        echo "nginx -c /tmp/secperf-nginx/nginx.conf -g 'daemon off;'"
        ;;
    postgres)
        # As the postgres user (PostgreSQL refuses root), in its own
        # cluster under /tmp, initialised with pgbench's tables once.
        local bin
        bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
        if [ ! -d /tmp/secperf-pg/data ]; then
            mkdir -p /tmp/secperf-pg && chown postgres: /tmp/secperf-pg
            runuser -u postgres -- "$bin/initdb" -D /tmp/secperf-pg/data -A trust >/dev/null
            runuser -u postgres -- "$bin/pg_ctl" -D /tmp/secperf-pg/data -w -o \
                "-p 5499 -k /tmp/secperf-pg -c listen_addresses=127.0.0.1" start >/dev/null
            runuser -u postgres -- "$bin/createdb" -h 127.0.0.1 -p 5499 bench
            "$bin/pgbench" -h 127.0.0.1 -p 5499 -U postgres -i -s 2 -q bench >/dev/null 2>&1
            runuser -u postgres -- "$bin/pg_ctl" -D /tmp/secperf-pg/data -w stop >/dev/null
        fi
        echo "setpriv --reuid=postgres --regid=postgres --clear-groups -- $bin/postgres \
-D /tmp/secperf-pg/data -p 5499 -k /tmp/secperf-pg -c listen_addresses=127.0.0.1"
        ;;
    *) echo "unknown server $1" >&2; exit 2 ;;
    esac
}
ready_of() {
    case $1 in
    redis) echo tcp:6390 ;;
    nginx) echo tcp:8089 ;;
    # PostgreSQL accepts connections before it can serve them ("the
    # database system is starting up"): a fixed wait instead.
    postgres) echo delay:3000 ;;
    esac
}
port_of() {
    case $1 in
    redis) echo 6390 ;;
    nginx) echo 8089 ;;
    postgres) echo 5499 ;;
    esac
}
client_cmd() {
    case $1 in
    redis) echo "redis-benchmark -p 6390 -n 20000 -t get,set --csv" ;;
    nginx) echo "ab -n 4000 -c 10 http://127.0.0.1:8089/" ;;
    postgres)
        echo "$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pgbench -h 127.0.0.1 \
-p 5499 -U postgres -n -S -c 4 -t 500 bench"
        ;;
    esac
}

# The prediction: the server unconfined, loaded, counted from outside.
predict_case() {
    local server=$1 policy=$2 tag=$3
    local port=$4
    local cmd
    cmd=$(server_cmd "$server")
    eval "setsid $cmd >/dev/null 2>&1 &"
    local pid=$!
    for _ in $(seq 100); do
        (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
        sleep 0.1
    done
    # The load in a process group of its own, so that it stops at once.
    setsid bash -c "while :; do $(client_cmd "$server") >/dev/null 2>&1; done" &
    local load=$!
    sleep 3
    # The load stops when the counting ends: predict then measures the
    # probes it lacks, which want an idle machine (measured beside the
    # load they were noisy, and low: +73 ns [-2, +173] for STIG's getppid
    # probe against +126 ns [+124, +130] idle).
    # It checks that the machine is idle as the counting ends: the load
    # stops then (the count's last fraction of a second has none).
    (sleep "$WINDOW"; kill -- -"$load" 2>/dev/null) &
    local stopper=$!
    "$SECPERF" --db "$DB" predict -m "$policy" --pid "$pid" --for "$WINDOW" --json \
        > "$OUT/$tag.predict.json" 2> >(tee "$OUT/$tag.predict.err" >&2) || true
    wait "$stopper" 2>/dev/null || true
    kill -- -"$load" 2>/dev/null || true
    wait "$load" 2>/dev/null || true
    kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# The A/B: the server under the policy in one half of each pair.
ab_case() {
    local server=$1 policy=$2 tag=$3
    local cmd
    cmd=$(server_cmd "$server")
    # shellcheck disable=SC2046 # the client's words, split
    "$SECPERF" --db "$DB" --json overhead -m "$policy" --pairs "$PAIRS" --server "$cmd" \
        --ready "$(ready_of "$server")" -- $(client_cmd "$server") > "$OUT/$tag.ab.json"
}

servers=("$@")
[ ${#servers[@]} -gt 0 ] || servers=(redis nginx postgres)
STEPS=${STEPS:-predict ab}
POLICIES=${POLICIES:-audit seccomp landlock}
for s in "${servers[@]}"; do
    for p in "${policies[@]}"; do
        kind=${p%%:*}
        case " $POLICIES " in *" $kind "*) ;; *) continue ;; esac
        tag="$s-$kind"
        case " $STEPS " in *" predict "*)
            echo "== $tag: predict"
            predict_case "$s" "$p" "$tag" "$(port_of "$s")"
        esac
        case " $STEPS " in *" ab "*)
            echo "== $tag: A/B"
            ab_case "$s" "$p" "$tag"
        esac
    done
done
echo "Figures in $OUT; runs in $DB"
