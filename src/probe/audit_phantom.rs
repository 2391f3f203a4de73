//! Phantom audit rules: the kernel charging every syscall for audit rules
//! that are gone.
//!
//! Linux counts its syscall audit rules in `audit_n_rules`. With audit
//! enabled and the count at zero, each syscall's audit context is a
//! "dummy" and its exit costs one call (`audit_reset_context`); with any
//! rule counted, every syscall exit runs the rule filters
//! (`audit_filter_syscall`, `audit_filter_inodes`, `auditd_test_task`
//! three times). Two kernel paths remove a rule without lowering the
//! count: `kill_rules()` (a `-F dir=` tree whose directory was deleted)
//! and `audit_remove_parent_watches()` (watches under a directory that was
//! deleted, moved or unmounted). After either, `auditctl -l` lists no rule
//! and every syscall still pays the filters whenever audit is enabled,
//! until reboot. docs/findings.md has the reproduction.
//!
//! No file shows the count. What does show it is where a syscall's time
//! goes: `secperf probe --active` ([`crate::engine::phantom`]) samples a
//! getppid loop three ways, with audit disabled, enabled with no rules,
//! and enabled with one harmless rule (the positive control, which the
//! kernel counts and uncounts correctly), and [`decide`] compares the
//! share of samples in the rule-only functions. The control makes the
//! check self-validating: on a kernel that inlines those functions, or
//! when too few samples landed, the control shows nothing either and the
//! answer is "cannot tell", never a wrong "no".
//!
//! This file holds the record and the decision; it measures nothing.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Kernel functions a syscall exit reaches only while the kernel counts
/// audit rules (`context->dummy` false). Any one of them in a sampled
/// stack of the getppid loop is the signature.
pub const RULE_PATH_FUNCTIONS: &[&str] = &[
    "auditd_test_task",
    "audit_filter_syscall",
    "audit_filter_inodes",
    "__audit_filter_op",
    "audit_filter_rules",
    "audit_return_fixup",
];

/// The least share of the control's samples in the rule path for the
/// check to mean anything (about 10% on the machines measured).
pub const MIN_CONTROL_SHARE: f64 = 0.01;
/// The least number of the control's samples in the rule path.
pub const MIN_CONTROL_SAMPLES: u64 = 20;
/// "Audit enabled, no rules" looks like the control above this fraction
/// of its share: phantom rules.
pub const PHANTOM_FRACTION: f64 = 0.25;
/// ... and like a kernel counting no rules below this one.
pub const CLEAN_FRACTION: f64 = 0.05;

/// How audit was set in one half of the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckArm {
    /// Audit disabled, no rules.
    Disabled,
    /// Audit enabled, no rules: what phantom rules change.
    Enabled,
    /// Audit enabled with one rule on a syscall the loop never makes (the
    /// positive control).
    OneRule,
}

impl CheckArm {
    pub fn describe(self) -> &'static str {
        match self {
            CheckArm::Disabled => "audit disabled",
            CheckArm::Enabled => "audit enabled, no rules",
            CheckArm::OneRule => "audit enabled, one unrelated rule",
        }
    }
}

/// One profiled half of the check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckHalf {
    pub arm: CheckArm,
    /// The getppid loop's median, ns per call.
    pub ns_per_op: f64,
    /// Samples of the loop's task.
    pub samples: u64,
    /// Of those, samples with a [`RULE_PATH_FUNCTIONS`] frame.
    pub rule_path_samples: u64,
}

/// What the check found (`audit.phantom_check` in `secperf probe --json`
/// and in every audit run's `system`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhantomCheck {
    /// What was found, or why the check could not tell, in one sentence.
    pub reason: String,
    /// When the check ran; None when it did not.
    #[serde(default)]
    pub checked_at: Option<DateTime<Utc>>,
    /// The profiled halves, in the order they ran.
    #[serde(default)]
    pub halves: Vec<CheckHalf>,
    /// Medians over the halves of each arm, ns per getppid call.
    #[serde(default)]
    pub disabled_ns_per_op: Option<f64>,
    #[serde(default)]
    pub enabled_ns_per_op: Option<f64>,
    /// Share of samples in the rule path: audit enabled with no rules, and
    /// the control with one rule.
    #[serde(default)]
    pub rule_path_share_enabled: Option<f64>,
    #[serde(default)]
    pub rule_path_share_one_rule: Option<f64>,
}

