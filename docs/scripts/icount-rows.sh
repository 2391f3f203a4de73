#!/usr/bin/env bash
# Issue 43's rows in counted instructions (QEMU's icount, emulated guests
# of Debian's 6.1): audit=0 against audit=1, SELinux (boot arms and --vm
# -m selinux), AppArmor, the BPF LSM's noop hooks, seccomp, Landlock and
# a credential override, each in the default sequential design. Every run
# goes into DB; the tables are `secperf --db DB results show N`.
#
# IMAGE: the kernel image (default: the newest /boot/vmlinuz-*);
# SECPERF: the binary; DB: the store; ROWS: which rows (default all).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
IMAGE=${IMAGE:-$(ls /boot/vmlinuz-* | sort -V | tail -n 1)}
SECPERF=${SECPERF:-$here/target/release/secperf}
DB=${DB:-/tmp/secperf-icount-rows.db}
ROWS=${ROWS:-audit selinux-boot selinux-vm apparmor bpf-lsm per-process}
lsms=landlock,lockdown,yama
run() {
    echo "+ secperf $*" >&2
    "$SECPERF" --db "$DB" overhead --metric instructions "$@"
}
for row in $ROWS; do
    case "$row" in
    audit) run -w getppid --kernel "audit0=$IMAGE,append=audit=0" \
        --kernel "audit1=$IMAGE,append=audit=1" ;;
    selinux-boot) run -w stat,open --kernel "nolsm=$IMAGE,append=lsm=$lsms" \
        --kernel "selinux=$IMAGE,append=lsm=$lsms,selinux" ;;
    selinux-vm) run --vm "$IMAGE" -m selinux -w stat,open ;;
    apparmor) run --vm "$IMAGE" -m apparmor -w open ;;
    bpf-lsm) run --vm "$IMAGE" -m bpf-lsm -w eventfd ;;
    per-process) run --vm "$IMAGE" -m seccomp:allow -m landlock:fs -m cred:fsuid \
        -m none:control -w getppid,open,access1 ;;
    *)
        echo "unknown row $row" >&2
        exit 2
        ;;
    esac
done
