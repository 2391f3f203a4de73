//! Any runs side by side: `/compare?runs=A,B[,C...]` is what `secperf
//! compare A B C` shows (each later run against the first, unpaired, at
//! compare's default thresholds), drawn as the report module's compare
//! page; its JSON twin is `secperf --json compare`'s document. A page
//! compares at most [`MAX_RUNS`] runs, so that what one request reads
//! stays bounded.

use super::{Refusal, Served};
use crate::model::Metric;
use crate::report::model::Report;
use crate::stats::decision::DecisionOpts;
use crate::store::Store;

/// The most runs one compare page reads.
pub const MAX_RUNS: usize = 8;

/// What a compare page shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    pub runs: Vec<i64>,
    /// `force=1`: runs of an emulated guest beside runs that were not (as
    /// `compare --force`).
    pub force: bool,
}

impl Query {
    pub fn parse(query: &[(String, String)]) -> Result<Query, Refusal> {
        let mut q = Query {
            runs: Vec::new(),
            force: false,
        };
        for (k, v) in query {
            match k.as_str() {
                "runs" => {
                    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                        match part.parse::<i64>() {
                            Ok(id) if id > 0 => q.runs.push(id),
                            _ => {
                                return Err(Refusal::bad(format!(
                                    "runs={v}: `{part}` is not a run id; give run numbers \
                                     separated by commas (/compare?runs=3,5)"
                                )));
                            }
                        }
                    }
                }
                "force" => match v.as_str() {
                    "1" | "true" => q.force = true,
                    "0" | "false" => q.force = false,
                    _ => return Err(Refusal::bad(format!("force={v}: give 1 or 0"))),
                },
                other => {
                    return Err(Refusal::bad(format!(
                        "`{other}` is not a key of /compare: give runs=A,B (and force=1 to \
                         compare runs of an emulated guest with others)"
                    )));
                }
            }
        }
        if q.runs.len() < 2 {
            return Err(Refusal::bad(
                "/compare needs two runs or more: /compare?runs=A,B (the first is the baseline)",
            ));
        }
        if q.runs.len() > MAX_RUNS {
            return Err(Refusal::bad(format!(
                "/compare shows at most {MAX_RUNS} runs at once; {} given",
                q.runs.len()
            )));
        }
        Ok(q)
    }

    /// The page's own address.
    pub fn path(&self) -> String {
        let ids: Vec<String> = self.runs.iter().map(i64::to_string).collect();
        format!(
            "/compare?runs={}{}",
            ids.join(","),
            if self.force { "&force=1" } else { "" }
        )
    }
}

/// `secperf compare`'s thresholds when none is given (its
/// `DecisionArgs`' defaults), and the noise band the page draws.
fn decision() -> Result<DecisionOpts, Refusal> {
    DecisionOpts::validated(
        0.05,
        Metric::Time.default_noise_pct(),
        Metric::Time.default_equivalence_pct(),
    )
    .map_err(|e| Refusal::failed(&e))
}

/// The comparison of `q`'s runs, as `secperf compare` builds it.
pub fn read(store: &Store, served: &Served, q: &Query) -> Result<(Report, f64), Refusal> {
    let mut runs = Vec::new();
    for &id in &q.runs {
        super::existing_run(store, served, id)?;
        runs.push(store.load_run(id).map_err(|e| Refusal::failed(&e))?);
    }
    let bad = |e: anyhow::Error| {
        if crate::error::exit_code(&e) == 2 {
            Refusal::bad(format!("{e:#}").replace("--force", "force=1"))
        } else {
            Refusal::failed(&e)
        }
    };
    crate::compare::check_metrics(&runs).map_err(bad)?;
    crate::compare::check_emulation(&runs, q.force).map_err(bad)?;
    let decision = decision()?;
    let ids: Vec<String> = q.runs.iter().map(i64::to_string).collect();
    let report = crate::compare::build(
        &runs,
        &crate::compare::CompareOpts { decision, seed: 1 },
        &format!("secperf compare {}", ids.join(" ")),
    );
    Ok((report, decision.noise_pct))
}

#[cfg(test)]
mod tests {
    use super::super::tests::q;
    use super::*;

    #[test]
    fn runs_are_numbers_two_to_eight_and_the_path_gives_them_back() {
        let ok = Query::parse(&q(&[("runs", "3, 5"), ("force", "1")])).unwrap();
        assert_eq!(ok.runs, vec![3, 5]);
        assert_eq!(ok.path(), "/compare?runs=3,5&force=1");
        for bad in [
            q(&[("runs", "3")]),
            q(&[("runs", "3,x")]),
            q(&[("runs", "3,-5")]),
            q(&[("runs", "1,2,3,4,5,6,7,8,9")]),
            q(&[("runs", "1,2"), ("colour", "red")]),
            q(&[("runs", "1,2"), ("force", "yes")]),
            q(&[]),
        ] {
            assert_eq!(Query::parse(&bad).unwrap_err().status, 400, "{bad:?}");
        }
    }
}
