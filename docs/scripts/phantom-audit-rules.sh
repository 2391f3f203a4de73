#!/bin/sh
# Phantom audit rules: Linux keeps counting an audit rule it dropped on its
# own when the directory the rule watched was deleted, so every syscall of
# every process pays audit's rule filters whenever audit is enabled, with
# `auditctl -l` showing no rule, until reboot. docs/findings.md explains it.
#
# Run it in a throwaway VM: it leaves the kernel that way. As root, with
# auditctl (auditd) and perf (linux-perf); no secperf needed. E.g. on a
# Debian host, in a virtme-ng guest of the host's kernel:
#   vng --run /boot/vmlinuz-$(uname -r) --disable-kvm --force-9p \
#       --exec 'sh docs/scripts/phantom-audit-rules.sh'
# Each step prints the rules, then a getppid loop (`perf bench syscall
# basic`, LOOPS calls) with audit disabled and enabled, twice. Compare the
# "enabled=1" lines: cheap at steps 1 and 3, dear at step 2 (one rule) and
# as dear at step 4, where no rule is listed. (Once audit has been enabled,
# "enabled=0" is no longer the cheapest path: docs/findings.md, the audit
# quirk.)
set -eu
AUDITCTL=${AUDITCTL:-auditctl}
DIR=${PHANTOM_DIR:-/tmp/secperf-phantom-demo/sub}
if [ "${PHANTOM_OK:-}" != yes ] && ! grep -q virtme /proc/cmdline; then
    echo "refusing: this leaves phantom audit rules until reboot; run it in a throwaway VM," >&2
    echo "or set PHANTOM_OK=yes" >&2
    exit 2
fi
loop() {
    perf bench syscall basic -l "${LOOPS:-2000000}" 2>/dev/null |
        awk '/usecs\/op/ { printf "%.0f ns per getppid\n", $1 * 1000 }'
}
step() {
    echo "== $1"
    $AUDITCTL -l
    for enabled in 0 1 0 1; do
        $AUDITCTL -e "$enabled" >/dev/null
        printf '  audit enabled=%s: ' "$enabled"
        loop
    done
    $AUDITCTL -e 0 >/dev/null
}
rule="-a always,exit -F arch=b64 -F dir=$DIR -F perm=wa -k phantom-demo"
mkdir -p "$DIR"
step "1. no rules"
$AUDITCTL $rule
step "2. one rule watching $DIR"
$AUDITCTL -D >/dev/null
step "3. after auditctl -D"
$AUDITCTL $rule
rm -rf "$DIR"
sleep 1
step "4. the same rule again, then rm -rf $DIR (the kernel drops the rule)"
