//! Cost probes of `secperf predict`: the A/B figures its models are built
//! from, kept per machine, treatment, workload and policy digest so that a
//! model is measured once and reused (the latest measurement wins).

use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};

use super::codec::{json_from_sql, json_to_sql};
use super::{Store, no_run_error, run_exists};
use crate::model::ProbeFigure;

impl Store {
    /// Stores (or replaces) the figure of probe (`machine`, `figure.spec`,
    /// `figure.workload`, `policy_sha256`); its run must exist.
    pub fn put_cost_probe(
        &mut self,
        machine: &str,
        policy_sha256: &str,
        figure: &ProbeFigure,
    ) -> Result<()> {
        if !run_exists(&self.conn, figure.run_id)? {
            return Err(no_run_error(figure.run_id));
        }
        let json = serde_json::to_value(figure)?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO cost_probes \
                 (machine, spec, workload, policy_sha256, run_id, measured_at, json) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    machine,
                    figure.spec,
                    figure.workload,
                    policy_sha256,
                    figure.run_id,
                    figure.measured_at.to_rfc3339(),
                    json_to_sql(&json, "cost_probes.json")?
                ],
            )
            .with_context(|| format!("cannot store the cost probe {}", figure.spec))?;
        Ok(())
    }

    /// The stored figure of a probe, if any.
    pub fn cost_probe(
        &self,
        machine: &str,
        spec: &str,
        workload: &str,
        policy_sha256: &str,
    ) -> Result<Option<ProbeFigure>> {
        let json: Option<String> = self
            .conn
            .query_row(
                "SELECT json FROM cost_probes WHERE machine = ?1 AND spec = ?2 AND workload = ?3 \
                 AND policy_sha256 = ?4",
                params![machine, spec, workload, policy_sha256],
                |r| r.get(0),
            )
            .optional()
            .with_context(|| format!("cannot read the cost probe {spec}"))?;
        json.map(|j| {
            let v = json_from_sql(&j, "cost_probes.json")?;
            serde_json::from_value(v).context("a stored cost probe is not readable")
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(store: &mut Store) -> i64 {
        let meta = crate::model::RunMeta {
            label: "l".into(),
            kind: "overhead".into(),
            started_at: chrono::Utc::now(),
            host: "h".into(),
            secperf_version: "0".into(),
            command: "c".into(),
            params: serde_json::json!({}),
            system: serde_json::json!({}),
        };
        store.begin_run(&meta).unwrap()
    }

    #[test]
    fn probes_round_trip_are_replaced_and_keyed_by_machine_and_policy() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let mut f = ProbeFigure {
            spec: "seccomp:allow".into(),
            workload: "getppid".into(),
            baseline_ns_per_op: 100.0,
            delta_ns_per_op: 3.0,
            delta_low_ns: 1.0,
            delta_high_ns: 5.0,
            pairs: 12,
            run_id: 999,
            measured_at: chrono::Utc::now(),
        };
        assert!(store.put_cost_probe("m", "", &f).is_err(), "needs its run");
        f.run_id = run(&mut store);
        store.put_cost_probe("m", "", &f).unwrap();
        assert_eq!(
            store
                .cost_probe("m", "seccomp:allow", "getppid", "")
                .unwrap(),
            Some(f.clone())
        );
        assert_eq!(
            store
                .cost_probe("other", "seccomp:allow", "getppid", "")
                .unwrap(),
            None
        );
        assert_eq!(
            store
                .cost_probe("m", "seccomp:allow", "getppid", "ab")
                .unwrap(),
            None
        );
        f.delta_ns_per_op = 4.0;
        store.put_cost_probe("m", "", &f).unwrap();
        let back = store
            .cost_probe("m", "seccomp:allow", "getppid", "")
            .unwrap()
            .unwrap();
        assert_eq!(back.delta_ns_per_op, 4.0);
    }
}
