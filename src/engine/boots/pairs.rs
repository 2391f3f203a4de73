//! The pair loop of a kernel A/B across boots: each block boots every arm
//! once (behind the [`Booter`] seam, so that the loop is tested without a
//! guest), pairs the halves across boots, stops each case once it is
//! settled, and summarises the comparisons.

use anyhow::Result;

use super::order::block_order;
use crate::engine::ab::design::{Case, Design};
use crate::engine::ab::measurer::HalfResult;
use crate::model::{ChildCpu, Comparison, PairData, Params};
use crate::profile::attribute::{AttributeOpts, HalfProfile, ProfiledPair, attribute};
use crate::stats::bootstrap::Rng;
use crate::stats::sequential::{StopReason, settled};

/// The mechanism name boot-arm comparisons are stored under.
pub const MECHANISM: &str = "kernel";
/// What a boot gives the host for one case.
#[derive(Debug, Clone, Default)]
pub struct BootResult {
    pub half: Option<HalfResult>,
    pub profile: Option<HalfProfile>,
    pub profile_note: Option<String>,
}

impl BootResult {
    pub fn of(half: HalfResult) -> BootResult {
        BootResult {
            half: Some(half),
            ..Default::default()
        }
    }
}

/// Boots an arm and returns the halves of the cases asked for (profiled
/// too when `profile`).
pub trait Booter {
    fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>>;

    /// Whether a block's boots may run at the same time: only where that
    /// cannot change what they measure (counted instructions, whose
    /// guest clock counts the guest's own instructions whatever the
    /// host's load), and where the host has a CPU for each.
    fn together(&self) -> bool {
        false
    }

    /// Boots each `(arm, cases)` at the same time; a result per boot, in
    /// order. Only called when [`Booter::together`] says so.
    fn boot_together(
        &mut self,
        asks: &[(usize, Vec<usize>)],
        profile: bool,
    ) -> Vec<Result<Vec<BootResult>>> {
        asks.iter()
            .map(|(arm, cases)| self.boot(*arm, cases, profile))
            .collect()
    }
}

/// How one boot went, for progress.
pub struct BootDone {
    pub index: usize,
    pub total: usize,
    pub arm: usize,
    pub pair: u32,
    /// After the last boot of a pair (block): each comparison's estimate
    /// and interval so far ("getppid, fine against base: +12.0% [4.1,
    /// 21.3] after 3 pairs"), before the table's correction.
    pub findings: Vec<String>,
}

