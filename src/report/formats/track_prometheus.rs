//! A track in Prometheus's text format, for the node exporter's textfile
//! collector (`secperf track --prometheus FILE` rewrites the file after
//! every test): the latest test's change and level, the tests and alarms
//! so far, and the latest alarm. Ratios, not percent, and seconds, as
//! Prometheus's conventions ask; every series is labelled with the track,
//! its workload and its branch.

use std::fmt::Write;

use crate::model::track::{Direction, Outcome, TrackRecord};

/// A label value as the text format escapes it.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The track's metrics.
pub fn render(t: &TrackRecord) -> String {
    let q = &t.question;
    let base = format!(
        "track=\"{}\",workload=\"{}\",branch=\"{}\"",
        label(&t.id),
        label(&q.workload),
        label(&q.branch)
    );
    let mut out = String::new();
    let gauge = |out: &mut String, name: &str, help: &str| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
    };
    gauge(
        &mut out,
        "secperf_track_tests",
        "Tests of the track that ran to a verdict (revisions that did not build or boot are not \
         tests).",
    );
    let _ = writeln!(out, "secperf_track_tests{{{base}}} {}", t.stream.tests);
    gauge(
        &mut out,
        "secperf_track_alarms",
        "Alarms of the track, by direction (slower|faster); its false discovery rate is bounded \
         by alpha under e-LOND.",
    );
    for d in [Direction::Slower, Direction::Faster] {
        let _ = writeln!(
            out,
            "secperf_track_alarms{{{base},direction=\"{}\"}} {}",
            d.word(),
            t.alarms().filter(|p| p.alarm() == Some(d)).count()
        );
    }
    gauge(
        &mut out,
        "secperf_track_alpha",
        "The track's false discovery rate over the whole stream.",
    );
    let _ = writeln!(out, "secperf_track_alpha{{{base}}} {}", q.alpha);
    gauge(
        &mut out,
        "secperf_track_next_level",
        "The level the next test will be decided at (e-LOND).",
    );
    let _ = writeln!(
        out,
        "secperf_track_next_level{{{base}}} {}",
        t.stream.next_level()
    );
    let latest = t.points.iter().rev().find(|p| p.measured());
    if let Some(p) = latest
        && let Outcome::Measured {
            estimate,
            ci_low,
            ci_high,
            ..
        } = &p.outcome
    {
        let commit = format!(
            "{base},commit=\"{}\",subject=\"{}\"",
            label(p.revision.abbrev()),
            label(&p.revision.subject)
        );
        gauge(
            &mut out,
            "secperf_track_latest_change_ratio",
            "The latest test's change against the revision tested before it, as a ratio \
             (bound=estimate|low|high: its interval at its level).",
        );
        for (bound, v) in [("estimate", estimate), ("low", ci_low), ("high", ci_high)] {
            let _ = writeln!(
                out,
                "secperf_track_latest_change_ratio{{{commit},bound=\"{bound}\"}} {}",
                v / 100.0
            );
        }
        gauge(
            &mut out,
            "secperf_track_latest_test_timestamp_seconds",
            "When the latest test ended, seconds since the epoch.",
        );
        let _ = writeln!(
            out,
            "secperf_track_latest_test_timestamp_seconds{{{commit}}} {}",
            p.tested_at.timestamp()
        );
    }
    if let Some(p) = t.alarms().last() {
        gauge(
            &mut out,
            "secperf_track_latest_alarm_timestamp_seconds",
            "When the latest alarm was raised, seconds since the epoch, with its commit and \
             direction (culprit: the commit it came with, when named).",
        );
        let _ = writeln!(
            out,
            "secperf_track_latest_alarm_timestamp_seconds{{{base},commit=\"{}\",direction=\"{}\",\
             culprit=\"{}\"}} {}",
            label(p.revision.abbrev()),
            p.alarm().map_or("", Direction::word),
            p.culprit
                .as_ref()
                .map_or(String::new(), |c| label(c.abbrev())),
            p.tested_at.timestamp()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_track_is_the_text_format_with_ratios() {
        let t = crate::report::sections::track::tests::record();
        let out = render(&t);
        assert!(out.contains("# TYPE secperf_track_tests gauge"), "{out}");
        assert!(
            out.contains(
                "secperf_track_tests{track=\"abcd\",workload=\"getppid\",branch=\"master\"} 3"
            ),
            "{out}"
        );
        assert!(out.contains("direction=\"slower\"} 1"), "{out}");
        assert!(out.contains("direction=\"faster\"} 0"), "{out}");
        assert!(out.contains("bound=\"estimate\"} 0.4\n"), "{out}");
        assert!(out.contains("culprit=\"3bbbbbbbbbbb\""), "{out}");
        // Every sample line is NAME{LABELS} VALUE.
        for l in out.lines().filter(|l| !l.starts_with('#')) {
            let (_, v) = l.rsplit_once(' ').unwrap();
            assert!(v.parse::<f64>().is_ok(), "{l}");
        }
    }
}
