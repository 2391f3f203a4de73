//! The few facts about a machine that every report names (kernel, CPU,
//! CPUs online, active LSMs), read once from a stored probe snapshot.
//!
//! Reading is lenient: snapshots from older secperf versions had other
//! shapes (`/kernel/release/value`), and a report must still name what it
//! can rather than fail, so a missing fact is `None` or empty.

use serde::{Deserialize, Serialize};

/// Kernel, CPU and LSMs of a probe snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineFacts {
    /// `uname -r`.
    pub kernel: Option<String>,
    /// The CPU model name.
    pub cpu_model: Option<String>,
    /// CPUs online.
    pub cpus: Option<u64>,
    /// Active LSMs, in the kernel's order.
    pub lsms: Vec<String>,
}

impl MachineFacts {
    /// The facts of a snapshot (`secperf probe --json`), leniently.
    pub fn of(system: &serde_json::Value) -> MachineFacts {
        let text = |p: &str| system.pointer(p)?.as_str().map(str::to_owned);
        MachineFacts {
            kernel: text("/kernel/release").or_else(|| text("/kernel/release/value")),
            cpu_model: text("/cpu/model"),
            cpus: system.pointer("/cpu/online_count").and_then(|v| v.as_u64()),
            lsms: system
                .pointer("/lsm/modules")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// "linux 6.18.0, LSMs lockdown,capability,landlock,bpf, 2 CPUs".
    pub fn line(&self) -> String {
        format!(
            "linux {}, LSMs {}, {} CPUs",
            self.kernel.as_deref().unwrap_or("?"),
            if self.lsms.is_empty() {
                "?".to_string()
            } else {
                self.lsms.join(",")
            },
            self.cpus.map_or("?".to_string(), |n| n.to_string())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn facts_are_read_leniently() {
        let f = MachineFacts::of(&json!({
            "kernel": {"release": "6.18.0"},
            "cpu": {"model": "AMD EPYC", "online_count": 2},
            "lsm": {"modules": ["capability", "landlock"]}
        }));
        assert_eq!(f.kernel.as_deref(), Some("6.18.0"));
        assert_eq!(f.cpus, Some(2));
        assert_eq!(f.line(), "linux 6.18.0, LSMs capability,landlock, 2 CPUs");
        let old = MachineFacts::of(&json!({"kernel": {"release": {"value": "5.10"}}}));
        assert_eq!(old.kernel.as_deref(), Some("5.10"));
        assert_eq!(MachineFacts::of(&json!(null)), MachineFacts::default());
        assert_eq!(MachineFacts::default().line(), "linux ?, LSMs ?, ? CPUs");
    }
}
