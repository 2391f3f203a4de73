//! Page assembly on runs built in memory: each section is there when its
//! data is and absent when not, labels are escaped, and nothing in the
//! page (or in the flame graphs' images) loads anything from elsewhere.

use chrono::Utc;

use super::flame::tests::{decode, folded};
use super::sweeps::tests::{fitted, sweep};
use super::{Page, render};
use crate::model::testing::{result, run};
use crate::model::{
    ChildCpu, Comparison, Estimate, Mode, PairData, Profile, ProfileRow, ProfileSamples,
};
use crate::report::doc::RunDoc;
use crate::stats::paired::{OverheadPct, Verdict};

fn comparison(variant: &str, tasks: u32, estimate: f64, verdict: Verdict) -> Comparison {
    Comparison {
        workload: "getppid".into(),
        workload_params: Default::default(),
        mechanism: "seccomp".into(),
        variant: variant.into(),
        params: Default::default(),
        mode: Mode::Process,
        tasks,
        pairs: 10,
        sample_ms: 20,
        samples_per_half: 1,
        measure: Default::default(),
        baseline_per_op: 300.0,
        treatment_per_op: 300.0 * (1.0 + estimate / 100.0),
        overhead_pct: OverheadPct {
            estimate,
            ci_low: estimate - 3.0,
            ci_high: estimate + 3.0,
            p_value: 0.01,
            verdict,
        },
        hodges_lehmann_pct: estimate,
        pair_data: (0..10)
            .map(|i| PairData {
                index: i,
                order: if i % 3 == 0 { "BA" } else { "AB" }.into(),
                baseline_per_op: 300.0 + f64::from(i),
                treatment_per_op: 330.0 + f64::from(i),
                beside: Vec::new(),
            })
            .collect(),
        attribution: None,
        child_cpu: None,
        sequential: None,
        unfinished: false,
        ci_alpha: None,
        own_ci_low_pct: None,
        own_ci_high_pct: None,
        beside: Vec::new(),
    }
}

fn system() -> serde_json::Value {
    serde_json::to_value(crate::probe::tests::sample()).unwrap()
}

/// A survey-like overhead run: two comparisons, one profiled, one with
/// child CPU time, at two task counts for one of them.
fn overhead_run() -> RunDoc {
    let mut r = run(7, "survey <b>", "6.18.4", vec![]);
    r.meta.kind = "overhead".into();
    r.meta.system = system();
    r.meta.params = serde_json::json!({"decision": {"noise_pct": 2.5},
        "skipped": [{"mechanism": "selinux", "reason": "SELinux is not active"}]});
    let mut profiled = comparison("allow", 1, 10.0, Verdict::Slower);
    let mut a = crate::report::sections::testing::attribution();
    a.folded = [
        folded(&[("entry_SYSCALL_64;do_syscall_64;__x64_sys_getppid", 40)]),
        folded(&[
            ("entry_SYSCALL_64;do_syscall_64;__x64_sys_getppid", 40),
            ("entry_SYSCALL_64;do_syscall_64;__seccomp_filter", 12),
        ]),
    ];
    profiled.attribution = Some(a);
    let mut cpu = comparison("args", 1, 0.3, Verdict::Negligible);
    let c = ChildCpu {
        runs: 20,
        user_ns_per_op: 1e6,
        sys_ns_per_op: 2e6,
    };
    cpu.child_cpu = Some([c, c]);
    r.comparisons = vec![
        profiled,
        cpu,
        comparison("args", 2, -5.0, Verdict::Faster),
        comparison("allow", 2, 0.5, Verdict::NoChange),
    ];
    doc(r)
}

/// The document of a run built in memory.
fn doc(run: crate::model::StoredRun) -> RunDoc {
    RunDoc::of(run, "/tmp/x.db".into())
}

