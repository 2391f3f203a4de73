//! The pair loop across boots and the boot order, with scripted boots.

use super::order::*;
use super::pairs::*;
use crate::engine::ab::design::{Case, Design};
use crate::engine::ab::measurer::HalfResult;
use crate::model::Params;
use anyhow::Result;

use crate::engine::ab::design::pair_order;
use crate::mechanisms::Arm;
use crate::profile::attribute::HalfProfile;
use crate::stats::bootstrap::Rng;
use crate::stats::decision::DecisionOpts;
use crate::stats::sequential::StopReason;

fn case(workload: &str) -> Case {
    Case {
        workload: crate::workloads::find(workload).unwrap(),
        workload_params: Params::new(),
        treatment: crate::mechanisms::Treatment::parse("none").unwrap(),
        tasks: 1,
    }
}

/// Boots that return a fixed figure per arm and case, and record what
/// they were asked.
struct Scripted {
    ns: [[f64; 2]; 2],
    calls: Vec<(usize, Vec<usize>)>,
    fail_at: Option<usize>,
}

impl Booter for Scripted {
    fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>> {
        self.calls.push((arm, cases.to_vec()));
        if Some(self.calls.len()) == self.fail_at {
            anyhow::bail!("the guest did not boot");
        }
        let jitter = 1.0 + self.calls.len() as f64 * 1e-4;
        Ok(cases
            .iter()
            .map(|&c| {
                let ns = self.ns[arm][c] * jitter;
                let mut r = BootResult::of(HalfResult::of(ns));
                if profile {
                    // The extra time of the slower arm is all in one
                    // kernel function.
                    let mut stacks = crate::profile::Folded::new();
                    stacks.insert("[user];loop".into(), 1000);
                    stacks.insert("entry;do_syscall;hook".into(), (10.0 * ns) as u64);
                    r.profile = Some(HalfProfile {
                        ns_per_op: ns,
                        stacks,
                        lost: 0,
                    });
                }
                r
            })
            .collect())
    }
}

#[test]
fn the_first_profile_pairs_boots_are_profiled_and_attributed() {
    let cases = [case("getppid")];
    let mut design = Design::for_tests(4, 9);
    design.profile = Some(crate::profile::ProfileOpts { hz: 997, pairs: 2 });
    struct Recording(Scripted, Vec<bool>);
    impl Booter for Recording {
        fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>> {
            self.1.push(profile);
            self.0.boot(arm, cases, profile)
        }
    }
    let mut b = Recording(
        Scripted {
            ns: [[100.0, 0.0], [120.0, 0.0]],
            calls: Vec::new(),
            fail_at: None,
        },
        Vec::new(),
    );
    let (cs, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut b, &mut |_| {});
    assert!(err.is_none());
    assert_eq!(b.1, [true, true, true, true, false, false, false, false]);
    let a = cs[0].attribution.as_ref().expect("an attribution");
    assert_eq!((a.pairs, a.hz), (2, 997));
    let hook = a
        .symbols
        .iter()
        .find(|r| r.name == "hook")
        .expect("hook row");
    assert!(hook.delta_ns_per_op.estimate > 0.0, "{hook:?}");
}

#[test]
fn each_pair_reports_what_it_found_so_far() {
    let cases = [case("getppid")];
    let design = Design::for_tests(4, 9);
    let mut b = Scripted {
        ns: [[100.0, 0.0], [120.0, 0.0]],
        calls: Vec::new(),
        fail_at: None,
    };
    let mut seen: Vec<(usize, Vec<String>)> = Vec::new();
    let (_, err) = pairs_over_boots(&cases, &design, &["base", "fine"], &mut b, &mut |d| {
        seen.push((d.index, d.findings.clone()))
    });
    assert!(err.is_none());
    let indexes: Vec<usize> = seen.iter().map(|s| s.0).collect();
    assert_eq!(indexes, [1, 2, 3, 4, 5, 6, 7, 8], "every boot, in order");
    // The first pair has one pair: nothing to say yet; from the second
    // on, the last boot of each pair says the estimate so far.
    assert!(seen[1].1.is_empty());
    for (i, f) in seen.iter().enumerate() {
        assert_eq!(f.1.is_empty(), i % 2 == 0 || i == 1, "{i}: {:?}", f.1);
    }
    assert!(
        seen[3].1[0].starts_with("getppid, fine against base: +20.0%"),
        "{:?}",
        seen[3].1
    );
    assert!(seen[3].1[0].contains("after 2 pairs"), "{:?}", seen[3].1);
}

