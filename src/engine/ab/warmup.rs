//! A discarded half of each case before its first pair, where figures are
//! counted instructions (`--metric instructions`).
//!
//! In an icount guest the first half of each workload read 1-4% more
//! instructions than every later one (getppid 345.0 against 333.0-333.1,
//! stat 9323.8 against 9236.2-9239.3, in a guest of Debian's 6.1 with one
//! vCPU), while every later half repeated to 0.1%: what a workload's first
//! run brings into the kernel's caches is counted too. Time hides that in
//! its noise; instructions do not, and one inflated pair widens a
//! comparison's interval at the start of a sequential test, when every
//! pair counts. So each case runs one half first (the baseline's, or in a boot of a
//! kernel A/B the arm that boot measures), not stored.

use anyhow::{Context, Result};

use super::design::{Case, Design};
use super::measurer::Measurer;
use crate::mechanisms::Arm;

/// One half of each case, in the arm given, measured and discarded.
pub fn warm_up<'a>(
    cases: impl IntoIterator<Item = (&'a Case, &'a Design, Arm)>,
    measurer: &mut dyn Measurer,
) -> Result<()> {
    for (case, design, arm) in cases {
        let what = crate::report::label::workload(case.workload.name, &case.workload_params);
        measurer
            .half(
                case,
                design,
                arm,
                &mut crate::runner::Unobserved,
                &mut |_| {},
            )
            .with_context(|| format!("the warm-up half of {what} tasks={}", case.tasks))?;
    }
    Ok(())
}