impl PhantomCheck {
    /// A check that did not run, and why.
    pub fn not_checked(reason: impl Into<String>) -> PhantomCheck {
        PhantomCheck {
            reason: reason.into(),
            checked_at: None,
            halves: Vec::new(),
            disabled_ns_per_op: None,
            enabled_ns_per_op: None,
            rule_path_share_enabled: None,
            rule_path_share_one_rule: None,
        }
    }

    /// What the read-only probe says.
    pub fn read_only() -> PhantomCheck {
        Self::not_checked(
            "not checked: the plain probe is read-only; `secperf probe --active` checks (it \
             switches audit for a few seconds, journaled and restored)",
        )
    }

    /// What a snapshot from before this check existed says.
    pub fn not_recorded() -> PhantomCheck {
        Self::not_checked("not recorded (probed by an older secperf)")
    }

    /// With audit enabled and no rules, how much dearer a getppid call is
    /// than with audit disabled: ns and %.
    pub fn cost(&self) -> Option<(f64, f64)> {
        let (d, e) = (self.disabled_ns_per_op?, self.enabled_ns_per_op?);
        (d > 0.0).then(|| (e - d, (e / d - 1.0) * 100.0))
    }

    /// The one sentence on what phantom rules cost here, and the remedy.
    /// The cost is a figure only where the halves of the two arms do not
    /// overlap; one half of each (the check an audit run makes) or halves
    /// that overlap are said to be too few or too noisy to price it.
    pub fn consequence(&self) -> String {
        let ns = |arm: CheckArm| -> Vec<f64> {
            self.halves
                .iter()
                .filter(|h| h.arm == arm)
                .map(|h| h.ns_per_op)
                .collect()
        };
        let (off, on) = (ns(CheckArm::Disabled), ns(CheckArm::Enabled));
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        };
        let cost = match self.cost() {
            None => "the cost was not measured".into(),
            Some(_) if off.len() < 2 || on.len() < 2 => format!(
                "what that costs is not priced here: one half of each arm ({:.0} ns a getppid \
                 call enabled, {:.0} ns disabled) is too few; `secperf probe --active` measures \
                 it in three rounds",
                self.enabled_ns_per_op.unwrap_or_default(),
                self.disabled_ns_per_op.unwrap_or_default()
            ),
            Some(_) if range(&off).1 >= range(&on).0 => format!(
                "what that costs is too noisy to tell here: a getppid call took {:.0}-{:.0} ns \
                 in the halves with audit enabled and {:.0}-{:.0} ns with it disabled, which \
                 overlap",
                range(&on).0,
                range(&on).1,
                range(&off).0,
                range(&off).1
            ),
            Some((ns, pct)) => format!(
                "here a getppid call costs {:.0} ns with audit enabled and no rules against {:.0} \
                 ns with audit disabled ({ns:+.0} ns, {pct:+.0}%)",
                self.enabled_ns_per_op.unwrap_or_default(),
                self.disabled_ns_per_op.unwrap_or_default()
            ),
        };
        format!(
            "Whenever audit is enabled, every syscall of every process runs audit's rule filters \
             for rules that no longer exist: {cost}; `auditctl -D` cannot clear it, only a \
             reboot does (docs/findings.md)"
        )
    }
}

/// Whether a folded stack (`outer;...;leaf`) passes through the rule path.
pub fn in_rule_path(stack: &str) -> bool {
    stack
        .split(';')
        .any(|frame| RULE_PATH_FUNCTIONS.contains(&frame))
}

