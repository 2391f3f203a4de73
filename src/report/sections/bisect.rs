//! A bisection (`secperf bisect`, `results show --bisection`) as people
//! read it: the verdict and its error rate, one row per tested revision
//! in commit order (the slowdown against `--good` with its interval, the
//! class, the pairs, the run), and the `git bisect log` to replay. Written
//! once through `report::markup`, so every format says the same; the HTML
//! page (`report::html::bisect`) takes the same table.

use super::revisions;
use crate::model::bisect::{BisectionRecord, Class, Status, Tested};
use crate::report::markup::{Align, Cell, Column, Kind, Markup, Raw, Table, Tone, writer};

/// The tone of a class: bad is the slower side.
fn tone(class: Class) -> Tone {
    match class {
        Class::Bad => Tone::Worse,
        Class::Good => Tone::Better,
        Class::Undecided | Class::Skip => Tone::Plain,
    }
}

/// The first line: where the bisection stands.
pub fn headline(b: &BisectionRecord) -> String {
    let o = &b.outcome;
    format!(
        "Bisection {} of {} revision(s) after {} on {} ({}): {}.",
        b.id,
        o.revisions.len(),
        o.good.short(),
        b.workload,
        b.status.word(),
        o.verdict
    )
}

/// What the error rate means here.
pub fn error_rate(b: &BisectionRecord) -> String {
    let o = &b.outcome;
    format!(
        "Each decision at alpha {:.4} ({} decisions: the endpoint check, the steps, and spare \
         ones for skips). The named commit is wrong with probability at most {:.3}, if a \
         revision's slowdown is 0 before the first bad commit and at least the threshold, \
         {}%, from it on (docs/methodology.md 8.2). A revision is bad when its interval lies \
         wholly above {:.1}%, good when wholly below.",
        o.step_alpha,
        o.decisions,
        o.step_alpha * o.decisions as f64,
        b.threshold_pct,
        b.threshold_pct / 2.0
    )
}

/// One row per tested revision, in commit order (`--good` first, as the
/// reference), with the order each was measured in.
pub fn steps_table(b: &BisectionRecord) -> Table {
    let o = &b.outcome;
    let mut t = Table::new(
        "bisect_steps",
        [
            revisions::revision_columns()
                .into_iter()
                .collect::<Vec<_>>(),
            vec![
                Column::new("step", Align::Right, "step"),
                Column::new("class", Align::Left, "class"),
                revisions::change_column("slowdown vs good [CI]", "slowdown_pct"),
                Column::new("pairs", Align::Right, "pairs"),
                Column::new("run", Align::Right, "run_id"),
                Column::new("seconds", Align::Right, "seconds"),
            ],
        ]
        .concat(),
    );
    t.row(vec![
        Cell::value("0", 0u32),
        Cell::text(o.good.abbrev()),
        Cell::text(o.good.subject.clone()),
        Cell::value("", Raw::Empty),
        Cell::text("good (--good)"),
        Cell::values("reference", vec![Raw::Empty, Raw::Empty, Raw::Empty]),
        Cell::value("", Raw::Empty),
        Cell::value("", Raw::Empty),
        Cell::value("", Raw::Empty),
    ]);
    let mut tested: Vec<(usize, usize)> = o
        .steps
        .iter()
        .enumerate()
        .map(|(order, s)| (s.index, order))
        .collect();
    tested.sort();
    for (index, order) in tested {
        let s = &o.steps[order];
        let [interval, pairs, run] = match &s.tested {
            Tested::Measured {
                estimate,
                ci_low,
                ci_high,
                pairs,
                run_id,
            } => revisions::measured_cells(
                *estimate,
                *ci_low,
                *ci_high,
                *pairs,
                *run_id,
                tone(s.class),
            ),
            Tested::Failed(why) => [
                revisions::failed_cell(why),
                revisions::empty(),
                revisions::empty(),
            ],
        };
        let endpoint = index + 1 == o.revisions.len();
        let [position, commit, subject] = revisions::revision_cells(index + 1, &s.revision);
        t.row(vec![
            position,
            commit,
            subject,
            Cell::value(
                if endpoint && order == 0 {
                    "endpoint".to_string()
                } else {
                    order.to_string()
                },
                order as u64,
            ),
            Cell::text(format!(
                "{}{}",
                s.class.word(),
                if o.first_bad.as_ref() == Some(&s.revision) {
                    " (first bad)"
                } else {
                    ""
                }
            ))
            .tone(tone(s.class)),
            interval,
            pairs,
            run,
            Cell::value(format!("{:.0}", s.seconds), s.seconds),
        ]);
    }
    t.footer(format!(
        "#: position in commit order ({} is --bad). step: the order measured (endpoint: the \
         check that --bad is slower than --good). slowdown: % of --good's {}, with its \
         interval at the step's level. run: the stored run (`secperf results show RUN`). \
         seconds: building and booting the step.",
        o.revisions.len(),
        b.metric.per_op_short()
    ));
    t
}

/// The whole bisection through `m`.
pub fn write(b: &BisectionRecord, m: &mut dyn Markup) {
    m.text(&headline(b));
    m.text(&error_rate(b));
    write_steps(b, m);
}

