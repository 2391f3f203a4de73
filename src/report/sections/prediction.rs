//! A prediction (`secperf predict`) written against the markup interface:
//! the headline (overhead with its interval, over what), the per-syscall
//! table (the dearest [`SHOWN`] for people, every one as CSV data), the
//! model, the cache-cold term, the probes it rests on and the notes.
//!
//! Its outputs say different things, not only in other markup: the
//! terminal's probe lines carry their baseline and date, markdown's name
//! the spec and workload as code; so each output ([`text`], [`markdown`],
//! [`csv`]) is one function here over the one table ([`syscalls`]).
//! Prometheus's text format is not a table and stays with the predictor
//! (`predict::prometheus`); the JSON is the serde form.

use crate::model::prediction::Prediction;
use crate::report::markup::{self, Align, Cell, Column, Kind, Markup, Raw, Table};
use crate::report::number::{duration, signed_pct};

/// Syscalls shown in the text and markdown tables (the dearest first;
/// `--json`, CSV and prometheus have every one).
pub const SHOWN: usize = 15;

/// The headline: predicted overhead with its interval, over what.
pub fn headline(p: &Prediction) -> String {
    format!(
        "predicted overhead of {} on {}: {} [{}, {}] of its CPU time ({} added to {} of CPU over \
         {}, {} syscalls)",
        p.mechanism,
        p.target,
        signed_pct(p.overhead_pct),
        signed_pct(p.overhead_low_pct),
        signed_pct(p.overhead_high_pct),
        duration(p.added_ns),
        duration(p.cpu_ns as f64),
        duration(p.window_s * 1e9),
        p.syscalls
    )
}

/// The cache-cold term in one sentence, when the model has it.
pub fn cold_line(p: &Prediction) -> Option<String> {
    let c = p.cold.as_ref()?;
    Some(format!(
        "cold caches: {:+.1} ns [{:+.1}, {:+.1}] on every call, what the treatment costs getppid \
         with {} page fault(s) before each call less the hot loop's (a probe call every {:.1} us; \
         the target spent {:.1} us of CPU per call)",
        c.ns_per_call,
        c.low_ns,
        c.high_ns,
        c.fault_pages,
        c.probe_ns_per_op / 1000.0,
        c.cpu_ns_per_call / 1000.0
    ))
}

/// A syscall's share of the time added: "32%", "-" when nothing is added.
fn share(part: f64, whole: f64) -> String {
    if whole.abs() > 0.0 {
        format!("{:.0}%", part / whole * 100.0)
    } else {
        "-".into()
    }
}

/// The output a table is for: the terminal's table aligns every column
/// left, markdown's right-aligns the numbers and sets names as code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Text,
    Markdown,
    Csv,
}

/// The per-syscall table, dearest first: the first [`SHOWN`] rows for
/// people, every one for the data formats (with the mechanism, target,
/// syscall number and whether it is denied, which people do not see).
pub fn syscalls(p: &Prediction, out: Output) -> Table {
    let number = match out {
        Output::Markdown => Align::Right,
        Output::Text | Output::Csv => Align::Left,
    };
    let name = |n: &str| match out {
        Output::Markdown => format!("`{n}`"),
        Output::Text | Output::Csv => n.to_string(),
    };
    let mut t = Table::new(
        "prediction",
        vec![
            Column::data("mechanism"),
            Column::data("target"),
            Column::new("syscall", Align::Left, "syscall"),
            Column::data("nr"),
            Column::new("calls", number, "calls"),
            Column::new("class", Align::Left, "class"),
            Column::new("ns/call", number, "ns_per_call"),
            Column::new("added", number, "added_ns"),
            Column::data("denied"),
            Column::shown("share", number),
        ],
    );
    for (i, l) in p.per_syscall.iter().enumerate() {
        // The CSV keeps the figures' own precision, as text: 3 decimals
        // of ns per call, 1 of ns added.
        let cells = vec![
            Cell::text(p.mechanism.as_str()),
            Cell::text(p.target.as_str()),
            Cell::value(name(&l.name), l.name.as_str()),
            Cell::value(l.nr.to_string(), l.nr),
            Cell::value(l.count.to_string(), l.count),
            Cell::text(l.class.as_str()),
            Cell::value(
                format!("{:.1}", l.ns_per_call),
                Raw::Text(format!("{:.3}", l.ns_per_call)),
            ),
            Cell::value(duration(l.cost_ns), Raw::Text(format!("{:.1}", l.cost_ns))),
            Cell::value(l.denied.to_string(), l.denied),
            Cell::value(share(l.cost_ns, p.added_ns), Raw::Empty),
        ];
        if i < SHOWN {
            t.row(cells);
        } else {
            t.data_row(cells);
        }
    }
    t
}

