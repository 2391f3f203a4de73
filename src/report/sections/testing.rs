//! Run documents built in memory, with fixed times, for the tests of the
//! sections, the formats and what judges comparisons.

use chrono::DateTime;
use serde_json::json;

use crate::model::{
    Attribution, AttributionRow, ChildCpu, Comparison, Estimate, NegativeControl, PairData,
    PolicyFile, ProfileSamples, RunMeta, SequentialStop, Sweep, SweepPoint,
};
use crate::report::doc::RunDoc;
use crate::stats::decision::Verdict;
use crate::stats::paired::OverheadPct;
use crate::stats::sequential::StopReason;

/// A 12-pair comparison of `treatment` ("mechanism:variant") on
/// `workload` with its final verdict and figures: the baseline halves at
/// 100 ns/op, the treatment halves at the estimate, alternating AB/BA.
pub fn decided(
    workload: &str,
    treatment: &str,
    verdict: Verdict,
    (estimate, ci_low, ci_high): (f64, f64, f64),
) -> Comparison {
    let (mechanism, variant) = treatment.split_once(':').unwrap_or((treatment, ""));
    let ratio = 1.0 + estimate / 100.0;
    let pair_data: Vec<PairData> = (0..12)
        .map(|i| PairData {
            index: i,
            order: if i % 2 == 0 { "AB" } else { "BA" }.to_string(),
            baseline_per_op: 100.0 + f64::from(i % 3),
            treatment_per_op: (100.0 + f64::from(i % 3)) * ratio * (1.0 + 0.002 * f64::from(i % 4)),
            beside: Vec::new(),
        })
        .collect();
    let mut c = crate::model::testing::comparison(workload, mechanism, variant);
    c.pairs = 12;
    c.baseline_per_op = 101.0;
    c.treatment_per_op = 101.0 * ratio + 3.0;
    c.overhead_pct = OverheadPct {
        estimate,
        ci_low,
        ci_high,
        p_value: if verdict == Verdict::NoChange {
            1.0
        } else {
            0.014
        },
        verdict,
    };
    c.hodges_lehmann_pct = estimate;
    c.pair_data = pair_data;
    c
}

fn est(estimate: f64, half: f64) -> Estimate {
    Estimate {
        estimate,
        ci_low: estimate - half,
        ci_high: estimate + half,
    }
}

fn arow(name: &str, group: &str, base: f64, treat: f64) -> AttributionRow {
    AttributionRow {
        name: name.into(),
        group: group.into(),
        baseline_ns_per_op: base,
        treatment_ns_per_op: treat,
        delta_ns_per_op: est(treat - base, 2.0),
        share_of_delta_pct: (treat - base) / 100.0 * 100.0,
        baseline_share_pct: 10.0,
        treatment_share_pct: 20.0,
        within_noise: (treat - base).abs() < 2.0,
    }
}

/// An attribution of a +100 ns/op difference, mostly seccomp.
pub fn attribution() -> Attribution {
    Attribution {
        pairs: 8,
        hz: 4000,
        clock: "cpu-clock".into(),
        samples: ProfileSamples {
            total: 9000,
            per_half_min: 500,
            per_half_median: 560.0,
            lost: 0,
        },
        profiling_slowdown_pct: 3.1,
        baseline_slowdown_pct: 2.9,
        treatment_slowdown_pct: 3.3,
        total: arow("total", "", 300.0, 400.0),
        groups: vec![
            arow("seccomp", "", 5.0, 90.0),
            arow("syscall entry/exit", "", 80.0, 95.0),
            arow("user space", "", 20.0, 20.5),
        ],
        symbols: (0..12)
            .map(|i| {
                arow(
                    &format!("sym_{i}"),
                    "seccomp",
                    1.0,
                    1.0 + 40.0 / f64::from(i + 1),
                )
            })
            .collect(),
        notes: vec!["kernel addresses are visible".into()],
        folded: Default::default(),
    }
}

fn meta(kind: &str, params: serde_json::Value) -> RunMeta {
    RunMeta {
        label: "fixture".into(),
        kind: kind.into(),
        started_at: DateTime::from_timestamp(1_764_000_000, 0).unwrap(),
        host: "box".into(),
        secperf_version: "0.1.0".into(),
        command: "secperf overhead -m 'seccomp:args,filters=4' -w getppid,stream --seed 7".into(),
        params,
        system: json!({"kernel": {"release": "6.18.0"}, "lsm": {"modules": ["capability", "landlock"]},
                       "cpu": {"model": "AMD EPYC", "online_count": 2}}),
    }
}

