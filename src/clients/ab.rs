//! ApacheBench (`ab`): requests per second, the mean time per request and
//! the percentiles of "Percentage of the requests served within a certain
//! time". Failed requests, non-2xx responses or an ab that gave up
//! (`apr_socket_recv: Connection refused`) are failures.

use super::{ClientError, ClientMetric, number, tail};

const TOOL: &str = "ab";

pub fn parse(output: &str, _args: &[String]) -> Result<Vec<ClientMetric>, ClientError> {
    for line in output.lines() {
        let l = line.trim();
        let failed = |what: String| Err(ClientError::Failed { tool: TOOL, what });
        if let Some(rest) = l.strip_prefix("Failed requests:") {
            if number(rest).is_some_and(|n| n > 0.0) {
                return failed(format!("{} failed requests", rest.trim()));
            }
        } else if let Some(rest) = l.strip_prefix("Non-2xx responses:") {
            return failed(format!("{} non-2xx responses", rest.trim()));
        } else if l.contains("apr_") || l.starts_with("ab: ") {
            let at = l.find("apr_").unwrap_or(0);
            return failed(l[at..].to_string());
        }
    }
    let mut out = Vec::new();
    let mut in_percentiles = false;
    for line in output.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("Requests per second:") {
            if let Some(v) = number(rest) {
                out.push(ClientMetric::throughput("requests_per_sec", v));
            }
        } else if let Some(rest) = l.strip_prefix("Time per request:") {
            // The first is the mean per request; the second is across
            // all concurrent requests.
            if rest.trim_end().ends_with("(mean)")
                && let Some(v) = number(rest)
            {
                out.push(ClientMetric::latency("latency_mean_ms", v));
            }
        } else if l.starts_with("Percentage of the requests served") {
            in_percentiles = true;
        } else if in_percentiles {
            let Some((pct, ms)) = l.split_once('%') else {
                in_percentiles = false;
                continue;
            };
            if matches!(pct.trim(), "50" | "95" | "99")
                && let Some(v) = number(ms)
            {
                out.push(ClientMetric::latency(
                    format!("latency_p{}_ms", pct.trim()),
                    v,
                ));
            }
        }
    }
    if !out.iter().any(|m| m.name == "requests_per_sec") {
        return Err(ClientError::Unreadable {
            tool: TOOL,
            what: "\"Requests per second\" line",
            tail: tail(output, 200),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_rate_the_mean_and_the_percentiles() {
        let m = parse(include_str!("../../tests/fixtures/clients/ab.txt"), &[]).unwrap();
        let get = |n: &str| m.iter().find(|x| x.name == n).unwrap().value;
        assert_eq!(get("requests_per_sec"), 8161.0);
        assert_eq!(get("latency_mean_ms"), 0.490);
        assert_eq!(get("latency_p50_ms"), 0.0);
        assert_eq!(get("latency_p99_ms"), 1.0);
        assert_eq!(m.len(), 5);
    }

    #[test]
    fn failures_and_refusals_are_errors() {
        let e = parse(
            include_str!("../../tests/fixtures/clients/ab-refused.txt"),
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("Connection refused"), "{e}");
        let failed = include_str!("../../tests/fixtures/clients/ab.txt")
            .replace("Failed requests:        0", "Failed requests:        12");
        let e = parse(&failed, &[]).unwrap_err();
        assert!(e.to_string().contains("12 failed requests"), "{e}");
        assert!(matches!(
            parse("", &[]),
            Err(ClientError::Unreadable { .. })
        ));
    }
}
