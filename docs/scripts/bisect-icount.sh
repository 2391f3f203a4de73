#!/usr/bin/env bash
# Issue 43's bisection in counted instructions: issue 35's series (Debian's
# linux-source-6.1 committed into git, then 8 commits, each a comment
# appended to one file) with a subtler culprit: the 6th commit applies
# docs/experiments/patches/043-audit-second-coarse-clock-6.1.patch, a
# second coarse clock read at audit's syscall entry, a few percent of
# getppid's instructions under audit=1. Then
#   secperf bisect ... -w getppid --append audit=1 --metric instructions --threshold 2
# and, with STEPS=wide, the same at --threshold 20, whose endpoints differ
# by less than the threshold: it must name no commit.
#
# SRC: an unpacked linux-source-6.1 (default: where .ci/run unpacks it);
# REPO: where the series is made (once); SECPERF: the binary.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${SRC:-/tmp/secperf-linux-source-6.1}
REPO=${REPO:-/tmp/secperf-bisect-icount}
SECPERF=${SECPERF:-$here/target/release/secperf}
STEPS=${STEPS:-narrow}
export GIT_AUTHOR_NAME=secperf GIT_AUTHOR_EMAIL=secperf@localhost
export GIT_COMMITTER_NAME=secperf GIT_COMMITTER_EMAIL=secperf@localhost
g() { git -C "$REPO" "$@"; }
if [ ! -d "$REPO/.git" ]; then
    rm -rf "$REPO.tmp"
    cp -a "$SRC" "$REPO.tmp"
    git -C "$REPO.tmp" init -q
    # Debian's tarball ignores everything at its top level (.gitignore).
    git -C "$REPO.tmp" add -f -A
    git -C "$REPO.tmp" commit -qm "Debian linux-source-6.1"
    mv "$REPO.tmp" "$REPO"
    i=0
    for f in kernel/sys_ni.c kernel/utsname.c mm/util.c kernel/exit.c fs/open.c "" \
        kernel/time/time.c lib/string.c; do
        i=$((i + 1))
        if [ -z "$f" ]; then
            g apply "$here/docs/experiments/patches/043-audit-second-coarse-clock-6.1.patch"
            g commit -qam "audit: read the coarse clock twice at syscall entry (the culprit)"
        else
            echo "/* a harmless change $i */" >> "$REPO/$f"
            g commit -qam "harmless: $f"
        fi
    done
fi
good=$(g rev-parse HEAD~8)
echo "series in $REPO: good $good, culprit $(g rev-parse --short HEAD~2), bad $(g rev-parse --short HEAD)"
case "$STEPS" in
narrow)
    "$SECPERF" bisect "$REPO" --good "$good" --bad HEAD -w getppid --append audit=1 \
        --metric instructions --threshold 2 --log "${LOG:-/tmp/bisect-icount.log}"
    ;;
wide)
    "$SECPERF" bisect "$REPO" --good "$good" --bad HEAD -w getppid --append audit=1 \
        --metric instructions --threshold 20
    ;;
*)
    echo "STEPS=narrow or wide" >&2
    exit 2
    ;;
esac
