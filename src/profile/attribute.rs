//! The attribution arithmetic: from the folded samples of profiled pairs
//! to delta ns/op per group and per symbol, with intervals over pairs.
//!
//! In each half, the ns/op spent in a symbol (or group) is its share of
//! that half's samples times the half's ns/op. Per pair, the delta is
//! treatment minus baseline; a row reports the mean delta over pairs with
//! a 95% Student-t interval, and its share of the whole delta. Shares of
//! samples alone (what `perf diff` prints) shrink for every symbol when
//! one grows; ns/op do not, so a row's delta is what it really added.
//! Means (not medians) are used because they add up: the rows' deltas sum
//! to the total delta.

use std::collections::HashMap;

use super::Folded;
use super::groups::{Group, Stack, group_of};
use crate::model::{Attribution, AttributionRow, Profile, ProfileRow, ProfileSamples};

/// The marker frame a user-space sample's folded stack starts with.
pub const USER_FRAME: &str = "[user]";
/// The single frame of a kernel sample that could not be symbolised.
pub const UNSYMBOLISED_FRAME: &str = "[kernel]";

/// One profiled half: its ns/op (median of its slices) and its samples.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HalfProfile {
    pub ns_per_op: f64,
    pub stacks: Folded,
    pub lost: u64,
}

/// A profiled pair, both halves.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfiledPair {
    pub baseline: HalfProfile,
    pub treatment: HalfProfile,
}

/// What the attribution is computed with besides the pairs.
#[derive(Debug, Clone)]
pub struct AttributeOpts {
    pub hz: u64,
    /// Medians of the timed (unprofiled) halves per arm, for the slowdown.
    pub timed_baseline_ns_per_op: f64,
    pub timed_treatment_ns_per_op: f64,
    /// How many symbol rows to keep (largest |delta| first).
    pub top_symbols: usize,
}

/// Fewer samples per half than this make every share coarse; say so.
pub const FEW_SAMPLES_PER_HALF: u64 = 200;

/// The group and self symbol of one folded stack.
pub fn classify(stack: &str) -> (Group, String) {
    let frames: Vec<&str> = stack.split(';').collect();
    let leaf = frames.last().copied().unwrap_or("").to_string();
    if frames.first() == Some(&USER_FRAME) {
        return (Group::User, format!("{leaf} (user)"));
    }
    if stack == UNSYMBOLISED_FRAME {
        return (Group::KernelUnsymbolised, leaf);
    }
    let innermost_first: Vec<&str> = frames.iter().rev().copied().collect();
    (group_of(&Stack::Kernel(&innermost_first)), leaf)
}

/// Per half: samples per group and per symbol, and the total.
struct HalfCounts {
    total: u64,
    groups: HashMap<Group, u64>,
    symbols: HashMap<String, u64>,
}

fn count(
    half: &HalfProfile,
    symbol_groups: &mut HashMap<String, HashMap<Group, u64>>,
) -> HalfCounts {
    let mut c = HalfCounts {
        total: 0,
        groups: HashMap::new(),
        symbols: HashMap::new(),
    };
    for (stack, &n) in &half.stacks {
        let (group, symbol) = classify(stack);
        c.total += n;
        *c.groups.entry(group).or_default() += n;
        *symbol_groups
            .entry(symbol.clone())
            .or_default()
            .entry(group)
            .or_default() += n;
        *c.symbols.entry(symbol).or_default() += n;
    }
    c
}

pub use crate::stats::mean_ci;

/// One row from per-pair (baseline, treatment) ns/op and sample shares.
fn row(
    name: String,
    group: String,
    per_pair: &[(f64, f64, f64, f64)],
    total_delta: f64,
) -> AttributionRow {
    let n = per_pair.len().max(1) as f64;
    let mean = |f: fn(&(f64, f64, f64, f64)) -> f64| per_pair.iter().map(f).sum::<f64>() / n;
    let deltas: Vec<f64> = per_pair.iter().map(|p| p.1 - p.0).collect();
    let delta = mean_ci(&deltas);
    AttributionRow {
        name,
        group,
        baseline_ns_per_op: mean(|p| p.0),
        treatment_ns_per_op: mean(|p| p.1),
        share_of_delta_pct: if total_delta != 0.0 {
            delta.estimate / total_delta * 100.0
        } else {
            f64::NAN
        },
        baseline_share_pct: mean(|p| p.2) * 100.0,
        treatment_share_pct: mean(|p| p.3) * 100.0,
        within_noise: !(delta.ci_low > 0.0 || delta.ci_high < 0.0),
        delta_ns_per_op: delta,
    }
}