/// A `run` ladder (1, 2 tasks), the first result profiled.
fn ladder_run(id: i64) -> RunDoc {
    let mut one = result("getppid", &[300.0, 310.0]);
    one.profile = Some(Profile {
        measurements: 4,
        hz: 4000,
        clock: "cpu-clock".into(),
        samples: ProfileSamples {
            total: 800,
            per_half_min: 190,
            per_half_median: 200.0,
            lost: 0,
        },
        profiling_slowdown_pct: 5.0,
        total: ProfileRow {
            name: "total".into(),
            group: String::new(),
            ns_per_op: Estimate {
                estimate: 300.0,
                ci_low: 290.0,
                ci_high: 310.0,
            },
            share_pct: 100.0,
        },
        groups: vec![],
        symbols: vec![],
        notes: vec![],
        folded: folded(&[("entry_SYSCALL_64;do_syscall_64;__x64_sys_getppid", 800)]),
    });
    let mut two = result("getppid", &[320.0, 330.0]);
    two.tasks = 2;
    let mut r = run(id, "", "6.18.4", vec![one, two]);
    r.meta.system = system();
    doc(r)
}

fn page(runs: Vec<RunDoc>) -> Page {
    render(&runs, Utc::now()).unwrap()
}

/// Every `<section class="...">` of the page.
fn sections(html: &str) -> Vec<String> {
    html.split("<section ")
        .skip(1)
        .filter_map(|s| s.split("class=\"").nth(1)?.split('"').next())
        .map(str::to_string)
        .collect()
}

/// The inline SVGs and flame graph images of the page.
fn drawings(html: &str) -> (usize, usize) {
    (
        html.matches("<svg ").count(),
        html.matches("src=\"data:image/svg+xml;base64,").count(),
    )
}

#[test]
fn a_plain_run_has_its_header_and_nothing_it_lacks() {
    let r = run(3, "plain", "6.1", vec![result("getppid", &[300.0])]);
    let p = page(vec![doc(r)]);
    assert_eq!(sections(&p.html), ["run"], "{}", p.html);
    assert_eq!(p.plots, 0);
    assert_eq!(drawings(&p.html), (0, 0));
    assert!(p.html.contains("<code>secperf run</code>"));
    assert!(p.html.contains("plain (run 3)"));
    // model::testing's snapshot is not a full probe: said, not failed.
    assert!(p.html.contains("does not read"));
}

#[test]
fn an_overhead_run_has_every_section_its_data_calls_for() {
    let mut r = overhead_run();
    r.sweeps = vec![fitted(sweep(), 2.776)];
    r.problems = vec!["Sweep note 2 of this run could not be read".into()];
    let p = page(vec![r]);
    assert_eq!(
        sections(&p.html),
        [
            "scaling",
            "run",
            "overhead",
            "pairs",
            "sweeps",
            "attribution",
            "child-cpu"
        ]
    );
    // Forest 1, pairs 4, scaling 2 keys x 2 measures, sweep 1, attribution
    // bars 1 + differential flame graph 1, child CPU bars 1.
    assert_eq!(p.plots, 1 + 4 + 4 + 1 + 2 + 1, "{}", p.html);
    let (svgs, images) = drawings(&p.html);
    assert_eq!((svgs, images), (p.plots - 1, 1));
    for class in [
        "figure class=\"forest\"",
        "figure class=\"pairs\"",
        "figure class=\"scaling\"",
        "figure class=\"sweep\"",
        "figure class=\"attribution-bars\"",
        "figure class=\"flame differential\"",
        "figure class=\"child-cpu\"",
        "table class=\"comparisons\"",
        "table class=\"coefficients\"",
        "table class=\"attribution\"",
        "table class=\"security\"",
    ] {
        assert!(p.html.contains(class), "no {class}");
    }
    // The run's own noise band, the skipped mechanism, the unread note.
    assert!(p.html.contains("noise band ±2.5%"));
    assert!(p.html.contains("Skipped selinux: SELinux is not active"));
    assert!(
        p.html
            .contains("Sweep note 2 of this run could not be read")
    );
    assert!(p.html.contains("A straight line fits"));
    assert!(p.html.contains("95% band of the mean"));
    // Labels are escaped everywhere.
    assert!(p.html.contains("survey &lt;b&gt; (run 7)"));
    assert!(!p.html.contains("survey <b>"));
    // Verdicts are coloured by name in the table.
    for v in ["slower", "faster", "negligible", "no-change"] {
        assert!(p.html.contains(&format!("verdict-{v}")), "{v}");
    }
}

