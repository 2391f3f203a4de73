//! The text of `secperf probe` (and of a stored run's security
//! configuration): one group per item, `key: value` lines aligned inside a
//! group, unreadable items as `unavailable: <reason>`. Each group is laid
//! out here (its keys padded alike, long values wrapped under themselves
//! at [`WIDTH`]) and handed to the markup writer as one block of lines.

use std::fmt::Write as _;

use crate::probe::{
    AppArmorInfo, AuditInfo, BpfJitInfo, BpfLsmInfo, CpuFreqInfo, CpuInfo, KernelInfo,
    LandlockInfo, LandlockState, Lockdown, LsmInfo, LsmSource, Mitigations, Probed, SeccompInfo,
    SeccompMode, SelinuxInfo, SelinuxState, SystemInfo,
};
use crate::report::markup::Markup;

/// Keys are padded to at least this width so most groups line up.
const MIN_KEY_WIDTH: usize = 18;

/// One titled group of `key: value` lines.
struct Group {
    title: &'static str,
    lines: Vec<(String, String)>,
}

impl Group {
    fn new(title: &'static str) -> Self {
        Group {
            title,
            lines: Vec::new(),
        }
    }

    fn line(&mut self, key: &str, value: impl Into<String>) -> &mut Self {
        self.lines.push((key.to_string(), value.into()));
        self
    }

    /// A line for a probed value, `unavailable: <reason>` when unread.
    fn probed<T>(
        &mut self,
        key: &str,
        p: &Probed<T>,
        show: impl FnOnce(&T) -> String,
    ) -> &mut Self {
        let value = match p {
            Probed::Ok(v) => show(v),
            Probed::Unavailable { reason } => format!("unavailable: {reason}"),
        };
        self.line(key, value)
    }

    /// The group for a whole item: its lines, or one `unavailable` line.
    fn item<T>(title: &'static str, p: &Probed<T>, fill: impl FnOnce(&mut Group, &T)) -> Group {
        let mut g = Group::new(title);
        match p {
            Probed::Ok(v) => fill(&mut g, v),
            Probed::Unavailable { reason } => {
                g.line("unavailable", reason.clone());
            }
        }
        g
    }

    fn write(&self, out: &mut String) {
        let width = self
            .lines
            .iter()
            .map(|(k, _)| k.len() + 1)
            .max()
            .unwrap_or(0)
            .max(MIN_KEY_WIDTH);
        let _ = writeln!(out, "{}", self.title);
        for (key, value) in &self.lines {
            // A long value (a kernel command line of 600 characters) is
            // wrapped at words under its first line, within WIDTH.
            let indent = " ".repeat(width + 3);
            let first = format!("  {:<width$} ", format!("{key}:"));
            let opts = textwrap::Options::new(WIDTH.max(indent.len() + 20))
                .initial_indent(&first)
                .subsequent_indent(&indent)
                .break_words(false)
                .word_splitter(textwrap::WordSplitter::NoHyphenation);
            for l in textwrap::wrap(value, opts) {
                let _ = writeln!(out, "{}", l.trim_end());
            }
        }
    }
}

/// The widest a line of the report is, where its words allow: an
/// 80-column terminal shows it whole inside a view's 4-space indent.
const WIDTH: usize = 76;

/// The report as blocks of lines: its title, then one block per group.
pub fn write(info: &SystemInfo, m: &mut dyn Markup) {
    let groups = [
        Group::item("Kernel", &info.kernel, kernel),
        cpu(&info.cpu),
        Group::item("LSMs", &info.lsm, lsm),
        Group::item("Lockdown", &info.lockdown, lockdown),
        Group::item("SELinux", &info.selinux, selinux),
        Group::item("AppArmor", &info.apparmor, apparmor),
        Group::item("Landlock", &info.landlock, landlock),
        seccomp(&info.seccomp),
        Group::item("Audit", &info.audit, audit),
        bpf(&info.bpf_lsm),
        Group::item("Mitigations", &info.mitigations, mitigations),
        bpf_jit(&info.bpf_jit),
        cpufreq(&info.cpufreq),
        scheduling(info),
        aslr(&info.aslr),
    ];
    m.lines(&[format!(
        "secperf {} probe at {}",
        info.secperf_version,
        info.probed_at.format("%Y-%m-%d %H:%M:%S UTC")
    )]);
    for g in &groups {
        let mut out = String::new();
        g.write(&mut out);
        m.lines(&out.lines().map(str::to_string).collect::<Vec<_>>());
    }
}

