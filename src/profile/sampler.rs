//! Sampling the tasks of one measurement with `perf_event_open` on the
//! `cpu-clock` software event (it works in VMs without a hardware PMU):
//! every sample carries the instruction pointer and the kernel call chain
//! (user call chains are left out: they would need frame pointers and cost
//! more per sample).
//!
//! A task pinned to a CPU gets one event on that CPU with `inherit`, so the
//! processes it forks (which keep its affinity) are sampled too, as `perf
//! record` does; an unpinned task gets one event that follows the task
//! itself on any CPU (the kernel refuses `inherit` there). A server's
//! threads (followed) get one event per online CPU each, with `inherit`,
//! so the processes they fork while sampled (PostgreSQL's backends) are
//! sampled too, as `perf record -p` does. Events are
//! created disabled, enabled when the kept slices start, drained after
//! every slice, and disabled when the last one ends.

use std::collections::HashMap;

use anyhow::{Context, Result};
use perf_event::events::Software;
use perf_event::{Builder, SampleFlag, Sampler};

/// Kernel markers in a call chain (`PERF_CONTEXT_*`) are at or above this.
const PERF_CONTEXT_MAX: u64 = (-4095i64) as u64;
const MISC_CPUMODE_MASK: u16 = 7;
const MISC_USER: u16 = 2;
const MISC_GUEST_USER: u16 = 5;
/// Deepest kernel call chain kept.
const MAX_STACK: u16 = 64;

/// What one sample was: a user-space address, or a kernel call chain
/// (innermost first).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Site {
    User(u64),
    Kernel(Vec<u64>),
}

/// Samples of one half, counted by site.
#[derive(Debug, Default, Clone)]
pub struct RawProfile {
    pub sites: HashMap<Site, u64>,
    pub lost: u64,
}

/// The open events of one half.
pub struct TaskSampler {
    samplers: Vec<Sampler>,
    pub raw: RawProfile,
}

/// Ring buffer bytes per event for `hz` samples a second drained every
/// `drain_ms`: room for two drain intervals of ~320-byte samples.
pub fn buffer_bytes(hz: u64, drain_ms: u64) -> usize {
    let want = hz.saturating_mul(drain_ms).saturating_mul(640) / 1000;
    (want as usize)
        .next_power_of_two()
        .clamp(128 << 10, 4 << 20)
}

fn builder(hz: u64) -> Builder<'static> {
    let mut b = Builder::new(Software::CPU_CLOCK);
    b.sample_period(1_000_000_000 / hz.max(1))
        .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::CALLCHAIN)
        .exclude_callchain_user(true)
        .sample_max_stack(MAX_STACK)
        .include_kernel()
        .exclude_hv(true)
        .enabled(false);
    b
}

/// Why sampling is refused here, or None when it works: opens (and closes)
/// one kernel-sampling event on the calling thread.
pub fn unavailable(hz: u64) -> Option<String> {
    match builder(hz).observe_self().any_cpu().build() {
        Ok(_) => None,
        Err(e) => Some(explain_open_error(&e)),
    }
}

/// What an open error means and how to get past it.
pub fn explain_open_error(e: &std::io::Error) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string());
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "perf_event_open refused kernel sampling ({e}): kernel.perf_event_paranoid is \
             {paranoid}; sampling kernel code of your own processes needs 1 or less \
             (sysctl kernel.perf_event_paranoid=1) or root (CAP_PERFMON)"
        ),
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => {
            format!("this kernel has no cpu-clock sampling event ({e})")
        }
        Some(libc::ENOSYS) => "this kernel has no perf_event_open (CONFIG_PERF_EVENTS)".to_string(),
        _ => format!("perf_event_open failed: {e}"),
    }
}

