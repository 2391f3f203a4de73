//! A/B comparisons (`secperf overhead`): one row per mechanism x workload x
//! task count with the overhead estimate, its interval, p-value and
//! verdict as columns (queryable from SQL), and one row per pair.

use anyhow::{Context, Result, anyhow};
use rusqlite::{Connection, TransactionBehavior, params};

use super::codec::{int_from_sql, json_from_sql, json_to_sql, real_from_sql, u64_to_sql};
use super::{Store, no_run_error, run_exists};
use std::collections::BTreeMap;

use rusqlite::OptionalExtension;

use crate::model::{Attribution, Comparison, Measure, Metric, Mode, PairData, Profile};
use crate::stats::paired::{OverheadPct, Verdict};

/// A comparison's measure as stored: its name (time, instructions).
fn measure_to_sql(m: &Measure) -> Result<&'static str> {
    match m.metric() {
        Some(Metric::Time) => Ok("time"),
        Some(Metric::Instructions) => Ok("instructions"),
        None => Err(anyhow!(
            "comparisons.measure: a comparison's own measure is time or instructions, not {}",
            m.name
        )),
    }
}

/// A stored comparison's measure.
fn measure_from_sql(s: &str) -> Result<Measure> {
    Metric::parse(s)
        .map(Measure::of)
        .map_err(|_| anyhow!("comparisons.measure: unknown value '{s}'"))
}

/// A stored verdict, by its one name (`Verdict`'s `FromStr`).
fn verdict_from_sql(s: &str) -> Result<Verdict> {
    s.parse()
        .map_err(|_| anyhow!("comparisons.verdict: unknown value '{s}'"))
}

impl Store {
    /// Stores one comparison with all its pairs, committed before returning.
    pub fn add_comparison(&mut self, run_id: i64, c: &Comparison) -> Result<i64> {
        let context = || {
            format!(
                "cannot store comparison {} {}:{} for run {run_id}",
                c.workload, c.mechanism, c.variant
            )
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .with_context(context)?;
        if !run_exists(&tx, run_id)? {
            return Err(no_run_error(run_id)).with_context(context);
        }
        let o = &c.overhead_pct;
        tx.execute(
            "INSERT INTO comparisons (run_id, workload, workload_params_json, mechanism, variant,
                 params_json, mode, tasks, pairs, sample_ms, samples_per_half,
                 baseline_per_op, treatment_per_op, overhead_pct, overhead_ci_low,
                 overhead_ci_high, p_value, verdict, child_cpu_json, sequential_json, unfinished,
                 beside_json, ci_alpha, own_ci_low, own_ci_high, measure)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                     ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)",
            params![
                run_id,
                c.workload,
                json_to_sql(&c.workload_params, "comparisons.workload_params_json")?,
                c.mechanism,
                c.variant,
                json_to_sql(&c.params, "comparisons.params_json")?,
                c.mode.to_string(),
                c.tasks,
                c.pairs,
                u64_to_sql(c.sample_ms, "comparisons.sample_ms")?,
                c.samples_per_half,
                c.baseline_per_op,
                c.treatment_per_op,
                o.estimate,
                o.ci_low,
                o.ci_high,
                o.p_value,
                <&str>::from(o.verdict),
                c.child_cpu
                    .as_ref()
                    .map(|x| json_to_sql(x, "comparisons.child_cpu_json"))
                    .transpose()?,
                c.sequential
                    .as_ref()
                    .map(|x| json_to_sql(x, "comparisons.sequential_json"))
                    .transpose()?,
                c.unfinished,
                (!c.beside.is_empty())
                    .then(|| json_to_sql(&c.beside, "comparisons.beside_json"))
                    .transpose()?,
                c.ci_alpha,
                c.own_ci_low_pct,
                c.own_ci_high_pct,
                measure_to_sql(&c.measure)?,
            ],
        )
        .with_context(context)?;
        let id = tx.last_insert_rowid();
        {
            let mut insert = tx.prepare(
                "INSERT INTO comparison_pairs (comparison_id, idx, run_order, baseline_per_op,
                     treatment_per_op, beside_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for p in &c.pair_data {
                insert
                    .execute(params![
                        id,
                        p.index,
                        p.order,
                        p.baseline_per_op,
                        p.treatment_per_op,
                        (!p.beside.is_empty())
                            .then(|| json_to_sql(&p.beside, "comparison_pairs.beside_json"))
                            .transpose()?,
                    ])
                    .with_context(context)?;
            }
        }
        if let Some(a) = &c.attribution {
            tx.execute(
                "INSERT INTO comparison_profiles (comparison_id, attribution_json,
                     folded_baseline, folded_treatment) VALUES (?1, ?2, ?3, ?4)",
                params![
                    id,
                    json_to_sql(a, "comparison_profiles.attribution_json")?,
                    folded_to_text(&a.folded[0]),
                    folded_to_text(&a.folded[1]),
                ],
            )
            .with_context(context)?;
        }
        tx.commit().with_context(context)?;
        Ok(id)
    }
}

