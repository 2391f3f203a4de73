//! A track (`secperf track`, `results show --track`) as people read it:
//! where it stands and what its false alarm bound means, one row per
//! tested revision in branch order (its change against the revision
//! tested before it, with the interval at its e-LOND level, the alarm and
//! the commit named), and, per alarm, an email in the kernel test robot's
//! form. Written once through `report::markup`, so every format says the
//! same.

use super::revisions;
use crate::model::track::{Direction, Outcome, Point, TrackRecord};
use crate::report::doc::RunDoc;
use crate::report::markup::{Align, Cell, Column, Kind, Markup, Raw, Table, Tone, writer};

/// One tested revision in a line: what `track` prints as it tests and in
/// its summary.
pub fn point_line(p: &Point) -> String {
    match &p.outcome {
        Outcome::Measured {
            estimate,
            ci_low,
            ci_high,
            pairs,
            run_id,
            alarm,
        } => format!(
            "{} against {}: {estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}] at level {:.2e} in \
             {pairs} pairs (run {}){}",
            p.revision.short(),
            p.baseline.abbrev(),
            p.level.unwrap_or(f64::NAN),
            run_id.map_or("?".into(), |r| r.to_string()),
            match alarm {
                Some(d) => format!(
                    ": ALARM, {}{}",
                    d.word(),
                    match (&p.culprit, &p.culprit_note) {
                        (Some(c), _) => format!("; the commit: {}", c.short()),
                        (None, Some(n)) => format!("; {n}"),
                        (None, None) => String::new(),
                    }
                ),
                None => String::new(),
            }
        ),
        Outcome::Failed { why } => format!("{}: skipped ({why})", p.revision.short()),
    }
}

/// The tone of an alarm: slower is the worse side.
fn tone(alarm: Option<Direction>) -> Tone {
    match alarm {
        Some(Direction::Slower) => Tone::Worse,
        Some(Direction::Faster) => Tone::Better,
        None => Tone::Plain,
    }
}

/// The first line: what the track follows and where it stands.
pub fn headline(t: &TrackRecord) -> String {
    let q = &t.question;
    format!(
        "Track {} of {} on {} of {}, from {}: {} revision(s) tested, {} alarm(s).",
        t.id,
        q.workload,
        q.branch,
        q.source,
        q.from.short(),
        t.points.len(),
        t.alarms().count()
    )
}

/// What the alarms' error rate means here.
pub fn error_rate(t: &TrackRecord) -> String {
    let q = &t.question;
    format!(
        "Alarms are raised under e-LOND: the expected share of false alarms among the alarms \
         is at most {} at every point of the stream, however long it runs (docs/methodology.md \
         8.5). Each test is at level {} x gamma(t) x (alarms before it + 1) and alarms when its \
         interval at that level lies wholly beyond {:.1}% either way (half the threshold, {}%). \
         The next test's level: {:.2e}.",
        q.alpha,
        q.alpha,
        q.threshold_pct / 2.0,
        q.threshold_pct,
        t.stream.next_level()
    )
}

