#!/bin/sh
# secperf predict against the A/B (docs/findings.md, "Predicted without
# switching"): for three programs and three policies, the prediction
# (syscalls counted once, priced by the policy's cost model) and the
# measured A/B (60 interleaved pairs of complete runs), as JSON files in
# OUT. As root, with tracefs mounted (mount -t tracefs nodev
# /sys/kernel/tracing). About 12 minutes on a 2-CPU VM: most of it the
# A/Bs; the models' probes are measured once and stored.
#
#   DOCKER=default.json STIG=stig.rules sh docs/scripts/predict-vs-ab.sh
#
# DOCKER: Docker's default seccomp profile (moby's
# profiles/seccomp/default.json); STIG: an audit rules file, e.g. Debian
# auditd's /usr/share/doc/auditd/examples/rules/30-stig.rules less lines
# naming paths this machine lacks. Audit rules are loaded for the STIG
# arm only, and put back as found.
set -eu
SECPERF=${SECPERF:-secperf}
OUT=${OUT:-predict-vs-ab}
DB=${DB:-$OUT/predict.db}
: "${DOCKER:?set DOCKER to Docker's default seccomp profile}"
: "${STIG:?set STIG to an audit rules file}"
REPO=${REPO:-$(pwd)}
LANDLOCK="landlock:ro=/usr:/etc:/proc:$REPO:$HOME,rw=/tmp:/dev"
mkdir -p "$OUT"
one() { # NAME POLICY PROGRAM-NAME PROGRAM...
    name=$1 policy=$2 prog=$3
    shift 3
    echo "== $name on $prog" >&2
    "$SECPERF" --db "$DB" predict -m "$policy" --json -o "$OUT/pred-$name-$prog.json" -- "$@"
    "$SECPERF" --db "$DB" overhead -m "$policy" --pairs 60 --json -- "$@" >"$OUT/ab-$name-$prog.json"
}
for arm in docker stig landlock; do
    case $arm in
    docker) policy="seccomp:profile=$DOCKER" ;;
    stig) policy="audit:rules=$STIG" ;;
    landlock) policy=$LANDLOCK ;;
    esac
    one "$arm" "$policy" tar tar cf /dev/null /usr/share/doc
    one "$arm" "$policy" git git -C "$REPO" status --porcelain
    one "$arm" "$policy" python python3 -c pass
done
echo "wrote $OUT/pred-*.json (predict) and $OUT/ab-*.json (overhead)" >&2
