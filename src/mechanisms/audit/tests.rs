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
fn variants_are_the_documented_four() {
    let names: Vec<_> = AUDIT.variants().iter().map(|v| v.name).collect();
    assert_eq!(
        names,
        ["enabled", "unrelated-rule", "matching-rule", "rules"]
    );
    assert_eq!(AUDIT.scope(), Scope::System);
    assert!(Treatment::parse("audit:matching-rule").is_ok());
    // A user's rules file is never part of the default survey.
    assert!(!AUDIT.survey_variants().iter().any(|v| v.contains("rules")));
}

/// A rules file in a fresh temporary directory.
fn rules_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("test.rules");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn usage_error(spec: &str) -> String {
    let e = Treatment::parse(spec).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2, "{spec}: {e:#}");
    format!("{e:#}")
}

#[test]
fn rules_treatments_parse_and_describe_themselves() {
    let (_dir, path) = rules_file(
        "-D\n-b 8192\n-f 2\n\
         -a always,exit -F arch=b64 -S getppid -k secperf\n\
         -w /etc/passwd -p wa -k identity\n\
         -a never,exclude -F msgtype=CWD\n",
    );
    let spec = format!("audit:rules={}", path.display());
    let t = Treatment::parse(&spec).unwrap();
    assert_eq!(t.variant, "rules");
    assert_eq!(t.params["rules"], path.display().to_string());
    let file = rule_file(&t).unwrap().unwrap();
    assert_eq!(file.lines.len(), 3);
    let d = AUDIT.describe(&t).unwrap();
    assert_eq!(
        d[0],
        format!(
            "{}: 3 rules (1 syscall rule, 1 watch, 1 on other lists), 3 control lines not applied",
            path.display()
        )
    );
    assert!(d[1].contains("write a record for every match"), "{d:?}");
    let all = d.join("\n");
    assert!(
        all.contains(":1: -D (implied: the measured arm starts with no rules)"),
        "{all}"
    );
    assert!(all.contains("warning: "), "{all}");
    assert!(all.contains("-f 2"), "{all}");
    // The long form, too.
    let t = Treatment::parse(&format!("audit:rules,rules={}", path.display())).unwrap();
    assert_eq!(t.variant, "rules");
    // The other variants describe nothing.
    assert!(AUDIT.describe(&treatment("enabled")).unwrap().is_empty());
}

#[test]
fn rules_mistakes_are_usage_errors() {
    let e = usage_error("audit:rules");
    assert!(e.contains("-m audit:rules=PATH"), "{e}");
    let e = usage_error("audit:enabled,rules=/etc/audit/audit.rules");
    assert!(e.contains("only for variant rules"), "{e}");
    let e = usage_error("audit:rules=/nonexistent/secperf.rules");
    assert!(e.contains("/nonexistent/secperf.rules"), "{e}");
    let (_dir, path) = rules_file("-a always,exit -F arch=b64 -S getppid\n-a bogus\n-S x\n");
    let e = usage_error(&format!("audit:rules={}", path.display()));
    assert!(
        e.contains(&format!("{}:2: -a bogus: ", path.display())),
        "{e}"
    );
    assert!(e.contains(&format!("{}:3: -S x: ", path.display())), "{e}");
}

#[test]
fn rules_that_record_are_refused_under_failure_panic() {
    let (_dir, path) = rules_file("-a always,exit -F arch=b64 -S getppid\n");
    let t = Treatment::parse(&format!("audit:rules={}", path.display())).unwrap();
    let file = rule_file(&t).unwrap().unwrap();
    let e = refuse_panic(AUDIT_FAIL_PANIC, &file)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("failure=2") && e.contains("auditctl -f 1"),
        "{e}"
    );
    refuse_panic(1, &file).unwrap();
    let (_dir, path) = rules_file("-a never,exit -F arch=b64 -S getppid\n");
    let t = Treatment::parse(&format!("audit:rules={}", path.display())).unwrap();
    refuse_panic(AUDIT_FAIL_PANIC, &rule_file(&t).unwrap().unwrap()).unwrap();
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
        crate::testing::skip_kernel_feature(test, "audit", &reason);
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
        crate::testing::skip_kernel_feature(test, "audit", &reason);
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

/// A rules file the kernel lists in another order and form than it was
/// written (a prepended rule, several lists, `-S all`, a watch). The watch
/// is on a file in a directory that never vanishes: a watched directory
/// deleted while the rule is loaded would leave the kernel counting a rule
/// that is gone (phantom rules, docs/findings.md).
fn live_rules_text(watched_dir: &std::path::Path) -> String {
    format!(
        "# secperf live test\n\
         -D\n\
         -b 320\n\
         -a never,exclude -F msgtype=1999\n\
         -a always,exit -F arch=b64 -S acct -k secperf-test\n\
         -a never,exit -S all -F uid=2147483632\n\
         -A always,exit -F arch=b64 -S pivot_root -k secperf-test\n\
         -a never,user -F uid=2147483632\n\
         -w {}/secperf-test-watched -p wa -k secperf-test\n",
        watched_dir.display()
    )
}