/// Samples and rule-path samples of a half's folded stacks.
pub fn count_rule_path<'a>(stacks: impl IntoIterator<Item = (&'a String, &'a u64)>) -> (u64, u64) {
    let mut total = 0;
    let mut rule_path = 0;
    for (stack, &n) in stacks {
        total += n;
        if in_rule_path(stack) {
            rule_path += n;
        }
    }
    (total, rule_path)
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The answer from the profiled halves: `Some(true)` phantom rules,
/// `Some(false)` none, `None` cannot tell; and the check's record.
pub fn decide(halves: Vec<CheckHalf>, checked_at: DateTime<Utc>) -> (Option<bool>, PhantomCheck) {
    let of = |arm: CheckArm| halves.iter().filter(move |h| h.arm == arm);
    let share = |arm: CheckArm| -> (u64, u64, Option<f64>) {
        let (n, k) = of(arm).fold((0, 0), |(n, k), h| (n + h.samples, k + h.rule_path_samples));
        (n, k, (n > 0).then(|| k as f64 / n as f64))
    };
    let ns = |arm: CheckArm| median(of(arm).map(|h| h.ns_per_op).collect());
    let (control_n, control_k, control_share) = share(CheckArm::OneRule);
    let (enabled_n, enabled_k, enabled_share) = share(CheckArm::Enabled);
    let mut check = PhantomCheck {
        reason: String::new(),
        checked_at: Some(checked_at),
        disabled_ns_per_op: ns(CheckArm::Disabled),
        enabled_ns_per_op: ns(CheckArm::Enabled),
        rule_path_share_enabled: enabled_share,
        rule_path_share_one_rule: control_share,
        halves,
    };
    let pct = |s: Option<f64>| s.unwrap_or_default() * 100.0;
    let control_ok =
        control_k >= MIN_CONTROL_SAMPLES && control_share.is_some_and(|s| s >= MIN_CONTROL_SHARE);
    if !control_ok || enabled_n == 0 {
        check.reason = format!(
            "cannot tell: with one audit rule loaded, only {control_k} of {control_n} samples \
             ({:.1}%) were in audit's rule filters ({}), too few to compare with; this kernel may \
             inline them, or the sampler missed them",
            pct(control_share),
            RULE_PATH_FUNCTIONS.join(", ")
        );
        return (None, check);
    }
    let ratio = enabled_share.unwrap_or_default() / control_share.unwrap_or(1.0);
    let shares = format!(
        "with audit enabled and no rules listed, {enabled_k} of {enabled_n} samples ({:.1}%) \
         were in audit's rule filters, against {:.1}% with one rule loaded",
        pct(enabled_share),
        pct(control_share)
    );
    let verdict = if ratio >= PHANTOM_FRACTION {
        check.reason = format!("{shares}: the kernel still counts rules that are gone");
        Some(true)
    } else if ratio <= CLEAN_FRACTION {
        check.reason = format!("{shares}: the kernel counts no rule");
        Some(false)
    } else {
        check.reason = format!(
            "cannot tell: {shares}; between the {:.0}% and {:.0}% of the control's share that \
             would decide; run `secperf probe --active` again",
            CLEAN_FRACTION * 100.0,
            PHANTOM_FRACTION * 100.0
        );
        None
    };
    (verdict, check)
}