impl TaskSampler {
    /// Opens disabled events on tasks `tids`; `cpus[i]` is task i's CPU
    /// when pinned; with `follow`, on every online CPU with `inherit`.
    pub fn open(
        tids: &[i32],
        cpus: &[Option<usize>],
        follow: bool,
        hz: u64,
        drain_ms: u64,
    ) -> Result<TaskSampler> {
        let bytes = buffer_bytes(hz, drain_ms);
        let mut samplers = Vec::with_capacity(tids.len());
        if follow {
            let online = crate::sys::cpus::online_cpus().context("reading the online CPUs")?;
            for &tid in tids {
                for &cpu in &online {
                    let mut b = builder(hz);
                    b.observe_pid(tid).one_cpu(cpu).inherit(true);
                    let counter = match b.build() {
                        Ok(c) => c,
                        // Gone since it was listed (a short-lived thread).
                        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => continue,
                        Err(e) => {
                            return Err(anyhow::anyhow!(explain_open_error(&e)))
                                .with_context(|| format!("sampling tid {tid} on CPU {cpu}"));
                        }
                    };
                    samplers.push(counter.sampled(bytes).with_context(|| {
                        format!("mapping a {bytes}-byte sample buffer for tid {tid}")
                    })?);
                }
            }
            return Ok(TaskSampler {
                samplers,
                raw: RawProfile::default(),
            });
        }
        for (i, &tid) in tids.iter().enumerate() {
            let mut b = builder(hz);
            b.observe_pid(tid);
            match cpus.get(i).copied().flatten() {
                Some(cpu) => b.one_cpu(cpu).inherit(true),
                None => b.any_cpu(),
            };
            let counter = b
                .build()
                .map_err(|e| anyhow::anyhow!(explain_open_error(&e)))
                .with_context(|| format!("sampling task {i} (tid {tid})"))?;
            let sampler = counter
                .sampled(bytes)
                .with_context(|| format!("mapping a {bytes}-byte sample buffer for task {i}"))?;
            samplers.push(sampler);
        }
        Ok(TaskSampler {
            samplers,
            raw: RawProfile::default(),
        })
    }

    pub fn enable(&mut self) -> Result<()> {
        for s in &mut self.samplers {
            s.enable().context("enabling sampling")?;
        }
        Ok(())
    }

    pub fn disable(&mut self) -> Result<()> {
        for s in &mut self.samplers {
            s.disable().context("disabling sampling")?;
        }
        Ok(())
    }

    /// Moves every record in the ring buffers into `raw`.
    pub fn drain(&mut self) {
        for s in &mut self.samplers {
            while let Some(record) = s.next_record() {
                let bytes = record.to_contiguous();
                match record.ty() {
                    PERF_RECORD_SAMPLE => {
                        if let Some(site) = parse_sample(record.misc(), &bytes) {
                            *self.raw.sites.entry(site).or_default() += 1;
                        }
                    }
                    PERF_RECORD_LOST => {
                        self.raw.lost += read_u64(&bytes, 8).unwrap_or(0);
                    }
                    _ => {}
                }
            }
        }
    }
}

