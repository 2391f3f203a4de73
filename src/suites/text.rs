//! A suite's report as text, in the post's order: the header citing the
//! post, the sections of [`super::sections`] drawn by
//! `report::formats::post`, the profiles, the differences between the
//! runs' machines, the SELinux AVC counters, then the notes, skips and how
//! to measure the other side.

use std::fmt::Write as _;

use super::avc::AvcDelta;
use super::sections::{ReportParts, Section};
use crate::report::formats::post;

/// The report text from [`sections`](super::sections::sections).
pub fn render(p: &ReportParts, ab: Option<&Section>, runs: &Section) -> String {
    let mut out = String::new();
    let s = p.suite;
    let _ = writeln!(out, "{} v{}: {}", s.name, s.version, s.title);
    out.push_str(&citation_lines(&s.post));
    let _ = writeln!(out, "(measured on {})", machine_line(&p.run.meta.system));
    out.push('\n');
    if let Some(ab) = ab {
        out.push_str(&post::render(&ab.report, &ab.tables));
        out.push('\n');
        for a in &ab.report.attributions {
            // The shape profiles are posted in (each symbol's share of the
            // samples before and after, as `perf diff` prints), then what
            // those shares are in ns/op.
            let _ = writeln!(
                out,
                "Profile: {} (share of samples, as perf diff)",
                a.comparison
            );
            out.push_str(&crate::report::formats::attribution::shares(
                &a.attribution,
                10,
            ));
        }
        out.push_str(&crate::report::formats::attribution::email(
            &ab.report.attributions,
        ));
        if !ab.report.attributions.is_empty() {
            out.push('\n');
        }
    }
    out.push_str(&post::render(&runs.report, &runs.tables));
    out.push('\n');
    if let Some(b) = p.baseline {
        for d in crate::probe::probe_differences(&b.meta.system, &p.run.meta.system) {
            let _ = writeln!(out, "differs between the runs: {d}");
        }
    }
    if p.plan.collect_avc {
        out.push_str(&render_avc(p.avc.unwrap_or(&[]), p.avc.is_some()));
        out.push('\n');
    }
    post::para(&mut out, &crate::report::number::marks_legend(&p.decision));
    if ab.is_some() {
        post::para(
            &mut out,
            "A/B: the baseline value is the median of the baseline halves over all pairs; a \
             mechanism's value is that baseline times its paired ratio (the median of the \
             per-pair ratios, with its 95% interval), so value / baseline - 1 is the % shown",
        );
    }
    post::para(
        &mut out,
        "Runs: each value is the median over the run's samples; a % against a baseline run is \
         the ratio of the two medians, with a bootstrap 95% interval",
    );
    for n in &p.plan.notes {
        post::para(&mut out, &format!("note: {n}"));
    }
    for sk in p.skipped {
        post::para(
            &mut out,
            &format!("skipped: {}: {}", sk.mechanism, sk.reason),
        );
    }
    post::para(&mut out, &format!("other side: {}", s.other_side));
    out
}

/// "reproduces: Author, "Subject", list, date" wrapped at spaces only (a
/// subject or list name is never split at its hyphens), then the archive
/// link alone on its line so that it can be copied whole.
fn citation_lines(c: &super::Citation) -> String {
    let opts = textwrap::Options::new(100)
        .subsequent_indent("    ")
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let mut out = textwrap::fill(&format!("reproduces: {}", c.text()), opts);
    out.push('\n');
    if let Some(link) = c.link {
        let _ = writeln!(out, "    {link}");
    }
    out
}

/// "linux 6.18.0, LSMs lockdown,capability,landlock,bpf, 2 CPUs".
fn machine_line(system: &serde_json::Value) -> String {
    let get = |ptr: &str| system.pointer(ptr).cloned();
    let kernel = get("/kernel/release")
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_else(|| "kernel ?".into());
    let lsms = get("/lsm/modules")
        .and_then(|v| {
            v.as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            })
        })
        .unwrap_or_else(|| "?".into());
    let cpus = get("/cpu/online_count")
        .map(|v| v.to_string())
        .unwrap_or_else(|| "?".into());
    format!("linux {kernel}, LSMs {lsms}, {cpus} CPUs")
}

