//! One pair of a comparison: a coin orders its halves (AB or BA), each
//! measured in fresh tasks, and the pair's figures gathered from both
//! halves. The smallest unit of the A/B loop, shared by the comparison
//! measured pair after pair and by the table measured in rounds.

use anyhow::{Context, Result};

use super::design::{Case, Design, order_label, pair_order};
use super::measurer::Measurer;
use crate::mechanisms::Arm;
use crate::model::{ChildCpu, Figure, PairData, PairFigure};
use crate::runner::{Tick, Unobserved};
use crate::stats::bootstrap::Rng;

/// Pair `i` of a case: a coin orders its halves; each half measured in
/// fresh tasks. Its figures, and the child CPU time of its baseline and
/// treatment halves. A failing half fails the pair, naming the case, the
/// pair and the arm.
pub(super) fn measure_pair(
    case: &Case,
    design: &Design,
    measurer: &mut dyn Measurer,
    rng: &mut Rng,
    on_tick: &mut dyn FnMut(Tick),
    i: u32,
) -> Result<(PairData, [Vec<ChildCpu>; 2])> {
    let order = pair_order(rng);
    let mut per_op = [0.0f64; 2];
    let mut cpu: [Vec<ChildCpu>; 2] = Default::default();
    let mut beside: [Vec<Figure>; 2] = Default::default();
    for arm in order {
        let half = measurer
            .half(case, design, arm, &mut Unobserved, on_tick)
            .with_context(|| {
                format!(
                    "{} on {}, pair {} of {}, {arm:?} half",
                    case.treatment,
                    case.workload.name,
                    i + 1,
                    design.pairs
                )
            })?;
        let side = (arm == Arm::Treatment) as usize;
        per_op[side] = half.per_op;
        cpu[side].extend(half.child_cpu);
        beside[side] = half.beside;
    }
    let data = PairData {
        index: i,
        order: order_label(order),
        baseline_per_op: per_op[0],
        treatment_per_op: per_op[1],
        beside: pair_figures(&beside[0], &beside[1]),
    };
    Ok((data, cpu))
}

/// A pair's figures beside its own measure: those both halves reported,
/// by measure.
fn pair_figures(baseline: &[Figure], treatment: &[Figure]) -> Vec<PairFigure> {
    baseline
        .iter()
        .filter_map(|b| {
            let t = treatment.iter().find(|t| t.measure == b.measure)?;
            Some(PairFigure {
                measure: b.measure.clone(),
                baseline: b.value,
                treatment: t.value,
            })
        })
        .collect()
}
