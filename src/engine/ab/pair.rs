//! One pair of a comparison: a coin orders its halves (AB or BA), each
//! measured in fresh tasks, and the pair's figures gathered from both
//! halves. The smallest unit of the A/B loop, shared by the comparison
//! measured pair after pair and by the table measured in rounds.

use anyhow::{Context, Result};

use crate::engine::design::{Case, Design, order_label, pair_order};
use crate::engine::measurer::Measurer;
use crate::mechanisms::Arm;
use crate::model::{ChildCpu, PairData, PairMetric};
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
    let mut ns = [0.0f64; 2];
    let mut cpu: [Vec<ChildCpu>; 2] = Default::default();
    let mut metrics: [Vec<crate::clients::ClientMetric>; 2] = Default::default();
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
        ns[side] = half.ns_per_op;
        cpu[side].extend(half.child_cpu);
        metrics[side] = half.client_metrics;
    }
    let mut figures = pair_metrics(&metrics[0], &metrics[1]);
    if case.workload.name == crate::workloads::service::NAME {
        figures.extend(server_cpu_metrics(&cpu[0], &cpu[1]));
    }
    let data = PairData {
        index: i,
        order: order_label(order),
        baseline_ns_per_op: ns[0],
        treatment_ns_per_op: ns[1],
        metrics: figures,
    };
    Ok((data, cpu))
}

/// The server's CPU time per client run of a pair's halves (a service's
/// process group: user, system and their sum, in ms), as figures of the
/// pair, so that they get the paired change and interval the client's
/// figures get: the target `predict` is checked against.
fn server_cpu_metrics(baseline: &[ChildCpu], treatment: &[ChildCpu]) -> Vec<PairMetric> {
    let median_ms = |halves: &[ChildCpu], f: fn(&ChildCpu) -> f64| {
        let v: Vec<f64> = halves.iter().map(|c| f(c) / 1e6).collect();
        crate::stats::median(&v)
    };
    type Of = fn(&ChildCpu) -> f64;
    let figures: [(&str, Of); 3] = [
        ("server.cpu_ms_per_run", ChildCpu::ns_per_op),
        ("server.user_ms_per_run", |c| c.user_ns_per_op),
        ("server.system_ms_per_run", |c| c.sys_ns_per_op),
    ];
    figures
        .iter()
        .filter_map(|&(name, f)| {
            Some(PairMetric {
                name: name.to_string(),
                higher_is_better: false,
                baseline: median_ms(baseline, f)?,
                treatment: median_ms(treatment, f)?,
            })
        })
        .collect()
}

/// A pair's client figures: those both halves reported, by name.
fn pair_metrics(
    baseline: &[crate::clients::ClientMetric],
    treatment: &[crate::clients::ClientMetric],
) -> Vec<PairMetric> {
    baseline
        .iter()
        .filter_map(|b| {
            let t = treatment.iter().find(|t| t.name == b.name)?;
            Some(PairMetric {
                name: b.name.clone(),
                higher_is_better: b.higher_is_better,
                baseline: b.value,
                treatment: t.value,
            })
        })
        .collect()
}