const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_SAMPLE: u32 = 9;

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// One `PERF_RECORD_SAMPLE` body for `IP | TID | CALLCHAIN`: ip (u64),
/// pid and tid (u32 each), nr (u64), nr addresses. Parsed here because
/// `perf-event-data` 0.1.8 rejects a sample whose call chain is empty
/// (every user-space sample, since user chains are not collected).
pub fn parse_sample(misc: u16, bytes: &[u8]) -> Option<Site> {
    let ip = read_u64(bytes, 0)?;
    let nr = read_u64(bytes, 16)? as usize;
    let chain: Vec<u64> = (0..nr.min(1024))
        .map_while(|k| read_u64(bytes, 24 + 8 * k))
        .collect();
    let mode = misc & MISC_CPUMODE_MASK;
    if mode == MISC_USER || mode == MISC_GUEST_USER {
        return Some(Site::User(ip));
    }
    let mut frames: Vec<u64> = chain
        .into_iter()
        .filter(|&a| a < PERF_CONTEXT_MAX)
        .collect();
    if frames.first() != Some(&ip) && ip != 0 {
        frames.insert(0, ip);
    }
    Some(Site::Kernel(frames))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(ip: u64, chain: &[u64]) -> Vec<u8> {
        let mut b = ip.to_ne_bytes().to_vec();
        b.extend(7u32.to_ne_bytes());
        b.extend(7u32.to_ne_bytes());
        b.extend((chain.len() as u64).to_ne_bytes());
        for a in chain {
            b.extend(a.to_ne_bytes());
        }
        b
    }

    #[test]
    fn samples_parse_with_and_without_call_chains() {
        // A user sample: no chain (user chains are not collected).
        assert_eq!(
            parse_sample(2, &body(0x5555_0000, &[])),
            Some(Site::User(0x5555_0000))
        );
        // A kernel sample: the context marker is dropped, the IP leads.
        let k = parse_sample(
            1,
            &body(
                0xffff_1000,
                &[PERF_CONTEXT_MAX + 3967, 0xffff_1000, 0xffff_2000],
            ),
        );
        assert_eq!(k, Some(Site::Kernel(vec![0xffff_1000, 0xffff_2000])));
        // A chain that lacks the IP gets it in front.
        let k = parse_sample(1, &body(0xffff_1000, &[0xffff_2000]));
        assert_eq!(k, Some(Site::Kernel(vec![0xffff_1000, 0xffff_2000])));
        // Truncated records are skipped, never a panic.
        assert_eq!(parse_sample(1, &[0; 10]), None);
        let mut long = body(1, &[2, 3]);
        long[16] = 200; // claims 200 frames, has 2
        assert_eq!(parse_sample(1, &long), Some(Site::Kernel(vec![1, 2, 3])));
    }

    #[test]
    fn buffers_hold_two_drain_intervals_within_bounds() {
        assert_eq!(buffer_bytes(4000, 200), 1 << 19);
        assert_eq!(buffer_bytes(100, 10), 128 << 10);
        assert_eq!(buffer_bytes(100_000, 5000), 4 << 20);
    }

    #[test]
    fn samples_this_thread_with_kernel_call_chains() {
        if let Some(why) = unavailable(4000) {
            let test = "samples_this_thread_with_kernel_call_chains";
            crate::testing::skip_kernel_feature(test, "cpu-clock-sampling", &why);
            return;
        }
        let tid = crate::sys::gettid();
        let mut s = TaskSampler::open(&[tid], &[None], false, 4000, 200).expect("open");
        s.enable().expect("enable");
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(100) {
            // SAFETY: getppid cannot fail.
            unsafe { libc::getppid() };
        }
        s.disable().expect("disable");
        s.drain();
        let kernel = s
            .raw
            .sites
            .iter()
            .filter(|(site, _)| matches!(site, Site::Kernel(f) if f.len() > 1))
            .count();
        let total: u64 = s.raw.sites.values().sum();
        assert!(total > 50, "only {total} samples in 100 ms at 4000 Hz");
        assert!(kernel > 0, "no kernel call chain among {total} samples");
    }

    #[test]
    fn followed_processes_are_sampled_with_the_children_they_fork() {
        if let Some(why) = unavailable(4000) {
            let test = "followed_processes_are_sampled_with_the_children_they_fork";
            crate::testing::skip_kernel_feature(test, "cpu-clock-sampling", &why);
            return;
        }
        // The shell waits on a pipe, then forks a subshell that spins: only
        // the fork made after the events opened does the work.
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "read x; (i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done)",
            ])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let pid = child.id() as i32;
        let mut s = TaskSampler::open(&[pid], &[], true, 4000, 200).expect("open");
        s.enable().expect("enable");
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(b"go\n").expect("write");
        }
        assert!(child.wait().expect("wait").success());
        s.disable().expect("disable");
        s.drain();
        let total: u64 = s.raw.sites.values().sum();
        assert!(
            total > 50,
            "only {total} samples of the forked subshell's spin"
        );
    }
}
