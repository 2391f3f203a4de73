//! Tests of the `audit` mechanism: the rules each variant loads (pure), and,
//! as root with audit available, apply and restore on the live kernel
//! through the real safety framework (a temporary state directory). Live
//! tests are serialised with the crate's audit test lock and put audit
//! back on drop, so a failing assertion never leaves the machine changed.

use std::time::Duration;

use super::*;
use crate::model::Params;
use crate::safety::StateLock;
use crate::sys::audit::tests::{PutBack, live_or_skip};
use crate::sys::audit::{AUDIT_ARCH_X86_64, AUDIT_FILTERKEY};

fn treatment(variant: &'static str) -> Treatment {
    Treatment {
        mechanism: &AUDIT,
        variant,
        params: Params::new(),
    }
}

fn env(workload: &str) -> SystemEnv<'static> {
    SystemEnv {
        workload: crate::workloads::find(workload).unwrap(),
    }
}

#[test]
fn variants_are_the_documented_three() {
    let names: Vec<_> = AUDIT.variants().iter().map(|v| v.name).collect();
    assert_eq!(names, ["enabled", "unrelated-rule", "matching-rule"]);
    assert_eq!(AUDIT.scope(), Scope::System);
    assert!(Treatment::parse("audit:matching-rule").is_ok());
}

#[cfg(target_arch = "x86_64")]
#[test]
fn each_variant_loads_its_rules() {
    assert!(treatment_rules("enabled", &["getppid"]).unwrap().is_empty());

    let r = treatment_rules("unrelated-rule", &["getppid"]).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].syscalls(), [libc::SYS_pivot_root as u32]);
    assert_eq!(r[0].key(), None);
    assert_eq!(r[0].fields[0].value, AUDIT_ARCH_X86_64);
    // Never a syscall the workload makes.
    let r = treatment_rules("unrelated-rule", &["pivot_root"]).unwrap();
    assert_eq!(r[0].syscalls(), [libc::SYS_acct as u32]);

    let r = treatment_rules("matching-rule", &["getppid"]).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].syscalls(), [libc::SYS_getppid as u32]);
    assert_eq!(r[0].key().as_deref(), Some(KEY));
    assert_eq!(r[0].fields.last().unwrap().field, AUDIT_FILTERKEY);

    let walk = crate::workloads::find("tree_walk").unwrap();
    let r = treatment_rules("matching-rule", walk.syscalls).unwrap();
    let mut want: Vec<u32> = [
        libc::SYS_newfstatat,
        libc::SYS_openat,
        libc::SYS_close,
        libc::SYS_getdents64,
    ]
    .iter()
    .map(|n| *n as u32)
    .collect();
    want.sort();
    assert_eq!(r[0].syscalls(), want);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn every_workload_syscall_has_a_number() {
    for w in crate::workloads::WORKLOADS {
        if w.syscalls.is_empty() {
            // A negative control (stream): nothing to match, and it says so.
            assert!(treatment_rules("matching-rule", w.syscalls).is_err());
        } else {
            treatment_rules("matching-rule", w.syscalls)
                .unwrap_or_else(|e| panic!("{}: {e:#}", w.name));
        }
        let r = treatment_rules("unrelated-rule", w.syscalls).unwrap();
        let nr = r[0].syscalls()[0];
        for name in w.syscalls {
            assert_ne!(syscall_number(name).unwrap(), nr, "{}", w.name);
        }
    }
}

#[test]
fn unknown_syscalls_are_named() {
    let msg = format!(
        "{:#}",
        treatment_rules("matching-rule", &["frobnicate"]).unwrap_err()
    );
    if NATIVE_ARCH.is_some() {
        assert!(msg.contains("'frobnicate'"), "{msg}");
        assert!(msg.contains("getppid"), "{msg}");
    } else {
        assert!(msg.contains("x86_64"), "{msg}");
    }
}

#[test]
fn snapshot_json_round_trips() {
    let state = AuditState {
        enabled: 1,
        rules: vec![vec![1, 2, 0xff], vec![]],
    };
    let snap = Snapshot::from_state(&state);
    let json = serde_json::to_value(&snap).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"enabled": 1, "rules": ["0102ff", ""]})
    );
    let back: Snapshot = serde_json::from_value(json).unwrap();
    assert_eq!(back.to_state().unwrap(), state);
}

#[test]
fn restore_rejects_a_foreign_snapshot_before_touching_anything() {
    let msg = format!(
        "{:#}",
        AUDIT
            .restore(&serde_json::json!({"mode": "enforcing"}))
            .unwrap_err()
    );
    assert!(msg.contains("not an audit snapshot"), "{msg}");
    let msg = format!(
        "{:#}",
        AUDIT
            .restore(&serde_json::json!({"enabled": 0, "rules": ["0g"]}))
            .unwrap_err()
    );
    assert!(msg.contains("malformed rule"), "{msg}");
}

