use serde_json::json;

use super::*;
use crate::model::Mode;
use crate::stats::decision::Verdict;

use crate::model::testing::{result, run};

fn noisy(centre: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| centre * (1.0 + 0.002 * ((i * 7 % 11) as f64 - 5.0)))
        .collect()
}

const OPTS: CompareOpts = CompareOpts {
    decision: DecisionOpts {
        alpha: 0.05,
        noise_pct: 1.0,
        equivalence_pct: 1.0,
        test: crate::stats::decision::SeqTest::Sign,
        error_rate: crate::stats::decision::ErrorRate::Fwer,
        equivalence_auto: false,
    },
    seed: 3,
};

#[test]
fn a_clear_slowdown_is_slower_and_an_unchanged_row_is_not() {
    let a = run(
        1,
        "base",
        "6.18.0",
        vec![
            result("getppid", &noisy(300.0, 20)),
            result("eventfd", &noisy(700.0, 20)),
        ],
    );
    let b = run(
        2,
        "patched",
        "6.18.0",
        vec![
            result("getppid", &noisy(330.0, 20)),
            result("eventfd", &noisy(700.0, 20)),
        ],
    );
    let r = build(&[a, b], &OPTS, "secperf compare base patched");
    assert_eq!(r.design, DesignKind::Unpaired);
    assert_eq!(r.columns, vec!["base (run 1)", "patched (run 2)"]);
    assert_eq!(r.rows.len(), 2);
    let getppid = r.rows[0].cells[1].as_ref().unwrap();
    assert_eq!(getppid.verdict, Some(Verdict::Slower));
    let change = getppid.change_pct.unwrap();
    assert!((change - 10.0).abs() < 0.5, "{change}");
    assert!(getppid.ci_low_pct.unwrap() <= change && change <= getppid.ci_high_pct.unwrap());
    let eventfd = r.rows[1].cells[1].as_ref().unwrap();
    // Same centre, 0.2% noise, 20 samples a side: shown to be within +-1%.
    assert_eq!(eventfd.verdict, Some(Verdict::Negligible));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(r.summary[0].contains("geometric mean"), "{:?}", r.summary);
}

#[test]
fn rows_missing_from_the_other_run_are_left_out_or_empty() {
    let a = run(
        1,
        "",
        "6.18.0",
        vec![
            result("getppid", &noisy(300.0, 10)),
            result("open", &noisy(2500.0, 10)),
        ],
    );
    let b = run(2, "", "6.18.0", vec![result("getppid", &noisy(300.0, 10))]);
    let c = run(3, "", "6.18.0", vec![result("open", &noisy(2500.0, 10))]);
    let r = build(&[a, b, c], &OPTS, "secperf compare 1 2 3");
    assert_eq!(r.rows.len(), 2);
    assert!(r.rows[0].cells[2].is_none(), "getppid is not in run 3");
    assert!(r.rows[1].cells[1].is_none(), "open is not in run 2");
}

