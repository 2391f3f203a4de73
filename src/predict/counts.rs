//! How many times a program makes each system call, counted by the kernel
//! without touching the program: one counting perf event per syscall
//! tracepoint (`syscalls:sys_enter_NAME`) on each of its threads, with
//! `inherit` so that the threads and processes it starts are counted too.
//! Read-only: no policy, no ptrace, no ring buffer that could lose
//! records; what it costs the target is the tracepoint's few tens of ns
//! per call. The first step of `secperf predict`: a policy's cost is then
//! the sum over syscalls of count x the policy's cost per call.
//!
//! Why per-syscall counters and not `raw_syscalls:sys_enter` sampled at
//! every event: counters are exact and cannot overflow a buffer on a busy
//! server, and need no parsing of raw records; the price is one file
//! descriptor per syscall and thread (about 370 a thread on x86_64; the
//! soft `RLIMIT_NOFILE` is raised to the hard one).
//!
//! Needs tracefs (`mount -t tracefs nodev /sys/kernel/tracing`) and, for
//! tracepoints, root or CAP_PERFMON (or `kernel.perf_event_paranoid` at
//! -1).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, Result};
use perf_event::Builder;
use perf_event::events::Tracepoint;

/// Where tracefs may be mounted, in the order tried.
const TRACEFS: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// One syscall's enter tracepoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyscallEvent {
    /// The name as in `man 2` (x86_64 spelling: `newfstatat`).
    pub name: String,
    /// Its number on this architecture.
    pub nr: u32,
    /// The tracepoint's id.
    pub id: u64,
}

/// The syscall enter tracepoints of this kernel, by name.
pub fn syscall_events() -> Result<Vec<SyscallEvent>> {
    let root = tracefs()?;
    let dir = root.join("events/syscalls");
    let entries = std::fs::read_dir(&dir).with_context(|| {
        format!(
            "reading {}: this kernel has no syscall tracepoints (CONFIG_FTRACE_SYSCALLS)",
            dir.display()
        )
    })?;
    let mut out = Vec::new();
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(name) = file.to_str().and_then(|n| n.strip_prefix("sys_enter_")) else {
            continue;
        };
        // Names this architecture has a number for (the tracepoints also
        // list compat-only ones on some kernels).
        let Ok(sysno) = syscalls::Sysno::from_str(name) else {
            continue;
        };
        let id_file = e.path().join("id");
        let id: u64 = std::fs::read_to_string(&id_file)
            .with_context(|| {
                format!(
                    "reading {}: tracepoint ids need root (or CAP_PERFMON)",
                    id_file.display()
                )
            })?
            .trim()
            .parse()
            .with_context(|| format!("{} is not a number", id_file.display()))?;
        out.push(SyscallEvent {
            name: name.to_string(),
            nr: sysno.id() as u32,
            id,
        });
    }
    if out.is_empty() {
        anyhow::bail!(
            "{} lists no sys_enter_* tracepoints this architecture knows",
            dir.display()
        );
    }
    out.sort_by_key(|e| e.nr);
    Ok(out)
}

/// The number of syscall `name` on this architecture.
pub fn number_of(name: &str) -> Option<u32> {
    syscalls::Sysno::from_str(name).ok().map(|s| s.id() as u32)
}

/// The mounted tracefs, or a usage error saying how to mount it.
pub fn tracefs() -> Result<PathBuf> {
    for root in TRACEFS {
        match std::fs::metadata(Path::new(root).join("events")) {
            Ok(m) if m.is_dir() => return Ok(PathBuf::from(root)),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => crate::usage_bail!(
                "{root} is not readable by this user: counting syscalls needs root or \
                 CAP_PERFMON (and read access to tracefs)"
            ),
            _ => {}
        }
    }
    crate::usage_bail!(
        "tracefs is not mounted, and counting syscalls needs its tracepoints: mount it with \
         `mount -t tracefs nodev /sys/kernel/tracing` (as root)"
    )
}

/// Counting events on some threads, one per syscall and thread.
pub struct SyscallCounters {
    events: Vec<SyscallEvent>,
    /// Per thread, one counter per event (same order as `events`).
    counters: Vec<Vec<perf_event::Counter>>,
}

impl SyscallCounters {
    /// Counters on each of `tids` (with inherit: threads and processes
    /// they start later are counted into them when they exit), disabled.
    pub fn open(events: Vec<SyscallEvent>, tids: &[libc::pid_t]) -> Result<SyscallCounters> {
        Self::open_where(events, tids, &|_| true)
    }

