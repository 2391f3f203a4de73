#!/usr/bin/env bash
# `secperf serve` on a shared PostgreSQL store of RUNS runs: how long the
# server takes to start (it copies the store whole, once), and how long the
# first page after each push of one more run takes (the copy brought up to
# date in place: only the new run is read). Before the update in place,
# every push cost a whole copy again.
#
# The store is the test fixture's runs copied until there are RUNS of them
# (examples/seed_store.rs; a fifth are left unfinished there and so are not
# pushed), pushed to a cluster of this script's own (docs/scripts/lab.sh,
# removed at the end). Each push is the fixture's first run under a new
# uuid (7 comparisons, their pairs and profiles).
#
# Needs: curl, python3, PostgreSQL's server (as .ci/run installs it).
# Usage: benches/serve_shared.sh [RUNS] [PUSHES] (default 10000 and 5).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10000}
pushes=${2:-5}
work=$(mktemp -d)
# Not under $work: PostgreSQL runs as user postgres, who cannot enter it.
pgdir=$(mktemp -u /tmp/secperf-bench-pg-XXXXXX)
port=18458
pgport=15439
secperf=./target/release/secperf
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  bash docs/scripts/lab.sh pg-down "$pgdir" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

cargo build --release --quiet --bin secperf --example seed_store
./target/release/examples/seed_store tests/fixtures/runs/runs.db "$work/seed.db" "$runs" >/dev/null
url=$(bash docs/scripts/lab.sh pg-up "$pgdir" "$pgport" 2>"$work/pg-up.log" | tail -1)
[ -n "$url" ] || { cat "$work/pg-up.log" >&2; exit 1; }
export PGPASSFILE=$pgdir/pgpass

now() { date +%s.%N; }
ms() { python3 -c "print(f'{($2 - $1) * 1000:.0f}')"; }

t0=$(now)
"$secperf" --db "$work/seed.db" results push "$url" >/dev/null 2>&1
echo "pushed the seeded store to $url in $(ms "$t0" "$(now)") ms"

t0=$(now)
"$secperf" --db "$url" serve --bind 127.0.0.1:$port 2>"$work/serve.log" &
pid=$!
until curl -sf -o /dev/null "http://127.0.0.1:$port/runs"; do
  kill -0 "$pid" || { cat "$work/serve.log"; exit 1; }
  sleep 0.1
done
total() { python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])' <"$work/page.json"; }
# /runs.json, timed by curl (request sent to the last byte), and its total.
page() {
  local t
  t=$(curl -sf -o "$work/page.json" -w '%{time_total}' "http://127.0.0.1:$port/runs.json")
  echo "$1: $(python3 -c "print(f'{$t * 1000:.0f}')") ms; $(total) runs"
}
echo "serve: first page after $(ms "$t0" "$(now)") ms (started, the store copied whole)"

cp tests/fixtures/runs/runs.db "$work/one.db"
"$secperf" --db "$work/one.db" results list >/dev/null  # brought to this schema (uuid)
for i in $(seq "$pushes"); do
  python3 - "$work/one.db" "$i" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE runs SET uuid = ? WHERE id = 1", (f"serve-shared-bench-{sys.argv[2]}",))
c.commit()
EOF
  "$secperf" --db "$work/one.db" results push --run 1 "$url" >/dev/null 2>&1
  page "push $i: the next page (updated in place)"
done
page "no push: a page"
t0=$(now)
"$secperf" --db "$url" --json results list >/dev/null
echo "a whole copy, for comparison (results list --db URL; what each push cost serve before): $(ms "$t0" "$(now)") ms"
echo "server memory: $(grep -E 'VmHWM|VmRSS' /proc/$pid/status | tr -s ' \n' ' ')"
if grep -q "up to date failed" "$work/serve.log"; then
  echo "an update in place failed:" >&2
  cat "$work/serve.log" >&2
  exit 1
fi
