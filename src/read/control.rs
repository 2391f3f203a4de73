//! The negative control's judgement: a table's comparisons on the control
//! workload (`stream`: no system call and no security hook in its loop)
//! passed when none came out slower or faster after the table's decision;
//! otherwise something other than the mechanisms moved the figures (noise,
//! frequency scaling, another load) and the rest is to be read with care.
//! It lives on the read side because every stored run's document judges
//! its control afresh over its final verdicts; the engine plans the
//! control workload from [`CONTROL_WORKLOAD`].

use crate::model::{Comparison, NegativeControl};
use crate::stats::decision::Verdict;

/// The negative control of `overhead`: the STREAM triad runs no system
/// call and no security hook in its loop, so no mechanism should change
/// it; a change there means something else moved the figures (noise,
/// frequency scaling, another load).
pub const CONTROL_WORKLOAD: &str = "stream";

/// The negative control's outcome over the control comparisons (final
/// verdicts, after Holm); None when the control workload was not measured.
pub fn judge(comparisons: &[Comparison]) -> Option<NegativeControl> {
    let controls: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.workload == CONTROL_WORKLOAD)
        .collect();
    if controls.is_empty() {
        return None;
    }
    let failed: Vec<String> = controls
        .iter()
        .filter(|c| matches!(c.overhead_pct.verdict, Verdict::Slower | Verdict::Faster))
        .map(|c| crate::report::label::control(c))
        .collect();
    Some(NegativeControl {
        workload: CONTROL_WORKLOAD.to_string(),
        passed: failed.is_empty(),
        comparisons: controls
            .iter()
            .map(|c| crate::report::label::control(c))
            .collect(),
        failed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::testing::decided;

    #[test]
    fn the_control_passes_when_no_mechanism_changes_stream() {
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
        let nc = judge(&cs).unwrap();
        assert!(nc.passed);
        assert_eq!(nc.workload, "stream");
        assert_eq!(nc.comparisons, ["seccomp:allow", "audit:enabled"]);
        assert!(nc.failed.is_empty());
    }

    #[test]
    fn the_control_fails_on_any_slower_or_faster_stream() {
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
        let nc = judge(&cs).unwrap();
        assert!(!nc.passed);
        assert_eq!(nc.failed, ["audit:enabled", "cred:fsuid tasks=2"]);
        assert_eq!(nc.comparisons.len(), 3);
    }

    #[test]
    fn there_is_no_control_without_stream() {
        let cs = [decided(
            "getppid",
            "seccomp:allow",
            Verdict::Slower,
            (12.3, 8.0, 26.8),
        )];
        assert_eq!(judge(&cs), None);
        assert_eq!(judge(&[]), None);
    }
}
