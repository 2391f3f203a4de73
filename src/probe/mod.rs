//! The machine's security configuration, recorded with every run.
//!
//! A measured overhead means little without the state it was measured in:
//! kernel and CPU, active LSMs and their modes, seccomp, audit rules, CPU
//! mitigations. `probe()` reads all of it, never fails and never panics:
//! whatever it cannot read is a [`Probed::Unavailable`] carrying the reason
//! (securityfs not mounted, not root, kernel built without the feature).
//!
//! One file per item; each reads files under a root directory (`/` here,
//! fixture trees under tests/fixtures/probe in tests) or asks the kernel
//! with a system call. `report::sections::probe` writes the snapshot as the
//! text of `secperf probe`; `differences` says what differs between two snapshots
//! in a way that moves the figures; serde gives `secperf probe --json`,
//! which is also stored with every run (`kernel.release` is what run
//! listings show).
//!
//! Beyond the security state, the snapshot records what moves every figure
//! regardless of mechanism: the BPF JIT, CPU frequency governor and boost,
//! SMT, the preemption model and ASLR. Items added after the first release
//! deserialise as "not recorded" from older snapshots.

mod apparmor;
mod aslr;
mod audit;
pub mod audit_phantom;
mod bpf;
mod cpu;
mod cpufreq;
mod differences;
pub mod facts;
pub(crate) mod files;
mod jit;
mod kernel;
pub use kernel::without_virtme_script;
mod landlock;
mod lockdown;
mod lsm;
mod mitigations;
mod probed;
mod sched;
mod seccomp;
mod securityfs;
mod selinux;
mod smt;

#[cfg(test)]
pub(crate) mod fixtures;

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use apparmor::{AppArmorInfo, ProfileCounts};
pub use aslr::text as aslr_text;
pub use audit::AuditInfo;
pub use bpf::BpfLsmInfo;
pub use cpu::CpuInfo;
pub use cpufreq::CpuFreqInfo;
pub use differences::{probe_differences, short_value};
pub use facts::MachineFacts;
pub use jit::BpfJitInfo;
pub use kernel::KernelInfo;
pub use landlock::{LandlockInfo, LandlockState};
pub use lockdown::Lockdown;
pub use lsm::{LsmInfo, LsmSource};
pub use mitigations::Mitigations;
pub use probed::Probed;
pub use sched::PreemptInfo;
pub use seccomp::{SeccompInfo, SeccompMode};
pub use selinux::{SelinuxInfo, SelinuxState};
pub use smt::SmtInfo;

/// Everything the probe records (`secperf probe --json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SystemInfo {
    /// Version of the secperf that probed.
    pub secperf_version: String,
    /// When the probe ran.
    pub probed_at: DateTime<Utc>,
    pub kernel: Probed<KernelInfo>,
    pub cpu: CpuInfo,
    /// Active LSMs, in the kernel's order.
    pub lsm: Probed<LsmInfo>,
    pub lockdown: Probed<Lockdown>,
    pub selinux: Probed<SelinuxInfo>,
    pub apparmor: Probed<AppArmorInfo>,
    pub landlock: Probed<LandlockInfo>,
    pub seccomp: SeccompInfo,
    pub audit: Probed<AuditInfo>,
    pub bpf_lsm: BpfLsmInfo,
    /// CPU vulnerability name to the kernel's mitigation text.
    pub mitigations: Probed<Mitigations>,
    /// `net.core.bpf_jit_enable` and `net.core.bpf_jit_harden`.
    #[serde(default)]
    pub bpf_jit: BpfJitInfo,
    /// CPU frequency governor and boost ("not exposed" in most VMs).
    #[serde(default)]
    pub cpufreq: CpuFreqInfo,
    /// SMT control and whether sibling threads are active.
    #[serde(default = "not_recorded")]
    pub smt: Probed<SmtInfo>,
    /// The kernel's preemption model.
    #[serde(default = "not_recorded")]
    pub preemption: Probed<PreemptInfo>,
    /// `kernel.randomize_va_space`: 0 off, 1 partial, 2 full.
    #[serde(default = "not_recorded")]
    pub aslr: Probed<u32>,
}

/// What a snapshot from an older secperf holds for an item it did not probe.
pub(crate) fn not_recorded<T>() -> Probed<T> {
    Probed::unavailable("not recorded (probed by an older secperf)")
}