    /// As [`SyscallCounters::open`], except that a thread that is gone
    /// before its counters open (ESRCH) is left out when `required` says
    /// it may be: a server's short-lived children come and go between
    /// listing a tree and counting it.
    pub fn open_where(
        events: Vec<SyscallEvent>,
        tids: &[libc::pid_t],
        required: &dyn Fn(libc::pid_t) -> bool,
    ) -> Result<SyscallCounters> {
        raise_fd_limit(events.len() * tids.len() + 64);
        let mut counters = Vec::with_capacity(tids.len());
        'threads: for &tid in tids {
            let mut per = Vec::with_capacity(events.len());
            for e in &events {
                let mut b = Builder::new(Tracepoint::with_id(e.id));
                b.observe_pid(tid).any_cpu().inherit(true);
                // raw_syscalls:sys_enter reports the kernel's registers, not
                // the caller's: excluded from a user-only count.
                if e.name == EVERY_SYSCALL {
                    b.include_kernel();
                }
                let built = b.build();
                match built {
                    Ok(c) => per.push(c),
                    Err(err) if err.raw_os_error() == Some(libc::ESRCH) && !required(tid) => {
                        continue 'threads;
                    }
                    Err(err) => return Err(open_error(err, &e.name, tid)),
                }
            }
            counters.push(per);
        }
        Ok(SyscallCounters { events, counters })
    }

    /// The threads counted.
    pub fn threads(&self) -> usize {
        self.counters.len()
    }

    pub fn enable(&mut self) -> Result<()> {
        for c in self.counters.iter_mut().flatten() {
            c.enable().context("enabling a syscall counter")?;
        }
        Ok(())
    }

    pub fn disable(&mut self) -> Result<()> {
        for c in self.counters.iter_mut().flatten() {
            c.disable().context("disabling a syscall counter")?;
        }
        Ok(())
    }

    /// The counts so far, by syscall name (those counted at least once).
    pub fn read(&mut self) -> Result<BTreeMap<String, u64>> {
        let mut out = BTreeMap::new();
        for per in &mut self.counters {
            for (e, c) in self.events.iter().zip(per.iter_mut()) {
                let n = c.read().context("reading a syscall counter")?;
                if n > 0 {
                    *out.entry(e.name.clone()).or_insert(0) += n;
                }
            }
        }
        Ok(out)
    }
}

impl Drop for SyscallCounters {
    /// Hands the counters' last references to a detached process, which
    /// closes them as it exits. Releasing a tracepoint's last perf event
    /// unregisters its probe and waits for an RCU grace period under the
    /// kernel's `event_mutex`, one tracepoint after another: 370 of them
    /// took 13 s here. The counters are disabled by then; a grandchild
    /// (reparented to init, which reaps it) holds them until ours are
    /// closed, then exits and pays that time, not the user.
    fn drop(&mut self) {
        if self.counters.iter().map(Vec::len).sum::<usize>() < 16 {
            return;
        }
        let mut held = [0; 2];
        // SAFETY: a valid array of two ints.
        if unsafe { libc::pipe2(held.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        // SAFETY: the children make async-signal-safe calls only (fork,
        // close, read, _exit); the grandchild waits for EOF on `held`, that
        // is until this process closed its end (after its counters).
        unsafe {
            let child = libc::fork();
            if child == 0 {
                if libc::fork() == 0 {
                    libc::close(held[1]);
                    let mut b = 0u8;
                    libc::read(held[0], (&mut b as *mut u8).cast(), 1);
                    libc::_exit(0);
                }
                libc::_exit(0);
            }
            if child > 0 {
                let mut status = 0;
                while libc::waitpid(child, &mut status, 0) < 0
                    && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                {
                }
            }
        }
        drop(std::mem::take(&mut self.counters));
        // SAFETY: our ends of the pipe; the grandchild now exits.
        unsafe {
            libc::close(held[0]);
            libc::close(held[1]);
        }
    }
}

/// A refused perf_event_open, with what to do about it.
fn open_error(err: std::io::Error, name: &str, tid: libc::pid_t) -> anyhow::Error {
    let hint = match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "; counting tracepoints of another process needs root or CAP_PERFMON (or \
             kernel.perf_event_paranoid = -1)"
        }
        Some(libc::ESRCH) => "; the process is gone",
        Some(libc::EMFILE) | Some(libc::ENFILE) => {
            "; too many open files: raise the limit (ulimit -n), one descriptor per syscall and \
             thread"
        }
        _ => "",
    };
    anyhow::anyhow!("counting syscall {name} of thread {tid}: perf_event_open: {err}{hint}")
}