#[test]
fn each_boot_is_reported_before_the_next_boot_starts() {
    // A boot reported only after the next one had run showed the time
    // of two boots as its own ("25 s a boot", then "12 s a boot").
    use std::cell::RefCell;
    use std::rc::Rc;
    struct Counting(Scripted, Rc<RefCell<usize>>);
    impl Booter for Counting {
        fn boot(&mut self, arm: usize, cases: &[usize], p: bool) -> Result<Vec<BootResult>> {
            *self.1.borrow_mut() += 1;
            self.0.boot(arm, cases, p)
        }
    }
    let booted = Rc::new(RefCell::new(0));
    let mut b = Counting(
        Scripted {
            ns: [[100.0, 0.0], [120.0, 0.0]],
            calls: Vec::new(),
            fail_at: None,
        },
        booted.clone(),
    );
    let mut seen: Vec<(usize, usize)> = Vec::new();
    let design = Design::for_tests(3, 5);
    let (_, err) = pairs_over_boots(&[case("getppid")], &design, &["a", "b"], &mut b, &mut |d| {
        seen.push((d.index, *booted.borrow()))
    });
    assert!(err.is_none());
    for (index, boots_run) in &seen {
        assert_eq!(
            index, boots_run,
            "boot {index} reported after {boots_run} boots"
        );
    }
    assert_eq!(seen.len(), 6);
}

#[test]
fn the_dry_run_order_is_the_order_booted() {
    let design = Design::for_tests(5, 11);
    let mut b = Scripted {
        ns: [[100.0, 1000.0], [100.0, 1000.0]],
        calls: Vec::new(),
        fail_at: None,
    };
    pairs_over_boots(
        &[case("getppid")],
        &design,
        &["a", "b"],
        &mut b,
        &mut |_| {},
    );
    let booted: Vec<usize> = b.calls.iter().map(|c| c.0).collect();
    let planned: Vec<usize> = boot_order(&design, 2).into_iter().flatten().collect();
    assert_eq!(booted, planned);
}

#[test]
fn each_pair_is_one_boot_of_each_arm_in_the_seeded_order() {
    let cases = [case("getppid"), case("open")];
    let design = Design::for_tests(4, 7);
    let mut b = Scripted {
        ns: [[100.0, 1000.0], [110.0, 1000.0]],
        calls: Vec::new(),
        fail_at: None,
    };
    let (cs, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut b, &mut |_| {});
    assert!(err.is_none());
    assert_eq!(b.calls.len(), 8);
    let mut rng = Rng::new(7);
    for (i, pair) in b.calls.chunks(2).enumerate() {
        let order = pair_order(&mut rng);
        let want: Vec<usize> = order
            .iter()
            .map(|a| (*a == Arm::Treatment) as usize)
            .collect();
        assert_eq!(vec![pair[0].0, pair[1].0], want, "pair {i}");
        assert_eq!(pair[0].1, vec![0, 1]);
        let c = &cs[0].pair_data[i];
        let ab = if want[0] == 0 { "AB" } else { "BA" };
        assert_eq!(c.order, ab);
    }
    assert_eq!(cs.len(), 2);
    let c = &cs[0];
    assert_eq!((c.mechanism.as_str(), c.variant.as_str()), ("kernel", "b"));
    assert_eq!(c.params.get("vs").map(String::as_str), Some("a"));
    assert_eq!(c.pairs, 4);
    assert!(
        (c.overhead_pct.estimate - 10.0).abs() < 0.1,
        "{:?}",
        c.overhead_pct
    );
    assert!(cs[1].overhead_pct.estimate.abs() < 0.1);
}