/// Puts a check's answer into a probe snapshot (`audit.phantom_rules`,
/// `audit.phantom_check`); a snapshot whose audit was not read keeps its
/// reason.
pub fn record(system: &mut serde_json::Value, phantom: Option<bool>, check: &PhantomCheck) {
    if let Some(audit) = system.get_mut("audit").and_then(|a| a.as_object_mut())
        && !audit.contains_key("unavailable")
    {
        audit.insert("phantom_rules".into(), serde_json::json!(phantom));
        audit.insert(
            "phantom_check".into(),
            serde_json::to_value(check).unwrap_or_default(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_goes_into_a_snapshot_with_audit() {
        let mut system = serde_json::json!({"audit": {"enabled": 0, "phantom_rules": null}});
        let check = PhantomCheck::not_checked("x");
        record(&mut system, Some(true), &check);
        assert_eq!(system["audit"]["phantom_rules"], true);
        assert_eq!(system["audit"]["phantom_check"]["reason"], "x");
        let mut unread = serde_json::json!({"audit": {"unavailable": "no audit"}});
        record(&mut unread, Some(true), &check);
        assert_eq!(unread["audit"].as_object().unwrap().len(), 1);
    }

    fn half(arm: CheckArm, ns: f64, samples: u64, rule: u64) -> CheckHalf {
        CheckHalf {
            arm,
            ns_per_op: ns,
            samples,
            rule_path_samples: rule,
        }
    }

    fn now() -> DateTime<Utc> {
        "2026-11-25T21:00:00Z".parse().unwrap()
    }

    #[test]
    fn stacks_through_a_rule_filter_count() {
        assert!(in_rule_path(
            "entry_SYSCALL_64;do_syscall_64;syscall_exit_work;__audit_syscall_exit;\
             audit_filter_inodes;auditd_test_task"
        ));
        assert!(!in_rule_path(
            "entry_SYSCALL_64;do_syscall_64;__audit_syscall_exit;audit_reset_context"
        ));
        // A frame's name, not a substring of it.
        assert!(!in_rule_path("x;auditd_test_task_not"));
        let stacks = [
            ("a;__audit_filter_op".to_string(), 3u64),
            ("a;b".to_string(), 7u64),
        ];
        assert_eq!(count_rule_path(stacks.iter().map(|(s, n)| (s, n))), (10, 3));
    }

    /// Shares as measured on the development VM after a `dir=` rule's
    /// directory was deleted: the enabled halves look like the control.
    #[test]
    fn enabled_like_the_control_is_phantom() {
        let (v, c) = decide(
            vec![
                half(CheckArm::Disabled, 390.0, 1200, 0),
                half(CheckArm::Enabled, 560.0, 1200, 150),
                half(CheckArm::OneRule, 570.0, 1200, 160),
            ],
            now(),
        );
        assert_eq!(v, Some(true), "{}", c.reason);
        assert!(
            c.reason.ends_with("still counts rules that are gone"),
            "{}",
            c.reason
        );
        let (ns, pct) = c.cost().unwrap();
        assert!((ns - 170.0).abs() < 1e-9 && (pct - 43.589).abs() < 0.01);
        // One half of each arm prices nothing (one predict said +42%, +11%
        // and +85% from three such checks).
        let said = c.consequence();
        assert!(
            said.contains("not priced here: one half of each arm"),
            "{said}"
        );
        assert!(
            !said.contains("+170 ns") && said.contains("reboot"),
            "{said}"
        );
    }

    #[test]
    fn phantom_rules_are_priced_only_where_the_halves_do_not_overlap() {
        let halves = |enabled: [f64; 3]| {
            let mut v = Vec::new();
            for (i, e) in enabled.into_iter().enumerate() {
                v.push(half(CheckArm::Disabled, 390.0 + i as f64 * 10.0, 1200, 0));
                v.push(half(CheckArm::Enabled, e, 1200, 150));
                v.push(half(CheckArm::OneRule, 570.0, 1200, 160));
            }
            v
        };
        let (_, apart) = decide(halves([550.0, 560.0, 580.0]), now());
        let said = apart.consequence();
        assert!(
            said.contains("costs 560 ns") && said.contains("+160 ns"),
            "{said}"
        );
        let (_, overlap) = decide(halves([395.0, 560.0, 700.0]), now());
        let said = overlap.consequence();
        assert!(
            said.contains("too noisy to tell here") && said.contains("395-700 ns"),
            "{said}"
        );
    }

    #[test]
    fn nothing_in_the_rule_path_without_rules_is_clean() {
        let (v, c) = decide(
            vec![
                half(CheckArm::Disabled, 390.0, 1200, 0),
                half(CheckArm::Enabled, 380.0, 1200, 1),
                half(CheckArm::OneRule, 520.0, 1200, 140),
            ],
            now(),
        );
        assert_eq!(v, Some(false), "{}", c.reason);
        assert!(c.reason.ends_with("counts no rule"), "{}", c.reason);
    }

    #[test]
    fn a_control_that_shows_nothing_cannot_tell() {
        // Inlined filters, or too few samples: never a wrong "no".
        let (v, c) = decide(
            vec![
                half(CheckArm::Enabled, 380.0, 1200, 0),
                half(CheckArm::OneRule, 520.0, 1200, 3),
            ],
            now(),
        );
        assert_eq!(v, None);
        assert!(c.reason.starts_with("cannot tell"), "{}", c.reason);
        let (v, _) = decide(vec![half(CheckArm::OneRule, 520.0, 100, 30)], now());
        assert_eq!(v, None, "no enabled half");
    }

    #[test]
    fn between_the_thresholds_cannot_tell() {
        let (v, c) = decide(
            vec![
                half(CheckArm::Enabled, 380.0, 1000, 15),
                half(CheckArm::OneRule, 520.0, 1000, 100),
            ],
            now(),
        );
        assert_eq!(v, None);
        assert!(c.reason.contains("again"), "{}", c.reason);
    }

    #[test]
    fn older_snapshots_read_as_not_recorded() {
        let c: PhantomCheck = serde_json::from_str(r#"{"reason": "x"}"#).unwrap();
        assert_eq!(c.checked_at, None);
        assert!(c.halves.is_empty());
        assert!(PhantomCheck::read_only().reason.contains("--active"));
    }
}