/// An overhead run with every section: a sequential slower comparison
/// with an attribution and an outlier pair, a negligible and a faster
/// one, a command with child CPU time, an unfinished one, the negative
/// control, a sweep, skipped mechanisms, treatment notes and a policy file.
pub fn overhead_doc() -> RunDoc {
    let mut slower = decided(
        "getppid",
        "seccomp:args",
        Verdict::Slower,
        (33.0, 28.8, 38.5),
    );
    slower.params.insert("filters".into(), "4".into());
    slower.sequential = Some(SequentialStop {
        max_pairs: 32,
        family: 6,
        stopped: StopReason::Slower,
    });
    slower.pair_data[10].treatment_per_op = 400.0;
    slower.attribution = Some(attribution());
    let mut deep = decided("open", "landlock:fs", Verdict::Negligible, (0.2, -0.4, 0.6));
    deep.workload_params.insert("depth".into(), "16".into());
    let faster = decided(
        "getppid",
        "audit:enabled",
        Verdict::Faster,
        (-22.6, -23.0, -20.3),
    );
    let mut command = decided(
        "command",
        "seccomp:allow",
        Verdict::Slower,
        (9.6, 8.3, 10.3),
    );
    command.workload_params.insert(
        "argv".into(),
        serde_json::to_string(&["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=200000"])
            .unwrap(),
    );
    command.baseline_per_op = 141.4e6;
    command.child_cpu = Some([
        ChildCpu {
            runs: 40,
            user_ns_per_op: 21.9e6,
            sys_ns_per_op: 120.2e6,
        },
        ChildCpu {
            runs: 40,
            user_ns_per_op: 24.0e6,
            sys_ns_per_op: 127.3e6,
        },
    ]);
    let mut unfinished = decided(
        "eventfd",
        "seccomp:args",
        Verdict::NoChange,
        (1.5, -3.0, 6.1),
    );
    unfinished.pairs = 7;
    unfinished.pair_data.truncate(7);
    unfinished.unfinished = true;
    let control = decided(
        "stream",
        "seccomp:args",
        Verdict::NoChange,
        (0.3, -1.2, 2.03),
    );
    let comparisons = vec![slower, deep, faster, command, unfinished, control];
    let sweep = Sweep {
        key: "filters".into(),
        label: "seccomp:args on getppid tasks=1".into(),
        model: "ns/op added = entry cost + cost per filter x filters".into(),
        intercept_name: "entry cost".into(),
        slope_name: "per filter".into(),
        points: [1.0, 4.0]
            .iter()
            .map(|&x| SweepPoint {
                value: x,
                comparison: format!("seccomp:args,filters={x}"),
                delta_ns_per_op: vec![20.0 + 17.0 * x - 1.0, 20.0 + 17.0 * x + 1.0],
                overhead_pct: (20.0 + 17.0 * x) / 3.0,
                baseline_ns_per_op: 300.0,
                overhead_ci_pct: Some([
                    (20.0 + 17.0 * x) / 3.0 - 1.0,
                    (20.0 + 17.0 * x) / 3.0 + 1.0,
                ]),
            })
            .collect(),
        fit: Some(crate::model::LineFit {
            intercept: est(20.0, 3.0),
            slope: est(17.0, 1.0),
            n: 24,
            r_squared: 0.98,
            residual_sd: 1.2,
            lack_of_fit_p: None,
            straight: true,
        }),
    };
    RunDoc {
        run_id: 12,
        uuid: None,
        campaign: None,
        db: "/tmp/secperf-fixture.db".into(),
        meta: meta(
            "overhead",
            json!({
                "seed": 7,
                "decision": {"alpha": 0.05, "noise_pct": 1.0, "equivalence_pct": 1.0},
                "skipped": [{"mechanism": "selinux", "reason": "SELinux is not active on this kernel"}],
                "treatment_notes": ["audit:rules=/tmp/r.rules: -b 8192 not applied (secperf changes only the rule list and the enabled flag)"]
            }),
        ),
        finished_at: DateTime::from_timestamp(1_764_000_150, 0),
        results: vec![],
        negative_control: Some(NegativeControl {
            workload: "stream".into(),
            passed: true,
            comparisons: vec!["seccomp:args".into()],
            failed: vec![],
        }),
        comparisons,
        sweeps: vec![sweep],
        policy_files: vec![PolicyFile {
            treatment: "audit:rules=/tmp/r.rules".into(),
            param: "rules".into(),
            path: "/tmp/r.rules".into(),
            sha256: "ab".repeat(32),
            bytes: 40,
            content: "-b 8192\n-a always,exit -F arch=b64 -S getppid\n".into(),
        }],
        problems: vec![],
        suite: None,
        boot_arms: Vec::new(),
    }
}

