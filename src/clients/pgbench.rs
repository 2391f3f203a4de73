//! pgbench: transactions per second (without the initial connection
//! time) and the mean latency. Failed transactions, or fewer processed
//! than asked for, are failures.

use super::{ClientError, ClientMetric, number, tail};

const TOOL: &str = "pgbench";

pub fn parse(output: &str, _args: &[String]) -> Result<Vec<ClientMetric>, ClientError> {
    let mut out = Vec::new();
    for line in output.lines() {
        let l = line.trim();
        let failed = |what: String| Err(ClientError::Failed { tool: TOOL, what });
        if let Some(rest) = l.strip_prefix("number of failed transactions:") {
            if number(rest).is_some_and(|n| n > 0.0) {
                return failed(format!("{} failed transactions", rest.trim()));
            }
        } else if let Some(rest) = l.strip_prefix("number of transactions actually processed:") {
            if let Some((done, asked)) = rest.trim().split_once('/')
                && done.trim() != asked.trim()
            {
                return failed(format!(
                    "{} transactions processed of {}",
                    done.trim(),
                    asked.trim()
                ));
            }
        } else if let Some(rest) = l.strip_prefix("tps =") {
            // pgbench 15 prints one tps line; older ones two, the second
            // "excluding connections establishing".
            if rest.contains("without initial connection") || rest.contains("excluding") {
                out.retain(|m: &ClientMetric| m.name != "transactions_per_sec");
            }
            if let Some(v) = number(rest)
                && !out.iter().any(|m| m.name == "transactions_per_sec")
            {
                out.push(ClientMetric::throughput("transactions_per_sec", v));
            }
        } else if let Some(rest) = l.strip_prefix("latency average =") {
            if let Some(v) = number(rest) {
                out.push(ClientMetric::latency("latency_mean_ms", v));
            }
        } else if l.starts_with("pgbench: error:") || l.starts_with("pgbench: fatal:") {
            return failed(l.to_string());
        }
    }
    if !out.iter().any(|m| m.name == "transactions_per_sec") {
        return Err(ClientError::Unreadable {
            tool: TOOL,
            what: "\"tps =\" line",
            tail: tail(output, 200),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tps_and_latency() {
        for fixture in [
            include_str!("../../tests/fixtures/clients/pgbench.txt"),
            include_str!("../../tests/fixtures/clients/pgbench-r.txt"),
        ] {
            let m = parse(fixture, &[]).unwrap();
            assert_eq!(m.len(), 2, "{m:?}");
            let tps = m.iter().find(|x| x.name == "transactions_per_sec").unwrap();
            let latency = m.iter().find(|x| x.name == "latency_mean_ms").unwrap();
            assert!(tps.value > 1000.0 && tps.higher_is_better);
            assert!(latency.value > 1.0 && !latency.higher_is_better);
        }
        let m = parse(
            include_str!("../../tests/fixtures/clients/pgbench.txt"),
            &[],
        )
        .unwrap();
        let get = |n: &str| m.iter().find(|x| x.name == n).unwrap().value;
        assert_eq!(get("transactions_per_sec"), 1181.1291);
        assert_eq!(get("latency_mean_ms"), 1.693);
    }

    #[test]
    fn failed_or_missing_transactions_are_errors() {
        let base = include_str!("../../tests/fixtures/clients/pgbench.txt");
        let failed = base.replace(
            "failed transactions: 0 (0.000%)",
            "failed transactions: 3 (0.750%)",
        );
        assert!(
            parse(&failed, &[])
                .unwrap_err()
                .to_string()
                .contains("3 (0.750%) failed")
        );
        let short = base.replace("400/400", "397/400");
        assert!(
            parse(&short, &[])
                .unwrap_err()
                .to_string()
                .contains("397 transactions processed of 400")
        );
        let e = parse(
            "pgbench: error: connection to server failed: No such file or directory\n",
            &[],
        )
        .unwrap_err();
        assert!(matches!(e, ClientError::Failed { .. }));
    }
}
