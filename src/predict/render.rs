//! A prediction as text (a table), markdown, CSV (one row per syscall),
//! or Prometheus's text format for the node exporter's textfile collector
//! (JSON is the serde form).

use std::fmt::Write as _;

use super::model::Prediction;

/// Syscalls shown in the text and markdown tables (the dearest first;
/// `--json` and prometheus have every one).
pub const SHOWN: usize = 15;

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.2}%")
    } else {
        "n/a".into()
    }
}

fn ns(v: f64) -> String {
    if v.abs() >= 1e9 {
        format!("{:.2} s", v / 1e9)
    } else if v.abs() >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v.abs() >= 1e3 {
        format!("{:.1} us", v / 1e3)
    } else {
        format!("{v:.1} ns")
    }
}

/// The headline: predicted overhead with its interval, over what.
pub fn headline(p: &Prediction) -> String {
    format!(
        "predicted overhead of {} on {}: {} [{}, {}] of its CPU time ({} added to {} of CPU over \
         {}, {} syscalls)",
        p.mechanism,
        p.target,
        pct(p.overhead_pct),
        pct(p.overhead_low_pct),
        pct(p.overhead_high_pct),
        ns(p.added_ns),
        ns(p.cpu_ns as f64),
        ns(p.window_s * 1e9),
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

pub fn text(p: &Prediction) -> String {
    let mut t = crate::report::markup::terminal::new_table(&[
        "syscall", "calls", "class", "ns/call", "added", "share",
    ]);
    for l in p.per_syscall.iter().take(SHOWN) {
        t.add_row([
            l.name.clone(),
            l.count.to_string(),
            l.class.clone(),
            format!("{:.1}", l.ns_per_call),
            ns(l.cost_ns),
            share(l.cost_ns, p.added_ns),
        ]);
    }
    let mut out = format!("{}\n\n{t}\n", headline(p));
    if p.per_syscall.len() > SHOWN {
        let _ = writeln!(
            out,
            "  ... and {} more syscalls (--json lists every one)",
            p.per_syscall.len() - SHOWN
        );
    }
    let _ = writeln!(out, "\nmodel: {}", p.model);
    if let Some(line) = cold_line(p) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "from these A/B measurements on this machine:");
    for f in &p.probes {
        let _ = writeln!(
            out,
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
        );
    }
    for n in &p.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

fn share(part: f64, whole: f64) -> String {
    if whole.abs() > 0.0 {
        format!("{:.0}%", part / whole * 100.0)
    } else {
        "-".into()
    }
}

pub fn markdown(p: &Prediction) -> String {
    let mut out = format!("**{}**\n\n", headline(p));
    out.push_str(
        "| syscall | calls | class | ns/call | added | share |\n|---|---:|---|---:|---:|---:|\n",
    );
    for l in p.per_syscall.iter().take(SHOWN) {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {:.1} | {} | {} |",
            l.name,
            l.count,
            l.class,
            l.ns_per_call,
            ns(l.cost_ns),
            share(l.cost_ns, p.added_ns)
        );
    }
    let _ = writeln!(out, "\nModel: {}\n", p.model);
    if let Some(line) = cold_line(p) {
        let _ = writeln!(out, "{line}\n");
    }
    for f in &p.probes {
        let _ = writeln!(
            out,
            "- `{}` on `{}`: {:+.1} ns/op [{:+.1}, {:+.1}], {} pairs (run {})",
            f.spec,
            f.workload,
            f.delta_ns_per_op,
            f.delta_low_ns,
            f.delta_high_ns,
            f.pairs,
            f.run_id
        );
    }
    for n in &p.notes {
        let _ = writeln!(out, "- Note: {n}");
    }
    out
}

/// One row per syscall, dearest first, after a header; the totals are in
/// the JSON and the other formats.
pub fn csv(p: &Prediction) -> String {
    let header = [
        "mechanism",
        "target",
        "syscall",
        "nr",
        "calls",
        "class",
        "ns_per_call",
        "added_ns",
        "denied",
    ]
    .map(String::from);
    let rows = p.per_syscall.iter().map(|l| {
        [
            p.mechanism.clone(),
            p.target.clone(),
            l.name.clone(),
            l.nr.to_string(),
            l.count.to_string(),
            l.class.clone(),
            format!("{:.3}", l.ns_per_call),
            format!("{:.1}", l.cost_ns),
            l.denied.to_string(),
        ]
    });
    crate::report::markup::csv::records(std::iter::once(header).chain(rows))
}

/// A label value as Prometheus's text format escapes it.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The node exporter's textfile-collector format: ratios (not percent)
/// and seconds, as Prometheus's conventions ask.
pub fn prometheus(p: &Prediction) -> String {
    let base = format!(
        "mechanism=\"{}\",target=\"{}\"",
        label(&p.mechanism),
        label(&p.target)
    );
    let mut out = String::new();
    let gauge = |out: &mut String, name: &str, help: &str| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
    };
    gauge(
        &mut out,
        "secperf_predicted_overhead_ratio",
        "Predicted time a policy adds to a program, over its CPU time (bound=estimate|low|high: \
         the 95% interval).",
    );
    for (bound, v) in [
        ("estimate", p.overhead_pct),
        ("low", p.overhead_low_pct),
        ("high", p.overhead_high_pct),
    ] {
        let _ = writeln!(
            out,
            "secperf_predicted_overhead_ratio{{{base},bound=\"{bound}\"}} {}",
            v / 100.0
        );
    }
    gauge(
        &mut out,
        "secperf_predicted_added_seconds",
        "Predicted time the policy adds over the counted window, seconds.",
    );
    let _ = writeln!(
        out,
        "secperf_predicted_added_seconds{{{base}}} {}",
        p.added_ns / 1e9
    );
    if let Some(c) = &p.cold {
        gauge(
            &mut out,
            "secperf_predicted_cold_seconds_per_call",
            "The cache-cold term: time the policy adds to every call when the program's work \
             between calls has refilled the caches, seconds (bound=estimate|low|high).",
        );
        for (bound, v) in [
            ("estimate", c.ns_per_call),
            ("low", c.low_ns),
            ("high", c.high_ns),
        ] {
            let _ = writeln!(
                out,
                "secperf_predicted_cold_seconds_per_call{{{base},bound=\"{bound}\"}} {}",
                v / 1e9
            );
        }
    }
    gauge(
        &mut out,
        "secperf_counted_cpu_seconds",
        "CPU time of the program over the counted window, seconds.",
    );
    let _ = writeln!(
        out,
        "secperf_counted_cpu_seconds{{{base}}} {}",
        p.cpu_ns as f64 / 1e9
    );
    gauge(
        &mut out,
        "secperf_counted_syscalls",
        "System calls the program made over the counted window, by syscall.",
    );
    for l in &p.per_syscall {
        let _ = writeln!(
            out,
            "secperf_counted_syscalls{{{base},syscall=\"{}\"}} {}",
            label(&l.name),
            l.count
        );
    }
    gauge(
        &mut out,
        "secperf_predicted_syscall_added_seconds",
        "Predicted time the policy adds to each syscall over the window, seconds.",
    );
    for l in &p.per_syscall {
        let _ = writeln!(
            out,
            "secperf_predicted_syscall_added_seconds{{{base},syscall=\"{}\"}} {}",
            label(&l.name),
            l.cost_ns / 1e9
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::model::{ProbeFigure, SyscallLine};

    fn prediction() -> Prediction {
        Prediction {
            mechanism: "seccomp:profile=/p/d.json".into(),
            target: "tar \"cf\" x".into(),
            window_s: 0.5,
            cpu_ns: 400_000_000,
            syscalls: 3000,
            added_ns: 4_000_000.0,
            added_low_ns: 2_000_000.0,
            added_high_ns: 6_000_000.0,
            overhead_pct: 1.0,
            overhead_low_pct: 0.5,
            overhead_high_pct: 1.5,
            model: "m".into(),
            cold: None,
            probes: vec![ProbeFigure {
                spec: "seccomp:allow".into(),
                workload: "getppid".into(),
                baseline_ns_per_op: 200.0,
                delta_ns_per_op: 2.0,
                delta_low_ns: 1.0,
                delta_high_ns: 3.0,
                pairs: 10,
                run_id: 4,
                measured_at: chrono::Utc::now(),
            }],
            notes: vec!["n".into()],
            per_syscall: vec![SyscallLine {
                name: "newfstatat".into(),
                nr: 262,
                count: 3000,
                class: "cached allow".into(),
                ns_per_call: 1333.3,
                cost_ns: 4_000_000.0,
                denied: false,
            }],
        }
    }

    #[test]
    fn prometheus_is_the_text_format_with_ratios_and_seconds() {
        let out = prometheus(&prediction());
        assert!(
            out.contains("# TYPE secperf_predicted_overhead_ratio gauge"),
            "{out}"
        );
        assert!(
            out.contains(
                "secperf_predicted_overhead_ratio{mechanism=\"seccomp:profile=/p/d.json\",\
                 target=\"tar \\\"cf\\\" x\",bound=\"estimate\"} 0.01"
            ),
            "{out}"
        );
        assert!(out.contains("syscall=\"newfstatat\"} 3000"), "{out}");
        assert!(
            out.contains("secperf_predicted_added_seconds{") && out.contains("} 0.004"),
            "{out}"
        );
        // Every sample line is NAME{LABELS} VALUE with a number.
        for l in out.lines().filter(|l| !l.starts_with('#')) {
            let v = l.rsplit_once(' ').unwrap().1;
            assert!(v.parse::<f64>().is_ok(), "{l}");
        }
    }

    #[test]
    fn csv_has_a_header_and_a_row_per_syscall() {
        let out = csv(&prediction());
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
        let mut p = prediction();
        assert!(cold_line(&p).is_none());
        p.cold = Some(crate::predict::model::ColdFigure {
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
        let prom = prometheus(&p);
        assert!(
            prom.contains("secperf_predicted_cold_seconds_per_call{")
                && prom.contains("0.000000095"),
            "{prom}"
        );
    }

    #[test]
    fn text_and_markdown_lead_with_the_interval_and_show_the_probes() {
        for out in [text(&prediction()), markdown(&prediction())] {
            assert!(out.contains("+1.00% [+0.50%, +1.50%]"), "{out}");
            assert!(out.contains("seccomp:allow"), "{out}");
            assert!(out.contains("newfstatat"), "{out}");
        }
    }
}

#[cfg(test)]
mod pinned {
    //! Every format of two fixed predictions, byte for byte as the
    //! renderers wrote them before they went through `report::sections`.

    use super::*;
    use crate::predict::model::{ColdFigure, ProbeFigure, SyscallLine};

    fn at() -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339("2026-03-04T05:06:07Z")
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    /// Seventeen syscalls (two more than the tables show), the cold term,
    /// two probes and two notes.
    fn full() -> Prediction {
        let per_syscall = (0..17u32)
            .map(|i| SyscallLine {
                name: format!("call_{i}"),
                nr: 200 + i,
                count: 1000 * u64::from(17 - i) + 7,
                class: if i % 3 == 0 {
                    "cached allow"
                } else {
                    "filter walk"
                }
                .into(),
                ns_per_call: 1333.3333 / f64::from(i + 1),
                cost_ns: 4_000_000.0 / f64::from(i + 1) + 0.25,
                denied: i == 5,
            })
            .collect();
        Prediction {
            mechanism: "seccomp:profile=/p/d.json".into(),
            target: "tar \"cf\" x, y".into(),
            window_s: 2.5,
            cpu_ns: 1_400_000_000,
            syscalls: 153_119,
            added_ns: 12_345_678.9,
            added_low_ns: 2_000_000.0,
            added_high_ns: 16_000_000.0,
            overhead_pct: 0.881_834,
            overhead_low_pct: -0.123_4,
            overhead_high_pct: 1.5,
            model: "seccomp's filter emulated per syscall number".into(),
            cold: Some(ColdFigure {
                fault_pages: 2,
                cpu_ns_per_call: 2500.0,
                probe_ns_per_op: 3100.0,
                ns_per_call: 95.04,
                low_ns: -60.0,
                high_ns: 130.0,
            }),
            probes: vec![
                ProbeFigure {
                    spec: "seccomp:allow".into(),
                    workload: "getppid".into(),
                    baseline_ns_per_op: 200.0,
                    delta_ns_per_op: 2.04,
                    delta_low_ns: -1.0,
                    delta_high_ns: 3.0,
                    pairs: 10,
                    run_id: 4,
                    measured_at: at(),
                },
                ProbeFigure {
                    spec: "seccomp:args,insns=32".into(),
                    workload: "getppid".into(),
                    baseline_ns_per_op: 201.5,
                    delta_ns_per_op: 31.25,
                    delta_low_ns: 28.0,
                    delta_high_ns: 35.5,
                    pairs: 40,
                    run_id: 5,
                    measured_at: at(),
                },
            ],
            notes: vec![
                "the first note".into(),
                "a second note, with a comma".into(),
            ],
            per_syscall,
        }
    }

    /// Nothing but one syscall that adds nothing: no cold term, probes or
    /// notes, an overhead that is not a number.
    fn bare() -> Prediction {
        Prediction {
            mechanism: "landlock:sandbox".into(),
            target: "pid 42".into(),
            window_s: 0.0004,
            cpu_ns: 0,
            syscalls: 1,
            added_ns: 0.0,
            added_low_ns: 0.0,
            added_high_ns: 0.0,
            overhead_pct: f64::NAN,
            overhead_low_pct: f64::NAN,
            overhead_high_pct: f64::INFINITY,
            model: "m".into(),
            cold: None,
            probes: Vec::new(),
            notes: Vec::new(),
            per_syscall: vec![SyscallLine {
                name: "read".into(),
                nr: 0,
                count: 1,
                class: "none".into(),
                ns_per_call: 0.0,
                cost_ns: 0.0,
                denied: false,
            }],
        }
    }

    fn pin(name: &str, out: &str, want: &str) {
        assert_eq!(out, want, "{name}");
    }

    #[test]
    fn the_full_prediction_in_every_format() {
        let p = full();
        pin("full.text", &text(&p), FULL_TEXT);
        pin("full.md", &markdown(&p), FULL_MD);
        pin("full.csv", &csv(&p), FULL_CSV);
        pin("full.prom", &prometheus(&p), FULL_PROM);
        pin("full.headline", &headline(&p), FULL_HEADLINE);
    }

    #[test]
    fn the_bare_prediction_in_every_format() {
        let p = bare();
        pin("bare.text", &text(&p), BARE_TEXT);
        pin("bare.md", &markdown(&p), BARE_MD);
        pin("bare.csv", &csv(&p), BARE_CSV);
        pin("bare.prom", &prometheus(&p), BARE_PROM);
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
    const FULL_PROM: &str = r##"# HELP secperf_predicted_overhead_ratio Predicted time a policy adds to a program, over its CPU time (bound=estimate|low|high: the 95% interval).
# TYPE secperf_predicted_overhead_ratio gauge
secperf_predicted_overhead_ratio{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",bound="estimate"} 0.008818340000000001
secperf_predicted_overhead_ratio{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",bound="low"} -0.0012339999999999999
secperf_predicted_overhead_ratio{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",bound="high"} 0.015
# HELP secperf_predicted_added_seconds Predicted time the policy adds over the counted window, seconds.
# TYPE secperf_predicted_added_seconds gauge
secperf_predicted_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y"} 0.0123456789
# HELP secperf_predicted_cold_seconds_per_call The cache-cold term: time the policy adds to every call when the program's work between calls has refilled the caches, seconds (bound=estimate|low|high).
# TYPE secperf_predicted_cold_seconds_per_call gauge
secperf_predicted_cold_seconds_per_call{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",bound="estimate"} 0.00000009504000000000001
secperf_predicted_cold_seconds_per_call{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",bound="low"} -0.00000006
secperf_predicted_cold_seconds_per_call{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",bound="high"} 0.00000013
# HELP secperf_counted_cpu_seconds CPU time of the program over the counted window, seconds.
# TYPE secperf_counted_cpu_seconds gauge
secperf_counted_cpu_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y"} 1.4
# HELP secperf_counted_syscalls System calls the program made over the counted window, by syscall.
# TYPE secperf_counted_syscalls gauge
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_0"} 17007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_1"} 16007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_2"} 15007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_3"} 14007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_4"} 13007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_5"} 12007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_6"} 11007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_7"} 10007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_8"} 9007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_9"} 8007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_10"} 7007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_11"} 6007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_12"} 5007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_13"} 4007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_14"} 3007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_15"} 2007
secperf_counted_syscalls{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_16"} 1007
# HELP secperf_predicted_syscall_added_seconds Predicted time the policy adds to each syscall over the window, seconds.
# TYPE secperf_predicted_syscall_added_seconds gauge
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_0"} 0.00400000025
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_1"} 0.00200000025
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_2"} 0.0013333335833333332
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_3"} 0.00100000025
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_4"} 0.00080000025
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_5"} 0.0006666669166666666
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_6"} 0.0005714288214285714
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_7"} 0.00050000025
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_8"} 0.00044444469444444444
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_9"} 0.00040000025
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_10"} 0.00036363661363636365
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_11"} 0.0003333335833333333
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_12"} 0.0003076925576923077
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_13"} 0.0002857145357142857
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_14"} 0.0002666669166666667
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_15"} 0.00025000025
secperf_predicted_syscall_added_seconds{mechanism="seccomp:profile=/p/d.json",target="tar \"cf\" x, y",syscall="call_16"} 0.00023529436764705883
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
    const BARE_PROM: &str = r##"# HELP secperf_predicted_overhead_ratio Predicted time a policy adds to a program, over its CPU time (bound=estimate|low|high: the 95% interval).
# TYPE secperf_predicted_overhead_ratio gauge
secperf_predicted_overhead_ratio{mechanism="landlock:sandbox",target="pid 42",bound="estimate"} NaN
secperf_predicted_overhead_ratio{mechanism="landlock:sandbox",target="pid 42",bound="low"} NaN
secperf_predicted_overhead_ratio{mechanism="landlock:sandbox",target="pid 42",bound="high"} inf
# HELP secperf_predicted_added_seconds Predicted time the policy adds over the counted window, seconds.
# TYPE secperf_predicted_added_seconds gauge
secperf_predicted_added_seconds{mechanism="landlock:sandbox",target="pid 42"} 0
# HELP secperf_counted_cpu_seconds CPU time of the program over the counted window, seconds.
# TYPE secperf_counted_cpu_seconds gauge
secperf_counted_cpu_seconds{mechanism="landlock:sandbox",target="pid 42"} 0
# HELP secperf_counted_syscalls System calls the program made over the counted window, by syscall.
# TYPE secperf_counted_syscalls gauge
secperf_counted_syscalls{mechanism="landlock:sandbox",target="pid 42",syscall="read"} 1
# HELP secperf_predicted_syscall_added_seconds Predicted time the policy adds to each syscall over the window, seconds.
# TYPE secperf_predicted_syscall_added_seconds gauge
secperf_predicted_syscall_added_seconds{mechanism="landlock:sandbox",target="pid 42",syscall="read"} 0
"##;
}