#[test]
fn live_rules_file_applies_exactly_and_restores() {
    let test = "live_rules_file_applies_exactly_and_restores";
    let Some(live) = live_or_skip(test) else {
        return;
    };
    if let Availability::Unavailable(reason) = AUDIT.probe() {
        crate::testing::skip_kernel_feature(test, "audit", &reason);
        return;
    }
    if live.sock.status().unwrap().failure == AUDIT_FAIL_PANIC {
        let reason = "the audit failure mode is panic (failure=2)";
        crate::testing::skip_kernel_feature(test, "audit", reason);
        return;
    }
    let _put_back = PutBack(live.before.clone());
    let (_dir, path) = rules_file(&live_rules_text(std::path::Path::new("/etc")));
    let t = Treatment::parse(&format!("audit:rules={}", path.display())).unwrap();
    let file = rule_file(&t).unwrap().unwrap();
    assert_eq!(file.lines.len(), 6);
    let state = tempfile::tempdir().unwrap();
    let lock = StateLock::acquire_in(state.path(), Duration::ZERO).unwrap();
    for arm in [Arm::Baseline, Arm::Treatment, Arm::Treatment] {
        let applied = lock.apply(&t, arm, &env("getppid")).unwrap();
        let during = live.sock.state().unwrap();
        match arm {
            Arm::Baseline => {
                assert_eq!(during.enabled, 0);
                assert!(during.rules.is_empty());
            }
            Arm::Treatment => {
                assert_eq!(during.enabled, 1);
                assert_eq!(during.rules, file.expected_listing());
                // The kernel put the -A rule first on the exit list.
                let exit: Vec<RuleData> = during
                    .rules
                    .iter()
                    .map(|r| RuleData::decode(r).unwrap())
                    .filter(|r| r.list() == crate::sys::audit::AUDIT_FILTER_EXIT)
                    .collect();
                assert_eq!(exit[0].syscalls(), [libc::SYS_pivot_root as u32]);
                assert!(exit[3].is_watch());
            }
        }
        drop(applied);
        assert_eq!(
            live.sock.state().unwrap(),
            live.before,
            "restored exactly after {arm:?}"
        );
    }
    assert!(!state.path().join("journal.json").exists());
}

#[test]
fn live_a_rule_the_kernel_refuses_names_its_line_and_changes_nothing() {
    let test = "live_a_rule_the_kernel_refuses_names_its_line_and_changes_nothing";
    let Some(live) = live_or_skip(test) else {
        return;
    };
    if let Availability::Unavailable(reason) = AUDIT.probe() {
        crate::testing::skip_kernel_feature(test, "audit", &reason);
        return;
    }
    let _put_back = PutBack(live.before.clone());
    let (_dir, path) = rules_file(
        "-a always,exit -F arch=b64 -S acct -k secperf-test\n\
         -w /nonexistent/secperf/dir/file -p wa -k secperf-test\n",
    );
    let t = Treatment::parse(&format!("audit:rules={}", path.display())).unwrap();
    let state = tempfile::tempdir().unwrap();
    let lock = StateLock::acquire_in(state.path(), Duration::ZERO).unwrap();
    for arm in [Arm::Baseline, Arm::Treatment] {
        let e = lock.apply(&t, arm, &env("getppid")).unwrap_err();
        let msg = format!("{e:#}");
        assert_eq!(crate::error::exit_code(&e), 2, "{msg}");
        assert!(
            msg.contains(&format!(
                "{}:2: -w /nonexistent/secperf/dir/file -p wa -k secperf-test: the kernel \
                 refused it: ENOENT",
                path.display()
            )),
            "{msg}"
        );
        assert!(msg.contains("parent directory does not exist"), "{msg}");
        assert!(msg.contains("the previous state was restored"), "{msg}");
        assert_eq!(
            live.sock.state().unwrap(),
            live.before,
            "{arm:?}: nothing changed"
        );
    }
    assert!(!state.path().join("journal.json").exists());
}

#[cfg(target_arch = "x86_64")]
#[test]
fn count_adds_distinct_unrelated_rules() {
    let one = treatment_rules_n("unrelated-rule", &["getppid"], 1).unwrap();
    assert_eq!(
        one,
        treatment_rules("unrelated-rule", &["getppid"]).unwrap()
    );
    let three = treatment_rules_n("unrelated-rule", &["getppid"], 3).unwrap();
    assert_eq!(three.len(), 3);
    let encoded: std::collections::BTreeSet<Vec<u8>> = three.iter().map(RuleData::encode).collect();
    assert_eq!(encoded.len(), 3, "the kernel refuses exact duplicates");
    assert_eq!(three[2].key().as_deref(), Some("secperf-3"));
    assert!(three.iter().all(|r| r.syscalls() == three[0].syscalls()));
    // count only means something for unrelated-rule.
    let e = crate::mechanisms::Treatment::parse("audit:enabled,count=2").unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    crate::mechanisms::Treatment::parse("audit:unrelated-rule,count=8").unwrap();
}

#[test]
fn a_watch_the_kernel_dropped_is_named_at_restore() {
    let file = audit_rules::parse(
        "-a always,exit -F arch=b64 -S pivot_root -k a\n\
         -w /nonexistent-secperf/gone/file -p wa\n",
        "t.rules",
    )
    .unwrap();
    let loaded = file.expected_listing();
    // Nothing dropped: nothing said.
    assert!(dropped_watches(&loaded, &loaded).is_empty());
    // The watch went (its directory was deleted): named.
    let dropped = dropped_watches(&loaded, &loaded[..1]);
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert!(
        dropped[0].contains("/nonexistent-secperf/gone was"),
        "{}",
        dropped[0]
    );
    assert!(dropped[0].contains("until reboot"), "{}", dropped[0]);
    // A syscall rule that went is no watch of ours to explain.
    assert!(dropped_watches(&loaded, &loaded[1..]).is_empty());
}
