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
