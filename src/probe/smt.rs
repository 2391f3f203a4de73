//! Simultaneous multithreading: /sys/devices/system/cpu/smt/control and
//! /sys/devices/system/cpu/smt/active.
//!
//! With SMT on, two tasks can share one core's caches and execution units,
//! so a task ladder measures something else; some mitigations also cost
//! more or less with SMT off.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Probed, files};

const CONTROL: &str = "/sys/devices/system/cpu/smt/control";
const ACTIVE: &str = "/sys/devices/system/cpu/smt/active";

/// The kernel's SMT state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmtInfo {
    /// "on", "off", "forceoff", "notsupported" or "notimplemented".
    pub control: String,
    /// Whether sibling threads are online now.
    pub active: bool,
}

/// Reads both files under `root`.
pub fn probe(root: &Path) -> Probed<SmtInfo> {
    let control = match files::read_trimmed(root, CONTROL) {
        Ok(c) => c,
        Err(reason) => return Probed::unavailable(reason),
    };
    match files::read_u32(root, ACTIVE) {
        Ok(a) => Probed::Ok(SmtInfo {
            control,
            active: a != 0,
        }),
        Err(reason) => Probed::unavailable(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::write_tree;

    #[test]
    fn reads_control_and_active() {
        let root = write_tree(&[(CONTROL, "on\n"), (ACTIVE, "1\n")]);
        let s = probe(root.path());
        assert_eq!(
            s,
            Probed::Ok(SmtInfo {
                control: "on".into(),
                active: true
            })
        );
        let root = write_tree(&[(CONTROL, "notsupported\n"), (ACTIVE, "0\n")]);
        assert!(!probe(root.path()).value().unwrap().active);
    }

    #[test]
    fn missing_directory_has_a_reason() {
        let root = write_tree(&[]);
        assert!(probe(root.path()).reason().unwrap().contains("smt/control"));
    }
}