/// [`Scripted`] whose blocks boot together: each block's asks are
/// recorded as one call.
struct Together {
    inner: Scripted,
    blocks: Vec<Vec<(usize, Vec<usize>)>>,
}

impl Booter for Together {
    fn boot(&mut self, arm: usize, cases: &[usize], profile: bool) -> Result<Vec<BootResult>> {
        self.inner.boot(arm, cases, profile)
    }
    fn together(&self) -> bool {
        true
    }
    fn boot_together(
        &mut self,
        asks: &[(usize, Vec<usize>)],
        profile: bool,
    ) -> Vec<Result<Vec<BootResult>>> {
        self.blocks.push(asks.to_vec());
        asks.iter()
            .map(|(arm, cases)| self.inner.boot(*arm, cases, profile))
            .collect()
    }
}

#[test]
fn booted_together_a_block_gives_the_pairs_booting_in_turn_gives() {
    let cases = [case("getppid"), case("open")];
    let design = Design::for_tests(4, 7);
    let scripted = || Scripted {
        ns: [[100.0, 1000.0], [110.0, 1000.0]],
        calls: Vec::new(),
        fail_at: None,
    };
    let mut apart = scripted();
    let (a, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut apart, &mut |_| {});
    assert!(err.is_none());
    let mut at_once = Together {
        inner: scripted(),
        blocks: Vec::new(),
    };
    let mut reported = Vec::new();
    let (b, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut at_once, &mut |d| {
        reported.push((d.index, d.arm, d.pair))
    });
    assert!(err.is_none());
    // One call a block, both arms in it, in the seeded order.
    assert_eq!(at_once.blocks.len(), 4);
    assert!(at_once.blocks.iter().all(|blk| blk.len() == 2));
    assert_eq!(at_once.inner.calls, apart.calls);
    // The same comparisons, and every boot reported.
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.pair_data, y.pair_data);
        assert_eq!(x.overhead_pct.estimate, y.overhead_pct.estimate);
    }
    assert_eq!(reported.len(), 8, "{reported:?}");
    // A boot that fails in a block ends the pairs there, as in turn.
    let mut failing = Together {
        inner: Scripted {
            fail_at: Some(4),
            ..scripted()
        },
        blocks: Vec::new(),
    };
    let (c, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut failing, &mut |_| {});
    assert!(format!("{:#}", err.unwrap()).contains("did not boot"));
    assert!(c.iter().all(|c| c.pairs == 1), "one whole pair kept");
}