/// Raises the soft open-file limit towards `want` (up to the hard limit).
fn raise_fd_limit(want: usize) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && (lim.rlim_cur as usize) < want {
            lim.rlim_cur = (want as libc::rlim_t).min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// The threads of process `pid` (`/proc/PID/task`).
pub fn threads_of(pid: libc::pid_t) -> Result<Vec<libc::pid_t>> {
    let dir = format!("/proc/{pid}/task");
    let mut tids: Vec<libc::pid_t> = std::fs::read_dir(&dir)
        .with_context(|| format!("process {pid}: no such process ({dir})"))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// What a count saw: the calls by syscall name, and the target's CPU time
/// and wall time over the window.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    pub counts: BTreeMap<String, u64>,
    /// User + system time of the target (its threads, and the children it
    /// waited for), ns.
    pub cpu_ns: u64,
    pub wall_ns: u64,
    /// The target's CPU time per call with one counter per thread
    /// (`--pid`'s window after the count): its cost without ~370 counters per thread,
    /// whose switching in and out at every context switch inflates a busy
    /// server's CPU time (nginx: 125 -> 215 ms per ab run).
    pub light: Option<Light>,
}

/// The least CPU time the light window must see to time the target's
/// calls (20 ticks of 10 ms: within 5%), ns.
pub const LIGHT_MIN_CPU_NS: u64 = 200_000_000;

impl Counted {
    /// The target's CPU time a prediction is a share of, ns, and a note
    /// saying where it came from: its calls at its CPU time per call in
    /// the light window, when there was one that saw enough CPU time (what
    /// the full count cost it is left out); else the time taken while
    /// every syscall was counted by name.
    pub fn cpu_for_prediction(&self) -> (u64, Option<String>) {
        let calls: u64 = self.counts.values().sum();
        let Some(light) = self.light else {
            return (self.cpu_ns, None);
        };
        match light.cpu_ns_per_call() {
            // CPU time is read in clock ticks: too few of them time nothing.
            Some(_) if light.cpu_ns < LIGHT_MIN_CPU_NS => (
                self.cpu_ns,
                Some(format!(
                    "the target's CPU time is the one taken while each syscall was counted by \
                     name, which the counters inflate (a server that switches often: by up to \
                     80%): over the {:.1} s after the count, with one counter per thread, it used \
                     {:.0} ms, too little to time its calls in clock ticks (count while the load \
                     goes on: a longer load, or a shorter --for)",
                    light.wall_ns as f64 / 1e9,
                    light.cpu_ns as f64 / 1e6
                )),
            ),
            Some(per_call) if calls > 0 => {
                let cpu_ns = (per_call * calls as f64).round() as u64;
                let note = format!(
                    "the target's CPU time, {:.2} s, is its {calls} calls at {:.2} us each, its \
                     CPU time per call over the {:.1} s after the count, with one counter per \
                     thread ({} calls); while each syscall was counted by name it used {:.2} s \
                     ({:+.0}%), the counters' own cost, left out",
                    cpu_ns as f64 / 1e9,
                    per_call / 1000.0,
                    light.wall_ns as f64 / 1e9,
                    light.calls,
                    self.cpu_ns as f64 / 1e9,
                    (self.cpu_ns as f64 / cpu_ns as f64 - 1.0) * 100.0
                );
                (cpu_ns, Some(note))
            }
            None if calls > 0 => (
                self.cpu_ns,
                Some(format!(
                    "the target's CPU time is the one taken while each syscall was counted by \
                     name, which the counters inflate (a server that switches often: by up to \
                     80%): it made no call in the {:.1} s after the count, so its calls could \
                     not be timed without them (count while the load goes on: a longer load, \
                     or a shorter --for)",
                    light.wall_ns as f64 / 1e9
                )),
            ),
            _ => (self.cpu_ns, None),
        }
    }
}

/// A window counted with one `raw_syscalls:sys_enter` counter per thread:
/// every call, not by syscall, at a fraction of the full count's cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Light {
    pub calls: u64,
    pub cpu_ns: u64,
    pub wall_ns: u64,
}

impl Light {
    /// CPU time per call, ns; None without calls.
    pub fn cpu_ns_per_call(&self) -> Option<f64> {
        (self.calls > 0).then(|| self.cpu_ns as f64 / self.calls as f64)
    }
}

/// The name of [`every_syscall_event`].
pub const EVERY_SYSCALL: &str = "raw_syscalls:sys_enter";

