//! `predict`'s A/B probes: the cost model's per-call figures for this
//! machine and policy, taken from the store where they are fresh and
//! measured now (an `overhead` run per workload, through
//! [`super::overhead::measure`]) and stored where not.

use std::path::Path;

use anyhow::{Context, Result};

use crate::mechanisms::Treatment;
use crate::predict;
use crate::predict::ProbeFigure;

/// Above this share of the machine's CPU time in use by others, probes
/// measured now come with a warning, percent.
const BUSY_PCT: f64 = 30.0;

/// The typed `overhead` request that measures the probes `specs` on one
/// workload (its name and parameters), and its `--no-wait`.
pub type RequestOf<'a> = dyn Fn(&[String], &str, &crate::params::Params) -> Result<(super::plan::OverheadRequest, bool)>
    + 'a;

/// The figures of the plan's probes: stored ones for this machine and
/// policy (unless `remeasure`), the others measured now (one `overhead`
/// run per workload, of the request `request_of` makes) and stored; a
/// busy machine is warned of, and the warning kept in `busy_note`.
pub fn figures(
    plan: &predict::ModelPlan,
    remeasure: bool,
    db: Option<&Path>,
    busy_note: &mut Option<String>,
    request_of: &RequestOf<'_>,
) -> Result<Vec<ProbeFigure>> {
    let machine = predict::machine_key(&crate::probe::probe());
    let shas: Vec<String> = plan
        .probes
        .iter()
        .map(|p| predict::policy_sha256(&p.spec))
        .collect::<Result<_>>()?;
    let mut figures: Vec<Option<ProbeFigure>> = {
        let (_, store) = super::session::open_store(db)?;
        plan.probes
            .iter()
            .zip(&shas)
            .map(|(p, sha)| match remeasure {
                true => Ok(None),
                false => Ok(store
                    .cost_probe(&machine, &p.spec, &p.workload, sha)?
                    .filter(|f| predict::fresh(f, chrono::Utc::now()))),
            })
            .collect::<Result<_>>()?
    };
    let mut workloads: Vec<&str> = Vec::new();
    // A probe's workload is a name, then KEY=VALUE parameters.
    let split = |w: &str| -> (String, crate::params::Params) {
        let mut words = w.split_whitespace();
        let name = words.next().unwrap_or_default().to_string();
        let params = words
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (name, params)
    };
    for (p, f) in plan.probes.iter().zip(&figures) {
        if f.is_none() && !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    // Probes measured beside a busy target read noisy and low (servers.sh
    // saw STIG's getppid probe at +73 ns [-2, +173] beside a loaded redis,
    // +126 ns [+124, +130] idle): say so, in the output too.
    if !workloads.is_empty()
        && let Some(busy) =
            crate::runner::procfs::machine_busy_pct(std::time::Duration::from_millis(500))
        && busy > BUSY_PCT
    {
        let warning = format!(
            "the probes were measured while this machine was {busy:.0}% busy (other processes \
             on its CPUs): their figures are noisier and may read low; measure them on an idle \
             machine (`predict --remeasure` once the load stops, or `predict -m SPEC -- CMD` \
             there first: stored probes are reused)"
        );
        crate::say!("secperf: warning: {warning}");
        *busy_note = Some(warning);
    }
    for workload in workloads {
        let missing: Vec<usize> = (0..plan.probes.len())
            .filter(|&i| figures[i].is_none() && plan.probes[i].workload == workload)
            .collect();
        crate::say!(
            "secperf: measuring the cost model's probes on {workload} (stored for this machine \
             and reused): {}",
            missing
                .iter()
                .map(|&i| format!("{} ({})", plan.probes[i].spec, plan.probes[i].role))
                .collect::<Vec<_>>()
                .join("; ")
        );
        let specs: Vec<String> = missing
            .iter()
            .map(|&i| plan.probes[i].spec.clone())
            .collect();
        let (name, params) = split(workload);
        let (request, no_wait) = request_of(&specs, &name, &params)?;
        let measured = super::overhead::measure(&request, db, no_wait)?;
        let (session, comparisons) = (measured.session, measured.comparisons);
        let mut store = session.store;
        for &i in &missing {
            let probe = &plan.probes[i];
            let t = Treatment::parse(&probe.spec)?;
            let c = comparisons
                .iter()
                .find(|c| {
                    c.mechanism == t.mechanism.name()
                        && c.variant == t.variant
                        && c.params == t.params
                        && c.workload == name
                        && params
                            .iter()
                            .all(|(k, v)| c.workload_params.get(k) == Some(v))
                })
                .with_context(|| format!("the probes' run has no comparison of {}", probe.spec))?;
            if c.unfinished {
                anyhow::bail!(
                    "the probe {} on {workload} did not finish: run predict again",
                    probe.spec
                );
            }
            let base = c.baseline_per_op;
            let figure = ProbeFigure {
                spec: probe.spec.clone(),
                workload: workload.to_string(),
                baseline_ns_per_op: base,
                delta_ns_per_op: base * c.overhead_pct.estimate / 100.0,
                delta_low_ns: base * c.overhead_pct.ci_low / 100.0,
                delta_high_ns: base * c.overhead_pct.ci_high / 100.0,
                pairs: c.pairs,
                run_id: session.run_id,
                measured_at: chrono::Utc::now(),
            };
            store.put_cost_probe(&machine, &shas[i], &figure)?;
            figures[i] = Some(figure);
        }
    }
    Ok(figures.into_iter().map(|f| f.expect("measured")).collect())
}