#[test]
fn probe_differences_that_matter_are_warnings() {
    let a = run(1, "", "6.18.0", vec![result("getppid", &noisy(300.0, 10))]);
    let mut b = run(2, "", "6.19.0", vec![result("getppid", &noisy(300.0, 10))]);
    b.meta.system["lsm"]["modules"] = json!(["capability", "landlock", "bpf"]);
    let r = build(&[a, b], &OPTS, "x");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("kernel differ: 6.18.0 vs 6.19.0")),
        "{:?}",
        r.warnings
    );
    assert!(
        r.warnings.iter().any(|w| w.contains("active LSMs")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn tuning_differences_are_warnings_and_older_snapshots_are_not() {
    let a = run(1, "", "6.18.0", vec![result("getppid", &noisy(300.0, 10))]);
    let mut b = run(2, "", "6.18.0", vec![result("getppid", &noisy(300.0, 10))]);
    // `a` is from an older secperf: none of the newer items, no warning.
    b.meta.system["bpf_jit"] = json!({"enable": 1, "harden": 0});
    b.meta.system["smt"] = json!({"control": "on", "active": true});
    assert!(probe_differences(&a.meta.system, &b.meta.system).is_empty());

    let mut a = a;
    a.meta.system["bpf_jit"] = json!({"enable": 0, "harden": {"unavailable": "not root"}});
    a.meta.system["smt"] = json!({"control": "off", "active": false});
    a.meta.system["cpufreq"] = json!({"governor": "powersave", "boost": "on"});
    b.meta.system["cpufreq"] = json!({"governor": "performance", "boost": "on"});
    a.meta.system["preemption"] = json!({"model": "full", "source": "uname"});
    b.meta.system["preemption"] = json!({"model": "dynamic", "source": "uname"});
    a.meta.system["aslr"] = json!(2);
    b.meta.system["aslr"] = json!(0);
    a.meta.system["audit"] = json!({"enabled": 1, "failure": 1, "backlog_limit": 64,
                                    "backlog_wait_time": 15000, "rules": 0});
    b.meta.system["audit"] = json!({"enabled": 1, "failure": 2, "backlog_limit": 8192,
                                    "backlog_wait_time": 60000, "rules": 0});
    let r = build(&[a, b], &OPTS, "x");
    for expected in [
        "BPF JIT differ: 0 vs 1",
        "BPF JIT hardening differ: unavailable (not root) vs 0",
        "CPU frequency governor differ: powersave vs performance",
        "SMT differ (active, control)",
        "preemption model differ: full vs dynamic",
        "ASLR (randomize_va_space) differ: 2 vs 0",
        "audit failure mode differ: 1 vs 2",
        "audit backlog limit differ: 64 vs 8192",
        "audit backlog wait time differ: 15000 vs 60000",
    ] {
        assert!(
            r.warnings.iter().any(|w| w.contains(expected)),
            "no '{expected}' in {:#?}",
            r.warnings
        );
    }
    assert!(
        !r.warnings.iter().any(|w| w.contains("CPU boost")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn overhead_runs_give_one_row_per_arm() {
    use crate::model::{Comparison, PairData};
    use crate::stats::paired::OverheadPct;
    let mut a = run(1, "", "6.18.0", vec![]);
    a.comparisons.push(Comparison {
        workload: "getppid".into(),
        workload_params: Default::default(),
        mechanism: "seccomp".into(),
        variant: "args".into(),
        params: Default::default(),
        mode: Mode::Process,
        tasks: 1,
        pairs: 2,
        sample_ms: 60,
        samples_per_half: 2,
        measure: Default::default(),
        baseline_per_op: 300.0,
        treatment_per_op: 350.0,
        overhead_pct: OverheadPct {
            estimate: 16.0,
            ci_low: 10.0,
            ci_high: 20.0,
            p_value: 0.01,
            verdict: Verdict::Slower,
        },
        hodges_lehmann_pct: f64::NAN,
        pair_data: vec![
            PairData {
                index: 0,
                order: "AB".into(),
                baseline_per_op: 300.0,
                treatment_per_op: 350.0,
                beside: Vec::new(),
            },
            PairData {
                index: 1,
                order: "BA".into(),
                baseline_per_op: 301.0,
                treatment_per_op: 349.0,
                beside: Vec::new(),
            },
        ],
        attribution: None,
        child_cpu: None,
        sequential: None,
        unfinished: false,
        ci_alpha: None,
        own_ci_low_pct: None,
        own_ci_high_pct: None,
        beside: Vec::new(),
    });
    let s = series(&a);
    assert_eq!(s.len(), 3);
    // Issue 53: of two overhead runs, compare showed each arm, not
    // whether the overhead changed: its ratios come first.
    assert_eq!(s[0].0.label, "seccomp:args (overhead)");
    assert_eq!(s[0].1, vec![350.0 / 300.0, 349.0 / 301.0]);
    assert_eq!(s[1].0.label, "seccomp:args (baseline arm)");
    assert_eq!(s[2].1, vec![350.0, 349.0]);
    let mut b = a.clone();
    b.meta.label = "later".into();
    for p in &mut b.comparisons[0].pair_data {
        p.treatment_per_op *= 1.2;
    }
    let r = build(&[a, b], &OPTS, "secperf compare 1 2");
    let overhead = r
        .rows
        .iter()
        .find(|r| r.label.ends_with("(overhead)"))
        .unwrap();
    assert_eq!(overhead.unit.as_deref(), Some(RATIO_UNIT));
    let change = overhead.cells[1].as_ref().unwrap().change_pct.unwrap();
    assert!((change - 20.0).abs() < 0.5, "{change}");
    assert!(r.summary[0].contains(", overheads: "), "{:?}", r.summary);
    assert_eq!(
        crate::report::number::value_with_unit(1.167, RATIO_UNIT),
        "+16.7%"
    );
}

#[test]
fn an_emulated_run_beside_a_native_one_is_refused_without_force() {
    let native = run(
        1,
        "host",
        "6.18.0",
        vec![result("getppid", &noisy(300.0, 20))],
    );
    let mut guest = run(
        2,
        "guest",
        "6.1.0",
        vec![result("getppid", &noisy(900.0, 20))],
    );
    guest.meta.system["vm"] = json!({
        "accel": "emulated", "vcpus": 2, "memory": "2048M", "image": "/boot/vmlinuz-6.1",
        "image_sha256": null, "append": "", "boot_s": 20.0, "wall_s": 25.0,
        "guest": {"release": "6.1.0", "cmdline": "audit=1", "build_id": "ab", "uptime_s": 19.0}
    });
    assert!(emulated(&guest) && !emulated(&native));
    let runs = [native.clone(), guest.clone()];
    let e = check_emulation(&runs, false).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    let msg = e.to_string();
    assert!(
        msg.contains("guest (run 2) ran in an emulated VM guest"),
        "{msg}"
    );
    assert!(msg.contains("--force"), "{msg}");
    check_emulation(&runs, true).unwrap();
    check_emulation(&[guest.clone(), guest.clone()], false).unwrap();
    check_emulation(&[native.clone(), native.clone()], false).unwrap();
    // Counted instructions beside time: refused, --force or not.
    let mut counted = guest.clone();
    counted.meta.params["metric"] = json!("instructions");
    let e = check_metrics(&[guest.clone(), counted.clone()]).unwrap_err();
    assert_eq!(crate::error::exit_code(&e), 2);
    assert!(e.to_string().contains("instructions per operation"), "{e}");
    check_metrics(&[counted.clone(), counted]).unwrap();
    check_metrics(&[native, guest.clone()]).unwrap();
    // Forced, the report still says which run was emulated.
    let r = build(&runs, &OPTS, "secperf compare host guest --force");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("guest (run 2): measured in an emulated VM guest")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn counted_instructions_are_compared_in_instructions() {
    // Issue 53: two instruction runs were compared in "median ns/op", their
    // CSV unit ns/op, under "timings are not those of real hardware".
    let counted = |id: i64, centre: f64| {
        let mut r = run(id, "", "6.1.0", vec![result("getppid", &noisy(centre, 20))]);
        r.meta.params["metric"] = json!("instructions");
        r.meta.system["vm"] = json!({
            "accel": "emulated", "vcpus": 1, "memory": "2048M", "image": "/boot/vmlinuz-6.1",
            "image_sha256": null, "append": "", "boot_s": 20.0, "wall_s": 25.0,
            "guest": {"release": "6.1.0", "cmdline": "", "build_id": "ab", "uptime_s": 19.0},
            "icount": {"version": "QEMU 7.2", "options": "-icount shift=0,sleep=off"}
        });
        r
    };
    let r = build(
        &[counted(1, 330.7), counted(2, 477.3)],
        &OPTS,
        "secperf compare 1 2",
    );
    assert_eq!(r.unit, "instructions/op");
    assert!(
        r.sign_convention.contains("positive = more instructions"),
        "{}",
        r.sign_convention
    );
    assert!(
        !r.sign_convention.contains(" ns/op"),
        "{}",
        r.sign_convention
    );
    assert!(
        r.warnings.iter().all(|w| !w.contains("timings")),
        "{:?}",
        r.warnings
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("instructions counted")),
        "{:?}",
        r.warnings
    );
    let text = crate::report::formats::render(
        &r,
        crate::report::formats::Format::Table,
        &crate::report::formats::RenderOpts { color: false },
    )
    .unwrap();
    assert!(text.contains("Values: median instructions/op"), "{text}");
    assert!(text.contains("330.7 insns"), "{text}");
    assert!(
        text.contains("verdict more or fewer instructions"),
        "{text}"
    );
    assert!(!text.contains(" ns ") && !text.contains(" ns/op"), "{text}");
    let csv = crate::report::formats::render(
        &r,
        crate::report::formats::Format::Csv,
        &crate::report::formats::RenderOpts { color: false },
    )
    .unwrap();
    assert!(csv.contains(",instructions/op,"), "{csv}");
    assert!(!csv.contains(",ns/op,"), "{csv}");
}