#[test]
fn probe_gives_a_reason_or_is_available() {
    match AUDIT.probe() {
        Availability::Available => assert!(crate::sys::is_root()),
        Availability::Unavailable(reason) => {
            assert!(!reason.is_empty());
            if !crate::sys::is_root() {
                assert_eq!(reason, "needs root (CAP_AUDIT_CONTROL)");
            }
        }
    }
}

/// Applies `variant`'s treatment through the framework and checks the
/// kernel state in the arm and after it.
fn live_treatment(test: &str, variant: &'static str, check: impl Fn(&[Vec<u8>])) {
    let Some(live) = live_or_skip(test) else {
        return;
    };
    if let Availability::Unavailable(reason) = AUDIT.probe() {
        eprintln!("{test}: skipped: {reason}");
        return;
    }
    let _put_back = PutBack(live.before.clone());
    let dir = tempfile::tempdir().unwrap();
    let lock = StateLock::acquire_in(dir.path(), Duration::ZERO).unwrap();
    let snapshot = AUDIT.snapshot().unwrap();
    let applied = lock
        .apply(&treatment(variant), Arm::Treatment, &env("getppid"))
        .unwrap();
    let during = live.sock.state().unwrap();
    assert_eq!(during.enabled, 1);
    check(&during.rules);
    assert!(dir.path().join("journal.json").exists());
    // Restoring is idempotent: twice by hand, then once more by the guard.
    AUDIT.restore(&snapshot).unwrap();
    AUDIT.restore(&snapshot).unwrap();
    assert_eq!(live.sock.state().unwrap(), live.before);
    drop(applied);
    assert_eq!(live.sock.state().unwrap(), live.before, "restored exactly");
    assert!(!dir.path().join("journal.json").exists());
}

#[test]
fn live_unrelated_rule_applies_and_restores() {
    live_treatment(
        "live_unrelated_rule_applies_and_restores",
        "unrelated-rule",
        |rules| {
            assert_eq!(rules.len(), 1, "exactly the unrelated rule");
            let rule = RuleData::decode(&rules[0]).unwrap();
            assert_eq!(rule.syscalls(), [libc::SYS_pivot_root as u32]);
            assert_eq!(
                rules[0],
                treatment_rules("unrelated-rule", &["getppid"]).unwrap()[0].encode()
            );
        },
    );
}

#[test]
fn live_matching_rule_applies_and_restores() {
    live_treatment(
        "live_matching_rule_applies_and_restores",
        "matching-rule",
        |rules| {
            assert_eq!(rules.len(), 1, "exactly the matching rule");
            let rule = RuleData::decode(&rules[0]).unwrap();
            assert_eq!(rule.syscalls(), [libc::SYS_getppid as u32]);
            assert_eq!(rule.key().as_deref(), Some("secperf"));
        },
    );
}

#[test]
fn live_enabled_applies_and_restores() {
    live_treatment("live_enabled_applies_and_restores", "enabled", |rules| {
        assert!(rules.is_empty());
    });
}

#[test]
fn live_baseline_removes_existing_rules_and_puts_them_back() {
    let test = "live_baseline_removes_existing_rules_and_puts_them_back";
    let Some(live) = live_or_skip(test) else {
        return;
    };
    if let Availability::Unavailable(reason) = AUDIT.probe() {
        eprintln!("{test}: skipped: {reason}");
        return;
    }
    let _put_back = PutBack(live.before.clone());
    // A machine with a harmless rule of its own, audit enabled.
    let own = RuleData::always_exit(AUDIT_ARCH_X86_64)
        .with_syscall(libc::SYS_acct as u32)
        .with_key("secperf-test")
        .encode();
    live.sock.add_rule(&own).unwrap();
    live.sock.set_enabled(1).unwrap();
    let found = live.sock.state().unwrap();
    assert!(found.rules.contains(&own));

    let dir = tempfile::tempdir().unwrap();
    let lock = StateLock::acquire_in(dir.path(), Duration::ZERO).unwrap();
    let applied = lock
        .apply(&treatment("unrelated-rule"), Arm::Baseline, &env("getppid"))
        .unwrap();
    let during = live.sock.state().unwrap();
    assert_eq!(during.enabled, 0);
    assert!(during.rules.is_empty(), "baseline has no rules");
    applied.restore().unwrap();
    assert_eq!(live.sock.state().unwrap(), found, "the test rule is back");
    // A treatment arm also runs without the machine's own rules.
    let applied = lock
        .apply(
            &treatment("unrelated-rule"),
            Arm::Treatment,
            &env("getppid"),
        )
        .unwrap();
    assert_eq!(live.sock.state().unwrap().rules.len(), 1);
    drop(applied);
    assert_eq!(live.sock.state().unwrap(), found);

    live.sock.del_rule(&own).unwrap();
    live.sock.set_enabled(live.before.enabled).unwrap();
    assert_eq!(live.sock.state().unwrap(), live.before);
}