impl SystemInfo {
    /// The kernel release (`uname -r`), when it was read.
    pub fn kernel_release(&self) -> Option<&str> {
        self.kernel.value().map(|k| k.release.as_str())
    }
}

/// Probes this machine. Never fails: unreadable items carry their reason.
pub fn probe() -> SystemInfo {
    let root = Path::new("/");
    let lsm = lsm::probe(root);
    let kernel = kernel::probe(root);
    let k = kernel.value();
    let preemption = sched::probe(
        root,
        k.map(|k| k.version.as_str()),
        k.map(|k| k.release.as_str()),
        k.and_then(|k| k.cmdline.value()).map(String::as_str),
    );
    SystemInfo {
        secperf_version: env!("CARGO_PKG_VERSION").to_string(),
        probed_at: Utc::now(),
        kernel,
        cpu: cpu::probe(root),
        lockdown: lockdown::probe(root, lsm.value()),
        selinux: selinux::probe(root, lsm.value()),
        apparmor: apparmor::probe(root),
        landlock: landlock::probe(),
        seccomp: seccomp::probe(root),
        audit: audit::probe(),
        bpf_lsm: bpf::probe(root, &lsm),
        mitigations: mitigations::probe(root).into(),
        lsm,
        bpf_jit: jit::probe(root),
        cpufreq: cpufreq::probe(root),
        smt: smt::probe(root),
        preemption,
        aslr: aslr::probe(root),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A full snapshot with values and reasons in every kind of field.
    pub(crate) fn sample() -> SystemInfo {
        let not_mounted = "securityfs not mounted at /sys/kernel/security \
                           (mount -t securityfs securityfs /sys/kernel/security)";
        SystemInfo {
            secperf_version: "0.1.0".into(),
            probed_at: "2026-01-02T03:04:05.123456Z".parse().unwrap(),
            kernel: Probed::Ok(KernelInfo {
                release: "6.18.4".into(),
                version: "#1 SMP PREEMPT_DYNAMIC".into(),
                machine: "x86_64".into(),
                cmdline: Probed::Ok("root=/dev/vda quiet".into()),
            }),
            cpu: CpuInfo {
                model: Probed::Ok("AMD EPYC".into()),
                online_count: Probed::Ok(2),
                online_list: Probed::Ok("0-1".into()),
                hypervisor: Probed::Ok(true),
            },
            lsm: Probed::Ok(LsmInfo {
                modules: ["lockdown", "capability", "landlock", "bpf"]
                    .map(String::from)
                    .to_vec(),
                source: LsmSource::Syscall,
            }),
            lockdown: Probed::unavailable(not_mounted),
            selinux: Probed::Ok(SelinuxInfo {
                state: SelinuxState::NotActive,
                policy_version: None,
                policy_name: None,
                config_mode: None,
                mls: None,
            }),
            apparmor: Probed::Ok(AppArmorInfo {
                enabled: false,
                profiles: Probed::unavailable("AppArmor not built into this kernel"),
            }),
            landlock: Probed::Ok(LandlockInfo {
                state: LandlockState::Enabled,
                abi: Some(7),
                errata: Some(1),
            }),
            seccomp: SeccompInfo {
                available: true,
                actions: Probed::Ok(vec!["kill_process".into(), "allow".into()]),
                self_mode: Probed::Ok(SeccompMode::Disabled),
                self_filters: Some(0),
            },
            audit: Probed::Ok(AuditInfo {
                enabled: 1,
                failure: 1,
                auditd_pid: 0,
                rate_limit: 0,
                backlog_limit: 64,
                backlog: 0,
                lost: 0,
                backlog_wait_time: 15000,
                rules: Probed::Ok(0),
                phantom_rules: None,
                phantom_check: audit_phantom::PhantomCheck::read_only(),
            }),
            bpf_lsm: BpfLsmInfo {
                active: Probed::Ok(true),
                btf_vmlinux: true,
                unprivileged_bpf_disabled: Probed::Ok(2),
            },
            mitigations: Probed::Ok(BTreeMap::from([
                ("meltdown".to_string(), "Not affected".to_string()),
                (
                    "spectre_v2".to_string(),
                    "Mitigation: Retpolines".to_string(),
                ),
            ])),
            bpf_jit: BpfJitInfo {
                enable: Probed::Ok(1),
                harden: Probed::Ok(0),
            },
            cpufreq: CpuFreqInfo {
                governor: Probed::unavailable(
                    "not exposed (no cpufreq policy in /sys/devices/system/cpu/cpufreq; \
                     usual in virtual machines)",
                ),
                boost: Probed::Ok("on".into()),
            },
            smt: Probed::Ok(SmtInfo {
                control: "notsupported".into(),
                active: false,
            }),
            preemption: Probed::Ok(PreemptInfo {
                model: "dynamic".into(),
                source: "uname".into(),
            }),
            aslr: Probed::Ok(2),
        }
    }

    #[test]
    fn snapshots_from_older_secperf_still_read() {
        let mut value = serde_json::to_value(sample()).unwrap();
        for key in ["bpf_jit", "cpufreq", "smt", "preemption", "aslr"] {
            value.as_object_mut().unwrap().remove(key);
        }
        let old: SystemInfo = serde_json::from_value(value).unwrap();
        assert_eq!(old.kernel, sample().kernel);
        for reason in [
            old.bpf_jit.enable.reason(),
            old.cpufreq.boost.reason(),
            old.smt.reason(),
            old.preemption.reason(),
            old.aslr.reason(),
        ] {
            assert!(reason.unwrap().starts_with("not recorded"), "{reason:?}");
        }
    }

    #[test]
    fn full_snapshot_round_trips_through_json() {
        let info = sample();
        let json = serde_json::to_string_pretty(&info).unwrap();
        let back: SystemInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, info);
        // And through a serde_json::Value, as the store keeps it.
        let value = serde_json::to_value(&info).unwrap();
        assert_eq!(value["kernel"]["release"], "6.18.4");
        assert_eq!(
            value["lockdown"]["unavailable"]
                .as_str()
                .unwrap()
                .split(' ')
                .next(),
            Some("securityfs")
        );
        assert_eq!(serde_json::from_value::<SystemInfo>(value).unwrap(), info);
    }

    #[test]
    fn kernel_release_is_absent_when_unread() {
        let mut info = sample();
        assert_eq!(info.kernel_release(), Some("6.18.4"));
        info.kernel = Probed::unavailable("uname failed");
        assert_eq!(info.kernel_release(), None);
    }

    #[test]
    fn probes_this_machine() {
        let info = probe();
        let release = info.kernel_release().expect("uname works on Linux");
        assert!(!release.is_empty());
        assert!(
            info.cpu.online_count.value().is_some_and(|&n| n >= 1),
            "{:?}",
            info.cpu
        );
        assert_eq!(info.secperf_version, env!("CARGO_PKG_VERSION"));
        let json = serde_json::to_string_pretty(&info).unwrap();
        let back: SystemInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back, info);
        // The tuning items: each read, or unavailable with a reason naming
        // what was looked at.
        if let Some(reason) = info.bpf_jit.enable.reason() {
            assert!(reason.contains("bpf_jit_enable"), "{reason}");
        }
        for p in [&info.cpufreq.governor, &info.cpufreq.boost] {
            if let Some(reason) = p.reason() {
                assert!(reason.starts_with("not exposed"), "{reason}");
            }
        }
        if let Some(reason) = info.smt.reason() {
            assert!(reason.contains("smt/control"), "{reason}");
        }
        assert!(
            info.aslr.value().is_some_and(|&v| v <= 2),
            "{:?}",
            info.aslr
        );
        let uname_names_it = release_version_names_preempt(&info);
        if uname_names_it {
            assert!(info.preemption.value().is_some(), "{:?}", info.preemption);
        }
    }

    fn release_version_names_preempt(info: &SystemInfo) -> bool {
        info.kernel.value().is_some_and(|k| {
            k.version
                .split_whitespace()
                .any(|w| w.starts_with("PREEMPT"))
        })
    }

    /// `cargo test print_probe -- --ignored --nocapture` shows what this
    /// machine looks like as JSON (`secperf probe` shows the text).
    #[test]
    #[ignore]
    fn print_probe() {
        let info = probe();
        println!("{}", serde_json::to_string_pretty(&info).unwrap());
    }
}