#[test]
fn a_settled_case_is_not_measured_again_and_a_failed_boot_keeps_the_pairs() {
    let cases = [case("getppid"), case("open")];
    let mut design = Design::for_tests(32, 3);
    design.stop = Some(crate::stats::sequential::StopRule {
        min_pairs: 2,
        max_pairs: 32,
        family: 2,
        decision: DecisionOpts::validated(0.05, 1.0, 0.5).unwrap(),
        precision_pct: None,
        rank: 1,
    });
    // Case 0: +50% every pair, settles as slower; case 1: +0.7% every
    // pair, inside the 1% noise band but outside the 0.5% equivalence
    // margin, so never slower nor negligible: it stops otherwise (as
    // futile), at another pair. (A ratio of about 1 would settle as
    // negligible only once the interval shown is finite and within the
    // margin, at the same pair as case 0's verdict, and the boots would
    // not tell settled cases from the others.)
    let mut b = Scripted {
        ns: [[100.0, 1000.0], [150.0, 1007.0]],
        calls: Vec::new(),
        fail_at: None,
    };
    let (cs, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut b, &mut |_| {});
    assert!(err.is_none());
    let pairs: Vec<usize> = cs.iter().map(|c| c.pairs as usize).collect();
    assert!(pairs.iter().all(|&p| p < 32), "{pairs:?}");
    assert_ne!(pairs[0], pairs[1], "{pairs:?}");
    let stopped: Vec<_> = cs
        .iter()
        .map(|c| c.sequential.as_ref().map(|s| s.stopped))
        .collect();
    assert_eq!(
        stopped,
        [Some(StopReason::Slower), Some(StopReason::Futile)],
        "{pairs:?}"
    );
    // Each boot measures exactly the cases not settled yet.
    for (k, (_, asked)) in b.calls.iter().enumerate() {
        let want: Vec<usize> = (0..2).filter(|&c| k / 2 < pairs[c]).collect();
        assert_eq!(asked, &want, "boot {k}");
    }
    assert_eq!(b.calls.len(), 2 * pairs[0].max(pairs[1]));
    let mut failing = Scripted {
        ns: [[100.0, 1000.0], [150.0, 1000.0]],
        calls: Vec::new(),
        fail_at: Some(5),
    };
    let (cs, err) = pairs_over_boots(&cases, &design, &["a", "b"], &mut failing, &mut |_| {});
    let e = format!("{:#}", err.expect("an error"));
    assert!(
        e.contains("pair 3 of 32") && e.contains("did not boot"),
        "{e}"
    );
    assert!(cs.iter().all(|c| c.unfinished && c.pairs == 2), "{cs:?}");
}

#[test]
fn a_layout_arm_shares_the_baselines_boot_of_each_block() {
    struct Three {
        calls: Vec<(usize, Vec<usize>)>,
    }
    impl Booter for Three {
        fn boot(&mut self, arm: usize, cases: &[usize], _: bool) -> Result<Vec<BootResult>> {
            self.calls.push((arm, cases.to_vec()));
            let ns = [100.0, 120.0, 101.0][arm] * (1.0 + self.calls.len() as f64 * 1e-4);
            Ok(cases
                .iter()
                .map(|_| BootResult::of(HalfResult::of(ns)))
                .collect())
        }
    }
    let design = Design::for_tests(4, 5);
    let mut b = Three { calls: Vec::new() };
    let (cs, err) = pairs_over_boots(
        &[case("getppid")],
        &design,
        &["base", "patched", "layout"],
        &mut b,
        &mut |_| {},
    );
    assert!(err.is_none());
    // One boot of each arm per block, in the seeded order.
    assert_eq!(b.calls.len(), 12);
    let planned: Vec<usize> = boot_order(&design, 3).into_iter().flatten().collect();
    let booted: Vec<usize> = b.calls.iter().map(|c| c.0).collect();
    assert_eq!(booted, planned);
    for block in booted.chunks(3) {
        let mut sorted = block.to_vec();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2]);
    }
    // Two comparisons against the baseline: the patch's and the layout's.
    assert_eq!(cs.len(), 2);
    assert_eq!((cs[0].variant.as_str(), cs[0].pairs), ("patched", 4));
    assert_eq!(cs[1].variant.as_str(), "layout");
    assert_eq!(cs[1].params.get("vs").map(String::as_str), Some("base"));
    assert!(
        (cs[0].overhead_pct.estimate - 20.0).abs() < 0.5,
        "{:?}",
        cs[0].overhead_pct
    );
    assert!(
        (cs[1].overhead_pct.estimate - 1.0).abs() < 0.5,
        "{:?}",
        cs[1].overhead_pct
    );
    // Each pair's order says whether the baseline booted first.
    for (i, block) in booted.chunks(3).enumerate() {
        let first = |arm| block.iter().position(|&a| a == arm).unwrap();
        let want = if first(0) < first(2) { "AB" } else { "BA" };
        assert_eq!(cs[1].pair_data[i].order, want);
    }
}
