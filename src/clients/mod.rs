//! Load clients whose output secperf reads: when the measured command is
//! one of these tools (redis-benchmark, ab, wrk, pgbench), its output
//! gives extra figures beside the run time: requests per second and
//! latency percentiles, each with its own paired interval.
//!
//! One file per tool, each registered in [`CLIENTS`]. A parser reads what
//! the tool printed for one run and returns its figures, or an error when
//! the run did not do the work it claims: failed requests, non-2xx
//! responses, socket errors or failed transactions would make a client
//! fast for the wrong reason, exactly as a failing syscall would make a
//! workload fast. The parsers are tested on output captured from the real
//! tools (`tests/fixtures/clients/`).

use thiserror::Error;

pub mod ab;
pub mod pgbench;
pub mod redis_benchmark;
pub mod wrk;

/// One figure a client reported for one run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClientMetric {
    /// Its name, with its unit: `requests_per_sec`, `latency_p99_ms`,
    /// `GET.requests_per_sec` for a tool that runs several tests.
    pub name: String,
    pub value: f64,
    /// Whether a larger value is better (throughput) or worse (latency):
    /// an overhead is then a fall or a rise.
    pub higher_is_better: bool,
}

impl ClientMetric {
    pub fn throughput(name: impl Into<String>, value: f64) -> ClientMetric {
        ClientMetric {
            name: name.into(),
            value,
            higher_is_better: true,
        }
    }

    pub fn latency(name: impl Into<String>, value: f64) -> ClientMetric {
        ClientMetric {
            name: name.into(),
            value,
            higher_is_better: false,
        }
    }
}

/// Why a client's output gives no figures.
#[derive(Debug, Error, PartialEq)]
pub enum ClientError {
    /// The run did not do all its work (failed requests and the like).
    #[error(
        "{tool} reported failures: {what}; the figures would be fast for the wrong reason (check the server, its policy and the client's target)"
    )]
    Failed { tool: &'static str, what: String },
    /// The output is not what this tool prints.
    #[error(
        "{tool}'s output has no {what}; is the command really {tool}, and did it finish? (its output: {tail:?})"
    )]
    Unreadable {
        tool: &'static str,
        what: &'static str,
        tail: String,
    },
}

/// The last `n` characters of `s`, for error messages.
pub(crate) fn tail(s: &str, n: usize) -> String {
    let t = s.trim_end();
    let start = t
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    t[start..].to_string()
}

/// A client secperf can read.
pub struct ClientDef {
    /// The program's name (argv[0]'s file name).
    pub program: &'static str,
    /// What it reports, for `--help` and the report.
    pub reports: &'static str,
    /// Reads one run's output (stdout and stderr together); `args` are the
    /// arguments it ran with (some tools print differently by flag).
    pub parse: fn(output: &str, args: &[String]) -> Result<Vec<ClientMetric>, ClientError>,
}

/// Every client secperf reads, in one table.
pub static CLIENTS: &[ClientDef] = &[
    ClientDef {
        program: "redis-benchmark",
        reports: "requests/s and p50/p95/p99 latency per test (--csv), or requests/s and p50 (-q)",
        parse: redis_benchmark::parse,
    },
    ClientDef {
        program: "ab",
        reports: "requests/s, mean latency and p50/p95/p99 latency",
        parse: ab::parse,
    },
    ClientDef {
        program: "wrk",
        reports: "requests/s, mean latency, and p50/p90/p99 with --latency",
        parse: wrk::parse,
    },
    ClientDef {
        program: "pgbench",
        reports: "transactions/s and mean latency",
        parse: pgbench::parse,
    },
];

/// The client `argv0` names (by its file name), if secperf reads it.
pub fn find(argv0: &str) -> Option<&'static ClientDef> {
    let name = std::path::Path::new(argv0)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(argv0);
    CLIENTS.iter().find(|c| c.program == name)
}

/// The first number in `s` (digits, '.', '-'), if any.
pub(crate) fn number(s: &str) -> Option<f64> {
    let start = s.find(|c: char| c.is_ascii_digit() || c == '-')?;
    let rest = &s[start..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_found_by_program_name() {
        assert_eq!(
            find("/usr/bin/redis-benchmark").unwrap().program,
            "redis-benchmark"
        );
        assert_eq!(find("ab").unwrap().program, "ab");
        assert!(find("curl").is_none());
        let mut names: Vec<&str> = CLIENTS.iter().map(|c| c.program).collect();
        names.dedup();
        assert_eq!(names.len(), CLIENTS.len());
    }

    #[test]
    fn numbers_and_tails() {
        assert_eq!(number("  tps = 1181.129100 (without"), Some(1181.1291));
        assert_eq!(number("abc"), None);
        assert_eq!(tail("hello world\n", 5), "world");
        assert_eq!(tail("hi", 10), "hi");
    }
}
