//! Address space layout randomisation: `kernel.randomize_va_space`
//! (/proc/sys/kernel/randomize_va_space).
//!
//! It changes where mappings land and so the TLB and cache behaviour of
//! every workload; a run without it is not comparable to one with it.

use std::path::Path;

use super::{Probed, files};

const FILE: &str = "/proc/sys/kernel/randomize_va_space";

/// Reads `kernel.randomize_va_space` under `root`.
pub fn probe(root: &Path) -> Probed<u32> {
    files::read_u32(root, FILE).into()
}

/// Human words for a `randomize_va_space` value.
pub fn text(v: u32) -> &'static str {
    match v {
        0 => "off",
        1 => "stack, mmap, vdso",
        2 => "stack, mmap, vdso, heap (full)",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::write_tree;

    #[test]
    fn reads_the_sysctl() {
        let root = write_tree(&[(FILE, "2\n")]);
        assert_eq!(probe(root.path()), Probed::Ok(2));
        assert_eq!(text(0), "off");
        let empty = write_tree(&[]);
        assert!(
            probe(empty.path())
                .reason()
                .unwrap()
                .contains("randomize_va_space")
        );
    }
}
