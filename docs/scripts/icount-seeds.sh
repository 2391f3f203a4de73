#!/usr/bin/env bash
# Issue 43's seeds in counted instructions, each with the layout control:
# 002 (audit-2017: the fine clock against 6.1's coarse one, audit=1, on
# getppid and mutex_yield, with no rules and with one unrelated rule) and
# 003 (access-2023: Guzik's two patches, on access1 and access2).
#
# SRC: a kernel source tree (a git checkout, with REV; default: the series
# docs/scripts/bisect-icount.sh makes, whose first commit is Debian's
# linux-source-6.1, so its builds are shared with the bisection);
# SECPERF: the binary; DB: the store; SEEDS: which (default: all).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${SRC:-/tmp/secperf-bisect-icount}
REV=${REV:-$(git -C "$SRC" rev-list --max-parents=0 HEAD)}
SECPERF=${SECPERF:-$here/target/release/secperf}
DB=${DB:-/tmp/secperf-icount-seeds.db}
SEEDS=${SEEDS:-002 002-rule 003}
P=$here/docs/experiments/patches
run() {
    echo "+ secperf $*" >&2
    "$SECPERF" --db "$DB" overhead --metric instructions --max-pairs 12 --layout-control "$@"
}
for seed in $SEEDS; do
    case "$seed" in
    002) run -w getppid,mutex_yield \
        --kernel "base=$SRC,rev=$REV,append=audit=1" \
        --kernel "fine=$SRC,rev=$REV,patch=$P/002-audit-fine-clock-6.1.patch,append=audit=1" ;;
    002-rule) run -w getppid,mutex_yield -m audit:unrelated-rule \
        --kernel "base=$SRC,rev=$REV,append=audit=1" \
        --kernel "fine=$SRC,rev=$REV,patch=$P/002-audit-fine-clock-6.1.patch,append=audit=1" ;;
    003) run -w access1,access2 \
        --kernel "base=$SRC,rev=$REV" \
        --kernel "guzik=$SRC,rev=$REV,patch=$P/003-1-capability-add-cap_isidentical.patch,patch=$P/003-2-vfs-avoid-duplicating-creds-in-faccessat.patch" ;;
    *)
        echo "unknown seed $seed" >&2
        exit 2
        ;;
    esac
done