/// One row per tested revision, in branch order.
pub fn points_table(t: &TrackRecord) -> Table {
    let mut table = Table::new(
        "track_points",
        [
            revisions::revision_columns()
                .into_iter()
                .collect::<Vec<_>>(),
            vec![
                Column::new("against", Align::Left, "baseline"),
                revisions::change_column("change [CI]", "change_pct"),
                Column::new("level", Align::Right, "level"),
                Column::new("pairs", Align::Right, "pairs"),
                Column::new("alarm", Align::Left, "alarm"),
                Column::new("run", Align::Right, "run_id"),
            ],
        ]
        .concat(),
    );
    for p in &t.points {
        let (change, pairs, alarm, run) = match &p.outcome {
            Outcome::Measured {
                estimate,
                ci_low,
                ci_high,
                pairs,
                run_id,
                alarm,
            } => {
                let [change, pairs, run] = revisions::measured_cells(
                    *estimate,
                    *ci_low,
                    *ci_high,
                    *pairs,
                    *run_id,
                    tone(*alarm),
                );
                let alarm = Cell::text(match (alarm, &p.culprit) {
                    (Some(d), Some(_)) => format!("{} (this commit)", d.word()),
                    (Some(d), None) => format!("{} (one of the commits since)", d.word()),
                    (None, _) => String::new(),
                })
                .tone(tone(*alarm));
                (change, pairs, alarm, run)
            }
            Outcome::Failed { why } => (
                revisions::failed_cell(why),
                revisions::empty(),
                Cell::text("skipped"),
                revisions::empty(),
            ),
        };
        let [position, commit, subject] = revisions::revision_cells(p.position, &p.revision);
        table.row(vec![
            position,
            commit,
            subject,
            Cell::text(p.baseline.abbrev()),
            change,
            p.level.map_or(Cell::value("", Raw::Empty), |l| {
                Cell::value(format!("{l:.2e}"), l)
            }),
            pairs,
            alarm,
            run,
        ]);
    }
    table.footer(format!(
        "#: first-parent commits after {} on {}. change: % of the revision tested before it \
         (against), in {}, with its interval at the test's level. level: the test's e-LOND \
         level. run: the stored run (`secperf results show RUN`).",
        t.question.from.abbrev(),
        t.question.branch,
        t.question.metric.per_op_short()
    ));
    table
}

/// The whole track through `m`.
pub fn write(t: &TrackRecord, m: &mut dyn Markup) {
    m.text(&headline(t));
    m.text(&error_rate(t));
    if t.points.is_empty() {
        m.text("Nothing tested yet: the branch has no commit after --from, or none is due.");
    } else {
        m.table(&points_table(t));
    }
    let notes: Vec<String> = t
        .alarms()
        .filter_map(|p| {
            p.culprit_note
                .as_ref()
                .map(|n| format!("{}: {n}", p.revision.abbrev()))
        })
        .collect();
    if !notes.is_empty() {
        m.heading("Alarms over several commits");
        m.list(&notes);
    }
    m.command(
        "Command",
        &format!("secperf {}", shell_words::join(&t.command)),
    );
}

/// The track in a format.
pub fn render(t: &TrackRecord, kind: Kind) -> String {
    let mut m = writer(kind);
    write(t, m.as_mut());
    m.finish()
}

/// One arm's relative spread over its pairs: the sample standard
/// deviation of its values per pair over their mean, %; None for fewer
/// than two pairs.
fn stddev_pct(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean != 0.0).then(|| var.sqrt() / mean.abs() * 100.0)
}