/// The terminal's text: the headline, the table (saying how many more
/// syscalls `--json` lists), then the model, the cold term, the probes
/// with their baselines and dates, and the notes, one under the other.
pub fn write_text(p: &Prediction, m: &mut dyn Markup) {
    m.lines(&[headline(p)]);
    let mut t = syscalls(p, Output::Text);
    if p.per_syscall.len() > SHOWN {
        t.footer(format!(
            "  ... and {} more syscalls (--json lists every one)",
            p.per_syscall.len() - SHOWN
        ));
    }
    m.table(&t);
    let mut lines = vec![format!("model: {}", p.model)];
    lines.extend(cold_line(p));
    lines.push("from these A/B measurements on this machine:".into());
    lines.extend(p.probes.iter().map(|f| {
        format!(
            "  {} on {}: {:+.1} ns/op [{:+.1}, {:+.1}] over {:.1} ns/op, {} pairs (run {}, {})",
            f.spec,
            f.workload,
            f.delta_ns_per_op,
            f.delta_low_ns,
            f.delta_high_ns,
            f.baseline_ns_per_op,
            f.pairs,
            f.run_id,
            f.measured_at.format("%Y-%m-%d %H:%M UTC")
        )
    }));
    lines.extend(p.notes.iter().map(|n| format!("note: {n}")));
    m.lines(&lines);
}

/// Markdown for an issue: the headline in bold, the table with the
/// syscalls as code, the model and the cold term as paragraphs, the
/// probes and notes as one list.
pub fn write_markdown(p: &Prediction, m: &mut dyn Markup) {
    m.text(&format!("**{}**", headline(p)));
    m.table(&syscalls(p, Output::Markdown));
    m.text(&format!("Model: {}", p.model));
    if let Some(line) = cold_line(p) {
        m.text(&line);
    }
    let mut items: Vec<String> = p
        .probes
        .iter()
        .map(|f| {
            format!(
                "`{}` on `{}`: {:+.1} ns/op [{:+.1}, {:+.1}], {} pairs (run {})",
                f.spec,
                f.workload,
                f.delta_ns_per_op,
                f.delta_low_ns,
                f.delta_high_ns,
                f.pairs,
                f.run_id
            )
        })
        .collect();
    items.extend(p.notes.iter().map(|n| format!("Note: {n}")));
    // Even empty: the list's block ends the text with a blank line, as
    // the markdown always has.
    m.list(&items);
}

/// The terminal's text, as a pipe or terminal shows it (no colour: a
/// prediction has no verdicts).
pub fn text(p: &Prediction) -> String {
    let mut m = markup::writer(Kind::Terminal { color: false });
    write_text(p, m.as_mut());
    m.finish()
}

/// Markdown, for an issue or a pull request.
pub fn markdown(p: &Prediction) -> String {
    let mut m = markup::markdown::Markdown::tight();
    write_markdown(p, &mut m);
    m.finish()
}