/// Folded stacks as the lines flame graph tools read: `stack COUNT`.
pub fn folded_to_text(folded: &BTreeMap<String, u64>) -> String {
    folded
        .iter()
        .map(|(stack, n)| format!("{stack} {n}\n"))
        .collect()
}

/// The inverse of [`folded_to_text`].
pub fn folded_from_text(text: &str, column: &str) -> Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let (stack, n) = line
            .rsplit_once(' ')
            .and_then(|(s, n)| Some((s, n.parse::<u64>().ok()?)))
            .with_context(|| format!("{column}: line {} is not 'STACK COUNT'", i + 1))?;
        *out.entry(stack.to_string()).or_default() += n;
    }
    Ok(out)
}

/// The profile of stored result `result_id`, if it was profiled.
pub(super) fn load_result_profile(conn: &Connection, result_id: i64) -> Result<Option<Profile>> {
    let row: Option<(String, String)> = conn
        .query_row(
            "SELECT profile_json, folded FROM result_profiles WHERE result_id = ?1",
            [result_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((json, folded)) = row else {
        return Ok(None);
    };
    let mut p: Profile = json_from_sql(&json, "result_profiles.profile_json")?;
    p.folded = folded_from_text(&folded, "result_profiles.folded")?;
    Ok(Some(p))
}

fn load_attribution(conn: &Connection, comparison_id: i64) -> Result<Option<Attribution>> {
    let row: Option<(String, String, String)> = conn
        .query_row(
            "SELECT attribution_json, folded_baseline, folded_treatment
             FROM comparison_profiles WHERE comparison_id = ?1",
            [comparison_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((json, b, t)) = row else {
        return Ok(None);
    };
    let mut a: Attribution = json_from_sql(&json, "comparison_profiles.attribution_json")?;
    a.folded = [
        folded_from_text(&b, "comparison_profiles.folded_baseline")?,
        folded_from_text(&t, "comparison_profiles.folded_treatment")?,
    ];
    Ok(Some(a))
}

impl Store {
    /// Replaces a stored comparison's p-value and verdict with the final,
    /// multiplicity-corrected ones.
    pub fn set_comparison_decision(&mut self, comparison_id: i64, c: &Comparison) -> Result<()> {
        let o = &c.overhead_pct;
        let n = self
            .conn
            .execute(
                "UPDATE comparisons SET p_value = ?1, verdict = ?2, overhead_ci_low = ?3,
                     overhead_ci_high = ?4, ci_alpha = ?5, own_ci_low = ?6, own_ci_high = ?7,
                     beside_json = ?8
                 WHERE id = ?9",
                params![
                    o.p_value,
                    <&str>::from(o.verdict),
                    o.ci_low,
                    o.ci_high,
                    c.ci_alpha,
                    c.own_ci_low_pct,
                    c.own_ci_high_pct,
                    (!c.beside.is_empty())
                        .then(|| json_to_sql(&c.beside, "comparisons.beside_json"))
                        .transpose()?,
                    comparison_id
                ],
            )
            .with_context(|| format!("cannot update comparison {comparison_id}"))?;
        anyhow::ensure!(n == 1, "comparison {comparison_id} does not exist");
        Ok(())
    }
}

/// Reads a run's comparisons back, in insertion order.
pub(super) fn load_comparisons(conn: &Connection, run_id: i64) -> Result<Vec<Comparison>> {
    let mut stmt = conn.prepare(
        "SELECT id, workload, workload_params_json, mechanism, variant, params_json, mode, tasks,
                pairs, sample_ms, samples_per_half, baseline_per_op, treatment_per_op,
                overhead_pct, overhead_ci_low, overhead_ci_high, p_value, verdict, child_cpu_json,
                sequential_json, unfinished, beside_json, ci_alpha, own_ci_low,
                own_ci_high, measure
         FROM comparisons WHERE run_id = ?1 ORDER BY id",
    )?;
    let mut pairs = conn.prepare(
        "SELECT idx, run_order, baseline_per_op, treatment_per_op, beside_json
         FROM comparison_pairs WHERE comparison_id = ?1 ORDER BY idx",
    )?;
    let mut out = Vec::new();
    let mut rows = stmt.query([run_id])?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let mut read = || -> Result<Comparison> {
            let mode: String = row.get(6)?;
            let pair_data = pairs
                .query_map([id], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get::<_, Option<String>>(4)?,
                    ))
                })?
                .map(|r| {
                    let (idx, order, b, t, m) = r?;
                    Ok(PairData {
                        index: int_from_sql(idx, "comparison_pairs.idx")?,
                        order,
                        baseline_per_op: real_from_sql(b),
                        treatment_per_op: real_from_sql(t),
                        beside: m
                            .map(|j| json_from_sql(&j, "comparison_pairs.beside_json"))
                            .transpose()?
                            .unwrap_or_default(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Comparison {
                workload: row.get(1)?,
                workload_params: json_from_sql(
                    &row.get::<_, String>(2)?,
                    "comparisons.workload_params_json",
                )?,
                mechanism: row.get(3)?,
                variant: row.get(4)?,
                params: json_from_sql(&row.get::<_, String>(5)?, "comparisons.params_json")?,
                mode: mode
                    .parse::<Mode>()
                    .map_err(|e| anyhow!("comparisons.mode: {e}"))?,
                tasks: int_from_sql(row.get(7)?, "comparisons.tasks")?,
                pairs: int_from_sql(row.get(8)?, "comparisons.pairs")?,
                sample_ms: int_from_sql(row.get(9)?, "comparisons.sample_ms")?,
                samples_per_half: int_from_sql(row.get(10)?, "comparisons.samples_per_half")?,
                baseline_per_op: real_from_sql(row.get(11)?),
                treatment_per_op: real_from_sql(row.get(12)?),
                overhead_pct: OverheadPct {
                    estimate: real_from_sql(row.get(13)?),
                    ci_low: real_from_sql(row.get(14)?),
                    ci_high: real_from_sql(row.get(15)?),
                    p_value: real_from_sql(row.get(16)?),
                    verdict: verdict_from_sql(&row.get::<_, String>(17)?)?,
                },
                hodges_lehmann_pct: crate::stats::paired::hodges_lehmann_pct(
                    &pair_data
                        .iter()
                        .map(|p| p.baseline_per_op)
                        .collect::<Vec<_>>(),
                    &pair_data
                        .iter()
                        .map(|p| p.treatment_per_op)
                        .collect::<Vec<_>>(),
                ),
                pair_data,
                attribution: load_attribution(conn, id)?,
                child_cpu: row
                    .get::<_, Option<String>>(18)?
                    .map(|j| json_from_sql(&j, "comparisons.child_cpu_json"))
                    .transpose()?,
                sequential: row
                    .get::<_, Option<String>>(19)?
                    .map(|j| json_from_sql(&j, "comparisons.sequential_json"))
                    .transpose()?,
                unfinished: row.get(20)?,
                ci_alpha: row.get(22)?,
                own_ci_low_pct: row.get(23)?,
                own_ci_high_pct: row.get(24)?,
                beside: row
                    .get::<_, Option<String>>(21)?
                    .map(|j| json_from_sql(&j, "comparisons.beside_json"))
                    .transpose()?
                    .unwrap_or_default(),
                measure: measure_from_sql(&row.get::<_, String>(25)?)?,
            })
        };
        out.push(read().with_context(|| format!("comparison {id} is corrupt"))?);
    }
    Ok(out)
}