/// An alarm as the kernel test robot reports one: a subject naming the
/// change, the workload, the metric and the commit; both revisions'
/// figures with their spread and the change with its interval; the
/// parameters, the machine, the builds; and how to reproduce it. `doc` is
/// the test's stored run, for the figures and the builds (without it,
/// the change alone is given).
pub fn alarm_email(t: &TrackRecord, p: &Point, doc: Option<&RunDoc>) -> String {
    let q = &t.question;
    let Outcome::Measured {
        estimate,
        ci_low,
        ci_high,
        pairs,
        run_id,
        alarm: Some(direction),
    } = &p.outcome
    else {
        return String::new();
    };
    let kind = match direction {
        Direction::Slower => "regression",
        Direction::Faster => "improvement",
    };
    let metric = match q.metric {
        crate::model::Metric::Time => "ns_per_op",
        crate::model::Metric::Instructions => "instructions_per_op",
    };
    let mut out = format!(
        "Subject: [secperf] {estimate:+.1}% {kind} of {}.{metric} on commit {} (\"{}\")\n\n",
        q.workload,
        p.revision.abbrev(),
        p.revision.subject
    );
    out.push_str(&format!(
        "secperf track {} found a {estimate:+.1}% {kind} of {}.{metric} on:\n\n\
         commit: {} (\"{}\")\n\
         against: {} (\"{}\"), the revision tested before it\n\
         {} {}\n\n",
        t.id,
        q.workload,
        p.revision.commit,
        p.revision.subject,
        p.baseline.commit,
        p.baseline.subject,
        q.source,
        q.branch
    ));
    match (&p.culprit, &p.culprit_note) {
        (Some(c), _) => out.push_str(&format!(
            "The change came with this one commit: {}.\n\n",
            c.short()
        )),
        (None, Some(note)) => out.push_str(&format!("{note}.\n\n")),
        (None, None) => {}
    }
    out.push_str(&format!(
        "in testcase: {}\nwith following parameters:\n\n\
         \tmechanisms: {}\n\tappend: {}\n\tconfig: {}\n\tmetric: {}\n\tthreshold: {}%\n\t\
         alpha: {} (false discovery rate over the track, e-LOND)\n\n",
        q.workload,
        if q.mechanisms.is_empty() {
            "none".to_string()
        } else {
            q.mechanisms.join(" ")
        },
        if q.append.is_empty() { "-" } else { &q.append },
        q.config.as_deref().unwrap_or("secperf's own"),
        q.metric.per_op(),
        q.threshold_pct,
        q.alpha
    ));
    let comparison = doc.and_then(|d| d.comparisons.first());
    if let (Some(d), Some(c)) = (doc, comparison) {
        let facts = d.machine();
        out.push_str(&format!(
            "on test machine: {}: {}, {} CPUs{}\n\n",
            d.meta.host,
            facts.cpu_model.as_deref().unwrap_or("?"),
            facts.cpus.map_or("?".into(), |n| n.to_string()),
            match crate::report::sections::guest::emulated_warning(d) {
                Some(w) => format!("\n({w})"),
                None => String::new(),
            }
        ));
        let base: Vec<f64> = c.pair_data.iter().map(|x| x.baseline_per_op).collect();
        let treat: Vec<f64> = c.pair_data.iter().map(|x| x.treatment_per_op).collect();
        let spread =
            |v: &[f64]| stddev_pct(v).map_or("      ".to_string(), |s| format!("± {s:>3.0}%"));
        out.push_str(&format!(
            "{:>16}  {:>16}\n{:->16}  {:->16}\n{:>16}  {:>16}\n",
            p.baseline.abbrev(),
            p.revision.abbrev(),
            "",
            "",
            "%stddev  %change",
            "%stddev"
        ));
        out.push_str(&format!(
            "{:>10.1} {}  {:>+7.1}%  {:>10.1} {}  {}.{metric}\n",
            c.baseline_per_op,
            spread(&base),
            estimate,
            c.treatment_per_op,
            spread(&treat),
            q.workload
        ));
        out.push_str(&format!(
            "\nchange: {estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}], its interval at the \
             test's level {:.2e}, from {pairs} pairs of boots (figures: medians over the \
             pairs, {})\n\n",
            p.level.unwrap_or(f64::NAN),
            q.metric.per_op()
        ));
        for arm in &d.boot_arms {
            if let Some(b) = &arm.build {
                out.push_str(&format!(
                    "kernel {}: config sha256 {}, compiler {}\n",
                    arm.name,
                    &b.config_sha256[..b.config_sha256.len().min(12)],
                    b.toolchain
                ));
            }
        }
        out.push('\n');
    } else {
        out.push_str(&format!(
            "change: {estimate:+.1}% [{ci_low:+.1}, {ci_high:+.1}] at level {:.2e}, {pairs} \
             pairs (the run's figures could not be read)\n\n",
            p.level.unwrap_or(f64::NAN)
        ));
    }
    out.push_str("Reproduce:\n\n");
    if let Some(d) = doc {
        out.push_str(&format!("\t{}\n", d.meta.command));
    }
    if let Some(r) = run_id {
        out.push_str(&format!("\tsecperf results show {r}\n"));
    }
    out.push_str(&format!("\t{}\n", track_command(t)));
    out
}

