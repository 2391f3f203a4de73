//! One comparison measured pair after pair: [`compare`] and [`measure`],
//! which a fixed table runs one comparison after another and calibration
//! runs alone. Kept apart from the table so that a single comparison can
//! be measured (and its finished pairs kept when it stops) without a store.

use anyhow::Result;

use super::design::{Case, Design};
use super::measurer::Measurer;
use super::pair::measure_pair;
use super::profiled::finish;
use super::summary::partial;
use crate::model::{ChildCpu, Comparison};
use crate::runner::Tick;
use crate::stats::bootstrap::Rng;
use crate::stats::sequential::{StopReason, settled};

/// Measures one case as randomised pairs; `on_tick` is called after every
/// slice. The first failing half stops the comparison with an error naming
/// the case, the pair and the arm. With a stopping rule
/// ([`Design::stop`]) it looks after every pair and stops once settled, at
/// `design.pairs` at the latest; the comparison's interval and p-value are
/// then the anytime-valid ones of [`crate::stats::sequential`].
pub fn compare(
    case: &Case,
    design: &Design,
    measurer: &mut dyn Measurer,
    rng: &mut Rng,
    on_tick: &mut dyn FnMut(Tick),
) -> Result<Comparison> {
    measure(case, design, measurer, rng, on_tick).map_err(|s| s.error)
}

/// What a comparison that stopped before its end (Ctrl-C, a failing half)
/// leaves: the comparison of the pairs it finished, marked unfinished
/// (None before its first pair, or when they give no figure), and why it
/// stopped.
pub struct Stopped {
    pub partial: Option<Box<Comparison>>,
    pub error: anyhow::Error,
}

/// [`compare`], keeping the finished pairs of a comparison that stops.
pub fn measure(
    case: &Case,
    design: &Design,
    measurer: &mut dyn Measurer,
    rng: &mut Rng,
    on_tick: &mut dyn FnMut(Tick),
) -> std::result::Result<Comparison, Stopped> {
    let mut pair_data = Vec::with_capacity(design.pairs as usize);
    let mut cpu: [Vec<ChildCpu>; 2] = Default::default();
    let mut ratios = Vec::with_capacity(design.pairs as usize);
    let mut stopped = None;
    for i in 0..design.pairs {
        let pair = match measure_pair(case, design, measurer, rng, on_tick, i) {
            Ok(pair) => pair,
            Err(error) => {
                let stop = design.stop.as_ref().map(|_| StopReason::Interrupted);
                return Err(Stopped {
                    partial: partial(case, design, &pair_data, &cpu, stop),
                    error,
                });
            }
        };
        let (data, [b, t]) = pair;
        cpu[0].extend(b);
        cpu[1].extend(t);
        let ratio = data.log_ratio();
        pair_data.push(data);
        if let Some(rule) = &design.stop {
            ratios.push(ratio);
            stopped = settled(&ratios, rule);
            if stopped.is_some() {
                break;
            }
        }
    }
    finish(case, design, measurer, on_tick, &pair_data, &cpu, stopped).map_err(|error| Stopped {
        partial: None,
        error,
    })
}
