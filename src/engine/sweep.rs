//! Parameter sweeps (`overhead --sweep KEY=V1,V2,...`): one comparison per
//! value of one numeric parameter, all in the same randomised design, and
//! a cost model fitted to them.
//!
//! KEY is a mechanism parameter (`filters` of seccomp, `rules` and
//! `layers` of Landlock, `count` of audit's unrelated rules), applied to
//! every `-m` treatment whose mechanism has it, or a workload parameter
//! written `WORKLOAD.KEY` (`open.depth`), applied to that workload. Each
//! value makes its own comparison, so every point has its own interval and
//! verdict and the Holm family covers them all.
//!
//! The model is a straight line through the per-pair differences
//! (treatment minus baseline, ns/op) against the value, fitted by least
//! squares over every pair of every point ([`crate::stats::linear`]): for
//! seccomp "entry cost + cost per filter x filters" (the two numbers the
//! kernel's seccomp_benchmark prints), for Landlock the cost per path
//! component or per rule, for audit the cost per rule. A lack-of-fit test
//! says when a straight line does not describe the growth.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::Serialize;

use crate::model::{Comparison, Sweep, SweepPoint};
use crate::usage_bail;

/// What `--sweep` asked for, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepSpec {
    /// As given: `filters` or `open.depth`.
    pub key: String,
    /// For a workload parameter, the workload (`open`); None for a
    /// mechanism parameter.
    pub workload: Option<String>,
    /// The parameter's name (`filters`, `depth`).
    pub param: String,
    /// The values, as given, in order (whole numbers, at least two).
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...`. Values must be whole numbers (a line is fitted
/// to them), at least two distinct ones.
pub fn parse(spec: &str) -> Result<SweepSpec> {
    let Some((key, list)) = spec.split_once('=') else {
        usage_bail!(
            "--sweep '{spec}': expected KEY=V1,V2,... (e.g. --sweep filters=1,2,4,8, or \
             --sweep open.depth=1,4,16 for a workload parameter)"
        );
    };
    let key = key.trim();
    if key.is_empty() {
        usage_bail!("--sweep '{spec}': the key is empty (e.g. filters=1,2,4,8)");
    }
    let (workload, param) = match key.split_once('.') {
        Some((w, p)) => (Some(w.trim().to_string()), p.trim().to_string()),
        None => (None, key.to_string()),
    };
    let mut values = Vec::new();
    for v in list.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        if v.parse::<u64>().is_err() {
            usage_bail!(
                "--sweep {key}: '{v}' is not a whole number (a cost model is fitted to the values)"
            );
        }
        if !values.iter().any(|x: &String| x == v) {
            values.push(v.to_string());
        }
    }
    if values.len() < 2 {
        usage_bail!("--sweep {key}: give at least two different values (e.g. {key}=1,2,4,8)");
    }
    Ok(SweepSpec {
        key: key.to_string(),
        workload,
        param,
        values,
    })
}

/// How a sweep's coefficients are named: (model, intercept, slope).
fn model_names(mechanism: &str, spec: &SweepSpec) -> (String, String, String) {
    let named = |i: &str, s: &str, unit: &str| {
        (
            format!("ns/op added = {i} + {s} x {unit}"),
            i.to_string(),
            s.to_string(),
        )
    };
    match (spec.workload.as_deref(), mechanism, spec.param.as_str()) {
        (None, "seccomp", "filters") => named("entry cost", "cost per filter", "filters"),
        (None, "seccomp", "insns") => named("entry cost", "cost per instruction", "insns"),
        (None, "landlock", "rules") => named("intercept", "cost per rule", "rules"),
        (None, "landlock", "layers") => named("intercept", "cost per layer", "layers"),
        (None, "audit", "count") => named("intercept", "cost per rule", "rules"),
        (Some("open"), _, "depth") => named("intercept", "cost per path component", "depth"),
        (Some(_), _, "depth") => named("intercept", "cost per level", "depth"),
        (_, _, p) => named("intercept", &format!("cost per unit of {p}"), p),
    }
}

/// The sweeps in measured comparisons: comparisons that differ only in the
/// swept parameter form one sweep (per treatment, workload and task
/// count), each fitted when it has two or more values.
pub fn sweeps(spec: &SweepSpec, comparisons: &[Comparison]) -> Vec<Sweep> {
    let mut groups: BTreeMap<String, (String, Vec<SweepPoint>)> = BTreeMap::new();
    for c in comparisons {
        let value = match &spec.workload {
            None => c.params.get(&spec.param),
            Some(w) if *w == c.workload => c.workload_params.get(&spec.param),
            Some(_) => None,
        };
        let Some(value) = value.and_then(|v| v.parse::<f64>().ok()) else {
            continue;
        };
        let mut rest = c.clone();
        match &spec.workload {
            None => rest.params.remove(&spec.param),
            Some(_) => rest.workload_params.remove(&spec.param),
        };
        let label = crate::report::label::case(
            &crate::report::label::treatment(&rest),
            &crate::report::label::workload(&rest.workload, &rest.workload_params),
            c.tasks,
        );
        let entry = groups
            .entry(label.clone())
            .or_insert_with(|| (c.mechanism.clone(), Vec::new()));
        let comparison = match &spec.workload {
            None => crate::report::label::treatment(c),
            Some(w) => format!(
                "{} on {w} {}={value}",
                crate::report::label::treatment(c),
                spec.param
            ),
        };
        entry.1.push(SweepPoint {
            value,
            comparison,
            delta_ns_per_op: c
                .pair_data
                .iter()
                .map(|p| p.treatment_per_op - p.baseline_per_op)
                .collect(),
            overhead_pct: c.overhead_pct.estimate,
            baseline_ns_per_op: c.baseline_per_op,
            overhead_ci_pct: Some([c.overhead_pct.ci_low, c.overhead_pct.ci_high]),
        });
    }
    groups
        .into_iter()
        .filter(|(_, (_, points))| points.len() >= 2)
        .map(|(label, (mechanism, mut points))| {
            points.sort_by(|a, b| a.value.total_cmp(&b.value));
            let xy: Vec<(f64, f64)> = points
                .iter()
                .flat_map(|p| p.delta_ns_per_op.iter().map(move |d| (p.value, *d)))
                .collect();
            let (model, intercept_name, slope_name) = model_names(&mechanism, spec);
            Sweep {
                key: spec.key.clone(),
                label,
                model,
                intercept_name,
                slope_name,
                fit: crate::stats::linear::fit_line(&xy),
                points,
            }
        })
        .collect()
}

/// Fits the sweeps of a measured run and stores each with the run (a run
/// note named [`Sweep::NOTE`]), so that `results show` and `report` find
/// them again.
pub fn record(
    store: &mut crate::store::Store,
    run_id: i64,
    spec: &SweepSpec,
    comparisons: &[Comparison],
) -> Result<Vec<Sweep>> {
    let found = sweeps(spec, comparisons);
    for s in &found {
        store.add_run_note(run_id, Sweep::NOTE, &serde_json::to_value(s)?)?;
    }
    Ok(found)
}

/// The sweeps stored with a run.
pub fn stored(store: &crate::store::Store, run_id: i64) -> Result<Vec<Sweep>> {
    store
        .run_notes(run_id, Sweep::NOTE)?
        .into_iter()
        .map(|v| Ok(serde_json::from_value(v)?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;
    use crate::model::PairData;

    #[test]
    fn parses_mechanism_and_workload_keys() {
        let s = parse("filters=1,2,4,8").unwrap();
        assert_eq!(s.workload, None);
        assert_eq!(s.param, "filters");
        assert_eq!(s.values, ["1", "2", "4", "8"]);
        let s = parse("open.depth=1, 4,16,4").unwrap();
        assert_eq!(s.workload.as_deref(), Some("open"));
        assert_eq!(s.param, "depth");
        assert_eq!(s.values, ["1", "4", "16"]);
    }

    #[test]
    fn bad_sweeps_are_usage_errors() {
        for bad in [
            "filters",
            "=1,2",
            "filters=1",
            "filters=1,1",
            "filters=1,x",
            "filters=-1,2",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(exit_code(&e), 2, "{bad}: {e:#}");
        }
    }

    fn comparison(filters: u64, deltas: &[f64]) -> Comparison {
        let mut c = crate::model::testing::comparison("getppid", "seccomp", "args");
        c.params.insert("filters".into(), filters.to_string());
        c.pair_data = deltas
            .iter()
            .enumerate()
            .map(|(i, d)| PairData {
                index: i as u32,
                order: "AB".into(),
                baseline_per_op: 300.0,
                treatment_per_op: 300.0 + d,
                beside: Vec::new(),
            })
            .collect();
        c
    }

    #[test]
    fn fits_entry_cost_and_cost_per_filter() {
        let spec = parse("filters=1,2,4,8").unwrap();
        let cs: Vec<Comparison> = [1u64, 2, 4, 8]
            .iter()
            .map(|&f| {
                let base = 30.0 + 20.0 * f as f64;
                comparison(f, &[base - 1.0, base + 1.0, base - 0.5, base + 0.5])
            })
            .collect();
        let s = sweeps(&spec, &cs);
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!(s.intercept_name, "entry cost");
        assert_eq!(s.slope_name, "cost per filter");
        assert_eq!(s.points.len(), 4);
        assert!(
            s.label.starts_with("seccomp:args on getppid"),
            "{}",
            s.label
        );
        let fit = s.fit.as_ref().unwrap();
        assert!((fit.slope.estimate - 20.0).abs() < 0.5, "{fit:?}");
        assert!((fit.intercept.estimate - 30.0).abs() < 2.0, "{fit:?}");
        assert!(fit.straight);
    }

    #[test]
    fn comparisons_without_the_key_are_left_out() {
        let spec = parse("open.depth=1,4").unwrap();
        let cs = vec![comparison(1, &[1.0, 2.0, 3.0])];
        assert!(sweeps(&spec, &cs).is_empty());
    }
}
