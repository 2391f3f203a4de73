#!/usr/bin/env bash
# `secperf serve` on a store of 100 000 runs: how long each page takes,
# the server warm, and how much memory the server holds at most.
#
# The store is the test fixture's runs copied until there are RUNS of them
# (examples/seed_store.rs: 13 host names, 20 kernel releases, every row
# under a run copied with it; about 4 GB for 100 000 runs). Each page is
# asked for once to warm it, then ROUNDS times; the median and the worst
# are printed, in ms (curl's time_total: request sent to the last byte).
# Goals (issue 46): a list page under 200 ms, a run page under 500 ms,
# memory (VmHWM) under 200 MB. Run 1 is the fixture's survey (7
# comparisons, profiles); runs 3, 10, 17, ... are copies of its ladder
# run (results and samples), compared up to the page's limit of 8.
#
# Needs: curl, python3. Usage: benches/serve_scale.sh [RUNS] [ROUNDS] (default
# 100000 and 9); SEED_DB=FILE keeps the seeded store there between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100000}
rounds=${2:-9}
db=${SEED_DB:-$(mktemp -d)/seed.db}
port=18457

cargo build --release --quiet --bin secperf --example seed_store
if [ ! -s "$db" ] || [ "$(./target/release/secperf --db "$db" --json results list 2>/dev/null | head -c 1)" = "" ]; then
  ./target/release/examples/seed_store tests/fixtures/runs/runs.db "$db" "$runs"
fi
./target/release/secperf --db "$db" serve --bind 127.0.0.1:$port &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 50); do
  curl -sf -o /dev/null "http://127.0.0.1:$port/runs" && break
  sleep 0.2
done
run_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"]['"$1"']["run_id"])'; }
newest=$(curl -sf "http://127.0.0.1:$port/runs.json" | run_id 0)
pages=$(curl -sf "http://127.0.0.1:$port/runs.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pages"])')
oldest=$(curl -sf "http://127.0.0.1:$port/runs.json?page=$pages" | run_id -1)

time_page() {
  local path=$1 times=()
  curl -sf -o /dev/null "http://127.0.0.1:$port$path"
  for _ in $(seq "$rounds"); do
    times+=("$(curl -sf -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port$path")")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v p="$path" '
    { t[NR] = $1 * 1000 }
    END { printf "%-58s median %7.1f ms  worst %7.1f ms\n", p, t[int((NR + 1) / 2)], t[NR] }'
}

echo "secperf serve on $runs runs ($db), $rounds rounds a page after one to warm it"
for path in \
  "/runs" \
  "/runs?page=1000" \
  "/runs?page=2000" \
  "/runs?host=host-7" \
  "/runs?kernel=6.3.0-seed" \
  "/runs?workload=mutex_yield" \
  "/runs?mechanism=landlock" \
  "/runs?verdict=slower" \
  "/runs?host=host-7&kernel=6.3.0-seed&workload=open&mechanism=landlock&verdict=slower" \
  "/runs?workload=nonesuch" \
  "/runs.json" \
  "/runs/$newest" \
  "/runs/$newest.json" \
  "/runs/$oldest" \
  "/runs/1" \
  "/compare?runs=3,10" \
  "/compare?runs=3,10,17,24,31,38,45,52" \
  "/campaigns" \
  "/tracks" \
  "/bisections"; do
  time_page "$path"
done
echo "server memory: $(grep -E 'VmHWM|VmRSS' /proc/$pid/status | tr -s ' \n' ' ')"