/// One CSV row per syscall, dearest first, after a header; the totals are
/// in the JSON and the other formats.
pub fn csv(p: &Prediction) -> String {
    let mut m = markup::writer(Kind::Csv);
    m.table(&syscalls(p, Output::Csv));
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::prediction::testing::{bare, full, one_syscall};

    #[test]
    fn csv_has_a_header_and_a_row_per_syscall() {
        let out = csv(&one_syscall());
        let mut r = ::csv::Reader::from_reader(out.as_bytes());
        assert_eq!(r.headers().unwrap().get(2), Some("syscall"));
        let rows: Vec<::csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(&rows[0][1], "tar \"cf\" x");
        assert_eq!(&rows[0][4], "3000");
        assert_eq!(&rows[0][7], "4000000.0");
    }

    #[test]
    fn the_cold_term_is_named_in_every_format_that_has_room() {
        let mut p = one_syscall();
        assert!(cold_line(&p).is_none());
        p.cold = Some(crate::model::prediction::ColdFigure {
            fault_pages: 2,
            cpu_ns_per_call: 2500.0,
            probe_ns_per_op: 3100.0,
            ns_per_call: 95.0,
            low_ns: 60.0,
            high_ns: 130.0,
        });
        for out in [text(&p), markdown(&p)] {
            assert!(
                out.contains("cold caches: +95.0 ns [+60.0, +130.0] on every call"),
                "{out}"
            );
            assert!(
                out.contains("2 page fault(s)") && out.contains("2.5 us of CPU per call"),
                "{out}"
            );
        }
    }

    #[test]
    fn text_and_markdown_lead_with_the_interval_and_show_the_probes() {
        for out in [text(&one_syscall()), markdown(&one_syscall())] {
            assert!(out.contains("+1.00% [+0.50%, +1.50%]"), "{out}");
            assert!(out.contains("seccomp:allow"), "{out}");
            assert!(out.contains("newfstatat"), "{out}");
        }
    }

    /// Every output of two fixed predictions, byte for byte as the
    /// renderers wrote them before they went through `report::markup`.
    #[test]
    fn the_full_prediction_in_every_format() {
        let p = full();
        assert_eq!(text(&p), FULL_TEXT);
        assert_eq!(markdown(&p), FULL_MD);
        assert_eq!(csv(&p), FULL_CSV);
        assert_eq!(headline(&p), FULL_HEADLINE);
    }

    /// A terminal as wide as a pipe's table (or wider) is shown the same
    /// text; a narrower one gets the table fitted as every table is.
    #[test]
    fn a_wide_terminal_gets_what_a_pipe_gets() {
        for width in [140, 200] {
            let mut m = markup::writer(Kind::TerminalAt {
                color: false,
                width,
            });
            write_text(&full(), m.as_mut());
            assert_eq!(m.finish(), FULL_TEXT, "{width}");
        }
    }

    #[test]
    fn the_bare_prediction_in_every_format() {
        let p = bare();
        assert_eq!(text(&p), BARE_TEXT);
        assert_eq!(markdown(&p), BARE_MD);
        assert_eq!(csv(&p), BARE_CSV);
    }

    const FULL_TEXT: &str = r##"predicted overhead of seccomp:profile=/p/d.json on tar "cf" x, y: +0.88% [-0.12%, +1.50%] of its CPU time (12.35 ms added to 1.40 s of CPU over 2.50 s, 153119 syscalls)

┌─────────┬───────┬──────────────┬─────────┬──────────┬───────┐
│ syscall ┆ calls ┆ class        ┆ ns/call ┆ added    ┆ share │
╞═════════╪═══════╪══════════════╪═════════╪══════════╪═══════╡
│ call_0  ┆ 17007 ┆ cached allow ┆ 1333.3  ┆ 4.00 ms  ┆ 32%   │
│ call_1  ┆ 16007 ┆ filter walk  ┆ 666.7   ┆ 2.00 ms  ┆ 16%   │
│ call_2  ┆ 15007 ┆ filter walk  ┆ 444.4   ┆ 1.33 ms  ┆ 11%   │
│ call_3  ┆ 14007 ┆ cached allow ┆ 333.3   ┆ 1.00 ms  ┆ 8%    │
│ call_4  ┆ 13007 ┆ filter walk  ┆ 266.7   ┆ 800.0 us ┆ 6%    │
│ call_5  ┆ 12007 ┆ filter walk  ┆ 222.2   ┆ 666.7 us ┆ 5%    │
│ call_6  ┆ 11007 ┆ cached allow ┆ 190.5   ┆ 571.4 us ┆ 5%    │
│ call_7  ┆ 10007 ┆ filter walk  ┆ 166.7   ┆ 500.0 us ┆ 4%    │
│ call_8  ┆ 9007  ┆ filter walk  ┆ 148.1   ┆ 444.4 us ┆ 4%    │
│ call_9  ┆ 8007  ┆ cached allow ┆ 133.3   ┆ 400.0 us ┆ 3%    │
│ call_10 ┆ 7007  ┆ filter walk  ┆ 121.2   ┆ 363.6 us ┆ 3%    │
│ call_11 ┆ 6007  ┆ filter walk  ┆ 111.1   ┆ 333.3 us ┆ 3%    │
│ call_12 ┆ 5007  ┆ cached allow ┆ 102.6   ┆ 307.7 us ┆ 2%    │
│ call_13 ┆ 4007  ┆ filter walk  ┆ 95.2    ┆ 285.7 us ┆ 2%    │
│ call_14 ┆ 3007  ┆ filter walk  ┆ 88.9    ┆ 266.7 us ┆ 2%    │
└─────────┴───────┴──────────────┴─────────┴──────────┴───────┘
  ... and 2 more syscalls (--json lists every one)

model: seccomp's filter emulated per syscall number
cold caches: +95.0 ns [-60.0, +130.0] on every call, what the treatment costs getppid with 2 page fault(s) before each call less the hot loop's (a probe call every 3.1 us; the target spent 2.5 us of CPU per call)
from these A/B measurements on this machine:
  seccomp:allow on getppid: +2.0 ns/op [-1.0, +3.0] over 200.0 ns/op, 10 pairs (run 4, 2026-03-04 05:06 UTC)
  seccomp:args,insns=32 on getppid: +31.2 ns/op [+28.0, +35.5] over 201.5 ns/op, 40 pairs (run 5, 2026-03-04 05:06 UTC)
note: the first note
note: a second note, with a comma
"##;
    const FULL_MD: &str = r##"**predicted overhead of seccomp:profile=/p/d.json on tar "cf" x, y: +0.88% [-0.12%, +1.50%] of its CPU time (12.35 ms added to 1.40 s of CPU over 2.50 s, 153119 syscalls)**

| syscall | calls | class | ns/call | added | share |
|---|---:|---|---:|---:|---:|
| `call_0` | 17007 | cached allow | 1333.3 | 4.00 ms | 32% |
| `call_1` | 16007 | filter walk | 666.7 | 2.00 ms | 16% |
| `call_2` | 15007 | filter walk | 444.4 | 1.33 ms | 11% |
| `call_3` | 14007 | cached allow | 333.3 | 1.00 ms | 8% |
| `call_4` | 13007 | filter walk | 266.7 | 800.0 us | 6% |
| `call_5` | 12007 | filter walk | 222.2 | 666.7 us | 5% |
| `call_6` | 11007 | cached allow | 190.5 | 571.4 us | 5% |
| `call_7` | 10007 | filter walk | 166.7 | 500.0 us | 4% |
| `call_8` | 9007 | filter walk | 148.1 | 444.4 us | 4% |
| `call_9` | 8007 | cached allow | 133.3 | 400.0 us | 3% |
| `call_10` | 7007 | filter walk | 121.2 | 363.6 us | 3% |
| `call_11` | 6007 | filter walk | 111.1 | 333.3 us | 3% |
| `call_12` | 5007 | cached allow | 102.6 | 307.7 us | 2% |
| `call_13` | 4007 | filter walk | 95.2 | 285.7 us | 2% |
| `call_14` | 3007 | filter walk | 88.9 | 266.7 us | 2% |

Model: seccomp's filter emulated per syscall number

cold caches: +95.0 ns [-60.0, +130.0] on every call, what the treatment costs getppid with 2 page fault(s) before each call less the hot loop's (a probe call every 3.1 us; the target spent 2.5 us of CPU per call)

- `seccomp:allow` on `getppid`: +2.0 ns/op [-1.0, +3.0], 10 pairs (run 4)
- `seccomp:args,insns=32` on `getppid`: +31.2 ns/op [+28.0, +35.5], 40 pairs (run 5)
- Note: the first note
- Note: a second note, with a comma
"##;
    const FULL_CSV: &str = r##"mechanism,target,syscall,nr,calls,class,ns_per_call,added_ns,denied
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_0,200,17007,cached allow,1333.333,4000000.2,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_1,201,16007,filter walk,666.667,2000000.2,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_2,202,15007,filter walk,444.444,1333333.6,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_3,203,14007,cached allow,333.333,1000000.2,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_4,204,13007,filter walk,266.667,800000.2,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_5,205,12007,filter walk,222.222,666666.9,true
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_6,206,11007,cached allow,190.476,571428.8,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_7,207,10007,filter walk,166.667,500000.2,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_8,208,9007,filter walk,148.148,444444.7,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_9,209,8007,cached allow,133.333,400000.2,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_10,210,7007,filter walk,121.212,363636.6,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_11,211,6007,filter walk,111.111,333333.6,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_12,212,5007,cached allow,102.564,307692.6,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_13,213,4007,filter walk,95.238,285714.5,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_14,214,3007,filter walk,88.889,266666.9,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_15,215,2007,cached allow,83.333,250000.2,false
seccomp:profile=/p/d.json,"tar ""cf"" x, y",call_16,216,1007,filter walk,78.431,235294.4,false
"##;
    const FULL_HEADLINE: &str = r##"predicted overhead of seccomp:profile=/p/d.json on tar "cf" x, y: +0.88% [-0.12%, +1.50%] of its CPU time (12.35 ms added to 1.40 s of CPU over 2.50 s, 153119 syscalls)"##;
    const BARE_TEXT: &str = r##"predicted overhead of landlock:sandbox on pid 42: n/a [n/a, n/a] of its CPU time (0.0 ns added to 0.0 ns of CPU over 400.0 us, 1 syscalls)

┌─────────┬───────┬───────┬─────────┬────────┬───────┐
│ syscall ┆ calls ┆ class ┆ ns/call ┆ added  ┆ share │
╞═════════╪═══════╪═══════╪═════════╪════════╪═══════╡
│ read    ┆ 1     ┆ none  ┆ 0.0     ┆ 0.0 ns ┆ -     │
└─────────┴───────┴───────┴─────────┴────────┴───────┘

model: m
from these A/B measurements on this machine:
"##;
    const BARE_MD: &str = r##"**predicted overhead of landlock:sandbox on pid 42: n/a [n/a, n/a] of its CPU time (0.0 ns added to 0.0 ns of CPU over 400.0 us, 1 syscalls)**

| syscall | calls | class | ns/call | added | share |
|---|---:|---|---:|---:|---:|
| `read` | 1 | none | 0.0 | 0.0 ns | - |

Model: m

"##;
    const BARE_CSV: &str = r##"mechanism,target,syscall,nr,calls,class,ns_per_call,added_ns,denied
landlock:sandbox,pid 42,read,0,1,none,0.000,0.0,false
"##;
}
