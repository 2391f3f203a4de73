//! SELinux access vector cache statistics, the counters the 2004 AVC
//! patches (the `avc-2004` suite's post) exported through selinuxfs so that
//! "AVC performance can be monitored at a low level". The file
//! `/sys/fs/selinux/avc/cache_stats` has a header line and one line of six
//! counters per CPU; a snapshot sums them, and the difference of two
//! snapshots is what one workload did to the cache (a hit rate well below
//! 100% means permission checks fell back to the policy database).
//! The counters ([`AvcStats`], [`AvcDelta`]) are `model` types, since the
//! run document carries them; this module reads and parses the file.

use std::path::Path;

use anyhow::{Context, Result, bail};

pub use crate::model::{AvcDelta, AvcStats};

/// The file SELinux exports the counters in.
pub const CACHE_STATS: &str = AvcStats::FILE;

/// The header of `cache_stats`, the counters in file order.
pub const FIELDS: [&str; 6] = AvcStats::FIELDS;

impl AvcStats {
    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<AvcStats> {
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
        if header != FIELDS {
            bail!(
                "unexpected header '{}' (expected '{}')",
                header.join(" "),
                FIELDS.join(" ")
            );
        }
        let mut sum = [0u64; 6];
        for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let values: Vec<&str> = line.split_whitespace().collect();
            if values.len() != 6 {
                bail!("CPU line {}: expected 6 counters, got '{line}'", i + 1);
            }
            for (s, v) in sum.iter_mut().zip(values) {
                *s += v
                    .parse::<u64>()
                    .with_context(|| format!("CPU line {}: '{v}' is not a counter", i + 1))?;
            }
        }
        let [lookups, hits, misses, allocations, reclaims, frees] = sum;
        Ok(AvcStats {
            lookups,
            hits,
            misses,
            allocations,
            reclaims,
            frees,
        })
    }

    /// Reads `cache_stats` under `root` ("/" on a live system); None when
    /// SELinux is not active (no selinuxfs).
    pub fn read(root: &Path) -> Result<Option<AvcStats>> {
        let path = crate::probe::files::under(root, CACHE_STATS);
        match std::fs::read_to_string(&path) {
            Ok(text) => AvcStats::parse(&text)
                .map(Some)
                .with_context(|| format!("parsing {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_sums_per_cpu_lines_from_a_fixture() {
        let root = crate::probe::fixtures::fixture("selinux-enforcing");
        let s = AvcStats::read(&root).unwrap().unwrap();
        assert_eq!(
            s,
            AvcStats {
                lookups: 1932,
                hits: 1900,
                misses: 32,
                allocations: 32,
                reclaims: 0,
                frees: 14
            }
        );
        assert!((s.hit_pct().unwrap() - 98.343_685).abs() < 1e-3);
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            "",
            "lookups hits\n1 2\n",
            "lookups hits misses allocations reclaims frees\n1 2 3\n",
            "lookups hits misses allocations reclaims frees\n1 2 3 4 5 x\n",
        ] {
            assert!(AvcStats::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn absent_selinuxfs_reads_as_none() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(AvcStats::read(root.path()).unwrap(), None);
    }

    #[test]
    fn delta_counts_from_zero_after_a_reset() {
        let a = AvcStats {
            lookups: 100,
            hits: 90,
            ..Default::default()
        };
        let b = AvcStats {
            lookups: 150,
            hits: 5,
            ..Default::default()
        };
        let d = a.delta(&b);
        assert_eq!((d.lookups, d.hits), (50, 5));
        assert_eq!(AvcStats::default().hit_pct(), None);
    }
}
