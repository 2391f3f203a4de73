//! Which CPUs are online, from sysfs, with the kernel's list syntax parsed.

use anyhow::{Context, Result, bail};

/// Parses the kernel's CPU list format: "0-3,8,10-11".
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (
                    a.trim()
                        .parse()
                        .with_context(|| format!("bad CPU number '{a}'"))?,
                    b.trim()
                        .parse()
                        .with_context(|| format!("bad CPU number '{b}'"))?,
                );
                if b < a {
                    bail!("bad CPU range '{part}'");
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(
                part.trim()
                    .parse()
                    .with_context(|| format!("bad CPU number '{part}'"))?,
            ),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The online CPUs (`/sys/devices/system/cpu/online`), falling back to the
/// CPUs this process may run on.
pub fn online_cpus() -> Result<Vec<usize>> {
    if let Ok(s) = std::fs::read_to_string("/sys/devices/system/cpu/online") {
        let cpus = parse_cpu_list(&s)?;
        if !cpus.is_empty() {
            return Ok(cpus);
        }
    }
    let n = std::thread::available_parallelism()
        .context("counting CPUs")?
        .get();
    Ok((0..n).collect())
}

/// The CPUs this process is allowed to run on (its affinity mask), in order.
/// Tasks are pinned to these, so a `taskset`-restricted secperf stays inside.
pub fn allowed_cpus() -> Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        crate::sys::check_int(
            "sched_getaffinity",
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
        )?;
        set
    };
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET reads inside the set for indices below its bit size.
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_singles() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_cpu_list("a-b").is_err());
        assert!(parse_cpu_list("3-1").is_err());
    }

    #[test]
    fn this_machine_has_cpus() {
        assert!(!online_cpus().unwrap().is_empty());
        assert!(!allowed_cpus().unwrap().is_empty());
    }
}
