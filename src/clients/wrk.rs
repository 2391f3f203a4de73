//! wrk: requests per second, the mean latency, and with `--latency` the
//! distribution's 50th, 90th and 99th percentiles. Socket errors or
//! non-2xx/3xx responses are failures.

use super::{ClientError, ClientMetric, number, tail};

const TOOL: &str = "wrk";

/// A wrk duration ("164.40us", "7.91ms", "1.20s", "2.00m") in ms.
fn ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let (value, scale) = if let Some(v) = s.strip_suffix("us") {
        (v, 1e-3)
    } else if let Some(v) = s.strip_suffix("ms") {
        (v, 1.0)
    } else if let Some(v) = s.strip_suffix('s') {
        (v, 1e3)
    } else if let Some(v) = s.strip_suffix('m') {
        (v, 60e3)
    } else {
        return None;
    };
    value.parse::<f64>().ok().map(|v| v * scale)
}

pub fn parse(output: &str, _args: &[String]) -> Result<Vec<ClientMetric>, ClientError> {
    let mut out = Vec::new();
    let mut in_distribution = false;
    for line in output.lines() {
        let l = line.trim();
        if l.starts_with("Socket errors:") || l.starts_with("Non-2xx or 3xx responses:") {
            return Err(ClientError::Failed {
                tool: TOOL,
                what: l.to_string(),
            });
        }
        if let Some(rest) = l.strip_prefix("Requests/sec:") {
            if let Some(v) = number(rest) {
                out.push(ClientMetric::throughput("requests_per_sec", v));
            }
        } else if l == "Latency Distribution" {
            in_distribution = true;
        } else if let Some(rest) = l.strip_prefix("Latency ").filter(|_| !in_distribution) {
            if let Some(v) = rest.split_whitespace().next().and_then(ms) {
                out.push(ClientMetric::latency("latency_mean_ms", v));
            }
        } else if in_distribution {
            match l.split_once('%') {
                Some((pct, v)) if pct.trim().parse::<f64>().is_ok() => {
                    if matches!(pct.trim(), "50" | "90" | "99")
                        && let Some(v) = ms(v)
                    {
                        out.push(ClientMetric::latency(
                            format!("latency_p{}_ms", pct.trim()),
                            v,
                        ));
                    }
                }
                _ => in_distribution = false,
            }
        }
    }
    if !out.iter().any(|m| m.name == "requests_per_sec") {
        return Err(ClientError::Unreadable {
            tool: TOOL,
            what: "\"Requests/sec\" line",
            tail: tail(output, 200),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(m: &[ClientMetric], n: &str) -> f64 {
        m.iter()
            .find(|x| x.name == n)
            .unwrap_or_else(|| panic!("{n}: {m:?}"))
            .value
    }

    #[test]
    fn reads_the_rate_and_the_mean_latency() {
        let m = parse(include_str!("../../tests/fixtures/clients/wrk.txt"), &[]).unwrap();
        assert_eq!(get(&m, "requests_per_sec"), 34836.33);
        assert!((get(&m, "latency_mean_ms") - 0.1644).abs() < 1e-9);
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn reads_the_distribution_with_latency() {
        let m = parse(
            include_str!("../../tests/fixtures/clients/wrk-latency.txt"),
            &[],
        )
        .unwrap();
        assert_eq!(get(&m, "requests_per_sec"), 31647.72);
        assert!((get(&m, "latency_p50_ms") - 0.117).abs() < 1e-9);
        assert!((get(&m, "latency_p99_ms") - 0.505).abs() < 1e-9);
        assert!((get(&m, "latency_p90_ms") - 0.181).abs() < 1e-9);
    }

    #[test]
    fn durations_and_failures() {
        assert_eq!(ms("7.91ms"), Some(7.91));
        assert_eq!(ms("1.20s"), Some(1200.0));
        assert_eq!(ms("2.00m"), Some(120_000.0));
        let bad = format!(
            "{}  Socket errors: connect 0, read 3, write 0, timeout 0\n",
            include_str!("../../tests/fixtures/clients/wrk.txt")
        );
        assert!(matches!(parse(&bad, &[]), Err(ClientError::Failed { .. })));
        assert!(matches!(
            parse("unable to connect to 127.0.0.1:1 Connection refused", &[]),
            Err(ClientError::Unreadable { .. })
        ));
    }
}
