//! A prediction in Prometheus's text format, for the node exporter's
//! textfile collector: gauges, not a table, so it is written here rather
//! than through `report::markup` (whose formats draw tables).

use std::fmt::Write as _;

use super::model::Prediction;

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
    use crate::model::prediction::testing::{bare, full, one_syscall};

    #[test]
    fn prometheus_is_the_text_format_with_ratios_and_seconds() {
        let out = prometheus(&one_syscall());
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
    fn the_cold_term_has_its_gauge() {
        let mut p = one_syscall();
        p.cold = Some(crate::predict::model::ColdFigure {
            fault_pages: 2,
            cpu_ns_per_call: 2500.0,
            probe_ns_per_op: 3100.0,
            ns_per_call: 95.0,
            low_ns: 60.0,
            high_ns: 130.0,
        });
        let prom = prometheus(&p);
        assert!(
            prom.contains("secperf_predicted_cold_seconds_per_call{")
                && prom.contains("0.000000095"),
            "{prom}"
        );
    }

    /// Byte for byte as the renderer wrote it before the tables moved to
    /// `report::sections::prediction`.
    #[test]
    fn two_fixed_predictions_are_pinned() {
        assert_eq!(prometheus(&full()), FULL_PROM);
        assert_eq!(prometheus(&bare()), BARE_PROM);
    }

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