/// The `raw_syscalls:sys_enter` tracepoint (every syscall), as an event
/// to count.
pub fn every_syscall_event() -> Result<SyscallEvent> {
    let path = tracefs()?.join("events/raw_syscalls/sys_enter/id");
    let id = std::fs::read_to_string(&path)
        .with_context(|| format!("reading {}", path.display()))?
        .trim()
        .parse()
        .with_context(|| format!("{} is not a number", path.display()))?;
    Ok(SyscallEvent {
        name: EVERY_SYSCALL.into(),
        nr: u32::MAX,
        id,
    })
}

/// Runs `argv` to completion with its syscalls counted (its threads and
/// every process it starts, from before its execve), its stdout to
/// /dev/null; returns the counts and its exit status (a wait status).
pub fn count_command(argv: &[String]) -> Result<(Counted, libc::c_int)> {
    use std::ffi::CString;
    let events = syscall_events()?;
    let strings: Vec<CString> = argv
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .context("an argument contains a NUL byte")?;
    let program = crate::sys::find_in_path(&argv[0], std::env::var_os("PATH").as_deref())
        .ok_or_else(|| {
            crate::error::UsageError::new(format!(
                "{}: not found on PATH: give the program's path or install it",
                argv[0]
            ))
        })?;
    let program = CString::new(program.as_os_str().as_encoded_bytes())
        .context("the program path contains a NUL byte")?;
    let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // The command's output is not secperf's: its stdout goes to
    // /dev/null (stderr is kept, for its errors).
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .context("opening /dev/null")?;
    let null_fd = std::os::fd::AsRawFd::as_raw_fd(&null);
    let mut go = [0; 2];
    // SAFETY: a valid array of two ints.
    if unsafe { libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(crate::sys::SysError::last("pipe2").into());
    }
    // SAFETY: the child makes async-signal-safe calls only (read, close, dup2, execv,
    // _exit) on data prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(crate::sys::SysError::last("fork").into());
    }
    if pid == 0 {
        // SAFETY: as above; never returns.
        unsafe {
            libc::close(go[1]);
            let mut b = 0u8;
            // Wait until the counters are on: EOF or a byte.
            libc::read(go[0], (&mut b as *mut u8).cast(), 1);
            libc::close(go[0]);
            libc::dup2(null_fd, 1);
            libc::execv(program.as_ptr(), ptrs.as_ptr());
            libc::_exit(127)
        }
    }
    // SAFETY: the child's end.
    unsafe { libc::close(go[0]) };
    let counters = SyscallCounters::open(events, &[pid]).and_then(|mut c| {
        c.enable()?;
        Ok(c)
    });
    // Release the child whatever happened (it then execs, or is killed).
    // SAFETY: our end of the pipe.
    unsafe {
        if counters.is_err() {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::close(go[1]);
    }
    let started = std::time::Instant::now();
    let mut status = 0;
    // SAFETY: all-zero is a valid rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: our child; valid out-pointers.
    while unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } < 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(crate::sys::SysError::last("wait4").into());
        }
    }
    let wall_ns = started.elapsed().as_nanos() as u64;
    let mut counters = counters?;
    counters.disable()?;
    let tv_ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    Ok((
        Counted {
            counts: counters.read()?,
            cpu_ns: tv_ns(usage.ru_utime) + tv_ns(usage.ru_stime),
            wall_ns,
            light: None,
        },
        status,
    ))
}

/// Of several counted runs of one command, the one whose CPU time is the
/// median (the lower middle one of an even number).
pub fn median_run(mut runs: Vec<Counted>) -> Counted {
    assert!(!runs.is_empty(), "at least one run");
    runs.sort_by_key(|r| r.cpu_ns);
    runs.swap_remove((runs.len() - 1) / 2)
}

/// CPU time of process `pid` so far, ns: user + system of its threads and
/// of the children it waited for (`/proc/PID/stat` fields 14-17).
pub fn cpu_ns_of(pid: libc::pid_t) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("process {pid}: no such process"))?;
    // The command name (field 2) may hold spaces: fields after its ')'.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .with_context(|| format!("/proc/{pid}/stat: {stat}"))?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state): fields 14..=17 are f[11..=14].
    let ticks: u64 = f
        .get(11..15)
        .with_context(|| format!("/proc/{pid}/stat is short: {stat}"))?
        .iter()
        .map(|v| v.parse::<u64>())
        .sum::<Result<u64, _>>()
        .with_context(|| format!("/proc/{pid}/stat: {stat}"))?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Ok(ticks * 1_000_000_000 / hz)
}