/// AVC counters per workload, or why there are none.
fn render_avc(avc: &[AvcDelta], collected: bool) -> String {
    if !collected {
        return format!(
            "SELinux AVC statistics: not collected: SELinux is not active here ({} absent)\n",
            super::avc::CACHE_STATS
        );
    }
    let rows = avc
        .iter()
        .map(|d| {
            let s = &d.stats;
            vec![
                d.workload.clone(),
                d.tasks.to_string(),
                s.lookups.to_string(),
                s.hits.to_string(),
                s.misses.to_string(),
                s.allocations.to_string(),
                s.reclaims.to_string(),
                s.frees.to_string(),
                s.hit_pct().map_or("-".into(), |h| format!("{h:.2}%")),
            ]
        })
        .collect();
    format!(
        "SELinux AVC statistics during each measurement ({}):\n{}\n",
        super::avc::CACHE_STATS,
        post::ascii_table(
            ["workload", "tasks"]
                .iter()
                .chain(&super::avc::FIELDS)
                .chain(&["hit rate"])
                .map(|h| h.to_string())
                .collect(),
            rows
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Skipped;
    use crate::model::testing::{result, run};
    use crate::stats::decision::DecisionOpts;
    use crate::suites::SuitePlan;
    use crate::suites::sections::sections;

    fn plan() -> SuitePlan {
        (super::super::access_2023::SUITE.plan)(&super::super::PlanCtx {
            quick: true,
            cpus: 1,
        })
    }

    #[test]
    fn report_names_skips_notes_and_the_other_side() {
        let r = run(
            3,
            "access-2023",
            "6.18",
            vec![result("access1", &[1000.0, 1010.0])],
        );
        let skipped = vec![Skipped {
            mechanism: "cred:fsuid".into(),
            reason: "needs root".into(),
        }];
        let parts = ReportParts {
            suite: &super::super::access_2023::SUITE,
            plan: &plan(),
            run: &r,
            baseline: None,
            skipped: &skipped,
            avc: None,
            decision: DecisionOpts::default(),
        };
        let (ab, runs) = sections(&parts);
        let text = render(&parts, ab.as_ref(), &runs);
        assert!(text.starts_with("access-2023 v1: "), "{text}");
        // The header cites the post (author, subject, list, date), not a file.
        let header: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        assert!(header[1].starts_with("reproduces: Paul Moore"), "{text}");
        let cited = header
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for part in [
            "\"Re: [PATCH v2 2/2] vfs: avoid duplicating creds in faccessat if possible\"",
            "linux-fsdevel, linux-kernel, linux-security-module",
            "2023-01-23",
        ] {
            assert!(cited.contains(part), "{part} missing from:\n{text}");
        }
        // The link whole, on a line of its own.
        let link = super::super::access_2023::SUITE.post.link.unwrap();
        assert!(header.contains(&format!("    {link}").as_str()), "{text}");
        assert!(!text.contains(".txt"), "{text}");
        assert!(text.contains("(measured on linux 6.18"), "{text}");
        assert!(text.contains("skipped: cred:fsuid: needs root"), "{text}");
        assert!(text.contains("other side: "), "{text}");
        assert!(!text.contains("A/B:"), "{text}");
        assert!(text.lines().all(|l| l.len() <= 120), "{text}");
    }

    #[test]
    fn avc_table_or_the_reason_there_is_none() {
        assert!(render_avc(&[], false).contains("not active"));
        let d = AvcDelta {
            workload: "write".into(),
            tasks: 2,
            stats: crate::suites::avc::AvcStats {
                lookups: 200,
                hits: 150,
                misses: 50,
                ..Default::default()
            },
        };
        let t = render_avc(&[d], true);
        assert!(t.contains("75.00%"), "{t}");
    }
}