/// The human-readable probe report, as text (no colour: it has no
/// verdicts), ending in a newline.
pub fn render(info: &SystemInfo) -> String {
    let mut m =
        crate::report::markup::writer(crate::report::markup::Kind::Terminal { color: false });
    write(info, m.as_mut());
    m.finish()
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

fn or_dash<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or("-".to_string(), ToString::to_string)
}

fn kernel(g: &mut Group, k: &KernelInfo) {
    g.line("release", k.release.clone())
        .line("version", k.version.clone())
        .line("machine", k.machine.clone())
        .probed("cmdline", &k.cmdline, Clone::clone);
}

fn cpu(c: &CpuInfo) -> Group {
    let mut g = Group::new("CPU");
    g.probed("model", &c.model, Clone::clone);
    let online = match (&c.online_count, &c.online_list) {
        (Probed::Ok(n), Probed::Ok(list)) => Probed::Ok(format!("{n} ({list})")),
        (p, _) => p.as_ref().map(|n| n.to_string()),
    };
    g.probed("online", &online, Clone::clone)
        .probed("hypervisor", &c.hypervisor, |&b| yes_no(b));
    g
}

fn lsm(g: &mut Group, l: &LsmInfo) {
    g.line("active", l.modules.join(","));
    g.line(
        "source",
        match l.source {
            LsmSource::Securityfs => "/sys/kernel/security/lsm",
            LsmSource::Syscall => "lsm_list_modules syscall",
        },
    );
}

fn lockdown(g: &mut Group, l: &Lockdown) {
    g.line("mode", l.mode.clone())
        .line("modes", l.modes.join(" "));
}

fn selinux(g: &mut Group, s: &SelinuxInfo) {
    g.line(
        "state",
        match s.state {
            SelinuxState::Enforcing => "enforcing",
            SelinuxState::Permissive => "permissive",
            SelinuxState::NotActive => "not active",
        },
    );
    if s.state != SelinuxState::NotActive || s.policy_name.is_some() {
        g.line("policy", or_dash(&s.policy_name))
            .line("policy version", or_dash(&s.policy_version))
            .line("boot mode", or_dash(&s.config_mode))
            .line("mls", s.mls.map_or("-".to_string(), yes_no));
    }
}

fn apparmor(g: &mut Group, a: &AppArmorInfo) {
    g.line("enabled", yes_no(a.enabled));
    g.probed("profiles", &a.profiles, |p| {
        let modes: Vec<String> = p.by_mode.iter().map(|(m, n)| format!("{n} {m}")).collect();
        if modes.is_empty() {
            p.total.to_string()
        } else {
            format!("{} ({})", p.total, modes.join(", "))
        }
    });
}

fn landlock(g: &mut Group, l: &LandlockInfo) {
    g.line(
        "state",
        match l.state {
            LandlockState::Enabled => "enabled",
            LandlockState::DisabledAtBoot => "built in, disabled at boot",
            LandlockState::NotBuilt => "not built",
        },
    );
    if l.state == LandlockState::Enabled {
        g.line("abi", or_dash(&l.abi)).line(
            "errata",
            l.errata.map_or("-".to_string(), |e| format!("{e:#x}")),
        );
    }
}

fn seccomp(s: &SeccompInfo) -> Group {
    let mut g = Group::new("Seccomp");
    g.line("available", yes_no(s.available))
        .probed("actions", &s.actions, |a| a.join(" "))
        .probed("this process", &s.self_mode, |m| {
            let mode = match m {
                SeccompMode::Disabled => "disabled",
                SeccompMode::Strict => "strict",
                SeccompMode::Filter => "filter",
            };
            match s.self_filters {
                Some(n) => format!("{mode} ({n} filters)"),
                None => mode.to_string(),
            }
        });
    g
}

fn audit(g: &mut Group, a: &AuditInfo) {
    g.line("enabled", format!("{} ({})", a.enabled, a.enabled_text()))
        .line("failure", format!("{} ({})", a.failure, a.failure_text()))
        .line(
            "auditd pid",
            if a.auditd_pid == 0 {
                "none".to_string()
            } else {
                a.auditd_pid.to_string()
            },
        )
        .line(
            "rate limit",
            if a.rate_limit == 0 {
                "unlimited".to_string()
            } else {
                format!("{}/s", a.rate_limit)
            },
        )
        .line(
            "backlog",
            format!("{} (limit {})", a.backlog, a.backlog_limit),
        )
        .line(
            "backlog wait",
            format!("{} jiffies (backlog_wait_time)", a.backlog_wait_time),
        )
        .line("lost", a.lost.to_string())
        .probed("rules", &a.rules, u32::to_string)
        .line("phantom rules", phantom_text(a));
}

