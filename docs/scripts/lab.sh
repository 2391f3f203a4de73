#!/usr/bin/env bash
# A throwaway local lab for multi-host campaigns: N "hosts", each a network
# namespace with its own OpenSSH server, hostname and /root, reachable
# from this machine at 10.77.I.2; and a throwaway PostgreSQL cluster on
# 127.0.0.1. Nothing outside this machine is contacted. As root (except
# `check`); used by the README, .ci/run and the integration tests.
#
#   bash docs/scripts/lab.sh check
#   bash docs/scripts/lab.sh hosts-up 3
#   ssh -F /tmp/secperf-lab/ssh_config h1 true
#   bash docs/scripts/lab.sh host-stop 2     # inject a failure ...
#   bash docs/scripts/lab.sh host-start 2    # ... and repair it
#   bash docs/scripts/lab.sh hosts-down
#   url=$(bash docs/scripts/lab.sh pg-up)    # password in /tmp/secperf-lab-pg/pgpass
#   bash docs/scripts/lab.sh pg-down
#
# Run `lab.sh help` for every subcommand. What each step does goes to
# stderr; stdout carries only pg-up's URL.
set -euo pipefail
PATH=$PATH:/usr/sbin:/sbin

readonly HOSTS_DIR_DEFAULT=/tmp/secperf-lab
readonly PG_DIR_DEFAULT=/tmp/secperf-lab-pg
# Below Linux's ephemeral ports (32768-60999): a port there can be held by
# any client's connection (or its TIME_WAIT, for a minute), and PostgreSQL
# then cannot listen on it (tests/serve.rs met this restarting its cluster).
readonly PG_PORT_DEFAULT=25432
readonly NS_PREFIX=secperf-h # netns secperf-hI; its veth's root side has the same name
readonly MAX_HOSTS=254       # one 10.77.I.0/24 per host
readonly SSHD=/usr/sbin/sshd
readonly MARKER=.secperf-lab # a directory holding this file may be removed by this script
readonly LOCK_DIR=/run/lock
readonly LAST_DIR=/run/secperf-lab.dir # the hosts' DIR, for hosts-down given another
# Seconds to wait for an sshd to listen, or PostgreSQL to start.
readonly TIMEOUT=${SECPERF_LAB_TIMEOUT:-20}