/// The processes of `pid`'s tree: `pid` first, then every descendant
/// living now (by the parent links of `/proc/*/stat`), in pid order. An
/// nginx master's workers, a PostgreSQL postmaster's backends.
pub fn tree_of(pid: libc::pid_t) -> Result<Vec<libc::pid_t>> {
    std::fs::metadata(format!("/proc/{pid}"))
        .with_context(|| format!("process {pid}: no such process"))?;
    let mut children: BTreeMap<libc::pid_t, Vec<libc::pid_t>> = BTreeMap::new();
    for e in std::fs::read_dir("/proc")
        .context("reading /proc")?
        .flatten()
    {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        // A process may exit while we read: it is simply not in the tree.
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat"))
            && let Some(ppid) = parent_of(&stat)
        {
            children.entry(ppid).or_default().push(p);
        }
    }
    Ok(descendants(pid, &children))
}

/// `root` and its descendants in `children` (parent -> children), root
/// first, then in pid order.
fn descendants(
    root: libc::pid_t,
    children: &BTreeMap<libc::pid_t, Vec<libc::pid_t>>,
) -> Vec<libc::pid_t> {
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        if out.contains(&p) {
            continue;
        }
        out.push(p);
        todo.extend(children.get(&p).into_iter().flatten().copied());
    }
    out[1..].sort_unstable();
    out
}

/// The parent pid of a `/proc/PID/stat` line (field 4).
fn parent_of(stat: &str) -> Option<libc::pid_t> {
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// CPU time of the processes `pids`, ns, as [`cpu_ns_of`] counts it (each
/// one's threads and the children it waited for); a process that has
/// exited counts nothing.
pub fn tree_cpu_ns(pids: &[libc::pid_t]) -> u64 {
    pids.iter().filter_map(|&p| cpu_ns_of(p).ok()).sum()
}

/// How often `--pid`'s count reads its every-call counter, for the line
/// that says when the calls came.
pub const SLICE: std::time::Duration = std::time::Duration::from_millis(250);

/// Counts the syscalls of running process `pid` and its whole tree (every
/// thread of it and of its descendants now, and what they start) over all
/// of `window`, each by name, then times its calls for `light_window` more
/// with one counter per thread; calls `tick` about once a second with the
/// time left. Read-only: nothing is applied to the processes.
///
/// The ~370 by-name counters a thread (one per syscall tracepoint) are on
/// for the whole window, so that a load that comes in a burst anywhere in
/// it is counted whole and by name exactly; one `raw_syscalls:sys_enter`
/// counter a thread beside them, read every [`SLICE`], says when the calls
/// came. Their switching at every context switch inflates a busy server's
/// CPU time, so the target's CPU time per call is taken after the window
/// with that one counter alone (its [`Light`]); a load that stopped by
/// then leaves too little CPU time to time, which the prediction says.
///
/// The CPU time is the tree's: the sum over its processes at the end (those
/// started during the window included) less the sum at the start; a
/// process that exits and is reaped inside the tree moves its time into
/// its parent's, so it still counts.
pub fn count_pid(
    pid: libc::pid_t,
    window: std::time::Duration,
    light_window: std::time::Duration,
    tick: &mut dyn FnMut(std::time::Duration),
) -> Result<(Counted, Tree, Window)> {
    let before = tree_of(pid)?;
    let mut tids = Vec::new();
    for &p in &before {
        // A descendant may exit between the two reads.
        match threads_of(p) {
            Ok(t) => tids.extend(t),
            Err(e) if p == pid => return Err(e),
            Err(_) => {}
        }
    }
    // The target's own threads must be counted; a descendant's may be gone
    // by now (what it did is then in its parent's counts, by inherit, only
    // if it was started during the window).
    let own = threads_of(pid)?;
    let required = |t| own.contains(&t);
    let mut every = SyscallCounters::open_where(vec![every_syscall_event()?], &tids, &required)?;
    let mut named = SyscallCounters::open_where(syscall_events()?, &tids, &required)?;
    let total = |c: &mut SyscallCounters| -> Result<u64> { Ok(c.read()?.values().sum()) };
    let gone = |pid| {
        format!("process {pid} exited during the count: count a shorter --for, or give -- CMD")
    };
    let cpu_start = tree_cpu_ns(&before);
    let mut w = Window {
        slice_s: SLICE.as_secs_f64(),
        ..Window::default()
    };
    let started = std::time::Instant::now();
    every.enable()?;
    named.enable()?;
    let mut calls_at = 0;
    while let Some(left) = window.checked_sub(started.elapsed()) {
        if left.is_zero() {
            break;
        }
        tick(left + light_window);
        std::thread::sleep(left.min(SLICE));
        let calls = total(&mut every)?;
        w.calls_per_slice.push(calls - calls_at);
        calls_at = calls;
    }
    named.disable()?;
    let wall_ns = started.elapsed().as_nanos() as u64;
    let after = tree_of(pid).with_context(|| gone(pid))?;
    let cpu_after = tree_cpu_ns(&after);
    w.calls = total(&mut every)?;
    let counts = named.read()?;
    // One counter a thread alone: the target's CPU time per call.
    let light = if light_window.is_zero() {
        None
    } else {
        let light_started = std::time::Instant::now();
        while let Some(left) = light_window.checked_sub(light_started.elapsed()) {
            if left.is_zero() {
                break;
            }
            tick(left);
            std::thread::sleep(left.min(std::time::Duration::from_secs(1)));
        }
        let end = tree_of(pid).with_context(|| gone(pid))?;
        Some(Light {
            calls: total(&mut every)? - w.calls,
            cpu_ns: tree_cpu_ns(&end).saturating_sub(cpu_after),
            wall_ns: light_started.elapsed().as_nanos() as u64,
        })
    };
    every.disable()?;
    let tree = Tree {
        processes: before.len(),
        threads: tids.len(),
        gone: tids.len() - named.threads(),
        started: after.iter().filter(|p| !before.contains(p)).count(),
    };
    Ok((
        Counted {
            counts,
            cpu_ns: cpu_after.saturating_sub(cpu_start),
            wall_ns,
            light,
        },
        tree,
        w,
    ))
}

/// When `--pid`'s calls came: every call of each slice of the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub slice_s: f64,
    /// Calls in each slice, in order.
    pub calls_per_slice: Vec<u64>,
    /// Calls in all.
    pub calls: u64,
}