/// ns/op of `n` samples out of `total` in a half of `ns_per_op`.
fn ns(n: u64, total: u64, ns_per_op: f64) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 / total as f64 * ns_per_op
    }
}

fn share(n: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 / total as f64
    }
}

/// Robust z-score beyond which a profiled half's ns/op marks its pair as
/// an outlier (a stall, a burst of interrupts): such a half would dominate
/// means over a handful of pairs.
const OUTLIER_Z: f64 = 5.0;

/// ... and differs from its arm's median by more than this factor (very
/// steady halves have a tiny MAD, which alone would flag ordinary ones).
const OUTLIER_FACTOR: f64 = 1.25;

/// Pairs (indices) with a half whose ln(ns/op) is an outlier among its
/// arm's profiled halves; none below 4 pairs.
pub fn outlier_pairs(pairs: &[ProfiledPair]) -> Vec<usize> {
    if pairs.len() < 4 {
        return Vec::new();
    }
    let mut out: Vec<usize> = [
        pairs
            .iter()
            .map(|p| p.baseline.ns_per_op.ln())
            .collect::<Vec<_>>(),
        pairs.iter().map(|p| p.treatment.ns_per_op.ln()).collect(),
    ]
    .iter()
    .flat_map(|x| {
        let median = crate::stats::median(x).unwrap_or(f64::NAN);
        crate::stats::outliers::mad_outliers(x, OUTLIER_Z)
            .into_iter()
            .filter(move |&i| (x[i] - median).abs() > OUTLIER_FACTOR.ln())
    })
    .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The attribution of `pairs`, leaving out outlier pairs (with a note).
/// Empty pairs give an attribution with no rows and a note.
pub fn attribute(all_pairs: &[ProfiledPair], opts: &AttributeOpts) -> Attribution {
    let outliers = outlier_pairs(all_pairs);
    let kept: Vec<ProfiledPair> = all_pairs
        .iter()
        .enumerate()
        .filter(|(i, _)| !outliers.contains(i))
        .map(|(_, p)| p.clone())
        .collect();
    let mut a = attribute_all(&kept, opts);
    for &i in &outliers {
        let p = &all_pairs[i];
        a.notes.push(format!(
            "profiled pair {} left out as an outlier (baseline {:.1} ns/op, treatment {:.1} ns/op; \
             a stall or a burst of interrupts in one half)",
            i + 1,
            p.baseline.ns_per_op,
            p.treatment.ns_per_op
        ));
    }
    a
}

fn attribute_all(pairs: &[ProfiledPair], opts: &AttributeOpts) -> Attribution {
    let mut symbol_groups: HashMap<String, HashMap<Group, u64>> = HashMap::new();
    let counted: Vec<(HalfCounts, HalfCounts)> = pairs
        .iter()
        .map(|p| {
            (
                count(&p.baseline, &mut symbol_groups),
                count(&p.treatment, &mut symbol_groups),
            )
        })
        .collect();
    let ns_of = |p: &ProfiledPair| (p.baseline.ns_per_op, p.treatment.ns_per_op);

    // The whole delta, and the value each row's share is taken of.
    let total_rows: Vec<(f64, f64, f64, f64)> = pairs
        .iter()
        .map(|p| {
            let (b, t) = ns_of(p);
            (b, t, 1.0, 1.0)
        })
        .collect();
    let total_delta = mean_ci(&total_rows.iter().map(|r| r.1 - r.0).collect::<Vec<_>>()).estimate;
    let total = row("total".to_string(), String::new(), &total_rows, total_delta);

    // Per pair: (baseline ns/op, treatment ns/op, baseline share,
    // treatment share) of the samples `n_of` counts in a half.
    let per_pair = |n_of: &dyn Fn(&HalfCounts) -> u64| -> Vec<(f64, f64, f64, f64)> {
        pairs
            .iter()
            .zip(&counted)
            .map(|(p, (b, t))| {
                let (nb, nt) = (n_of(b), n_of(t));
                (
                    ns(nb, b.total, p.baseline.ns_per_op),
                    ns(nt, t.total, p.treatment.ns_per_op),
                    share(nb, b.total),
                    share(nt, t.total),
                )
            })
            .collect()
    };
    let groups: Vec<AttributionRow> = Group::ALL
        .iter()
        .filter(|g| {
            counted
                .iter()
                .any(|(b, t)| b.groups.contains_key(g) || t.groups.contains_key(g))
        })
        .map(|g| {
            let pairs = per_pair(&|c| c.groups.get(g).copied().unwrap_or(0));
            row(g.name().to_string(), String::new(), &pairs, total_delta)
        })
        .collect();

    let mut symbols: Vec<AttributionRow> = symbol_groups
        .iter()
        .map(|(symbol, by_group)| {
            let pairs = per_pair(&|c| c.symbols.get(symbol).copied().unwrap_or(0));
            row(
                symbol.clone(),
                dominant_group(by_group),
                &pairs,
                total_delta,
            )
        })
        .collect();
    symbols.sort_by(|a, b| {
        b.delta_ns_per_op
            .estimate
            .abs()
            .total_cmp(&a.delta_ns_per_op.estimate.abs())
            .then_with(|| a.name.cmp(&b.name))
    });
    symbols.truncate(opts.top_symbols);

    let samples = sample_counts(
        &counted
            .iter()
            .flat_map(|(b, t)| [b.total, t.total])
            .collect::<Vec<_>>(),
        pairs
            .iter()
            .map(|p| p.baseline.lost + p.treatment.lost)
            .sum(),
    );

    let median_of = |f: fn(&ProfiledPair) -> f64| {
        crate::stats::median(&pairs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
    };
    let baseline_slowdown_pct =
        (median_of(|p| p.baseline.ns_per_op) / opts.timed_baseline_ns_per_op - 1.0) * 100.0;
    let treatment_slowdown_pct =
        (median_of(|p| p.treatment.ns_per_op) / opts.timed_treatment_ns_per_op - 1.0) * 100.0;

    let mut notes = Vec::new();
    if pairs.is_empty() {
        notes.push("no profiled pair completed".to_string());
    } else if pairs.len() < 2 {
        notes.push("one profiled pair: no interval (use --profile-pairs 2 or more)".to_string());
    }
    if !pairs.is_empty() {
        notes.extend(sample_notes(&samples, "a half", "--sample-ms"));
    }
    let folded = [
        merge_folded(pairs.iter().map(|p| &p.baseline)),
        merge_folded(pairs.iter().map(|p| &p.treatment)),
    ];
    Attribution {
        pairs: pairs.len() as u32,
        hz: opts.hz,
        clock: "cpu-clock".to_string(),
        samples,
        profiling_slowdown_pct: 0.5 * (baseline_slowdown_pct + treatment_slowdown_pct),
        baseline_slowdown_pct,
        treatment_slowdown_pct,
        total,
        groups,
        symbols,
        notes,
        folded,
    }
}

/// The group most of a symbol's samples belong to.
fn dominant_group(by_group: &HashMap<Group, u64>) -> String {
    by_group
        .iter()
        .max_by_key(|(g, n)| (**n, std::cmp::Reverse(**g)))
        .map(|(g, _)| g.name().to_string())
        .unwrap_or_default()
}

/// Sample counts from the totals of each profiled half or measurement.
fn sample_counts(totals: &[u64], lost: u64) -> ProfileSamples {
    let mut sorted = totals.to_vec();
    sorted.sort_unstable();
    ProfileSamples {
        total: totals.iter().sum(),
        per_half_min: sorted.first().copied().unwrap_or(0),
        per_half_median: crate::stats::median(
            &sorted.iter().map(|&n| n as f64).collect::<Vec<_>>(),
        )
        .unwrap_or(0.0),
        lost,
    }
}

/// Notes on coarse or lost samples; `unit` names what a count is per
/// ("a half"), `longer` the flag that lengthens it.
fn sample_notes(samples: &ProfileSamples, unit: &str, longer: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if samples.per_half_min < FEW_SAMPLES_PER_HALF {
        notes.push(format!(
            "as few as {} samples in {unit}: shares are coarse (raise --profile-hz or {longer})",
            samples.per_half_min
        ));
    }
    if samples.lost > 0 {
        notes.push(format!(
            "{} samples lost to a full ring buffer (lower --profile-hz)",
            samples.lost
        ));
    }
    notes
}

/// The folded stacks of several halves, summed.
fn merge_folded<'a>(halves: impl Iterator<Item = &'a HalfProfile>) -> Folded {
    let mut folded = Folded::new();
    for h in halves {
        for (stack, n) in &h.stacks {
            *folded.entry(stack.clone()).or_default() += n;
        }
    }
    folded
}

/// Where the time of one configuration goes (`run --profile`): per group
/// and symbol, share of samples x ns/op in each profiled measurement,
/// mean over measurements with a 95% interval.
pub fn profile_of(halves: &[HalfProfile], hz: u64, timed_ns_per_op: f64, top: usize) -> Profile {
    let mut symbol_groups: HashMap<String, HashMap<Group, u64>> = HashMap::new();
    let counted: Vec<HalfCounts> = halves
        .iter()
        .map(|h| count(h, &mut symbol_groups))
        .collect();
    let row_of = |name: String, group: String, n_of: &dyn Fn(&HalfCounts) -> u64| {
        let ns: Vec<f64> = halves
            .iter()
            .zip(&counted)
            .map(|(h, c)| self::ns(n_of(c), c.total, h.ns_per_op))
            .collect();
        let shares: Vec<f64> = counted.iter().map(|c| share(n_of(c), c.total)).collect();
        ProfileRow {
            name,
            group,
            ns_per_op: mean_ci(&ns),
            share_pct: shares.iter().sum::<f64>() / shares.len().max(1) as f64 * 100.0,
        }
    };
    let groups = Group::ALL
        .iter()
        .filter(|g| counted.iter().any(|c| c.groups.contains_key(g)))
        .map(|g| {
            row_of(g.name().to_string(), String::new(), &|c: &HalfCounts| {
                c.groups.get(g).copied().unwrap_or(0)
            })
        })
        .collect();
    let mut symbols: Vec<ProfileRow> = symbol_groups
        .iter()
        .map(|(symbol, by_group)| {
            row_of(
                symbol.clone(),
                dominant_group(by_group),
                &|c: &HalfCounts| c.symbols.get(symbol).copied().unwrap_or(0),
            )
        })
        .collect();
    symbols.sort_by(|a, b| {
        b.ns_per_op
            .estimate
            .total_cmp(&a.ns_per_op.estimate)
            .then_with(|| a.name.cmp(&b.name))
    });
    symbols.truncate(top);
    let samples = sample_counts(
        &counted.iter().map(|c| c.total).collect::<Vec<_>>(),
        halves.iter().map(|h| h.lost).sum(),
    );
    let notes = if halves.is_empty() {
        vec!["no profiled measurement completed".to_string()]
    } else {
        sample_notes(&samples, "a measurement", "--samples")
    };
    let ns_all: Vec<f64> = halves.iter().map(|h| h.ns_per_op).collect();
    let median = crate::stats::median(&ns_all).unwrap_or(f64::NAN);
    let folded = merge_folded(halves.iter());
    Profile {
        measurements: halves.len() as u32,
        hz,
        clock: "cpu-clock".to_string(),
        samples,
        profiling_slowdown_pct: (median / timed_ns_per_op - 1.0) * 100.0,
        total: ProfileRow {
            name: "total".to_string(),
            group: String::new(),
            ns_per_op: mean_ci(&ns_all),
            share_pct: 100.0,
        },
        groups,
        symbols,
        notes,
        folded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn half(ns_per_op: f64, stacks: &[(&str, u64)]) -> HalfProfile {
        HalfProfile {
            ns_per_op,
            stacks: stacks.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
            lost: 0,
        }
    }

    fn opts() -> AttributeOpts {
        AttributeOpts {
            hz: 4000,
            timed_baseline_ns_per_op: 100.0,
            timed_treatment_ns_per_op: 150.0,
            top_symbols: 10,
        }
    }

    const BODY: &str = "entry_SYSCALL_64;do_syscall_64;__x64_sys_getppid";
    const AUDIT: &str = "entry_SYSCALL_64;do_syscall_64;syscall_exit_work;__audit_syscall_exit";
    const AUDIT_LEAF: &str =
        "entry_SYSCALL_64;do_syscall_64;syscall_exit_work;__audit_syscall_exit;kfree";

    /// Baseline 100 ns/op: 50% body, 50% user. Treatment 150 ns/op: a
    /// third each of body, user and audit (half of audit's in kfree).
    fn pairs(n: usize) -> Vec<ProfiledPair> {
        (0..n)
            .map(|i| {
                let wobble = i as f64; // per-pair drift, equal in both arms
                ProfiledPair {
                    baseline: half(100.0 + wobble, &[(BODY, 500), ("[user];getppid", 500)]),
                    treatment: half(
                        150.0 + wobble,
                        &[
                            (BODY, 400),
                            ("[user];getppid", 400),
                            (AUDIT, 200),
                            (AUDIT_LEAF, 200),
                        ],
                    ),
                }
            })
            .collect()
    }

    fn find<'a>(rows: &'a [AttributionRow], name: &str) -> &'a AttributionRow {
        rows.iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no row {name}"))
    }

    #[test]
    fn rows_follow_from_shares_times_ns_per_op() {
        let pairs = pairs(4);
        let a = attribute(&pairs, &opts());
        // Delta per pair is exactly 50 ns/op in every pair.
        assert!((a.total.delta_ns_per_op.estimate - 50.0).abs() < 1e-9);
        let audit = find(&a.groups, "audit");
        // 400 of 1200 samples of ~151.5 ns/op on average: a third.
        let expected: f64 = pairs
            .iter()
            .map(|p| p.treatment.ns_per_op / 3.0)
            .sum::<f64>()
            / 4.0;
        assert!((audit.treatment_ns_per_op - expected).abs() < 1e-9);
        assert_eq!(audit.baseline_ns_per_op, 0.0);
        assert!(!audit.within_noise);
        // The group is inclusive (kfree under __audit_syscall_exit), the
        // symbol rows are self time.
        let kfree = find(&a.symbols, "kfree");
        assert!((kfree.treatment_ns_per_op - expected / 2.0).abs() < 1e-9);
        assert_eq!(kfree.group, "audit");
        // The groups' deltas add up to the total.
        let sum: f64 = a.groups.iter().map(|g| g.delta_ns_per_op.estimate).sum();
        assert!((sum - 50.0).abs() < 1e-9, "{sum}");
        let shares: f64 = a.groups.iter().map(|g| g.share_of_delta_pct).sum();
        assert!((shares - 100.0).abs() < 1e-9);
    }

    #[test]
    fn shares_of_samples_shrink_but_ns_per_op_does_not() {
        let a = attribute(&pairs(4), &opts());
        let user = find(&a.groups, "user space");
        assert!((user.baseline_share_pct - 50.0).abs() < 1e-9);
        assert!((user.treatment_share_pct - 100.0 / 3.0).abs() < 1e-9);
        // 50% of ~101.5 ns vs a third of ~151.5 ns: the same time per op.
        assert!(
            user.delta_ns_per_op.estimate.abs() < 0.5,
            "{:?}",
            user.delta_ns_per_op
        );
        assert_eq!(find(&a.symbols, "getppid (user)").group, "user space");
    }

    #[test]
    fn interval_is_students_t_over_pairs() {
        let e = mean_ci(&[1.0, 2.0, 3.0, 4.0]);
        // mean 2.5, sd 1.291, se 0.6455, t(3) 3.182
        assert!((e.estimate - 2.5).abs() < 1e-12);
        assert!(
            (e.ci_high - 2.5 - 3.182446 * 0.645497).abs() < 1e-4,
            "{e:?}"
        );
        assert!(mean_ci(&[1.0]).ci_low.is_nan());
        assert!(mean_ci(&[]).estimate.is_nan());
        assert!((crate::stats::tdist::t_quantile(0.975, 1e9) - 1.959964).abs() < 1e-4);
    }

    #[test]
    fn noise_is_marked() {
        // The user-space delta wobbles around 0 across pairs.
        let mut ps = pairs(4);
        for (i, p) in ps.iter_mut().enumerate() {
            let extra = if i % 2 == 0 { 30 } else { -30 };
            *p.treatment.stacks.get_mut("[user];getppid").unwrap() = (400 + extra) as u64;
        }
        let a = attribute(&ps, &opts());
        assert!(find(&a.groups, "user space").within_noise);
        assert!(!find(&a.groups, "audit").within_noise);
    }

    #[test]
    fn samples_slowdown_and_notes() {
        let a = attribute(&pairs(3), &opts());
        assert_eq!(a.samples.total, 3 * (1000 + 1200));
        assert_eq!(a.samples.per_half_min, 1000);
        assert!((a.baseline_slowdown_pct - 1.0).abs() < 1e-9); // median 101 vs 100
        assert!((a.treatment_slowdown_pct - (151.0 / 150.0 - 1.0) * 100.0).abs() < 1e-9);
        assert!(a.notes.is_empty(), "{:?}", a.notes);
        assert_eq!(a.folded[1][AUDIT], 600);

        let one = attribute(&pairs(1), &opts());
        assert!(one.notes.iter().any(|n| n.contains("no interval")));
        let few = attribute(
            &[ProfiledPair {
                baseline: half(1.0, &[(BODY, 10)]),
                treatment: half(1.0, &[(BODY, 10)]),
            }],
            &opts(),
        );
        assert!(few.notes.iter().any(|n| n.contains("as few as 10 samples")));
        let none = attribute(&[], &opts());
        assert!(none.groups.is_empty() && none.notes[0].contains("no profiled pair"));
    }

    #[test]
    fn a_stalled_half_leaves_its_pair_out() {
        let mut ps = pairs(8);
        ps[3].baseline.ns_per_op = 7000.0;
        assert_eq!(outlier_pairs(&ps), vec![3]);
        let a = attribute(&ps, &opts());
        assert_eq!(a.pairs, 7);
        assert!((a.total.delta_ns_per_op.estimate - 50.0).abs() < 1e-9);
        assert!(
            a.notes.iter().any(|n| n.contains("pair 4 left out")),
            "{:?}",
            a.notes
        );
        // Steady halves a few percent apart are not outliers.
        let mut steady = pairs(8);
        steady[2].baseline.ns_per_op *= 1.05;
        assert!(outlier_pairs(&steady).is_empty());
        // Too few pairs to tell: nothing is left out.
        let mut few = pairs(3);
        few[0].baseline.ns_per_op = 7000.0;
        assert!(outlier_pairs(&few).is_empty());
    }

    #[test]
    fn one_configurations_profile_is_shares_times_ns_per_op() {
        let halves: Vec<HalfProfile> = pairs(4).into_iter().map(|p| p.treatment).collect();
        let p = profile_of(&halves, 4000, 150.0, 10);
        assert_eq!(p.measurements, 4);
        let audit = p.groups.iter().find(|g| g.name == "audit").unwrap();
        assert!((audit.share_pct - 100.0 / 3.0).abs() < 1e-9);
        let expected: f64 = halves.iter().map(|h| h.ns_per_op / 3.0).sum::<f64>() / 4.0;
        assert!((audit.ns_per_op.estimate - expected).abs() < 1e-9);
        let sum: f64 = p.groups.iter().map(|g| g.ns_per_op.estimate).sum();
        assert!((sum - p.total.ns_per_op.estimate).abs() < 1e-9);
        // Largest first.
        assert!(p.symbols[0].ns_per_op.estimate >= p.symbols[1].ns_per_op.estimate);
        assert_eq!(p.folded[AUDIT], 800);
        assert!(profile_of(&[], 4000, 1.0, 10).notes[0].contains("no profiled"));
    }

    #[test]
    fn unsymbolised_kernel_samples_have_their_own_group() {
        assert_eq!(classify(UNSYMBOLISED_FRAME).0, Group::KernelUnsymbolised);
        assert_eq!(classify("[user];main").0, Group::User);
        assert_eq!(classify(AUDIT_LEAF), (Group::Audit, "kfree".to_string()));
    }
}