#[test]
fn a_ladder_gets_scaling_and_a_flame_graph_and_runs_overlay() {
    let p = page(vec![ladder_run(1)]);
    assert_eq!(sections(&p.html), ["scaling", "run", "profiles"]);
    assert_eq!(p.plots, 2 + 1);
    assert_eq!(drawings(&p.html), (2, 1));
    let img = p.html.split("<img ").nth(1).unwrap();
    assert!(decode(img).contains("__x64_sys_getppid"));

    // Two runs: the same two scaling charts, each with a series per run.
    let two = page(vec![ladder_run(1), ladder_run(2)]);
    assert_eq!(
        sections(&two.html),
        ["scaling", "run", "profiles", "run", "profiles"]
    );
    let scaling = two.html.split("<section id=\"run-1\"").next().unwrap();
    assert_eq!(scaling.matches("<svg ").count(), 2);
    for name in ["run 1", "run 2"] {
        assert!(scaling.contains(&format!("\n{name}\n</text>")), "{name}");
    }
}

/// Every `http(s)://` of `text` is an XML namespace name (never fetched).
fn only_namespaces(text: &str) -> Result<(), String> {
    let mut rest = text;
    while let Some(i) = rest.find("http") {
        let before = &rest[..i];
        let after = &rest[i..];
        if after.starts_with("http://") || after.starts_with("https://") {
            let attr = before.rsplit(' ').next().unwrap_or("");
            if !(attr.starts_with("xmlns=\"") || attr.starts_with("xmlns:")) {
                let end = after.len().min(60);
                return Err(format!("{attr}{}", &after[..end]));
            }
        }
        rest = &after[4..];
    }
    Ok(())
}

#[test]
fn nothing_is_fetched_from_elsewhere() {
    let mut over = overhead_run();
    over.sweeps = vec![fitted(sweep(), 2.776)];
    let p = page(vec![over, ladder_run(2)]);
    only_namespaces(&p.html).unwrap();
    let images: Vec<&str> = p.html.split("base64,").skip(1).collect();
    assert_eq!(images.len(), 2);
    for img in &images {
        let svg = decode(&format!("base64,{img}"));
        only_namespaces(&svg).unwrap();
        assert!(!svg.contains("<script") && !svg.contains("onload"));
    }
    let lower = p.html.to_lowercase();
    for banned in [
        "<script",
        "<link",
        "<iframe",
        "<object",
        "<embed",
        "@import",
        "@font-face",
        "url(h",
        "url(/",
        "onload=",
        "onclick=",
    ] {
        assert!(!lower.contains(banned), "{banned} in the page");
    }
    for attr in ["src=\"", "href=\""] {
        for s in p.html.split(attr).skip(1) {
            assert!(
                s.starts_with("data:image/svg+xml;base64,") || s.starts_with('#'),
                "{attr}{}",
                &s[..s.len().min(40)]
            );
        }
    }
    assert!(only_namespaces("<a href=\"https://x\">").is_err());
}

#[test]
fn the_page_is_one_document() {
    let p = page(vec![overhead_run()]);
    assert!(p.html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert_eq!(p.html.matches("<html").count(), 1);
    assert_eq!(p.html.matches("</html>").count(), 1);
    assert_eq!(p.html.matches("<body>").count(), 1);
    assert_eq!(
        p.html.matches("<svg ").count(),
        p.html.matches("</svg>").count()
    );
    assert_eq!(
        p.html.matches("<section ").count(),
        p.html.matches("</section>").count()
    );
    // Every anchor of the contents leads to a section of the page.
    for link in p.html.split("<li class=\"l").skip(1) {
        let id = link
            .split("href=\"#")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert!(p.html.contains(&format!("<section id=\"{id}\"")), "{id}");
    }
}

#[test]
fn the_forest_plot_names_the_level_its_bars_are_drawn_at() {
    // Issue 44: the axis read "(95% interval)" while the bars were the
    // table's 98.2% intervals.
    let plain = page(vec![overhead_run()]).html;
    assert!(plain.contains("95% interval"), "no level named");
    let mut run = overhead_run();
    for c in &mut run.comparisons {
        c.ci_alpha = Some(0.018);
    }
    let html = page(vec![run]).html;
    assert!(html.contains("bar: its 98.2% interval"), "caption");
    assert!(html.contains("98.2% interval)"), "axis");
    assert!(!html.contains("(95% interval)"), "a 95% label left");
}