impl Window {
    /// The seconds of the window from the start of the first slice with a
    /// call to the end of the last one, or None without calls.
    pub fn active_s(&self) -> Option<(f64, f64)> {
        let first = self.calls_per_slice.iter().position(|&n| n > 0)?;
        let last = self.calls_per_slice.iter().rposition(|&n| n > 0)?;
        Some((
            first as f64 * self.slice_s,
            (last + 1) as f64 * self.slice_s,
        ))
    }

    /// What was counted when, for the user: "4012 calls, from 1.00 s to
    /// 2.75 s of the window, each counted by name".
    pub fn describe(&self) -> String {
        let Some((from, to)) = self.active_s() else {
            return "no call at any time of the window".into();
        };
        format!(
            "{} calls, from {from:.2} s to {to:.2} s of the window, each counted by name",
            self.calls
        )
    }
}

/// What [`count_pid`] counted: the processes and threads of the tree when
/// it started, and the processes started during the window that were
/// still there at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tree {
    pub processes: usize,
    pub threads: usize,
    /// Threads listed but gone before their counters opened (short-lived
    /// children): not counted.
    pub gone: usize,
    pub started: usize,
}

impl Tree {
    /// "3 processes, 5 threads (1 process started during the window)".
    pub fn describe(&self) -> String {
        let n = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "es" });
        let mut s = format!(
            "{}, {} thread{}",
            n(self.processes, "process"),
            self.threads,
            if self.threads == 1 { "" } else { "s" }
        );
        let mut notes = Vec::new();
        if self.gone > 0 {
            notes.push(if self.gone == 1 {
                "1 thread gone before it could be counted".to_string()
            } else {
                format!("{} threads gone before they could be counted", self.gone)
            });
        }
        if self.started > 0 {
            notes.push(format!(
                "{} started during the window",
                n(self.started, "process")
            ));
        }
        if !notes.is_empty() {
            s.push_str(&format!(" ({})", notes.join("; ")));
        }
        s
    }
}

/// `perf trace -s`'s calls per syscall, summed over the processes and
/// threads of its summary: what secperf's counts are checked against.
pub fn perf_trace_summary(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 4
            && f[0].chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && let (Ok(calls), Ok(_errors)) = (f[1].parse::<u64>(), f[2].parse::<u64>())
            && f[3].contains('.')
        {
            *out.entry(f[0].to_string()).or_insert(0) += calls;
        }
    }
    out
}

#[cfg(test)]
mod tests;