/// The phantom-rules line: the answer, then what the check said.
fn phantom_text(a: &AuditInfo) -> String {
    let c = &a.phantom_check;
    match a.phantom_rules {
        Some(true) => format!("YES: {}. {}", c.reason, c.consequence()),
        Some(false) => format!("none: {}", c.reason),
        None => c.reason.clone(),
    }
}

fn bpf(b: &BpfLsmInfo) -> Group {
    let mut g = Group::new("BPF LSM");
    g.probed("active", &b.active, |&a| yes_no(a))
        .line("btf vmlinux", yes_no(b.btf_vmlinux))
        .probed("unprivileged bpf", &b.unprivileged_bpf_disabled, |&v| {
            format!(
                "{} (unprivileged_bpf_disabled={v})",
                BpfLsmInfo::unprivileged_text(v)
            )
        });
    g
}

fn bpf_jit(j: &BpfJitInfo) -> Group {
    let mut g = Group::new("BPF JIT");
    g.probed("jit", &j.enable, |&v| {
        format!("{} (bpf_jit_enable={v})", BpfJitInfo::enable_text(v))
    })
    .probed("hardening", &j.harden, |&v| {
        format!("{} (bpf_jit_harden={v})", BpfJitInfo::harden_text(v))
    });
    g
}

fn cpufreq(f: &CpuFreqInfo) -> Group {
    let mut g = Group::new("CPU frequency");
    g.probed("governor", &f.governor, Clone::clone)
        .probed("boost", &f.boost, Clone::clone);
    g
}

fn scheduling(info: &SystemInfo) -> Group {
    let mut g = Group::new("Scheduling");
    g.probed("preemption", &info.preemption, |p| {
        format!("{} (from {})", p.model, p.source)
    })
    .probed("smt", &info.smt, |s| {
        format!(
            "{} (control {})",
            if s.active { "active" } else { "inactive" },
            s.control
        )
    });
    g
}

fn aslr(a: &Probed<u32>) -> Group {
    let mut g = Group::new("ASLR");
    g.probed("randomize_va_space", a, |&v| {
        format!("{v} ({})", crate::probe::aslr_text(v))
    });
    g
}

