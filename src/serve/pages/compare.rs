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
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub runs: Vec<i64>,
    /// `force=1`: runs of an emulated guest beside runs that were not (as
    /// `compare --force`).
    pub force: bool,
    /// `show=changes`: only the rows with a change (a verdict slower or
    /// faster) in some run.
    pub changes_only: bool,
    /// `min=PCT`: only the rows changed by at least PCT percent (either
    /// way) in some run.
    pub min_pct: Option<f64>,
    /// `sort=change`: the rows by their largest change, largest first
    /// (else in the baseline's order).
    pub by_change: bool,
}

impl Query {
    pub fn parse(query: &[(String, String)]) -> Result<Query, Refusal> {
        let mut q = Query {
            runs: Vec::new(),
            force: false,
            changes_only: false,
            min_pct: None,
            by_change: false,
        };
        for (k, v) in query {
            match k.as_str() {
                // `run=A&run=B`: the run list's boxes, ticked.
                "runs" | "run" => {
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
                "show" => match v.as_str() {
                    "changes" => q.changes_only = true,
                    "all" | "" => q.changes_only = false,
                    _ => {
                        return Err(Refusal::bad(format!(
                            "show={v}: give changes (rows with a verdict slower or faster) or all"
                        )));
                    }
                },
                "min" => match v.trim().trim_end_matches('%') {
                    "" => q.min_pct = None,
                    t => match t.parse::<f64>() {
                        Ok(p) if p.is_finite() && p >= 0.0 => q.min_pct = Some(p),
                        _ => {
                            return Err(Refusal::bad(format!(
                                "min={v}: give the smallest change shown, in percent (e.g. 2)"
                            )));
                        }
                    },
                },
                "sort" => match v.as_str() {
                    "change" => q.by_change = true,
                    "rows" | "" => q.by_change = false,
                    _ => {
                        return Err(Refusal::bad(format!(
                            "sort={v}: give change (the largest first) or rows (the baseline's \
                             order)"
                        )));
                    }
                },
                other => {
                    return Err(Refusal::bad(format!(
                        "`{other}` is not a key of /compare: give runs=A,B (and force=1 to \
                         compare runs of an emulated guest with others; show=changes, \
                         min=PCT and sort=change to filter and sort its rows)"
                    )));
                }
            }
        }
        // Ticked in the run list (newest first): the oldest is the
        // baseline, as in `secperf compare OLD NEW`.
        if query.iter().any(|(k, _)| k == "run") && !query.iter().any(|(k, _)| k == "runs") {
            q.runs.sort_unstable();
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
        let mut path = format!(
            "/compare?runs={}{}",
            ids.join(","),
            if self.force { "&force=1" } else { "" }
        );
        if self.changes_only {
            path.push_str("&show=changes");
        }
        if let Some(m) = self.min_pct {
            path.push_str(&format!("&min={m}"));
        }
        if self.by_change {
            path.push_str("&sort=change");
        }
        path
    }

    /// Keeps the rows the query asks for, in its order.
    pub fn select(&self, report: &mut Report) {
        let changes = |row: &crate::report::model::Row| -> Vec<(f64, bool)> {
            row.cells
                .iter()
                .skip(1)
                .flatten()
                .filter_map(|c| {
                    let change = c.change_pct?;
                    let decided = matches!(
                        c.verdict,
                        Some(
                            crate::stats::decision::Verdict::Slower
                                | crate::stats::decision::Verdict::Faster
                        )
                    );
                    Some((change.abs(), decided))
                })
                .collect()
        };
        report.rows.retain(|row| {
            let cs = changes(row);
            (!self.changes_only || cs.iter().any(|c| c.1))
                && self.min_pct.is_none_or(|m| cs.iter().any(|c| c.0 >= m))
        });
        if self.by_change {
            let largest = |row: &crate::report::model::Row| {
                changes(row).iter().map(|c| c.0).fold(0.0, f64::max)
            };
            report
                .rows
                .sort_by(|a, b| largest(b).total_cmp(&largest(a)));
        }
    }

    /// Markup above the comparison: each run linked, the form that
    /// filters and sorts the rows (a GET of this page), and the commands
    /// that measure the runs again and compare them.
    pub fn header(&self, names: &[String]) -> String {
        use crate::report::html::escape::esc;
        let runs: Vec<String> = self
            .runs
            .iter()
            .zip(names)
            .enumerate()
            .map(|(i, (id, name))| {
                format!(
                    "<a href=\"/runs/{id}\">{}</a>{}",
                    esc(name),
                    if i == 0 { " (the baseline)" } else { "" }
                )
            })
            .collect();
        let ids: Vec<String> = self.runs.iter().map(i64::to_string).collect();
        let reruns: Vec<String> = ids.iter().map(|id| format!("secperf rerun {id}")).collect();
        format!(
            "<p class=\"runs\">Runs: {}.</p>\n<form class=\"filter\" method=\"get\" \
             action=\"/compare\"><input type=\"hidden\" name=\"runs\" value=\"{}\">{}\
             <label>rows<select name=\"show\"><option value=\"all\"{}>all</option>\
             <option value=\"changes\"{}>changes only</option></select></label>\
             <label>changed by at least (%)<input name=\"min\" value=\"{}\"></label>\
             <label>order<select name=\"sort\"><option value=\"rows\"{}>the baseline's\
             </option><option value=\"change\"{}>largest change first</option></select>\
             </label><button type=\"submit\">Show</button></form>\n<p>To measure these \
             runs again (each from its stored command line and seed) and compare the new \
             ones: <code>{}</code>, then <code>secperf compare</code> with the new ids; \
             this page: <code>secperf compare {}</code>.</p>\n",
            runs.join(", "),
            esc(&ids.join(",")),
            if self.force {
                "<input type=\"hidden\" name=\"force\" value=\"1\">"
            } else {
                ""
            },
            if self.changes_only { "" } else { " selected" },
            if self.changes_only { " selected" } else { "" },
            self.min_pct.map(|m| m.to_string()).unwrap_or_default(),
            if self.by_change { "" } else { " selected" },
            if self.by_change { " selected" } else { "" },
            esc(&reruns.join("; ")),
            esc(&ids.join(" ")),
        )
    }
}

/// `secperf compare`'s thresholds for figures of `metric` when none is
/// given (its `DecisionArgs`' defaults), and the noise band the page draws.
fn decision(metric: Metric) -> Result<DecisionOpts, Refusal> {
    DecisionOpts::validated(
        0.05,
        metric.default_noise_pct(),
        metric.default_equivalence_pct(),
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
    let metric = crate::model::metric::of_params(&runs[0].meta.params);
    let decision = decision(metric)?;
    let ids: Vec<String> = q.runs.iter().map(i64::to_string).collect();
    let mut report = crate::compare::build(
        &runs,
        &crate::compare::CompareOpts { decision, seed: 1 },
        &format!("secperf compare {}", ids.join(" ")),
    );
    q.select(&mut report);
    Ok((report, decision.noise_pct))
}

#[cfg(test)]
mod tests {
    use super::super::tests::q;
    use super::*;

    #[test]
    fn rows_are_filtered_by_change_and_size_and_sorted_by_change() {
        // Issue 53: compare could not filter or sort, and the run list's
        // boxes send run=A&run=B.
        let q = Query::parse(&q(&[
            ("run", "5"),
            ("run", "3"),
            ("show", "changes"),
            ("min", "5%"),
            ("sort", "change"),
        ]))
        .unwrap();
        assert_eq!(q.runs, vec![3, 5]);
        assert_eq!(q.path(), "/compare?runs=3,5&show=changes&min=5&sort=change");
        assert_eq!(
            Query::parse(&super::super::tests::q(&[("runs", "3,5")]))
                .unwrap()
                .path(),
            "/compare?runs=3,5"
        );
        let mut report = crate::report::model::testing::small();
        let all = report.rows.len();
        let decided: Vec<String> = report
            .rows
            .iter()
            .filter(|r| {
                r.cells.iter().skip(1).flatten().any(|c| {
                    matches!(
                        c.verdict,
                        Some(
                            crate::stats::decision::Verdict::Slower
                                | crate::stats::decision::Verdict::Faster
                        )
                    ) && c.change_pct.is_some_and(|p| p.abs() >= 5.0)
                })
            })
            .map(|r| r.workload.clone())
            .collect();
        q.select(&mut report);
        assert!(report.rows.len() <= all);
        assert_eq!(
            report
                .rows
                .iter()
                .map(|r| r.workload.clone())
                .collect::<Vec<_>>()
                .len(),
            decided.len()
        );
        let largest: Vec<f64> = report
            .rows
            .iter()
            .map(|r| {
                r.cells
                    .iter()
                    .skip(1)
                    .flatten()
                    .filter_map(|c| c.change_pct.map(f64::abs))
                    .fold(0.0, f64::max)
            })
            .collect();
        assert!(largest.windows(2).all(|w| w[0] >= w[1]), "{largest:?}");
        for bad in [
            ("show", "some"),
            ("min", "-1"),
            ("min", "x"),
            ("sort", "up"),
        ] {
            let e = Query::parse(&super::super::tests::q(&[("runs", "1,2"), bad])).unwrap_err();
            assert_eq!(e.status, 400, "{bad:?}");
        }
        let header = q.header(&["run 3".into(), "run 5 <x>".into()]);
        assert!(
            header.contains("<a href=\"/runs/3\">run 3</a> (the baseline)"),
            "{header}"
        );
        assert!(
            header.contains("secperf rerun 3; secperf rerun 5"),
            "{header}"
        );
        assert!(!header.contains("<x>"), "{header}");
    }

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
