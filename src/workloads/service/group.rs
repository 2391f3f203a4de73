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
/// children they reaped. `members` caches the group's pids: the whole of
/// /proc is scanned only when one of them is gone or has left the group
/// (a child that exited and was reaped is then in its parent's `cutime`).
///
/// Their sum is exact: each process's CPU clock (`clock_getcpuclockid`,
/// the scheduler's ns over all its threads, exited ones included), where
/// `/proc/PID/stat` counts 10 ms clock ticks, too coarse for a client run
/// of a few hundred ms. The split between user and system is the ticks'
/// proportion (all system while no tick has been counted); what reaped
/// children used is known in ticks only.
pub(super) fn server_cpu_ns(
    pgid: libc::pid_t,
    members: &mut Vec<libc::pid_t>,
) -> Option<(u64, u64)> {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ns_per_tick = 1e9 / if hz > 0 { hz as f64 } else { 100.0 };
    // Per process: its own user and system ticks, its reaped children's,
    // and its exact CPU time in ns.
    let of = |pid: libc::pid_t| -> Option<Times> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let f = stat_fields(&stat)?;
        // pgrp is field 5 (f[2]); utime, stime, cutime, cstime fields
        // 14-17 (f[11..15]).
        let at = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
        if f.get(2).and_then(|g| g.parse::<i32>().ok()) != Some(pgid) {
            return None;
        }
        let (user, sys) = (at(11)?, at(12)?);
        Some(Times {
            user,
            sys,
            children_user: at(13)?,
            children_sys: at(14)?,
            exact_ns: cpu_clock_ns(pid).unwrap_or(((user + sys) as f64 * ns_per_tick) as u64),
        })
    };
    let sum = |members: &[libc::pid_t]| {
        members
            .iter()
            .try_fold(Times::default(), |t, &pid| Some(t.add(&of(pid)?)))
    };
    let total = match sum(members) {
        Some(t) if !members.is_empty() => t,
        _ => {
            *members = group_members(pgid);
            sum(members)?
        }
    };
    Some(total.split(ns_per_tick))
}

/// CPU times of some processes: clock ticks, and exact ns of their own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Times {
    user: u64,
    sys: u64,
    children_user: u64,
    children_sys: u64,
    exact_ns: u64,
}

impl Times {
    fn add(&self, o: &Times) -> Times {
        Times {
            user: self.user + o.user,
            sys: self.sys + o.sys,
            children_user: self.children_user + o.children_user,
            children_sys: self.children_sys + o.children_sys,
            exact_ns: self.exact_ns + o.exact_ns,
        }
    }

    /// User and system ns: the exact own time split as the ticks are
    /// (all system before any tick), plus the reaped children's ticks.
    fn split(&self, ns_per_tick: f64) -> (u64, u64) {
        let ticks = self.user + self.sys;
        let user_share = if ticks == 0 {
            0.0
        } else {
            self.user as f64 / ticks as f64
        };
        let own_user = (self.exact_ns as f64 * user_share) as u64;
        let own_sys = self.exact_ns - own_user;
        let ns = |t: u64| (t as f64 * ns_per_tick) as u64;
        (
            own_user + ns(self.children_user),
            own_sys + ns(self.children_sys),
        )
    }
}

/// A process's CPU time in ns, all its threads (exited ones included),
/// from its CPU clock; None when it is gone.
fn cpu_clock_ns(pid: libc::pid_t) -> Option<u64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: a valid out-pointer; pid is a plain number.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return None;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a clock id the kernel gave, a valid out-pointer.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// Every thread of the server started by task process `task` (its child
/// that leads a process group of its own) and of the processes in that
/// group: what `--profile` samples in a service's half, since the task
/// only relays between the client and the server. Empty when the task has
/// no such child.
pub fn server_threads(task: libc::pid_t) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let server = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .find(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let f = stat_fields(&stat)?;
                    Some(
                        f.get(1)?.parse::<i32>().ok()? == task
                            && f.get(2)?.parse::<i32>().ok()? == pid,
                    )
                })
                .unwrap_or(false)
        });
    let Some(server) = server else {
        return Vec::new();
    };
    group_members(server)
        .into_iter()
        .flat_map(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/task"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .collect::<Vec<_>>()
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_time_is_split_as_the_ticks_are_and_children_are_added() {
        let t = Times {
            user: 1,
            sys: 3,
            children_user: 2,
            children_sys: 0,
            exact_ns: 40_000_000,
        };
        // 40 ms split 1:3, plus 2 ticks of 10 ms of reaped children.
        assert_eq!(t.split(10_000_000.0), (30_000_000, 30_000_000));
        let none = Times {
            exact_ns: 3_000_000,
            ..Times::default()
        };
        assert_eq!(none.split(10_000_000.0), (0, 3_000_000));
    }

    #[test]
    fn a_process_cpu_clock_is_exact_and_counts_its_threads() {
        let me = std::process::id() as libc::pid_t;
        let before = cpu_clock_ns(me).unwrap();
        // Burn 20 ms of CPU in another thread, by its own CPU clock (by
        // the wall clock, a loaded machine gave it 13 ms).
        std::thread::spawn(|| {
            let thread_ns = crate::sys::thread_cpu_ns;
            let start = thread_ns();
            let mut x = 0u64;
            while thread_ns() - start < 20_000_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            x
        })
        .join()
        .unwrap();
        let used = cpu_clock_ns(me).unwrap() - before;
        assert!(used >= 15_000_000, "{used} ns");
        assert!(cpu_clock_ns(i32::MAX - 7).is_none());
    }
}