prog=${0##*/}
[[ $TIMEOUT =~ ^[0-9]{1,4}$ ]] || {
    echo "lab: SECPERF_LAB_TIMEOUT must be a number of seconds, not '$TIMEOUT'" >&2
    exit 2
}

usage() { # [EXIT-STATUS]
    cat >&2 <<EOF
usage: $prog SUBCOMMAND [ARGS]

Hosts (network namespaces ${NS_PREFIX}1..${NS_PREFIX}N, host I at 10.77.I.2, its
sshd on port 22; DIR defaults to $HOSTS_DIR_DEFAULT):
  hosts-up N [DIR]     create hosts 1..N (N <= $MAX_HOSTS), taking down any lab
                       first; writes DIR/ssh_config (Host h1..hN), DIR/hosts,
                       DIR/id_ed25519, DIR/known_hosts
  hosts-down [DIR]     kill every lab process, delete the namespaces and veths,
                       remove DIR
  host-stop I [DIR]    stop host I: its sshd and every process on it (open
                       sessions drop); SECPERF_LAB_KEEP_SESSIONS=1 stops only
                       the listening sshd
  host-start I [DIR]   start host I's sshd again
PostgreSQL (DIR defaults to $PG_DIR_DEFAULT, PORT to $PG_PORT_DEFAULT):
  pg-up [DIR] [PORT]   start a cluster on 127.0.0.1:PORT with role and database
                       secperf; prints its URL on stdout, the password is in
                       DIR/pgpass
  pg-restart [DIR]     restart it (pg_ctl restart -m fast)
  pg-stop [DIR]        stop it, keeping DIR (pg-up DIR starts it again)
  pg-down [DIR]        stop it and remove DIR
Other:
  check                say which tools are missing and how to install them
  help                 this text

Run as root (except check). Environment: SECPERF_LAB_TIMEOUT (seconds to
wait for a server to start, default 20).
EOF
    exit "${1:-2}"
}

say() { echo "lab: $*" >&2; }
die() {
    echo "lab: error: $*" >&2
    exit 1
}
bad_usage() {
    echo "lab: $*" >&2
    usage
}

need_root() {
    [ "$(id -u)" = 0 ] || die "$1 must run as root (it creates network namespaces and servers)"
}

# NAME: serialises the subcommands that change the hosts (whose namespace
# names are global, so two labs cannot be built at once) or PostgreSQL.
# Daemons are started without descriptor 9 so as not to hold the lock.
take_lock() {
    local lock=$LOCK_DIR/secperf-lab-$1.lock
    mkdir -p "$LOCK_DIR"
    exec 9>"$lock"
    flock -w 300 9 || die "another lab.sh has held $lock for 5 minutes"
}

# An absolute path without characters that would need quoting in the
# sshd, ssh and PostgreSQL configuration files.
abs_dir() {
    local d=$1
    case $d in /*) ;; *) d=$PWD/$d ;; esac
    d=$(realpath -m -- "$d")
    [[ $d =~ ^/[A-Za-z0-9._/+-]+$ ]] ||
        die "directory '$d' must contain only letters, digits and . _ / + -"
    [ "$d" != / ] || die "refusing to use / as the lab directory"
    printf '%s\n' "$d"
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]] && [ "${#1}" -le 6 ]; }

# Creates DIR with the marker, or checks that an existing DIR is a lab
# directory (or empty), so that removing it later removes nothing else.
make_lab_dir() {
    local d=$1
    if [ -e "$d" ] && [ ! -e "$d/$MARKER" ]; then
        [ -d "$d" ] || die "$d exists and is not a directory"
        [ -z "$(ls -A "$d")" ] ||
            die "$d exists, is not empty and was not made by lab.sh; choose another directory"
    fi
    mkdir -p "$d"
    : >"$d/$MARKER"
}

remove_lab_dir() {
    local d=$1
    [ -e "$d" ] || return 0
    if [ -e "$d/$MARKER" ] || { [ -d "$d" ] && [ -z "$(ls -A "$d")" ]; }; then
        say "removing $d"
        rm -rf -- "$d"
    else
        say "warning: not removing $d: it was not made by lab.sh"
    fi
}

# ---------------------------------------------------------------- hosts

lab_namespaces() {
    ip netns list 2>/dev/null | awk -v p="$NS_PREFIX" '$1 ~ "^" p "[0-9]+$" { print $1 }' | sort -V
}

lab_links() {
    ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' |
        grep -E "^${NS_PREFIX}[0-9]+\$" || true
}

# PID: whether it runs (a zombie, gone but not yet reaped, does not).
is_running() {
    local state
    state=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# PID...: kill each process, TERM then KILL after 3 s.
kill_pids() {
    [ "$#" -gt 0 ] || return 0
    kill -TERM "$@" 2>/dev/null || true
    local t p alive=()
    for t in $(seq 30); do
        alive=()
        for p in "$@"; do
            if is_running "$p"; then alive+=("$p"); fi
        done
        [ "${#alive[@]}" -gt 0 ] || return 0
        [ "$t" -lt 30 ] || break
        sleep 0.1
    done
    say "killing ${alive[*]} (did not exit on TERM)"
    kill -KILL "${alive[@]}" 2>/dev/null || true
}

# The pid in host I's sshd pid file, if that process is still the lab's
# sshd (so a reused pid is never killed).
sshd_pid() {
    local dir=$1 i=$2 pid
    [ -s "$dir/h$i/sshd.pid" ] || return 1
    pid=$(cat "$dir/h$i/sshd.pid")
    is_uint "$pid" || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-f $dir/h$i/sshd_config" || return 1
    printf '%s\n' "$pid"
}

# Stops host I: its sshd by pid file, then (unless sessions are kept)
# whatever else runs in its namespace.
stop_host() {
    local dir=$1 i=$2 keep=${3:-0} ns=$NS_PREFIX$2 pids=() pid
    if pid=$(sshd_pid "$dir" "$i"); then pids+=("$pid"); fi
    if [ "$keep" != 1 ] && [ -e "/run/netns/$ns" ]; then
        # Every process in the namespace: the listener and the sessions.
        while read -r pid; do pids+=("$pid"); done < <(ip netns pids "$ns" 2>/dev/null || true)
    fi
    kill_pids "${pids[@]}"
    rm -f "$dir/h$i/sshd.pid"
}

# The host's own mounts, made in its mount namespace before sshd starts.
# /sys: a sysfs of the host's network namespace (as `ip netns exec`
# mounts), with this machine's mounts under /sys (securityfs, tracefs,
# debugfs, cgroups, bpf...) carried over, which `ip netns exec` would lose.
# shellcheck disable=SC2016 # expanded by the inner sh
readonly HOST_MOUNTS='
set -e
hostname "$1"
mount --bind "$2" /root
[ -z "$6" ] || mount --bind "$6" /etc/shadow
[ ! -e /etc/machine-id ] || mount --bind "$8" /etc/machine-id
sys=$(findmnt -rn -o ID -M /sys | tail -n 1)
tops=$(findmnt -rn -o TARGET,PARENT | awk -v p="$sys" "\$2 == p { print \$1 }")
mount --rbind /sys "$7"
umount -l /sys
mount -t sysfs sysfs /sys
for t in $tops; do
    mount --rbind "$7${t#/sys}" "$t" || echo "lab: warning: $t is missing on $1" >&2
done
umount -l "$7"
exec "$3" -f "$4" -E "$5"
'

# Starts host I's sshd in its network namespace, with its own mount
# namespace (DIR/hI/root on /root, DIR/shadow on /etc/shadow if there is
# one, DIR/hI/machine-id on /etc/machine-id, a /sys of its own) and UTS
# namespace (hostname secperf-hI). sshd daemonises; its log is
# DIR/hI/sshd.log.
start_sshd() {
    local dir=$1 i=$2 ns=$NS_PREFIX$2
    local h=$dir/h$i shadow=
    [ ! -f "$dir/shadow" ] || shadow=$dir/shadow
    mkdir -p "$h/sys"
    # A machine id of its own: a campaign refuses two names of one machine.
    [ -s "$h/machine-id" ] || { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; echo; } >"$h/machine-id"
    nsenter --net="/run/netns/$ns" unshare -m -u --propagation private sh -c "$HOST_MOUNTS" \
        sh "$ns" "$h/root" "$SSHD" "$h/sshd_config" "$h/sshd.log" "$shadow" "$h/sys" \
        "$h/machine-id" \
        </dev/null >>"$h/sshd.log" 2>&1 9>&-
}

# With UsePAM no, sshd refuses an account whose password field starts
# with "!" (locked), as root's is on some systems. If so, the hosts see a
# copy of /etc/shadow (DIR/shadow, in their mount namespaces only) where
# root's field is "*": no password, not locked. This machine's is unchanged.
unlock_root_for_hosts() {
    local dir=$1
    [ -r /etc/shadow ] || return 0
    awk -F: '$1 == "root" && $2 ~ /^!/ { found = 1 } END { exit !found }' /etc/shadow || return 0
    say "root's account is locked ('!' in /etc/shadow), which sshd refuses without PAM: the hosts get a copy, $dir/shadow, with root unlocked (no password)"
    (umask 077 && awk -F: -v OFS=: '$1 == "root" { $2 = "*" } { print }' /etc/shadow >"$dir/shadow")
    chown --reference=/etc/shadow "$dir/shadow"
    chmod --reference=/etc/shadow "$dir/shadow"
}

# Whether host I has a socket listening on 10.77.I.2:22 (asked of the
# kernel: a test connection would leave a line in sshd's log).
listening() { # I
    ss -N "$NS_PREFIX$1" -Hltn "( src 10.77.$1.2 and sport = :22 )" 2>/dev/null | grep -q .
}

# DIR WHY I...: names the hosts that failed to start, shows their logs, exits.
hosts_failed() {
    local dir=$1 why=$2 i
    shift 2
    for i in "$@"; do
        echo "lab: host h$i (netns $NS_PREFIX$i) failed: $why; $dir/h$i/sshd.log:" >&2
        sed 's/^/    /' "$dir/h$i/sshd.log" >&2 2>/dev/null || true
    done
    die "host(s) $* failed to start; the lab is left as is for inspection, run: $prog hosts-down $dir"
}

# Waits until each host I given listens on 10.77.I.2:22; on timeout, names
# the hosts that did not and shows their logs.
wait_listening() {
    local dir=$1
    shift
    local pending=("$@") deadline i
    deadline=$(($(date +%s%N) + TIMEOUT * 1000000000))
    while [ "${#pending[@]}" -gt 0 ]; do
        local still=()
        for i in "${pending[@]}"; do
            listening "$i" || still+=("$i")
        done
        pending=("${still[@]+"${still[@]}"}")
        [ "${#pending[@]}" -gt 0 ] || return 0
        if [ "$(date +%s%N)" -ge "$deadline" ]; then
            hosts_failed "$dir" "no sshd listening on 10.77.I.2:22 after ${TIMEOUT}s" "${pending[@]}"
        fi
        sleep 0.05
    done
}

write_sshd_config() {
    local dir=$1 i=$2
    local h=$dir/h$i
    cat >"$h/sshd_config" <<EOF
# sshd of lab host h$i (netns $NS_PREFIX$i), written by lab.sh
ListenAddress 10.77.$i.2:22
HostKey $h/ssh_host_ed25519_key
PidFile $h/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel ERROR
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
# Campaigns open many connections at once.
MaxStartups 100:30:200
MaxSessions 100
# scp speaks SFTP since OpenSSH 9.0.
Subsystem sftp internal-sftp
EOF
}

cmd_hosts_up() {
    [ "$#" -ge 1 ] && [ "$#" -le 2 ] || bad_usage "hosts-up takes N and an optional DIR"
    is_uint "$1" && [ "$1" -ge 1 ] && [ "$1" -le "$MAX_HOSTS" ] ||
        bad_usage "hosts-up: N must be a number from 1 to $MAX_HOSTS, not '$1'"
    need_root hosts-up
    local n=$((10#$1)) dir i
    dir=$(abs_dir "${2:-$HOSTS_DIR_DEFAULT}")
    missing_hosts_tools
    take_lock hosts
    local start_ns
    start_ns=$(date +%s%N)

    # Idempotent by starting over: any lab (this DIR or another) goes first.
    if [ -n "$(lab_namespaces)" ] || [ -n "$(lab_links)" ] || [ -e "$dir/$MARKER" ]; then
        say "a lab exists: taking it down first"
        hosts_down "$dir"
    fi
    local taken
    taken=$(ip -o -4 addr show to 10.77.0.0/16 2>/dev/null || true)
    [ -z "$taken" ] || die "10.77.0.0/16, which the lab uses, is already in use here:
$taken"

    make_lab_dir "$dir"
    echo "$dir" >"$LAST_DIR"
    chmod 755 "$dir"
    mkdir -p /run/sshd
    unlock_root_for_hosts "$dir"
    chmod 755 /run/sshd

    say "creating $n host(s) in $dir"
    ssh-keygen -q -t ed25519 -N '' -C secperf-lab -f "$dir/id_ed25519" </dev/null
    cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
    local keygen=()
    for i in $(seq "$n"); do
        mkdir -p "$dir/h$i/root"
        chmod 700 "$dir/h$i/root"
        write_sshd_config "$dir" "$i"
        : >"$dir/h$i/sshd.log"
        ssh-keygen -q -t ed25519 -N '' -C "$NS_PREFIX$i" -f "$dir/h$i/ssh_host_ed25519_key" </dev/null &
        keygen+=("$!")
    done
    for i in "${keygen[@]}"; do wait "$i" || die "ssh-keygen failed for a host key"; done

    say "creating network namespaces ${NS_PREFIX}1..$NS_PREFIX$n and veths (10.77.I.1 here, 10.77.I.2 on host I)"
    local batch=() ns
    for i in $(seq "$n"); do
        ns=$NS_PREFIX$i
        ip netns add "$ns" || die "ip netns add $ns failed"
        batch+=("link add $ns type veth peer name eth0 netns $ns"
            "addr add 10.77.$i.1/24 dev $ns"
            "link set $ns up")
    done
    printf '%s\n' "${batch[@]}" | ip -batch - || die "creating the veths failed (see above)"
    for i in $(seq "$n"); do
        ns=$NS_PREFIX$i
        printf '%s\n' "addr add 10.77.$i.2/24 dev eth0" "link set lo up" "link set eth0 up" |
            ip -n "$ns" -batch - || die "configuring the network of $ns failed (see above)"
    done

    say "starting $n sshd(s)"
    local starts=() failed=()
    for i in $(seq "$n"); do
        start_sshd "$dir" "$i" &
        starts+=("$!")
    done
    for i in $(seq "$n"); do
        wait "${starts[i - 1]}" || failed+=("$i")
    done
    [ "${#failed[@]}" -eq 0 ] || hosts_failed "$dir" "sshd did not start" "${failed[@]}"
    local all
    mapfile -t all < <(seq "$n")
    wait_listening "$dir" "${all[@]}"

    {
        for i in $(seq "$n"); do
            printf 'h%s,10.77.%s.2 %s\n' "$i" "$i" "$(cut -d' ' -f1,2 "$dir/h$i/ssh_host_ed25519_key.pub")"
        done
    } >"$dir/known_hosts"
    {
        echo "# lab.sh: ssh -F $dir/ssh_config hI"
        for i in $(seq "$n"); do
            cat <<EOF

Host h$i
    HostName 10.77.$i.2
    Port 22
    User root
    IdentityFile $dir/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $dir/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    UpdateHostKeys no
    BatchMode yes
    ConnectTimeout 5
    LogLevel ERROR
EOF
        done
    } >"$dir/ssh_config"
    seq "$n" | sed 's/^/h/' >"$dir/hosts"

    local now ms
    now=$(date +%s%N)
    ms=$(((now - start_ns) / 1000000))
    say "$n host(s) up in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s: names in $dir/hosts, ssh config in $dir/ssh_config"
    say "try: ssh -F $dir/ssh_config h1 true"
}

# Takes down every lab host (whatever DIR made it) and removes DIR (and the
# DIR recorded by the last hosts-up, if another).
hosts_down() {
    local dir=$1 i ns
    local dirs=("$dir")
    if [ -s "$LAST_DIR" ]; then
        local last
        last=$(cat "$LAST_DIR")
        [ "$last" = "$dir" ] || dirs+=("$last")
    fi
    local d f pids=() pid
    for d in "${dirs[@]}"; do
        [ -d "$d" ] || continue
        for f in "$d"/h*/sshd.pid; do
            [ -e "$f" ] || continue
            i=${f%/sshd.pid}
            i=${i##*/h}
            if pid=$(sshd_pid "$d" "$i"); then pids+=("$pid"); fi
        done
    done
    local nss
    mapfile -t nss < <(lab_namespaces)
    for ns in "${nss[@]}"; do
        while read -r pid; do pids+=("$pid"); done < <(ip netns pids "$ns" 2>/dev/null || true)
    done
    if [ "${#pids[@]}" -gt 0 ]; then
        say "killing ${#pids[@]} lab process(es) (sshds and their sessions)"
        kill_pids "${pids[@]}"
    fi
    if [ "${#nss[@]}" -gt 0 ]; then
        say "deleting ${#nss[@]} network namespace(s) $NS_PREFIX* and their veths"
        for ns in "${nss[@]}"; do
            ip netns del "$ns" || say "warning: ip netns del $ns failed"
        done
    fi
    local link
    for link in $(lab_links); do
        ip link del "$link" 2>/dev/null || true
    done
    for d in "${dirs[@]}"; do remove_lab_dir "$d"; done
    rm -f "$LAST_DIR"

    # Verify.
    local left
    left=$(lab_namespaces; lab_links)
    [ -z "$left" ] || die "still present after hosts-down: $left"
    for d in "${dirs[@]}"; do
        if pgrep -f -- "-f $d/h[0-9]+/sshd_config" >/dev/null; then
            die "lab sshd process(es) still running: $(pgrep -af -- "-f $d/h[0-9]+/sshd_config")"
        fi
    done
}

cmd_hosts_down() {
    [ "$#" -le 1 ] || bad_usage "hosts-down takes an optional DIR"
    need_root hosts-down
    local dir
    dir=$(abs_dir "${1:-$HOSTS_DIR_DEFAULT}")
    take_lock hosts
    if [ -z "$(lab_namespaces)" ] && [ -z "$(lab_links)" ] && [ ! -e "$dir" ] && [ ! -s "$LAST_DIR" ]; then
        say "no lab hosts: nothing to do"
        return 0
    fi
    hosts_down "$dir"
    say "lab hosts down"
}

# Checks that host I exists in DIR; sets dir.
host_args() {
    local sub=$1
    shift
    [ "$#" -ge 1 ] && [ "$#" -le 2 ] || bad_usage "$sub takes I and an optional DIR"
    is_uint "$1" && [ "$1" -ge 1 ] && [ "$1" -le "$MAX_HOSTS" ] ||
        bad_usage "$sub: I must be a host number from 1 to $MAX_HOSTS, not '$1'"
    need_root "$sub"
    dir=$(abs_dir "${2:-$HOSTS_DIR_DEFAULT}")
    [ -f "$dir/h$1/sshd_config" ] && [ -e "/run/netns/$NS_PREFIX$1" ] ||
        die "no lab host h$1 in $dir (run: $prog hosts-up N $dir)"
}

cmd_host_stop() {
    local dir
    host_args host-stop "$@"
    local i=$((10#$1))
    take_lock hosts
    local keep=${SECPERF_LAB_KEEP_SESSIONS:-0}
    if [ "$keep" = 1 ]; then
        say "stopping host h$i's listening sshd (sessions kept)"
    else
        say "stopping host h$i: its sshd and every process on it"
    fi
    stop_host "$dir" "$i" "$keep"
    ! listening "$i" || die "host h$i still accepts connections on 10.77.$i.2:22"
    say "host h$i stopped (ssh to it is now refused)"
}

cmd_host_start() {
    local dir
    host_args host-start "$@"
    local i=$((10#$1))
    take_lock hosts
    if sshd_pid "$dir" "$i" >/dev/null && listening "$i"; then
        say "host h$i's sshd is already running"
        return 0
    fi
    stop_host "$dir" "$i" 1 # a listener that no longer listens
    say "starting host h$i's sshd"
    start_sshd "$dir" "$i" || hosts_failed "$dir" "sshd did not start" "$i"
    wait_listening "$dir" "$i"
    say "host h$i up"
}

# ----------------------------------------------------------- PostgreSQL

pg_newest_bin() {
    local b
    b=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    [ -n "$b" ] && [ -x "$b/initdb" ] ||
        die "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install -y postgresql"
    printf '%s\n' "$b"
}

# The binaries matching the cluster in DIR/pg, else the newest.
pg_bin_for() {
    local dir=$1 v
    if [ -s "$dir/pg/PG_VERSION" ]; then
        v=$(cat "$dir/pg/PG_VERSION")
        [ -x "/usr/lib/postgresql/$v/bin/pg_ctl" ] ||
            die "the cluster in $dir/pg is PostgreSQL $v, which is not installed (run: $prog pg-down $dir)"
        printf '%s\n' "/usr/lib/postgresql/$v/bin"
    else
        pg_newest_bin
    fi
}

# (Without the lock's descriptor: the server would hold it for its life.)
as_postgres() { (cd / && runuser -u postgres -- "$@" 9>&-); }

pg_running() { # DIR BIN
    as_postgres "$2/pg_ctl" -D "$1/pg" status >/dev/null 2>&1
}

pg_url() { echo "postgresql://secperf@127.0.0.1:$1/secperf"; }

pg_start() { # DIR BIN
    say "starting PostgreSQL ($1/pg, log $1/postgres.log)"
    as_postgres "$2/pg_ctl" -D "$1/pg" -l "$1/postgres.log" -w -t "$TIMEOUT" start >&2 || {
        echo "lab: $1/postgres.log:" >&2
        tail -n 20 "$1/postgres.log" | sed 's/^/    /' >&2 || true
        die "PostgreSQL did not start"
    }
}

cmd_pg_up() {
    [ "$#" -le 2 ] || bad_usage "pg-up takes an optional DIR and PORT"
    [ -z "${2:-}" ] || { is_uint "$2" && [ "$2" -ge 1 ] && [ "$2" -le 65535 ]; } ||
        bad_usage "pg-up: PORT must be a number from 1 to 65535, not '$2'"
    need_root pg-up
    command -v runuser >/dev/null || die "runuser is missing: apt-get install -y util-linux"
    id postgres >/dev/null 2>&1 ||
        die "there is no postgres user (is PostgreSQL installed? apt-get install -y postgresql)"
    local dir bin port
    dir=$(abs_dir "${1:-$PG_DIR_DEFAULT}")
    take_lock pg

    if [ -s "$dir/pg/PG_VERSION" ]; then
        bin=$(pg_bin_for "$dir")
        port=$(cat "$dir/port")
        [ -z "${2:-}" ] || [ "$((10#$2))" = "$port" ] ||
            die "the cluster in $dir uses port $port, not $2 (run: $prog pg-down $dir, then pg-up again)"
        if pg_running "$dir" "$bin"; then
            say "PostgreSQL already running in $dir on 127.0.0.1:$port"
        else
            pg_start "$dir" "$bin"
        fi
    else
        bin=$(pg_newest_bin)
        port=$((10#${2:-$PG_PORT_DEFAULT}))
        if ss -ltnH "( sport = :$port )" 2>/dev/null | grep -q .; then
            die "port $port is already in use here: $(ss -ltnpH "( sport = :$port )" | head -n 3)"
        fi
        make_lab_dir "$dir"
        # The postgres user writes the data, log and socket here; root (who
        # runs this) reads and removes it.
        chown postgres: "$dir"
        chmod 755 "$dir"
        echo "$port" >"$dir/port"
        rm -rf "${dir:?}/pg" # what a failed initdb left
        say "initdb $dir/pg ($bin)"
        as_postgres "$bin/initdb" -D "$dir/pg" -U postgres -E UTF8 --no-locale \
            --auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log" 2>&1 || {
            sed 's/^/    /' "$dir/initdb.log" >&2
            die "initdb failed"
        }
        cat >>"$dir/pg/postgresql.conf" <<EOF

# lab.sh: a throwaway cluster
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
password_encryption = 'scram-sha-256'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
        # TLS with a self-signed certificate for localhost (not for
        # 127.0.0.1: verify-full must refuse that name), so that sslmode
        # can be tried: DIR/root.crt is the root to give as sslrootcert.
        if command -v openssl >/dev/null; then
            say "TLS: a self-signed certificate for localhost ($dir/root.crt)"
            openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost \
                -addext subjectAltName=DNS:localhost \
                -keyout "$dir/pg/server.key" -out "$dir/pg/server.crt" >/dev/null 2>&1 ||
                die "openssl could not make the server certificate"
            chown postgres: "$dir/pg/server.key" "$dir/pg/server.crt"
            chmod 600 "$dir/pg/server.key"
            cp "$dir/pg/server.crt" "$dir/root.crt"
            printf "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n" \
                >>"$dir/pg/postgresql.conf"
        else
            say "no openssl: the cluster runs without TLS"
        fi
        pg_start "$dir" "$bin"
    fi

    say "creating role and database secperf (if missing)"
    as_postgres "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres >&2 <<'EOF'
SELECT CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = 'secperf')
    THEN 'ALTER ROLE secperf LOGIN PASSWORD ''secperf-test'''
    ELSE 'CREATE ROLE secperf LOGIN PASSWORD ''secperf-test''' END \gexec
SELECT 'CREATE DATABASE secperf OWNER secperf'
    WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'secperf') \gexec
EOF
    (umask 077 && printf '%s:%s:secperf:secperf:secperf-test\n' 127.0.0.1 "$port" localhost "$port" \
        >"$dir/pgpass")
    chmod 600 "$dir/pgpass"
    say "PostgreSQL up; password in $dir/pgpass (PGPASSFILE=$dir/pgpass psql \"$(pg_url "$port")\")"
    pg_url "$port"
}

pg_dir_arg() { # SUB ARGS...: sets dir
    local sub=$1
    shift
    [ "$#" -le 1 ] || bad_usage "$sub takes an optional DIR"
    need_root "$sub"
    dir=$(abs_dir "${1:-$PG_DIR_DEFAULT}")
}

cmd_pg_restart() {
    local dir bin
    pg_dir_arg pg-restart "$@"
    [ -s "$dir/pg/PG_VERSION" ] || die "no lab PostgreSQL in $dir (run: $prog pg-up $dir)"
    take_lock pg
    bin=$(pg_bin_for "$dir")
    say "restarting PostgreSQL in $dir (fast: sessions are disconnected)"
    as_postgres "$bin/pg_ctl" -D "$dir/pg" -l "$dir/postgres.log" -m fast -w -t "$TIMEOUT" restart >&2 || {
        tail -n 20 "$dir/postgres.log" | sed 's/^/    /' >&2 || true
        die "PostgreSQL did not restart"
    }
}

cmd_pg_stop() {
    local dir bin
    pg_dir_arg pg-stop "$@"
    [ -s "$dir/pg/PG_VERSION" ] || die "no lab PostgreSQL in $dir (run: $prog pg-up $dir)"
    take_lock pg
    bin=$(pg_bin_for "$dir")
    if pg_running "$dir" "$bin"; then
        say "stopping PostgreSQL in $dir (pg-up $dir starts it again)"
        as_postgres "$bin/pg_ctl" -D "$dir/pg" -m fast -w -t "$TIMEOUT" stop >&2 ||
            die "PostgreSQL in $dir did not stop"
    else
        say "PostgreSQL in $dir is not running: nothing to do"
    fi
}

cmd_pg_down() {
    local dir bin
    pg_dir_arg pg-down "$@"
    take_lock pg
    if [ ! -e "$dir" ]; then
        say "no lab PostgreSQL in $dir: nothing to do"
        return 0
    fi
    if [ -s "$dir/pg/PG_VERSION" ]; then
        bin=$(pg_bin_for "$dir")
        if pg_running "$dir" "$bin"; then
            say "stopping PostgreSQL in $dir"
            as_postgres "$bin/pg_ctl" -D "$dir/pg" -m fast -w -t "$TIMEOUT" stop >&2 ||
                as_postgres "$bin/pg_ctl" -D "$dir/pg" -m immediate -w -t "$TIMEOUT" stop >&2 ||
                die "PostgreSQL in $dir did not stop"
        fi
    fi
    remove_lab_dir "$dir"
    say "lab PostgreSQL down"
}

# ---------------------------------------------------------------- check

# Prints "TOOL PACKAGE" for each missing tool the hosts need.
missing_hosts_list() {
    [ -x "$SSHD" ] || echo "$SSHD openssh-server"
    command -v ssh >/dev/null || echo "ssh openssh-client"
    command -v ssh-keygen >/dev/null || echo "ssh-keygen openssh-client"
    command -v ip >/dev/null || echo "ip iproute2"
    command -v ss >/dev/null || echo "ss iproute2"
    command -v unshare >/dev/null || echo "unshare util-linux"
    command -v nsenter >/dev/null || echo "nsenter util-linux"
    command -v findmnt >/dev/null || echo "findmnt util-linux"
    command -v flock >/dev/null || echo "flock util-linux"
    return 0
}

missing_pg_list() {
    compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || echo "initdb postgresql"
    command -v runuser >/dev/null || echo "runuser util-linux"
    return 0
}

install_hint() { # "TOOL PACKAGE" lines
    local pkgs
    pkgs=$(awk '{ print $2 }' | sort -u | tr '\n' ' ')
    echo "apt-get install -y ${pkgs% }"
}

missing_hosts_tools() {
    local m
    m=$(missing_hosts_list)
    [ -z "$m" ] || die "missing: $(awk '{ print $1 }' <<<"$m" | tr '\n' ' ')- install with: $(install_hint <<<"$m")"
}

cmd_check() {
    [ "$#" -eq 0 ] || bad_usage "check takes no arguments"
    local m
    m=$( missing_hosts_list; missing_pg_list )
    if [ -z "$m" ]; then
        echo "lab: everything the lab needs is installed" >&2
        [ "$(id -u)" = 0 ] || echo "lab: note: the other subcommands must run as root" >&2
        return 0
    fi
    local tool pkg
    while read -r tool pkg; do
        echo "lab: missing: $tool (package $pkg)" >&2
    done <<<"$m"
    echo "lab: install with: $(install_hint <<<"$m")" >&2
    echo "lab: (installing openssh-server may start and enable the system's own sshd;" \
        "the lab does not need it: systemctl disable --now ssh ssh.socket)" >&2
    exit 1
}

# ----------------------------------------------------------------- main

[ "$#" -ge 1 ] || usage
sub=$1
shift
case $sub in
hosts-up) cmd_hosts_up "$@" ;;
hosts-down) cmd_hosts_down "$@" ;;
host-stop) cmd_host_stop "$@" ;;
host-start) cmd_host_start "$@" ;;
pg-up) cmd_pg_up "$@" ;;
pg-restart) cmd_pg_restart "$@" ;;
pg-stop) cmd_pg_stop "$@" ;;
pg-down) cmd_pg_down "$@" ;;
check) cmd_check "$@" ;;
help | -h | --help) usage 0 ;;
*) bad_usage "unknown subcommand '$sub'" ;;
esac
