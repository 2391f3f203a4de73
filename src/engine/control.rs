//! The negative control's judgement: a table's comparisons on the control
//! workload (`stream`: no system call and no security hook in its loop)
//! passed when none came out slower or faster after the table's decision;
//! otherwise something other than the mechanisms moved the figures (noise,
//! frequency scaling, another load) and the rest is to be read with care.

use super::design::CONTROL_WORKLOAD;
use crate::model::{Comparison, ControlOutcome, NegativeControl};
use crate::report::number;
use crate::stats::decision::Verdict;

/// How a control comparison is named: its treatment, with " tasks=N"
/// beyond one task.
fn control_label(c: &Comparison) -> String {
    let label = crate::mechanisms::label_of(c);
    if c.tasks == 1 {
        label
    } else {
        format!("{label} tasks={}", c.tasks)
    }
}

/// The negative control's outcome over the control comparisons (final
/// verdicts, after Holm); None when the control workload was not measured.
pub fn judge(comparisons: &[Comparison]) -> Option<NegativeControl> {
    let outcomes: Vec<ControlOutcome> = comparisons
        .iter()
        .filter(|c| c.workload == CONTROL_WORKLOAD)
        .map(|c| ControlOutcome {
            label: control_label(c),
            figure: number::overhead(&c.overhead_pct),
            changed: matches!(c.overhead_pct.verdict, Verdict::Slower | Verdict::Faster),
        })
        .collect();
    if outcomes.is_empty() {
        return None;
    }
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| o.changed)
        .map(|o| o.label.clone())
        .collect();
    Some(NegativeControl {
        workload: CONTROL_WORKLOAD.to_string(),
        passed: failed.is_empty(),
        comparisons: outcomes.iter().map(|o| o.label.clone()).collect(),
        failed,
        outcomes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::report::table::{negative_control, negative_control_summary};
    use crate::stats::paired::OverheadPct;

    /// A comparison with its final verdict, as `decide_all` leaves it.
    fn decided(
        workload: &str,
        treatment: &str,
        verdict: Verdict,
        (estimate, ci_low, ci_high): (f64, f64, f64),
    ) -> Comparison {
        let (mechanism, variant) = treatment.split_once(':').unwrap();
        Comparison {
            workload: workload.into(),
            workload_params: Default::default(),
            mechanism: mechanism.into(),
            variant: variant.into(),
            params: Default::default(),
            mode: Mode::Process,
            tasks: 1,
            pairs: 12,
            sample_ms: 60,
            samples_per_half: 2,
            baseline_ns_per_op: 100.0,
            treatment_ns_per_op: 100.0 * (1.0 + estimate / 100.0),
            overhead_pct: OverheadPct {
                estimate,
                ci_low,
                ci_high,
                p_value: if verdict == Verdict::NoChange {
                    1.0
                } else {
                    0.014
                },
                verdict,
            },
            hodges_lehmann_pct: f64::NAN,
            pair_data: vec![],
            attribution: None,
            child_cpu: None,
            sequential: None,
        }
    }

    #[test]
    fn negative_control_passes_when_no_mechanism_changes_stream() {
        let cs = [
            decided(
                "getppid",
                "seccomp:allow",
                Verdict::Slower,
                (12.3, 8.0, 26.8),
            ),
            decided(
                "stream",
                "seccomp:allow",
                Verdict::NoChange,
                (0.3, -1.2, 2.03),
            ),
            decided(
                "stream",
                "audit:enabled",
                Verdict::Negligible,
                (0.1, -0.4, 0.5),
            ),
        ];
        let text = negative_control(judge(&cs).as_ref());
        assert_eq!(
            text,
            "Negative control (stream: no syscall in the loop, so no mechanism should change it):\n  \
             passed: no mechanism changed stream (seccomp:allow no difference detected: < 2.1%, \
             audit:enabled negligible: +0.1% [-0.4, 0.5])\n"
        );
        let json = judge(&cs).unwrap();
        assert!(json.passed);
        assert_eq!(json.comparisons, ["seccomp:allow", "audit:enabled"]);
        assert!(json.failed.is_empty());
        let summary = negative_control_summary(judge(&cs).as_ref());
        assert_eq!(summary.len(), 1);
        assert!(
            summary[0].contains("passed: no mechanism changed stream"),
            "{summary:?}"
        );
    }

    #[test]
    fn negative_control_fails_on_any_slower_or_faster_stream() {
        let mut tasks2 = decided("stream", "cred:fsuid", Verdict::Faster, (-3.0, -5.0, -1.5));
        tasks2.tasks = 2;
        let cs = [
            decided(
                "stream",
                "seccomp:allow",
                Verdict::NoChange,
                (0.3, -1.2, 2.03),
            ),
            decided("stream", "audit:enabled", Verdict::Slower, (4.2, 1.1, 6.0)),
            decided(
                "getppid",
                "audit:enabled",
                Verdict::Faster,
                (-22.6, -23.0, -20.3),
            ),
            tasks2,
        ];
        let text = negative_control(judge(&cs).as_ref());
        assert!(
            text.contains(
                "  FAILED: stream changed under audit:enabled (+4.2% [1.1, 6.0]) and \
                 cred:fsuid tasks=2 (-3.0% [-5.0, -1.5]): something other than the \
                 mechanisms' hooks moved the figures"
            ),
            "{text}"
        );
        assert!(text.contains("rerun on a quieter machine."), "{text}");
        assert!(
            text.contains("  unchanged under seccomp:allow (no difference detected: < 2.1%)\n"),
            "{text}"
        );
        assert!(!text.contains("getppid"), "{text}");
        let json = judge(&cs).unwrap();
        assert!(!json.passed);
        assert_eq!(json.failed, ["audit:enabled", "cred:fsuid tasks=2"]);
        assert_eq!(json.comparisons.len(), 3);
        let summary = negative_control_summary(judge(&cs).as_ref());
        assert!(
            summary[0].contains("FAILED: stream changed under audit:enabled"),
            "{summary:?}"
        );

        // One failure alone: "the mechanism's hooks".
        let one = negative_control(judge(&cs[..2]).as_ref());
        assert!(one.contains("other than the mechanism's hooks"), "{one}");
    }

    #[test]
    fn negative_control_is_absent_without_stream() {
        let cs = [decided(
            "getppid",
            "seccomp:allow",
            Verdict::Slower,
            (12.3, 8.0, 26.8),
        )];
        assert_eq!(negative_control(judge(&cs).as_ref()), "");
        assert_eq!(judge(&cs), None);
        assert!(negative_control_summary(judge(&cs).as_ref()).is_empty());
        assert_eq!(negative_control(judge(&[]).as_ref()), "");
    }
}