/// The `secperf track` command line of `t`'s question (the same track:
/// run again, it goes on).
pub fn track_command(t: &TrackRecord) -> String {
    let q = &t.question;
    let mut words: Vec<String> = vec![
        "secperf".into(),
        "track".into(),
        q.source.clone(),
        "--branch".into(),
        q.branch.clone(),
        "--from".into(),
        q.from.abbrev().to_string(),
    ];
    for m in &q.mechanisms {
        words.extend(["-m".into(), m.clone()]);
    }
    if !q.append.is_empty() {
        words.extend(["--append".into(), q.append.clone()]);
    }
    if let Some(c) = &q.config {
        words.extend(["--config".into(), c.clone()]);
    }
    words.extend([
        "--metric".into(),
        q.metric.to_string(),
        "--threshold".into(),
        q.threshold_pct.to_string(),
        "--alpha".into(),
        q.alpha.to_string(),
        "--batch".into(),
        q.batch.to_string(),
        "--once".into(),
    ]);
    if crate::workloads::find(&q.workload).is_some() {
        words.extend(["-w".to_string(), q.workload.clone()]);
        shell_words::join(&words)
    } else {
        // A command: its words were joined when the track was made.
        format!("{} -- {}", shell_words::join(&words), q.workload)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::bisect::Revision;
    use crate::model::track::Question;
    use crate::stats::online::ELond;

    fn rev(i: usize) -> Revision {
        Revision {
            commit: format!("{i}{}", "b".repeat(39)),
            subject: format!("commit {i}"),
        }
    }

    pub fn record() -> TrackRecord {
        let point = |i: usize, est: f64, alarm: Option<Direction>| Point {
            revision: rev(i),
            position: i,
            baseline: rev(i - 1),
            level: Some(0.0027),
            outcome: Outcome::Measured {
                estimate: est,
                ci_low: est - 2.0,
                ci_high: est + 2.0,
                pairs: 9,
                run_id: Some(i as i64),
                alarm,
            },
            tested_at: chrono::Utc::now(),
            seconds: 60.0,
            culprit: alarm.map(|_| rev(i)),
            culprit_note: None,
            bisection: None,
        };
        let mut failed = point(2, 0.0, None);
        failed.outcome = Outcome::Failed {
            why: "the build of r2 failed".into(),
        };
        failed.level = None;
        TrackRecord {
            id: "abcd".into(),
            created_at: chrono::Utc::now(),
            updated_at: chrono::Utc::now(),
            command: vec!["track".into(), "/src/linux".into()],
            question: Question {
                source: "/src/linux".into(),
                branch: "master".into(),
                from: rev(0),
                workload: "getppid".into(),
                mechanisms: vec![],
                append: "audit=1".into(),
                config: None,
                metric: crate::model::Metric::Time,
                threshold_pct: 5.0,
                alpha: 0.05,
                batch: 1,
            },
            stream: ELond {
                alpha: 0.05,
                tests: 3,
                alarms: 1,
            },
            points: vec![
                point(1, 0.3, None),
                failed,
                point(3, 40.0, Some(Direction::Slower)),
            ],
        }
    }

    #[test]
    fn every_tested_revision_is_a_row_and_the_alarm_is_marked() {
        let t = record();
        let text = render(&t, Kind::Terminal { color: false });
        assert!(text.contains("3 revision(s) tested, 1 alarm(s)"), "{text}");
        assert!(text.contains("slower (this commit)"), "{text}");
        assert!(text.contains("skipped"), "{text}");
        assert!(text.contains("e-LOND"), "{text}");
        let csv = render(&t, Kind::Csv);
        assert!(csv.contains("position"), "{csv}");
    }

    #[test]
    fn an_alarm_reads_as_the_kernel_test_robots_email() {
        let t = record();
        let mail = alarm_email(&t, &t.points[2], None);
        assert!(
            mail.starts_with(
                "Subject: [secperf] +40.0% regression of getppid.ns_per_op on commit 3bbbbbbbbbbb \
                 (\"commit 3\")"
            ),
            "{mail}"
        );
        assert!(
            mail.contains("The change came with this one commit"),
            "{mail}"
        );
        assert!(mail.contains("append: audit=1"), "{mail}");
        assert!(mail.contains("Reproduce:"), "{mail}");
        assert!(mail.contains("secperf results show 3"), "{mail}");
        assert!(
            mail.contains(
                "secperf track /src/linux --branch master --from 0bbbbbbbbbbb --append 'audit=1' \
                 --metric time --threshold 5 --alpha 0.05 --batch 1 --once -w getppid"
            ),
            "{mail}"
        );
        // No alarm, no email.
        assert!(alarm_email(&t, &t.points[0], None).is_empty());
        assert_eq!(stddev_pct(&[1.0, 3.0]).map(|s| s.round()), Some(71.0));
        assert_eq!(stddev_pct(&[1.0]), None);
    }
}
