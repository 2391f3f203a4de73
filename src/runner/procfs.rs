//! Per-sample quality readings from /proc: involuntary context switches of
//! a task (another thread took its CPU), the time it waited on a run queue
//! (another thread had its CPU while it could have run) and hypervisor
//! steal time of the CPUs it ran on. All explain a noisy sample; none is
//! ever used to drop one.

/// `nonvoluntary_ctxt_switches` of a task (any thread id), or None if the
/// task is gone.
pub fn involuntary_switches(tid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    parse_status_nonvoluntary(&s)
}

pub fn parse_status_nonvoluntary(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
}

/// How long a task (any thread id) has been runnable but waiting on a run
/// queue, in nanoseconds, and how many times it was put on a CPU, from
/// `/proc/<tid>/schedstat`; None if the task is gone or the kernel keeps
/// no schedstats (CONFIG_SCHED_INFO off).
pub fn run_queue_wait(tid: i32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{tid}/schedstat")).ok()?;
    parse_schedstat_wait(&s)
}

/// The second and third of schedstat's three fields (time on the CPU,
/// time waiting on a run queue, times run on a CPU).
pub fn parse_schedstat_wait(schedstat: &str) -> Option<(u64, u64)> {
    let mut it = schedstat.split_whitespace().skip(1);
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Steal time per CPU in clock ticks from /proc/stat: index = CPU number.
/// The aggregate line is returned as the last element's sum by callers.
pub fn steal_ticks() -> Vec<(Option<usize>, u64)> {
    std::fs::read_to_string("/proc/stat")
        .map(|s| parse_stat_steal(&s))
        .unwrap_or_default()
}

/// Parses the `cpu` lines of /proc/stat into (cpu number or None for the
/// total, steal ticks). Steal is the 8th value after the name.
pub fn parse_stat_steal(stat: &str) -> Vec<(Option<usize>, u64)> {
    stat.lines()
        .filter(|l| l.starts_with("cpu"))
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let name = it.next()?;
            let cpu = match name.strip_prefix("cpu")? {
                "" => None,
                n => Some(n.parse().ok()?),
            };
            let steal = it.nth(7)?.parse().ok()?;
            Some((cpu, steal))
        })
        .collect()
}

/// (busy, all) clock ticks of the machine from /proc/stat's `cpu` line:
/// busy is everything but idle and iowait.
pub fn parse_stat_busy(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let all: u64 = v.iter().sum();
    let idle = v.get(3)? + v.get(4)?;
    Some((all - idle, all))
}

/// How busy the whole machine is, percent of all its CPUs' time, over
/// `window`; None when /proc/stat cannot be read.
pub fn machine_busy_pct(window: std::time::Duration) -> Option<f64> {
    let read = || parse_stat_busy(&std::fs::read_to_string("/proc/stat").ok()?);
    let (b0, a0) = read()?;
    std::thread::sleep(window);
    let (b1, a1) = read()?;
    (a1 > a0).then(|| (b1 - b0) as f64 / (a1 - a0) as f64 * 100.0)
}

/// Steal ticks summed over `cpus`, or the machine total when `cpus` is None.
pub fn steal_for(readings: &[(Option<usize>, u64)], cpus: Option<&[usize]>) -> u64 {
    readings
        .iter()
        .filter(|(c, _)| match (cpus, c) {
            (None, None) => true,
            (Some(set), Some(c)) => set.contains(c),
            _ => false,
        })
        .map(|(_, s)| *s)
        .sum()
}

/// Clock ticks per second (USER_HZ) for converting steal to milliseconds.
pub fn ticks_per_sec() -> f64 {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { hz as f64 } else { 100.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_all_but_idle_and_iowait() {
        let stat = "cpu  100 5 50 800 40 3 2 10 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        // user nice system idle iowait irq softirq steal
        assert_eq!(parse_stat_busy(stat), Some((170, 1010)));
        assert_eq!(parse_stat_busy("intr 1 2\n"), None);
        let pct = machine_busy_pct(std::time::Duration::from_millis(30));
        assert!(pct.is_none_or(|p| (0.0..=100.0).contains(&p)), "{pct:?}");
    }

    const STAT: &str = "cpu  100 0 50 1000 3 0 1 42 0 0\n\
                        cpu0 50 0 25 500 1 0 1 40 0 0\n\
                        cpu1 50 0 25 500 2 0 0 2 0 0\n\
                        intr 12345\n";

    #[test]
    fn steal_per_cpu_and_total() {
        let r = parse_stat_steal(STAT);
        assert_eq!(r, vec![(None, 42), (Some(0), 40), (Some(1), 2)]);
        assert_eq!(steal_for(&r, None), 42);
        assert_eq!(steal_for(&r, Some(&[1])), 2);
        assert_eq!(steal_for(&r, Some(&[0, 1])), 42);
    }

    #[test]
    fn status_nonvoluntary() {
        let s = "Name:\tx\nvoluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t3\n";
        assert_eq!(parse_status_nonvoluntary(s), Some(3));
        assert_eq!(parse_status_nonvoluntary("Name: x\n"), None);
    }

    #[test]
    fn schedstat_wait() {
        assert_eq!(
            parse_schedstat_wait("164454 3207226 2\n"),
            Some((3_207_226, 2))
        );
        assert_eq!(parse_schedstat_wait("164454 3207226\n"), None);
        assert_eq!(parse_schedstat_wait(""), None);
    }

    #[test]
    fn reads_this_process() {
        assert!(involuntary_switches(crate::sys::gettid()).is_some());
        assert!(run_queue_wait(crate::sys::gettid()).is_some());
        assert!(!steal_ticks().is_empty());
    }
}