/// A `run` with two results, one profiled.
pub fn run_doc() -> RunDoc {
    let mut open = crate::model::testing::result("open", &[2500.0, 2600.0, 2550.0]);
    open.params.insert("depth".into(), "16".into());
    let getppid = crate::model::testing::result("getppid", &[300.0, 310.0, 305.0]);
    let mut doc = overhead_doc();
    doc.meta = meta("run", json!({}));
    doc.meta.command = "secperf run -w open,getppid -p open.depth=16".into();
    doc.results = vec![open, getppid];
    doc.comparisons.clear();
    doc.negative_control = None;
    doc.sweeps.clear();
    doc.policy_files.clear();
    doc
}

/// A suite run (access-2023's shape): an A/B section of `cred:fsuid`
/// against no override, profiled, and a runs section on access1 and
/// access2; AVC counters, a note, a skipped mechanism.
pub fn suite_doc() -> RunDoc {
    use crate::model::{AvcDelta, AvcStats};
    use crate::report::model::{Cell, DesignKind, Layout, PostSection, PostTable, Report, Row};
    use crate::report::suite::{PostCitation, SuiteDoc};

    let cell = |v: f64, change: Option<(f64, Verdict)>| {
        let mut c = Cell::of_value(v);
        if let Some((e, verdict)) = change {
            (c.change_pct, c.ci_low_pct, c.ci_high_pct) = (Some(e), Some(e - 2.0), Some(e + 2.0));
            c.verdict = Some(verdict);
        }
        Some(c)
    };
    let row = |workload: &str, cells| Row {
        workload: workload.into(),
        tasks: 1,
        label: String::new(),
        unit: Some("ops/s".into()),
        cells,
    };
    let report = |title: &str, design, columns: Vec<&str>, rows| Report {
        title: title.into(),
        design,
        unit: String::new(),
        sign_convention: "% change against the first column, in each table's style".into(),
        columns: columns.into_iter().map(String::from).collect(),
        rows,
        summary: vec![],
        warnings: vec![],
        machine: vec![],
        command: String::new(),
    };
    let items = |rows: Vec<usize>| {
        vec![PostTable {
            layout: Layout::ItemRows,
            rows,
            per: "tasks".into(),
        }]
    };
    let ab = PostSection {
        report: report(
            "This boot, A/B pairs on the live kernel",
            DesignKind::Paired,
            vec!["no override", "cred:fsuid"],
            vec![row(
                "access1",
                vec![cell(1e6, None), cell(5e5, Some((-50.0, Verdict::Slower)))],
            )],
        ),
        tables: items(vec![0]),
    };
    let runs = PostSection {
        report: report(
            "This run, current configuration",
            DesignKind::Single,
            vec!["fixture (run 12)"],
            vec![
                row("access1", vec![cell(990_000.0, None)]),
                row("access2", vec![cell(1_010_000.0, None)]),
            ],
        ),
        tables: items(vec![0, 1]),
    };
    let mut profiled = decided(
        "access1",
        "cred:fsuid",
        Verdict::Slower,
        (100.0, 96.0, 104.0),
    );
    profiled.attribution = Some(attribution());
    let mut doc = overhead_doc();
    doc.meta = meta(
        "suite",
        json!({
            "suite": "access-2023",
            "version": 1,
            "skipped": [{"mechanism": "selinux", "reason": "SELinux is not active on this kernel"}],
        }),
    );
    doc.meta.command = "secperf suite access-2023 --quick".into();
    doc.comparisons = vec![profiled];
    doc.negative_control = None;
    doc.sweeps.clear();
    doc.policy_files.clear();
    doc.suite = Some(SuiteDoc {
        name: "access-2023".into(),
        version: 1,
        title: "access(2) building new credentials on every call".into(),
        reproduces: PostCitation {
            author: "Paul Moore".into(),
            date: "2023-01-23".into(),
            list: "linux-fsdevel".into(),
            subject: "Re: [PATCH v2 2/2] vfs: avoid duplicating creds in faccessat if possible"
                .into(),
            link: Some("https://lore.kernel.org/x/".into()),
        },
        notes: vec!["ladders capped at the 2 CPUs of this machine".into()],
        other_side: "boot the other kernel, run the suite there with --label".into(),
        collects_avc: true,
        avc: Some(vec![AvcDelta {
            workload: "access1".into(),
            tasks: 1,
            stats: AvcStats {
                lookups: 200,
                hits: 150,
                misses: 50,
                ..Default::default()
            },
        }]),
        baseline_run_id: None,
        differences: vec![],
        ab: Some(ab),
        runs,
    });
    doc
}
