//! What differs between two probe snapshots in a way that changes what a
//! syscall costs (kernel, LSMs, mitigations, CPUs, BPF JIT, CPU frequency
//! governor and boost, SMT, preemption model, ASLR, audit's backlog and
//! failure settings), as one line of text per difference, for reports
//! that put stored runs side by side.

use serde_json::Value;

/// What of a probe snapshot changes the cost of a syscall, by JSON pointer.
const PROBE_KEYS: &[(&str, &str)] = &[
    ("/kernel/release", "kernel"),
    ("/kernel/cmdline", "kernel command line"),
    ("/lsm/modules", "active LSMs"),
    ("/mitigations", "CPU mitigations"),
    ("/cpu/model", "CPU model"),
    ("/cpu/online_count", "online CPUs"),
    ("/selinux/state", "SELinux"),
    ("/apparmor/enabled", "AppArmor"),
    ("/landlock/abi", "Landlock ABI"),
    ("/audit/enabled", "audit enabled"),
    ("/audit/rules", "audit rules"),
    ("/audit/failure", "audit failure mode"),
    ("/audit/backlog_limit", "audit backlog limit"),
    ("/audit/backlog_wait_time", "audit backlog wait time"),
];

/// Probe items added later: compared only when both snapshots have the
/// item (one from an older secperf lacks it, which is no difference).
const NEWER_PROBE_KEYS: &[(&str, &str)] = &[
    ("/bpf_jit/enable", "BPF JIT"),
    ("/bpf_jit/harden", "BPF JIT hardening"),
    ("/cpufreq/governor", "CPU frequency governor"),
    ("/cpufreq/boost", "CPU boost"),
    ("/smt", "SMT"),
    ("/preemption/model", "preemption model"),
    ("/aslr", "ASLR (randomize_va_space)"),
];

/// The top-level item of a JSON pointer ("/smt/control" -> "smt").
fn item_of(ptr: &str) -> &str {
    ptr.trim_start_matches('/').split('/').next().unwrap_or("")
}

/// Human descriptions of the differences that matter between two probes.
pub fn probe_differences(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let newer = NEWER_PROBE_KEYS
        .iter()
        .filter(|(ptr, _)| [a, b].iter().all(|s| s.get(item_of(ptr)).is_some()));
    for (ptr, name) in PROBE_KEYS.iter().chain(newer) {
        let (x, y) = (a.pointer(ptr), b.pointer(ptr));
        if x == y {
            continue;
        }
        match (x, y) {
            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                let changed: Vec<&String> = x
                    .keys()
                    .chain(y.keys().filter(|k| !x.contains_key(*k)))
                    .filter(|k| x.get(*k) != y.get(*k))
                    .collect();
                out.push(format!(
                    "{name} differ ({})",
                    changed
                        .iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            _ => out.push(format!(
                "{name} differ: {} vs {}",
                short_value(x),
                short_value(y)
            )),
        }
    }
    // Phantom audit rules are checked by audit runs only: a difference
    // when both were checked and answered.
    let phantom = |s: &Value| s.pointer("/audit/phantom_rules").and_then(Value::as_bool);
    if let (Some(x), Some(y)) = (phantom(a), phantom(b))
        && x != y
    {
        out.push(format!(
            "phantom audit rules differ: {x} vs {y} (audit enabled means another cost; \
             docs/findings.md)"
        ));
    }
    out
}

/// A probe value as short text: "unknown" when absent, the reason of an
/// item that was not read, at most 60 characters.
pub fn short_value(v: Option<&Value>) -> String {
    let s = match v {
        None => "unknown".to_string(),
        Some(Value::String(s)) => s.clone(),
        // A probe item that was not read: `Probed::Unavailable`.
        Some(Value::Object(o)) if o.len() == 1 && o.contains_key("unavailable") => {
            format!("unavailable ({})", short_value(o.get("unavailable")))
        }
        Some(v) => v.to_string(),
    };
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(57).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn phantom_rules_differ_only_when_both_were_checked() {
        let a = json!({"audit": {"enabled": 0, "phantom_rules": true}});
        let b = json!({"audit": {"enabled": 0, "phantom_rules": false}});
        let unchecked = json!({"audit": {"enabled": 0, "phantom_rules": null}});
        let d = probe_differences(&a, &b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("phantom audit rules differ: true vs false"));
        assert!(probe_differences(&a, &unchecked).is_empty());
        assert!(probe_differences(&json!({"audit": {"enabled": 0}}), &b).is_empty());
    }

    fn snapshot(kernel: &str) -> Value {
        json!({
            "kernel": {"release": kernel, "cmdline": "quiet"},
            "lsm": {"modules": ["capability", "landlock"]},
            "cpu": {"model": "x", "online_count": 2},
        })
    }

    #[test]
    fn the_differences_that_matter_are_named() {
        let a = snapshot("6.18.0");
        let mut b = snapshot("6.19.0");
        b["lsm"]["modules"] = json!(["capability", "landlock", "bpf"]);
        let d = probe_differences(&a, &b);
        assert_eq!(d[0], "kernel differ: 6.18.0 vs 6.19.0");
        assert!(d[1].starts_with("active LSMs differ: "), "{d:?}");
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(probe_differences(&a, &a).is_empty());
    }

    #[test]
    fn newer_items_count_only_when_both_snapshots_have_them() {
        let a = snapshot("6.18.0");
        let mut b = snapshot("6.18.0");
        b["bpf_jit"] = json!({"enable": 1, "harden": 0});
        b["smt"] = json!({"control": "on", "active": true});
        assert!(probe_differences(&a, &b).is_empty());

        let mut a = a;
        a["bpf_jit"] = json!({"enable": 0, "harden": {"unavailable": "not root"}});
        a["smt"] = json!({"control": "off", "active": false});
        assert_eq!(
            probe_differences(&a, &b),
            [
                "BPF JIT differ: 0 vs 1",
                "BPF JIT hardening differ: unavailable (not root) vs 0",
                "SMT differ (active, control)",
            ]
        );
    }

    #[test]
    fn long_values_are_cut_and_missing_ones_unknown() {
        assert_eq!(short_value(None), "unknown");
        let long = Value::String("x".repeat(80));
        assert_eq!(short_value(Some(&long)), format!("{}...", "x".repeat(57)));
    }
}
