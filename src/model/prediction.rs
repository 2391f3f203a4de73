//! A prediction of what a policy costs a program (`secperf predict`),
//! as plain data: what every output of it reads (`report::sections::
//! prediction`, `predict::prometheus`, the JSON), kept here, below both
//! the predictor that builds it and the report that draws it.

use serde::{Deserialize, Serialize};

use super::ProbeFigure;

/// The cold term's figure in a prediction: ns it adds to every call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColdFigure {
    pub fault_pages: u32,
    pub cpu_ns_per_call: f64,
    /// The cold probe's baseline: its faults and call, ns each.
    pub probe_ns_per_op: f64,
    pub ns_per_call: f64,
    pub low_ns: f64,
    pub high_ns: f64,
}

/// One syscall's line of a prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyscallLine {
    pub name: String,
    pub nr: u32,
    pub count: u64,
    pub class: String,
    pub ns_per_call: f64,
    /// count x ns_per_call.
    pub cost_ns: f64,
    #[serde(default)]
    pub denied: bool,
}

/// The prediction for one program and one treatment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub mechanism: String,
    /// `-- CMD` as given, or `pid N`.
    pub target: String,
    /// How long the syscalls were counted by name, s (with `--pid`, the
    /// last two thirds of `--for`).
    pub window_s: f64,
    /// The target's CPU time (user + system, its threads and waited-for
    /// children) over the window, ns.
    pub cpu_ns: u64,
    pub syscalls: u64,
    /// Time added over the window, ns, with its interval.
    pub added_ns: f64,
    pub added_low_ns: f64,
    pub added_high_ns: f64,
    /// added / CPU time, percent, with its interval.
    pub overhead_pct: f64,
    pub overhead_low_pct: f64,
    pub overhead_high_pct: f64,
    pub model: String,
    pub probes: Vec<ProbeFigure>,
    /// The cache-cold term, when the model has one: ns added to every
    /// call, with its interval.
    #[serde(default)]
    pub cold: Option<ColdFigure>,
    pub notes: Vec<String>,
    /// Every syscall counted, dearest first.
    pub per_syscall: Vec<SyscallLine>,
}

/// Two fixed predictions, for the tests of every output.
#[cfg(test)]
pub mod testing {
    use super::*;

    fn at() -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339("2026-03-04T05:06:07Z")
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    /// One syscall, one probe, one note, no cold term: the small case the
    /// formats' own tests read.
    pub fn one_syscall() -> Prediction {
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

    /// Seventeen syscalls (two more than the tables show), the cold term,
    /// two probes and two notes.
    pub fn full() -> Prediction {
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
    pub fn bare() -> Prediction {
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
}