/// All but the verdict and the error rate: the steps' table, the
/// candidates, the log and the command.
pub fn write_steps(b: &BisectionRecord, m: &mut dyn Markup) {
    if b.status == Status::InProgress {
        m.text(
            "It is in progress or was interrupted: the same `secperf bisect` command goes on \
             from the steps done.",
        );
    }
    m.table(&steps_table(b));
    let o = &b.outcome;
    if !o.candidates.is_empty() {
        m.heading("Candidates for the first bad commit");
        m.list(&o.candidates.iter().map(|c| c.short()).collect::<Vec<_>>());
    }
    m.verbatim(
        "git bisect log (`git bisect replay FILE` reads it)",
        &(o.log.join("\n") + "\n"),
    );
    m.command("Command", &format!("secperf {}", shell_words(&b.command)));
}

/// `words` quoted for a POSIX shell where needed.
fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The bisection in a format.
pub fn render(b: &BisectionRecord, kind: Kind) -> String {
    let mut m = writer(kind);
    write(b, m.as_mut());
    m.finish()
}

/// As `secperf bisect` prints it when it ends (a terminal grid, no
/// colour when piped).
pub fn text(b: &BisectionRecord) -> String {
    render(
        b,
        Kind::Terminal {
            color: crate::report::markup::terminal::color_default(),
        },
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::bisect::{Outcome, Revision, Step};

    fn rev(i: usize) -> Revision {
        Revision {
            commit: format!("{i}{}", "a".repeat(39)),
            subject: format!("commit {i}"),
        }
    }

    /// A finished bisection of 8 revisions, the 6th the first bad one.
    pub fn record() -> BisectionRecord {
        let revisions: Vec<Revision> = (1..=8).map(rev).collect();
        let step = |index: usize, class: Class, est: f64| Step {
            index,
            revision: revisions[index].clone(),
            class,
            tested: Tested::Measured {
                estimate: est,
                ci_low: est - 10.0,
                ci_high: est + 12.0,
                pairs: 11,
                run_id: Some(40 + index as i64),
            },
            seconds: 150.0,
        };
        let steps = vec![
            step(7, Class::Bad, 101.1),
            step(3, Class::Good, -1.5),
            step(5, Class::Bad, 74.7),
            step(4, Class::Good, 1.8),
        ];
        let good = rev(0);
        BisectionRecord {
            id: "0123456789abcdef".into(),
            created_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            updated_at: chrono::DateTime::from_timestamp(1_800_001_000, 0).unwrap(),
            command: vec![
                "bisect".into(),
                "/src/linux".into(),
                "--append".into(),
                "audit=1 quiet".into(),
            ],
            source: "/src/linux".into(),
            workload: "getppid".into(),
            append: "audit=1".into(),
            mechanisms: vec![],
            threshold_pct: 50.0,
            alpha: 0.05,
            metric: crate::model::Metric::Time,
            status: Status::Finished,
            outcome: Outcome {
                log: vec![
                    "git bisect start".into(),
                    format!("git bisect good {}", good.commit),
                    format!("git bisect bad {}", revisions[7].commit),
                ],
                good,
                first_bad: Some(revisions[5].clone()),
                revisions,
                decisions: 6,
                step_alpha: 0.05 / 6.0,
                steps,
                candidates: vec![],
                verdict: format!("the first bad commit is {}", rev(6).short()),
            },
            attempts: vec![],
        }
    }

    #[test]
    fn rows_are_in_commit_order_with_the_order_measured() {
        let b = record();
        let t = steps_table(&b);
        let rows: Vec<&Vec<Cell>> = t.rows().collect();
        assert_eq!(rows.len(), 5, "good plus the 4 tested");
        let positions: Vec<&str> = rows.iter().map(|r| r[0].text.as_str()).collect();
        assert_eq!(positions, ["0", "4", "5", "6", "8"]);
        let steps: Vec<&str> = rows.iter().map(|r| r[3].text.as_str()).collect();
        assert_eq!(steps, ["", "1", "3", "2", "endpoint"]);
        assert_eq!(rows[3][4].text, "bad (first bad)");
        assert_eq!(rows[3][5].text, "+74.7% [+64.7, +86.7]");
        assert_eq!(rows[3][5].tone, Tone::Worse);
        assert_eq!(rows[1][7].text, "43", "the stored run of the step");
    }

    #[test]
    fn every_format_says_the_verdict_the_log_and_the_command() {
        let b = record();
        for kind in [Kind::Terminal { color: false }, Kind::Markdown, Kind::Email] {
            // Email wraps its paragraphs.
            let s = render(&b, kind)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                s.contains("the first bad commit is 6aaaaaaaaaaa (commit 6)"),
                "{s}"
            );
            assert!(
                s.contains(&format!("git bisect good 0{}", "a".repeat(39))),
                "{s}"
            );
            assert!(s.contains("at most 0.050"), "{s}");
            assert!(s.contains("'audit=1 quiet'"), "{s}");
        }
        let csv = render(&b, Kind::Csv);
        assert!(csv.contains("slowdown_pct"), "{csv}");
        assert!(csv.contains("74.7"), "{csv}");
    }

    #[test]
    fn an_interrupted_bisection_says_how_to_go_on() {
        let mut b = record();
        b.status = Status::InProgress;
        assert!(render(&b, Kind::Markdown).contains("goes on from the steps done"));
    }
}
