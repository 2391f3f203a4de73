//! redis-benchmark (Redis 6 and 7): requests per second and latency per
//! test, from `--csv` (one row per test), from `-q` (one line per test,
//! after progress lines ended by carriage returns), or from the full
//! report ("====== GET ======" blocks with a throughput and a latency
//! summary). A client that could not connect prints "Could not connect"
//! and is a failure, never a fast run.

use super::{ClientError, ClientMetric, number, tail};

const TOOL: &str = "redis-benchmark";

pub fn parse(output: &str, _args: &[String]) -> Result<Vec<ClientMetric>, ClientError> {
    if let Some(line) = output
        .lines()
        .find(|l| l.starts_with("Could not connect") || l.starts_with("Error"))
    {
        return Err(ClientError::Failed {
            tool: TOOL,
            what: line.trim().to_string(),
        });
    }
    let metrics = if output.trim_start().starts_with("\"test\"") {
        csv(output)
    } else if output.contains("throughput summary:") {
        full(output)
    } else {
        quiet(output)
    };
    if metrics.is_empty() {
        return Err(ClientError::Unreadable {
            tool: TOOL,
            what: "test results (--csv rows, -q lines or a throughput summary)",
            tail: tail(output, 200),
        });
    }
    Ok(metrics)
}

/// `--csv`: a header naming the columns, then one row per test.
fn csv(output: &str) -> Vec<ClientMetric> {
    let mut lines = output.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let cols: Vec<String> = header
        .split(',')
        .map(|c| c.trim_matches('"').to_string())
        .collect();
    let mut out = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').map(|c| c.trim_matches('"')).collect();
        let Some(test) = cells.first() else { continue };
        for (col, cell) in cols.iter().zip(&cells).skip(1) {
            let Ok(v) = cell.parse::<f64>() else { continue };
            match col.as_str() {
                "rps" => out.push(ClientMetric::throughput(
                    format!("{test}.requests_per_sec"),
                    v,
                )),
                "avg_latency_ms" => {
                    out.push(ClientMetric::latency(format!("{test}.latency_avg_ms"), v))
                }
                "p50_latency_ms" | "p95_latency_ms" | "p99_latency_ms" => out.push(
                    ClientMetric::latency(format!("{test}.latency_{}_ms", &col[..3]), v),
                ),
                _ => {}
            }
        }
    }
    out
}

/// `-q`: "GET: 40816.33 requests per second, p50=0.063 msec", the last
/// segment of each line (progress before it ends in '\r').
fn quiet(output: &str) -> Vec<ClientMetric> {
    let mut out = Vec::new();
    for line in output.lines() {
        let last = line.rsplit('\r').next().unwrap_or("").trim();
        let Some((test, rest)) = last.split_once(": ") else {
            continue;
        };
        let Some((rps, after)) = rest.split_once(" requests per second") else {
            continue;
        };
        let Ok(rps) = rps.trim().parse::<f64>() else {
            continue;
        };
        out.push(ClientMetric::throughput(
            format!("{test}.requests_per_sec"),
            rps,
        ));
        if let Some(p50) = after.split_once("p50=").and_then(|(_, v)| number(v)) {
            out.push(ClientMetric::latency(format!("{test}.latency_p50_ms"), p50));
        }
    }
    out
}

/// The full report: per "====== NAME ======" block, its throughput
/// summary and the row under the latency summary's header.
fn full(output: &str) -> Vec<ClientMetric> {
    let mut out = Vec::new();
    let mut test = None;
    let mut header: Option<Vec<String>> = None;
    for line in output.split(['\n', '\r']) {
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(name) = l
            .strip_prefix("======")
            .and_then(|r| r.strip_suffix("======"))
        {
            test = Some(name.trim().to_string());
            header = None;
        } else if let (Some(t), Some(rest)) = (&test, l.strip_prefix("throughput summary:")) {
            if let Some(v) = number(rest) {
                out.push(ClientMetric::throughput(format!("{t}.requests_per_sec"), v));
            }
        } else if l.starts_with("avg") && l.contains("p50") {
            header = Some(l.split_whitespace().map(str::to_string).collect());
        } else if let (Some(t), Some(h)) = (&test, header.take()) {
            let values: Vec<f64> = l
                .split_whitespace()
                .filter_map(|v| v.parse().ok())
                .collect();
            for (name, v) in h.iter().zip(values) {
                if matches!(name.as_str(), "avg" | "p50" | "p95" | "p99") {
                    out.push(ClientMetric::latency(format!("{t}.latency_{name}_ms"), v));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(m: &[ClientMetric], name: &str) -> f64 {
        m.iter()
            .find(|x| x.name == name)
            .unwrap_or_else(|| panic!("{name} in {m:?}"))
            .value
    }

    #[test]
    fn csv_rows_give_every_test() {
        let m = parse(
            include_str!("../../tests/fixtures/clients/redis-benchmark-csv.txt"),
            &[],
        )
        .unwrap();
        assert_eq!(get(&m, "SET.requests_per_sec"), 19801.98);
        assert_eq!(get(&m, "GET.requests_per_sec"), 23255.81);
        assert_eq!(get(&m, "GET.latency_p99_ms"), 1.535);
        assert_eq!(get(&m, "SET.latency_avg_ms"), 0.147);
        assert!(m.iter().filter(|x| x.name.starts_with("SET")).count() == 5);
        assert!(
            !m.iter()
                .find(|x| x.name == "SET.latency_p95_ms")
                .unwrap()
                .higher_is_better
        );
    }

    #[test]
    fn quiet_lines_skip_the_progress() {
        let m = parse(
            include_str!("../../tests/fixtures/clients/redis-benchmark-q.txt"),
            &[],
        )
        .unwrap();
        assert_eq!(get(&m, "SET.requests_per_sec"), 29411.76);
        assert_eq!(get(&m, "GET.requests_per_sec"), 40816.33);
        assert_eq!(get(&m, "GET.latency_p50_ms"), 0.063);
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn the_full_report_gives_throughput_and_latency() {
        let m = parse(
            include_str!("../../tests/fixtures/clients/redis-benchmark-full.txt"),
            &[],
        )
        .unwrap();
        assert_eq!(get(&m, "GET.requests_per_sec"), 15625.0);
        assert_eq!(get(&m, "GET.latency_p99_ms"), 0.519);
        assert_eq!(get(&m, "GET.latency_avg_ms"), 0.095);
    }

    #[test]
    fn a_refused_connection_is_a_failure() {
        let e = parse(
            include_str!("../../tests/fixtures/clients/redis-benchmark-refused.txt"),
            &[],
        )
        .unwrap_err();
        assert!(matches!(e, ClientError::Failed { .. }), "{e:?}");
        assert!(e.to_string().contains("Connection refused"), "{e}");
        assert!(matches!(
            parse("hello", &[]),
            Err(ClientError::Unreadable { .. })
        ));
    }
}