/// Pairs halves across boots: for each block (a pair, with two arms) a
/// seeded draw orders the arms' boots, each boot measures the cases still
/// open for its arm, and a case whose stopping rule settles is left out
/// of later boots. Every arm after the first is compared with the first
/// (its baseline): with the layout control's third arm, each block is
/// one boot of each of the three, and the baseline's boot serves both
/// comparisons. Returns one comparison per case and compared arm
/// (unfinished ones marked when a boot fails, with the error).
pub fn pairs_over_boots(
    cases: &[Case],
    design: &Design,
    arm_names: &[&str],
    booter: &mut dyn Booter,
    on_boot: &mut dyn FnMut(&BootDone),
) -> (Vec<Comparison>, Option<anyhow::Error>) {
    let mut rng = Rng::new(design.seed);
    let n = cases.len();
    let k = arm_names.len();
    let contrasts = k.saturating_sub(1);
    // Indexed [contrast][case].
    let mut pairs: Vec<Vec<Vec<PairData>>> = vec![vec![Vec::new(); n]; contrasts];
    let mut cpu: Vec<Vec<[Vec<ChildCpu>; 2]>> = vec![vec![Default::default(); n]; contrasts];
    let mut stopped: Vec<Vec<Option<StopReason>>> = vec![vec![None; n]; contrasts];
    let mut profiled: Vec<Vec<Vec<ProfiledPair>>> = vec![vec![Vec::new(); n]; contrasts];
    let mut profile_notes: Vec<Vec<Vec<String>>> = vec![vec![Vec::new(); n]; contrasts];
    let total = k * design.pairs as usize;
    let mut index = 0;
    let mut error = None;
    'pairs: for i in 0..design.pairs {
        // The cases each arm must measure in this block.
        let open_for = |arm: usize, stopped: &Vec<Vec<Option<StopReason>>>| -> Vec<usize> {
            (0..n)
                .filter(|&c| {
                    if arm == 0 {
                        (0..contrasts).any(|j| stopped[j][c].is_none())
                    } else {
                        stopped[arm - 1][c].is_none()
                    }
                })
                .collect()
        };
        if open_for(0, &stopped).is_empty() {
            break;
        }
        let order = block_order(&mut rng, k);
        // The arms that boot in this block (one with every case settled
        // sits it out): each boot but the last is reported as soon as it
        // is done, so that its time a boot is its own; the last waits for
        // the block's pairs, to say what they find.
        let booting: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&arm| !open_for(arm, &stopped).is_empty())
            .collect();
        let mut last_done: Option<BootDone> = None;
        let mut got: Vec<Vec<(usize, BootResult)>> = vec![Vec::new(); k];
        let profile = design.profile.is_some_and(|p| i < p.pairs);
        // Counting instructions, the block's boots run at once (a pair in
        // the time of one boot); each is then reported as if in turn.
        let mut together = (booter.together() && !profile && booting.len() > 1).then(|| {
            let asks: Vec<(usize, Vec<usize>)> = booting
                .iter()
                .map(|&arm| (arm, open_for(arm, &stopped)))
                .collect();
            booter.boot_together(&asks, profile).into_iter()
        });
        for (b, &arm) in booting.iter().enumerate() {
            let open = open_for(arm, &stopped);
            let booted = match together.as_mut() {
                Some(results) => results
                    .next()
                    .unwrap_or_else(|| Err(anyhow::anyhow!("no boot of arm {arm} came back"))),
                None => booter.boot(arm, &open, profile),
            };
            match booted {
                Ok(h) if h.len() == open.len() => got[arm] = open.iter().copied().zip(h).collect(),
                Ok(h) => {
                    error = Some(anyhow::anyhow!(
                        "the guest of arm '{}' measured {} of {} cases",
                        arm_names[arm],
                        h.len(),
                        open.len()
                    ));
                    break 'pairs;
                }
                Err(e) => {
                    error = Some(e.context(format!(
                        "boot of arm '{}', {} {} of {}",
                        arm_names[arm],
                        if k == 2 { "pair" } else { "block" },
                        i + 1,
                        design.pairs
                    )));
                    break 'pairs;
                }
            }
            index += 1;
            let done = BootDone {
                index,
                total,
                arm,
                pair: i,
                findings: Vec::new(),
            };
            if b + 1 < booting.len() {
                on_boot(&done);
            } else {
                last_done = Some(done);
            }
        }
        let position = |arm: usize| order.iter().position(|&a| a == arm).unwrap_or(0);
        for j in 0..contrasts {
            let arm = j + 1;
            let label = if position(0) < position(arm) {
                "AB"
            } else {
                "BA"
            };
            let (base, rest) = got.split_at_mut(1);
            for (c, t_result) in rest[arm - 1].iter_mut() {
                let c = *c;
                let Some(b_result) = base[0].iter().find(|(bc, _)| *bc == c).map(|x| &x.1) else {
                    continue;
                };
                let (Some(b), Some(t)) = (b_result.half.clone(), t_result.half.clone()) else {
                    continue;
                };
                match (b_result.profile.clone(), t_result.profile.take()) {
                    (Some(baseline), Some(treatment)) => profiled[j][c].push(ProfiledPair {
                        baseline,
                        treatment,
                    }),
                    _ => {
                        for note in [&b_result.profile_note, &t_result.profile_note]
                            .into_iter()
                            .flatten()
                        {
                            if !profile_notes[j][c].contains(note) {
                                profile_notes[j][c].push(note.clone());
                            }
                        }
                    }
                }
                pairs[j][c].push(PairData {
                    index: i,
                    order: label.to_string(),
                    baseline_per_op: b.per_op,
                    treatment_per_op: t.per_op,
                    beside: Vec::new(),
                });
                cpu[j][c][0].extend(b.child_cpu);
                cpu[j][c][1].extend(t.child_cpu);
                if let Some(rule) = &design.stop {
                    stopped[j][c] =
                        settled(&crate::engine::ab::pair_log_ratios(&pairs[j][c]), rule);
                }
                if let Some(done) = last_done.as_mut()
                    && pairs[j][c].len() >= 2
                    && let Ok(so_far) = crate::engine::ab::summarise(
                        &cases[c],
                        design,
                        &pairs[j][c],
                        &cpu[j][c],
                        None,
                        None,
                    )
                {
                    let o = &so_far.overhead_pct;
                    done.findings.push(format!(
                        "{}, {} against {}: {} after {}{}",
                        cases[c].workload.name,
                        arm_names[arm],
                        arm_names[0],
                        crate::report::number::so_far(
                            o.estimate,
                            o.ci_low,
                            o.ci_high,
                            crate::engine::ab::own_alpha(design),
                        ),
                        crate::report::number::count(pairs[j][c].len(), "pair"),
                        match stopped[j][c] {
                            Some(s) => format!(" ({})", s.describe()),
                            None => String::new(),
                        }
                    ));
                }
            }
        }
        if let Some(done) = last_done.take() {
            on_boot(&done);
        }
    }
    let mut comparisons = Vec::new();
    for j in 0..contrasts {
        for (c, case) in cases.iter().enumerate() {
            let unfinished = error.is_some();
            let stop = match (&design.stop, unfinished) {
                (Some(_), true) => Some(StopReason::Interrupted),
                _ => stopped[j][c],
            };
            let data = &pairs[j][c];
            let attribution = design.profile.map(|p| {
                let median = |f: fn(&PairData) -> f64| crate::engine::ab::arm_median(data, f);
                let mut a = attribute(
                    &profiled[j][c],
                    &AttributeOpts {
                        hz: p.hz,
                        timed_baseline_ns_per_op: median(|p| p.baseline_per_op),
                        timed_treatment_ns_per_op: median(|p| p.treatment_per_op),
                        top_symbols: crate::profile::TOP_SYMBOLS,
                    },
                );
                a.notes.append(&mut profile_notes[j][c]);
                a
            });
            if let Ok(mut comparison) =
                crate::engine::ab::summarise(case, design, data, &cpu[j][c], stop, attribution)
            {
                comparison.mechanism = MECHANISM.to_string();
                comparison.variant = arm_names[j + 1].to_string();
                comparison.params = Params::from([("vs".to_string(), arm_names[0].to_string())]);
                comparison.unfinished = unfinished;
                comparisons.push(comparison);
            }
        }
    }
    (comparisons, error)
}