fn mitigations(g: &mut Group, m: &Mitigations) {
    if m.is_empty() {
        g.line("none", "the kernel lists no vulnerabilities");
    }
    for (name, text) in m {
        g.line(name, text.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::tests::sample;

    /// This machine's snapshot names its kernel and every tuning group.
    #[test]
    fn this_machine_renders_its_release_and_tuning_groups() {
        let info = crate::probe::probe();
        let text = render(&info);
        if let Some(k) = info.kernel.value() {
            assert!(text.contains(&k.release), "{text}");
        }
        for key in ["BPF JIT", "CPU frequency", "Scheduling", "ASLR"] {
            assert!(text.lines().any(|l| l == key), "no {key} in\n{text}");
        }
    }

    #[test]
    fn a_long_value_wraps_at_words_under_itself() {
        // Issue 53: the kernel command line was one line of 600 characters.
        let mut g = Group::new("Kernel");
        let cmdline = (0..60)
            .map(|i| format!("option{i}=value"))
            .collect::<Vec<_>>()
            .join(" ");
        g.line("cmdline", cmdline.clone());
        let mut out = String::new();
        g.write(&mut out);
        let lines: Vec<&str> = out.lines().skip(1).collect();
        assert!(lines.len() > 5, "{out}");
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(lines[0].starts_with("  cmdline:"), "{out}");
        let at = lines[0].find("option0").unwrap();
        assert!(
            lines[1..].iter().all(|l| l[..at].trim().is_empty()),
            "{out}"
        );
        assert_eq!(
            out.split_whitespace().skip(2).collect::<Vec<_>>().join(" "),
            cmdline
        );
    }

    #[test]
    fn renders_every_group_and_reason() {
        let text = render(&sample());
        for title in [
            "Kernel",
            "CPU",
            "LSMs",
            "Lockdown",
            "SELinux",
            "AppArmor",
            "Landlock",
            "Seccomp",
            "Audit",
            "BPF LSM",
            "Mitigations",
            "BPF JIT",
            "CPU frequency",
            "Scheduling",
            "ASLR",
        ] {
            assert!(
                text.lines().any(|l| l == title),
                "no group {title} in\n{text}"
            );
        }
        let line = |k: &str, v: &str| format!("\n  {:<18} {v}", format!("{k}:"));
        for (k, v) in [
            (
                "unavailable",
                "securityfs not mounted at /sys/kernel/security",
            ),
            ("active", "lockdown,capability,landlock,bpf\n"),
            ("profiles", "unavailable: AppArmor not built"),
            ("spectre_v2", "Mitigation: Retpolines\n"),
            ("rules", "0\n"),
            (
                "unprivileged bpf",
                "disabled (unprivileged_bpf_disabled=2)\n",
            ),
            ("jit", "on (bpf_jit_enable=1)\n"),
            ("hardening", "off (bpf_jit_harden=0)\n"),
            ("governor", "unavailable: not exposed"),
            ("boost", "on\n"),
            ("preemption", "dynamic (from uname)\n"),
            ("smt", "inactive (control notsupported)\n"),
            ("randomize_va_space", "2 (stack, mmap, vdso, heap (full))\n"),
            ("backlog wait", "15000 jiffies (backlog_wait_time)\n"),
        ] {
            assert!(text.contains(&line(k, v)), "no {k}: {v} in\n{text}");
        }
    }

    #[test]
    fn long_keys_widen_only_their_group() {
        let mut info = sample();
        let long = "indirect_target_selection";
        if let Probed::Ok(m) = &mut info.mitigations {
            m.insert(long.into(), "Not affected".into());
        }
        let text = render(&info);
        assert!(
            text.contains(&format!("  {long}: Not affected\n")),
            "{text}"
        );
        assert!(
            text.contains("  spectre_v2:                Mitigation"),
            "{text}"
        );
        assert!(text.contains("  release:           6.18.4\n"), "{text}");
    }
}

#[cfg(test)]
mod pinned {
    //! The report of the full sample snapshot, byte for byte as it was
    //! written before it went through `report::sections`.

    use super::*;
    use crate::probe::tests::sample;

    #[test]
    fn the_sample_snapshot_renders_as_pinned() {
        let out = render(&sample());
        assert_eq!(out, SAMPLE);
    }

    const SAMPLE: &str = r##"secperf 0.1.0 probe at 2026-01-02 03:04:05 UTC

Kernel
  release:           6.18.4
  version:           #1 SMP PREEMPT_DYNAMIC
  machine:           x86_64
  cmdline:           root=/dev/vda quiet

CPU
  model:             AMD EPYC
  online:            2 (0-1)
  hypervisor:        yes

LSMs
  active:            lockdown,capability,landlock,bpf
  source:            lsm_list_modules syscall

Lockdown
  unavailable:       securityfs not mounted at /sys/kernel/security (mount
                     -t securityfs securityfs /sys/kernel/security)

SELinux
  state:             not active

AppArmor
  enabled:           no
  profiles:          unavailable: AppArmor not built into this kernel

Landlock
  state:             enabled
  abi:               7
  errata:            0x1

Seccomp
  available:         yes
  actions:           kill_process allow
  this process:      disabled (0 filters)

Audit
  enabled:           1 (enabled)
  failure:           1 (printk)
  auditd pid:        none
  rate limit:        unlimited
  backlog:           0 (limit 64)
  backlog wait:      15000 jiffies (backlog_wait_time)
  lost:              0
  rules:             0
  phantom rules:     not checked: the plain probe is read-only; `secperf
                     probe --active` checks (it switches audit for a few
                     seconds, journaled and restored)

BPF LSM
  active:            yes
  btf vmlinux:       yes
  unprivileged bpf:  disabled (unprivileged_bpf_disabled=2)

Mitigations
  meltdown:          Not affected
  spectre_v2:        Mitigation: Retpolines

BPF JIT
  jit:               on (bpf_jit_enable=1)
  hardening:         off (bpf_jit_harden=0)

CPU frequency
  governor:          unavailable: not exposed (no cpufreq policy in
                     /sys/devices/system/cpu/cpufreq; usual in virtual
                     machines)
  boost:             on

Scheduling
  preemption:        dynamic (from uname)
  smt:               inactive (control notsupported)

ASLR
  randomize_va_space: 2 (stack, mmap, vdso, heap (full))
"##;
}
