//! A run's header: who, when, where and the exact command, then the
//! security configuration it was measured under (from the probe snapshot
//! stored with the run), as two small tables.
//!
//! Only the facts that change what a security mechanism costs are shown:
//! kernel, CPU, active LSMs, lockdown, SELinux, AppArmor, Landlock ABI,
//! seccomp, audit, the BPF LSM and the CPU mitigations (summarised, the
//! full list folded in a `<details>`). Each unreadable item shows its
//! reason, as `secperf probe` does.

use crate::probe::{LandlockState, Probed, SeccompMode, SelinuxState, SystemInfo};
use crate::report::doc::RunDoc;

use super::blocks::{Cell, Fact, facts, table};
use super::escape::esc;

/// The run's facts table.
pub fn run_facts(run: &RunDoc) -> String {
    let m = &run.meta;
    let finished = match run.finished_at {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        None => "unfinished: the run stopped before all its measurements were done".into(),
    };
    let mut rows = vec![
        ("run id".to_string(), Fact::Text(run.run_id.to_string())),
        (
            "label".to_string(),
            Fact::Text(if m.label.is_empty() {
                "(none)".into()
            } else {
                m.label.clone()
            }),
        ),
        ("kind".to_string(), Fact::Text(m.kind.clone())),
        (
            "started".to_string(),
            Fact::Text(m.started_at.format("%Y-%m-%d %H:%M:%S UTC").to_string()),
        ),
        ("finished".to_string(), Fact::Text(finished)),
        ("host".to_string(), Fact::Text(m.host.clone())),
        (
            "kernel".to_string(),
            Fact::Text(kernel_release(&m.system).unwrap_or_else(|| "unknown".into())),
        ),
        ("secperf".to_string(), Fact::Text(m.secperf_version.clone())),
        (
            "command".to_string(),
            Fact::Html(format!("<code>{}</code>", esc(&m.command))),
        ),
    ];
    for arm in &run.boot_arms {
        let g = arm.boots.first().map(|b| &b.guest);
        rows.push((
            format!("{} arm {}", arm.role, arm.name),
            Fact::Html(format!(
                "<code>{}</code>, kernel {}, command line <code>{}</code>, {} boots",
                esc(&arm.spec.image.display().to_string()),
                esc(g.and_then(|g| g.release.as_deref()).unwrap_or("?")),
                esc(&g
                    .and_then(|g| g.cmdline.as_deref())
                    .map_or("?".into(), crate::vm::guest::chosen_words)),
                arm.boots.len()
            )),
        ));
        if let Some(b) = &arm.build {
            rows.push((
                format!("{} build", arm.name),
                Fact::Text(
                    crate::report::sections::guest::build_lines(&arm.name, b)
                        .iter()
                        .map(|l| l.strip_prefix(&format!("{} ", arm.name)).unwrap_or(l))
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
            ));
        }
    }
    if let Some((text, items)) = crate::report::sections::guest::layout_lines(run) {
        rows.push((
            "layout control".to_string(),
            Fact::Text(format!("{text} {}", items.join("; "))),
        ));
    }
    let Some(vm) = crate::vm::VmFacts::of(&m.system) else {
        return facts("facts", &rows);
    };
    if run.boot_arms.is_empty() {
        rows.push(("VM".to_string(), Fact::Text(vm.line())));
        rows.push((
            "guest command line".to_string(),
            Fact::Html(format!(
                "<code>{}</code>",
                esc(vm.guest.cmdline.as_deref().unwrap_or("?"))
            )),
        ));
    } else {
        rows.push((
            "VMs".to_string(),
            Fact::Text(format!("{}, {} vCPUs, {}", vm.accel, vm.vcpus, vm.memory)),
        ));
    }
    for p in &vm.guest.prepared {
        rows.push(("prepared".to_string(), Fact::Text(p.clone())));
    }
    let warning = crate::report::sections::guest::emulated_warning(run)
        .map(|w| super::blocks::para("note", &w))
        .unwrap_or_default();
    warning + &facts("facts", &rows)
}

/// The kernel release in a snapshot, leniently (older snapshots too).
pub fn kernel_release(system: &serde_json::Value) -> Option<String> {
    crate::probe::MachineFacts::of(system).kernel
}

/// The security configuration table, or a note when the snapshot is not
/// one this secperf reads.
pub fn security(system: &serde_json::Value) -> String {
    match serde_json::from_value::<SystemInfo>(system.clone()) {
        Ok(info) => security_table(&info),
        Err(_) => super::blocks::para(
            "note",
            "The system snapshot of this run is in a format this secperf does not read \
             (see `secperf results show RUN --json`).",
        ),
    }
}

fn shown<T>(p: &Probed<T>, f: impl FnOnce(&T) -> String) -> String {
    match p {
        Probed::Ok(v) => f(v),
        Probed::Unavailable { reason } => format!("unavailable: {reason}"),
    }
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn security_table(info: &SystemInfo) -> String {
    let mut rows: Vec<(String, Fact)> = Vec::new();
    let mut row = |k: &str, v: String| rows.push((k.to_string(), Fact::Text(v)));
    row(
        "kernel",
        shown(&info.kernel, |k| {
            format!("{} {} ({})", k.release, k.machine, k.version)
        }),
    );
    row(
        "kernel command line",
        shown(&info.kernel, |k| shown(&k.cmdline, Clone::clone)),
    );
    row(
        "CPU",
        format!(
            "{}, {} online{}",
            shown(&info.cpu.model, Clone::clone),
            shown(&info.cpu.online_count, ToString::to_string),
            match info.cpu.hypervisor {
                Probed::Ok(true) => ", virtual machine",
                _ => "",
            }
        ),
    );
    row("LSMs", shown(&info.lsm, |l| l.modules.join(", ")));
    row("lockdown", shown(&info.lockdown, |l| l.mode.clone()));
    row(
        "SELinux",
        shown(&info.selinux, |s| {
            let state = match s.state {
                SelinuxState::Enforcing => "enforcing",
                SelinuxState::Permissive => "permissive",
                SelinuxState::NotActive => "not active",
            };
            match &s.policy_name {
                Some(p) => format!("{state}, policy {p}"),
                None => state.to_string(),
            }
        }),
    );
    row(
        "AppArmor",
        shown(&info.apparmor, |a| {
            let profiles = shown(&a.profiles, |p| format!("{} profiles", p.total));
            format!("enabled: {}; {profiles}", yes_no(a.enabled))
        }),
    );
    row(
        "Landlock",
        shown(&info.landlock, |l| match l.state {
            LandlockState::Enabled => format!(
                "enabled, ABI {}",
                l.abi.map_or("-".to_string(), |a| a.to_string())
            ),
            LandlockState::DisabledAtBoot => "built in, disabled at boot".into(),
            LandlockState::NotBuilt => "not built".into(),
        }),
    );
    let s = &info.seccomp;
    row(
        "seccomp",
        format!(
            "available: {}; secperf itself: {}",
            yes_no(s.available),
            shown(&s.self_mode, |m| {
                let mode = match m {
                    SeccompMode::Disabled => "no filter",
                    SeccompMode::Strict => "strict",
                    SeccompMode::Filter => "filtered",
                };
                match s.self_filters {
                    Some(n) if *m == SeccompMode::Filter => format!("{mode} ({n} filters)"),
                    _ => mode.to_string(),
                }
            })
        ),
    );
    row(
        "audit",
        shown(&info.audit, |a| {
            format!(
                "{}; {} rules; auditd {}",
                a.enabled_text(),
                shown(&a.rules, ToString::to_string),
                if a.auditd_pid == 0 {
                    "not running".to_string()
                } else {
                    format!("pid {}", a.auditd_pid)
                }
            )
        }),
    );
    row(
        "BPF LSM",
        format!(
            "active: {}",
            shown(&info.bpf_lsm.active, |a| yes_no(*a).to_string())
        ),
    );
    rows.push(("mitigations".to_string(), Fact::Html(mitigations(info))));
    facts("security", &rows)
}

/// "12 listed: 9 mitigated, 2 not affected, 1 vulnerable" and the list.
fn mitigations(info: &SystemInfo) -> String {
    let m = match &info.mitigations {
        Probed::Ok(m) => m,
        Probed::Unavailable { reason } => return esc(&format!("unavailable: {reason}")),
    };
    if m.is_empty() {
        return "the kernel lists no vulnerabilities".into();
    }
    let count = |f: &dyn Fn(&str) -> bool| m.values().filter(|t| f(t)).count();
    let vulnerable = count(&|t| t.starts_with("Vulnerable"));
    let unaffected = count(&|t| t.starts_with("Not affected"));
    let mitigated = m.len() - vulnerable - unaffected;
    let rows: Vec<Vec<Cell>> = m
        .iter()
        .map(|(k, v)| vec![Cell::Text(k.clone()), Cell::Text(v.clone())])
        .collect();
    format!(
        "<details><summary>{} listed: {mitigated} mitigated, {unaffected} not affected, \
         {vulnerable} vulnerable</summary>{}</details>",
        m.len(),
        table("mitigations", &["vulnerability", "kernel says"], &rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn security_table_has_the_key_facts_and_reasons() {
        let info = crate::probe::tests::sample();
        let html = security(&serde_json::to_value(&info).unwrap());
        for want in [
            "lockdown, capability, landlock, bpf",
            "unavailable: securityfs not mounted",
            "enabled, ABI 7",
            "enabled; 0 rules; auditd not running",
            "2 listed: 1 mitigated, 1 not affected, 0 vulnerable",
            "Mitigation: Retpolines",
            "root=/dev/vda quiet",
            "AMD EPYC, 2 online, virtual machine",
        ] {
            assert!(html.contains(&esc(want)), "no {want} in {html}");
        }
    }

    #[test]
    fn unreadable_snapshot_is_said() {
        let html = security(&serde_json::json!({"kernel": {"release": "6.1"}}));
        assert!(html.contains("does not read"), "{html}");
        assert_eq!(
            kernel_release(&serde_json::json!({"kernel": {"release": "6.1"}})).as_deref(),
            Some("6.1")
        );
    }
}
