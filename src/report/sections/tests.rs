use super::testing::{decided, overhead_doc, run_doc, suite_doc};
use super::*;
use crate::report::markup::{Kind, Raw};
use crate::stats::decision::Verdict;

const KINDS: [Kind; 6] = [
    Kind::Terminal { color: false },
    Kind::Terminal { color: true },
    Kind::Email,
    Kind::Plain,
    Kind::Markdown,
    Kind::Csv,
];

#[test]
fn every_format_renders_every_view_of_every_doc() {
    for doc in [overhead_doc(), run_doc(), suite_doc()] {
        for parts in [Parts::MEASURED, Parts::REPORT, Parts::STORED] {
            for kind in KINDS {
                let s = render(&doc, parts, kind);
                assert!(s.ends_with('\n'), "{kind:?} {parts:?}");
                if kind == Kind::Email {
                    for l in s.lines() {
                        assert!(l.len() <= 72, "{l:?}");
                        assert!(l.is_ascii(), "{l:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_treatment_column_gives_the_printed_overhead() {
    let doc = overhead_doc();
    let t = comparisons_table(&doc);
    let col = |name: &str| {
        t.columns
            .iter()
            .position(|c| c.csv.first().map(String::as_str) == Some(name))
            .unwrap()
    };
    let (b, tr, o) = (
        col("baseline_per_op"),
        col("treatment_paired_per_op"),
        col("overhead_pct"),
    );
    let num = |r: &Raw| match r {
        Raw::Number(x) => *x,
        other => panic!("{other:?}"),
    };
    for row in t.rows() {
        let (base, treat, pct) = (
            num(&row[b].raw[0]),
            num(&row[tr].raw[0]),
            num(&row[o].raw[0]),
        );
        assert!(((treat / base - 1.0) * 100.0 - pct).abs() < 1e-9, "{row:?}");
        // And as printed: the shown values give the shown % to the
        // precision they are shown with.
        let shown = |text: &str| text.trim_end_matches(" ns").parse::<f64>().ok();
        if let (Some(sb), Some(st)) = (shown(&row[b].text), shown(&row[tr].text)) {
            let printed: f64 = row[o].text.split('%').next().unwrap().parse().unwrap();
            assert!(((st / sb - 1.0) * 100.0 - printed).abs() < 0.2, "{row:?}");
        }
    }
}

#[test]
fn the_terminal_view_keeps_its_columns_and_names_parameters() {
    let s = render(
        &overhead_doc(),
        Parts::MEASURED,
        Kind::Terminal { color: false },
    );
    for col in [
        "workload",
        "mechanism",
        "tasks",
        "pairs",
        "baseline",
        "treatment",
        "overhead [95% CI]",
        "p",
        "verdict",
    ] {
        assert!(s.contains(col), "{col}\n{s}");
    }
    assert!(s.contains("open depth=16"), "{s}");
    assert!(s.contains("12/32"), "{s}");
    assert!(s.contains("7 unfinished"), "{s}");
    assert!(s.contains("+33.0% [28.8, 38.5] *"), "{s}");
    assert!(s.contains("+0.2% [-0.4, 0.6] ="), "{s}");
    assert!(s.contains("dd if=/dev/zero"), "{s}");
    assert!(s.contains("Negative control (stream"), "{s}");
    assert!(
        s.contains("passed: no mechanism changed stream (seccomp:args +0.3% [-1.2, 2.0] ~)"),
        "{s}"
    );
    assert!(
        s.contains("Sweep of filters for seccomp:args on getppid tasks=1:"),
        "{s}"
    );
    assert!(
        s.contains("Where the time goes: seccomp:args,filters=4 on getppid tasks=1:"),
        "{s}"
    );
    assert!(s.contains("Skipped:\n  selinux: unavailable"), "{s}");
    assert!(s.contains("-b 8192 not applied"), "{s}");
    assert!(s.contains("sha256 abab"), "{s}");
    assert!(
        s.contains("Outlier pairs (MAD, modified z > 3.5): 1 in 1 of the 6 comparisons"),
        "{s}"
    );
    assert!(
        !s.contains("Reproduce"),
        "the measured view has no facts: {s}"
    );
    assert!(
        !s.contains("-a always,exit"),
        "no policy content right after measuring"
    );
}

#[test]
fn the_stored_view_has_facts_content_and_the_command() {
    let s = render(
        &overhead_doc(),
        Parts::STORED,
        Kind::Terminal { color: false },
    );
    assert!(
        s.contains("pair 11 of 12 (kept)"),
        "every outlier pair: {s}"
    );
    assert!(
        s.starts_with("secperf overhead: fixture (run 12):\n"),
        "{s}"
    );
    assert!(s.contains("seed 7"), "{s}");
    assert!(
        s.contains("    -a always,exit -F arch=b64 -S getppid"),
        "{s}"
    );
    assert!(s.trim_end().ends_with(
        "Reproduce: secperf overhead -m 'seccomp:args,filters=4' -w getppid,stream --seed 7"
    ));
}

#[test]
fn a_suite_run_shows_its_report_in_place_of_the_generic_tables() {
    let s = render(&suite_doc(), Parts::STORED, Kind::Plain);
    assert!(s.starts_with("secperf suite: fixture (run 12):\n"), "{s}");
    assert!(s.contains("\naccess-2023 v1: access(2)"), "{s}");
    assert!(
        s.contains("  skipped: selinux: SELinux is not active"),
        "{s}"
    );
    // Not the generic comparisons table, nor its list of skips.
    assert!(!s.contains("overhead [95% CI]"), "{s}");
    assert!(!s.contains("Skipped:"), "{s}");
    assert!(
        s.trim_end()
            .ends_with("Reproduce: secperf suite access-2023 --quick"),
        "{s}"
    );
}

#[test]
fn the_email_keeps_intervals_and_pair_counts() {
    let s = render(&overhead_doc(), Parts::REPORT, Kind::Email);
    // The interval may wrap inside its cell on a table this wide.
    let words: Vec<&str> = s.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "+33.0%")
        .expect("the estimate");
    assert_eq!(words[at + 1..at + 4], ["[28.8,", "38.5]", "*"], "{s}");
    assert!(s.contains("12/32"), "{s}");
    assert!(s.contains("Reproduce: secperf overhead"), "{s}");
}

/// The negative control as `read::control::judge` leaves it.
fn control_of(comparisons: &[&str], failed: &[&str]) -> crate::model::NegativeControl {
    crate::model::NegativeControl {
        workload: "stream".into(),
        passed: failed.is_empty(),
        comparisons: comparisons.iter().map(|c| c.to_string()).collect(),
        failed: failed.iter().map(|c| c.to_string()).collect(),
    }
}

#[test]
fn a_failed_control_names_what_changed() {
    let mut doc = overhead_doc();
    let mut tasks2 = decided("stream", "cred:fsuid", Verdict::Faster, (-3.0, -5.0, -1.5));
    tasks2.tasks = 2;
    doc.comparisons = vec![
        decided(
            "stream",
            "seccomp:allow",
            Verdict::NoChange,
            (0.3, -1.2, 2.03),
        ),
        decided("stream", "audit:enabled", Verdict::Slower, (4.2, 1.1, 6.0)),
        tasks2,
    ];
    doc.negative_control = Some(control_of(
        &["seccomp:allow", "audit:enabled", "cred:fsuid tasks=2"],
        &["audit:enabled", "cred:fsuid tasks=2"],
    ));
    let lines = control::lines(&doc);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with(
            "FAILED: stream changed under audit:enabled (+4.2% [1.1, 6.0] *) and cred:fsuid \
             tasks=2 (-3.0% [-5.0, -1.5] *): something other than the mechanisms' hooks"
        ),
        "{lines:?}"
    );
    assert_eq!(
        lines[1],
        "unchanged under seccomp:allow (+0.3% [-1.2, 2.0] ~)"
    );
    doc.comparisons.truncate(2);
    doc.negative_control = Some(control_of(
        &["seccomp:allow", "audit:enabled"],
        &["audit:enabled"],
    ));
    assert!(control::lines(&doc)[0].contains("other than the mechanism's hooks"));
    doc.negative_control = None;
    assert!(control::lines(&doc).is_empty());
}

#[test]
fn csv_carries_every_symbol_and_raw_numbers() {
    let s = render(&overhead_doc(), Parts::REPORT, Kind::Csv);
    assert!(
        s.contains("sym_11"),
        "CSV has the symbols people do not see"
    );
    assert!(!render(&overhead_doc(), Parts::REPORT, Kind::Markdown).contains("sym_11"));
    let first = s.lines().next().unwrap();
    assert!(
        first.starts_with("workload,treatment,workload_params,tasks,pairs,max_pairs"),
        "{first}"
    );
    assert!(!s.contains(" ns,"), "CSV holds numbers, not display text");
}

#[test]
fn run_results_show_parameters_and_profiles() {
    let s = render(&run_doc(), Parts::MEASURED, Kind::Terminal { color: false });
    assert!(s.contains("open depth=16"), "{s}");
    assert!(s.contains("ops/s"), "{s}");
}

#[test]
fn audit_comparisons_on_a_kernel_with_phantom_rules_carry_a_note() {
    let mut doc = overhead_doc();
    for kind in KINDS {
        let s = render(&doc, Parts::MEASURED, kind);
        assert!(!s.contains("Phantom audit rules"), "{kind:?}");
    }
    // Two rounds whose halves do not overlap: the cost is priced.
    use crate::probe::audit_phantom::{CheckArm, CheckHalf};
    let half = |arm, ns_per_op, rule_path_samples| CheckHalf {
        arm,
        ns_per_op,
        samples: 1200,
        rule_path_samples,
    };
    let check = crate::probe::audit_phantom::decide(
        vec![
            half(CheckArm::Disabled, 375.0, 0),
            half(CheckArm::Enabled, 565.0, 200),
            half(CheckArm::OneRule, 560.0, 210),
            half(CheckArm::Disabled, 385.0, 0),
            half(CheckArm::Enabled, 575.0, 200),
            half(CheckArm::OneRule, 560.0, 210),
        ],
        chrono::Utc::now(),
    );
    doc.meta.system["audit"] = serde_json::json!({"enabled": 0});
    crate::probe::audit_phantom::record(&mut doc.meta.system, check.0, &check.1);
    for kind in [Kind::Plain, Kind::Markdown, Kind::Email] {
        let s = render(&doc, Parts::MEASURED, kind);
        let words = s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("Phantom audit rules"), "{kind:?}: {s}");
        assert!(words.contains("+190 ns"), "{kind:?}: {s}");
        assert!(words.contains("reboot"), "{kind:?}: {s}");
    }
}

#[test]
fn an_unfinished_comparison_reads_unfinished_without_a_verdict_or_an_interval_it_lacks() {
    // Issue 53: an interrupted run's comparison of 1 of 32 pairs read
    // `+55.8% [-100.0, inf] ~ no-change`.
    let mut doc = overhead_doc();
    let c = doc
        .comparisons
        .iter_mut()
        .find(|c| c.unfinished)
        .expect("the fixture has an unfinished comparison");
    c.pairs = 1;
    c.overhead_pct.estimate = 55.8;
    c.overhead_pct.ci_low = -100.0;
    c.overhead_pct.ci_high = f64::INFINITY;
    c.overhead_pct.verdict = crate::stats::decision::Verdict::NoChange;
    for kind in [
        Kind::TerminalAt {
            color: false,
            width: 200,
        },
        Kind::Email,
        Kind::Markdown,
    ] {
        let s = render(&doc, Parts::STORED, kind);
        assert!(!s.contains("-100.0, inf"), "{kind:?}\n{s}");
        assert!(!s.contains("+55.8% ["), "{kind:?}\n{s}");
        let row = s
            .lines()
            .find(|l| l.contains("+55.8%") && l.contains("1 unfinished"))
            .unwrap_or_else(|| panic!("{kind:?}: no row\n{s}"));
        assert!(
            !row.contains("no-change") && !row.contains(" ~"),
            "{kind:?}: {row}"
        );
        assert!(row.contains("unfinished"), "{kind:?}: {row}");
    }
    let s = render(
        &doc,
        Parts::MEASURED,
        Kind::TerminalAt {
            color: false,
            width: 200,
        },
    );
    assert!(
        s.lines()
            .any(|l| l.contains("+55.8% so far") && l.contains("unfinished")),
        "{s}"
    );
    // Its data keep what was stored.
    let csv = render(&doc, Parts::STORED, Kind::Csv);
    assert!(csv.contains("no-change"), "{csv}");
}
