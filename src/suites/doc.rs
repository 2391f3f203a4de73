//! A suite run's part of the run document ([`SuiteDoc`]): the recipe's
//! name, version, post, notes and other side, the AVC counters stored with
//! the run, the two sections of [`super::sections`] and, with a baseline
//! run, how its machine differs from this run's. It is data only;
//! `report::sections::suite` draws it in the post's shape, in every
//! format.

use super::Citation;
use super::sections::{ReportParts, sections};
use crate::report::suite::{PostCitation, SuiteDoc};

/// The suite part of the run document, from [`ReportParts`].
pub fn part(p: &ReportParts) -> SuiteDoc {
    let (ab, runs) = sections(p);
    let s = p.suite;
    SuiteDoc {
        name: s.name.to_string(),
        version: s.version,
        title: s.title.to_string(),
        reproduces: citation(&s.post),
        notes: p.plan.notes.clone(),
        other_side: s.other_side.to_string(),
        collects_avc: p.plan.collect_avc,
        avc: p.avc.map(<[_]>::to_vec),
        baseline_run_id: p.baseline.map(|b| b.run_id),
        differences: p.baseline.map_or_else(Vec::new, |b| {
            crate::probe::probe_differences(&b.meta.system, &p.run.meta.system)
        }),
        ab,
        runs,
    }
}

/// A recipe's citation as the document carries it.
fn citation(c: &Citation) -> PostCitation {
    PostCitation {
        author: c.author.to_string(),
        date: c.date.to_string(),
        list: c.list.to_string(),
        subject: c.subject.to_string(),
        link: c.link.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{result, run};
    use crate::report::doc::RunDoc;
    use crate::report::markup::Kind;
    use crate::report::sections::{Parts, render};
    use crate::stats::decision::DecisionOpts;
    use crate::suites::{SuitePlan, access_2023};

    fn plan() -> SuitePlan {
        (access_2023::SUITE.plan)(&super::super::PlanCtx {
            quick: true,
            cpus: 1,
        })
    }

    #[test]
    fn the_report_names_the_post_skips_notes_and_the_other_side() {
        let mut r = run(
            3,
            "access-2023",
            "6.18",
            vec![result("access1", &[1000.0, 1010.0])],
        );
        r.meta.kind = "suite".into();
        r.meta.params = serde_json::json!({
            "suite": "access-2023",
            "skipped": [{"mechanism": "cred:fsuid", "reason": "needs root"}],
        });
        let plan = plan();
        let parts = ReportParts {
            suite: &access_2023::SUITE,
            plan: &plan,
            run: &r,
            baseline: None,
            avc: None,
            decision: DecisionOpts::default(),
        };
        let mut doc = RunDoc::of(r.clone(), "/tmp/x.db".into());
        doc.suite = Some(part(&parts));
        let s = doc.suite.as_ref().unwrap();
        assert_eq!((s.name.as_str(), s.version), ("access-2023", 1));
        assert_eq!(s.notes, plan.notes);
        assert!(s.ab.is_none() && s.baseline_run_id.is_none());
        let text = render(&doc, Parts::MEASURED, Kind::Plain);
        assert!(text.starts_with("access-2023 v1: "), "{text}");
        // The header cites the post (author, subject, list, date), not a file.
        let header: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        assert!(header[1].starts_with("  reproduces: Paul Moore"), "{text}");
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
        let link = access_2023::SUITE.post.link.unwrap();
        assert!(header.contains(&format!("  {link}").as_str()), "{text}");
        assert!(!text.contains(".txt"), "{text}");
        assert!(text.contains("measured on linux 6.18"), "{text}");
        assert!(text.contains("skipped: cred:fsuid: needs root"), "{text}");
        assert!(text.contains("other side: "), "{text}");
        assert!(!text.contains("A/B:"), "{text}");
        assert!(text.lines().all(|l| l.len() <= 120), "{text}");
    }

    #[test]
    fn a_baseline_run_is_named_with_how_its_machine_differs() {
        let plan = plan();
        let before = run(1, "before", "6.1", vec![result("access1", &[1000.0; 5])]);
        let after = run(2, "after", "6.2", vec![result("access1", &[900.0; 5])]);
        let s = part(&ReportParts {
            suite: &access_2023::SUITE,
            plan: &plan,
            run: &after,
            baseline: Some(&before),
            avc: None,
            decision: DecisionOpts::default(),
        });
        assert_eq!(s.baseline_run_id, Some(1));
        assert!(
            s.differences.iter().any(|d| d.contains("6.1")),
            "{:?}",
            s.differences
        );
        assert_eq!(s.runs.report.columns, ["before (run 1)", "after (run 2)"]);
    }
}
