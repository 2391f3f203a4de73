//! The server's process group: its CPU time (every process in it, their
//! threads and the children they reaped, from `/proc`), and stopping it
//! (SIGTERM, then SIGKILL after [`super::STOP_GRACE`]).

use std::time::{Duration, Instant};

use super::STOP_GRACE;

/// The fields of a `/proc/PID/stat` line after the command name (the
/// first is the state).
pub(super) fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    let after = stat.rfind(')')?;
    Some(stat[after + 1..].split_whitespace().collect())
}

/// The server's CPU time so far, user and system, in ns: every process of
/// its group (the server and the children it keeps, such as nginx's
/// workers or PostgreSQL's auxiliary processes), their threads, and the
/// children they reaped (`utime + cutime`, `stime + cstime` of each).
/// `members` caches the group's pids: the whole of /proc is scanned only
/// when one of them is gone or has left the group (a child that exited
/// and was reaped is then in its parent's `cutime`).
pub(super) fn server_cpu_ns(
    pgid: libc::pid_t,
    members: &mut Vec<libc::pid_t>,
) -> Option<(u64, u64)> {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ns_per_tick = 1e9 / if hz > 0 { hz as f64 } else { 100.0 };
    let ticks = |pid: libc::pid_t| -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let f = stat_fields(&stat)?;
        // pgrp is field 5 (f[2]); utime, stime, cutime, cstime fields
        // 14-17 (f[11..15]).
        let at = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
        if f.get(2).and_then(|g| g.parse::<i32>().ok()) != Some(pgid) {
            return None;
        }
        Some((at(11)? + at(13)?, at(12)? + at(14)?))
    };
    let sum = |members: &[libc::pid_t]| {
        members.iter().try_fold((0u64, 0u64), |(u, s), &pid| {
            let (pu, ps) = ticks(pid)?;
            Some((u + pu, s + ps))
        })
    };
    let total = match sum(members) {
        Some(t) if !members.is_empty() => t,
        _ => {
            *members = group_members(pgid);
            sum(members)?
        }
    };
    let ns = |t: u64| (t as f64 * ns_per_tick) as u64;
    Some((ns(total.0), ns(total.1)))
}

/// Every process in `pgid`'s group, from /proc.
pub(super) fn group_members(pgid: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    stat_fields(&stat)?
                        .get(2)
                        .and_then(|g| g.parse::<i32>().ok())
                })
                == Some(pgid)
        })
        .collect()
}

/// SIGTERM to the group of `pid`, SIGKILL after [`STOP_GRACE`]; returns
/// once no process of the group is left (or 2 s after the SIGKILL).
pub(super) fn stop_group(pid: libc::pid_t) {
    let alive = || {
        // SAFETY: signal 0 only checks; -pid is the server's group.
        unsafe { libc::kill(-pid, 0) == 0 }
    };
    // SAFETY: the server's group, which only the server and its children
    // are in.
    unsafe { libc::kill(-pid, libc::SIGTERM) };
    let start = Instant::now();
    let mut killed = false;
    while alive() {
        if !killed && start.elapsed() > STOP_GRACE {
            // SAFETY: as above.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            killed = true;
        }
        if start.elapsed() > STOP_GRACE + Duration::from_secs(2) {
            return;
        }
        // A zombie leader counts as alive until the task reaps it.
        if only_zombies(pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether every process left in `pgid`'s group is a zombie (none of them
/// holds an address any more).
fn only_zombies(pgid: libc::pid_t) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(f) = stat_fields(&stat) else {
            continue;
        };
        // pgrp is field 5: f[2].
        if f.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) && f.first() != Some(&"Z") {
            return false;
        }
    }
    true
}
