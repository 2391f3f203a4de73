//! Run notes: named JSON values a command attaches to a run besides its
//! results and comparisons (a suite's AVC counters per workload), read
//! back in insertion order.

use anyhow::{Context, Result};
use rusqlite::params;

use super::codec::{json_from_sql, json_to_sql};
use super::{Store, no_run_error, run_exists};

impl Store {
    /// Attaches `value` to run `run_id` under `name` (committed at once).
    pub fn add_run_note(
        &mut self,
        run_id: i64,
        name: &str,
        value: &serde_json::Value,
    ) -> Result<()> {
        if !run_exists(&self.conn, run_id)? {
            return Err(no_run_error(run_id));
        }
        self.conn
            .execute(
                "INSERT INTO run_notes (run_id, name, json) VALUES (?1, ?2, ?3)",
                params![run_id, name, json_to_sql(value, "run_notes.json")?],
            )
            .with_context(|| format!("cannot store note '{name}' of run {run_id}"))?;
        Ok(())
    }

    /// The notes of run `run_id` called `name`, oldest first.
    pub fn run_notes(&self, run_id: i64, name: &str) -> Result<Vec<serde_json::Value>> {
        let mut stmt = self
            .conn
            .prepare("SELECT json FROM run_notes WHERE run_id = ?1 AND name = ?2 ORDER BY id")?;
        let rows = stmt.query_map(params![run_id, name], |r| r.get::<_, String>(0))?;
        rows.map(|r| json_from_sql(&r?, "run_notes.json"))
            .collect::<Result<Vec<_>>>()
            .with_context(|| format!("cannot read notes of run {run_id}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip_in_order_and_need_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("n.db")).unwrap();
        assert!(store.add_run_note(7, "avc", &serde_json::json!(1)).is_err());
        let meta = crate::model::RunMeta {
            label: "l".into(),
            kind: "suite".into(),
            started_at: chrono::Utc::now(),
            host: "h".into(),
            secperf_version: "0".into(),
            command: "c".into(),
            params: serde_json::json!({}),
            system: serde_json::json!({}),
        };
        let id = store.begin_run(&meta).unwrap();
        for v in [serde_json::json!({"a": 1}), serde_json::json!([2])] {
            store.add_run_note(id, "avc", &v).unwrap();
        }
        store
            .add_run_note(id, "other", &serde_json::json!(3))
            .unwrap();
        assert_eq!(
            store.run_notes(id, "avc").unwrap(),
            vec![serde_json::json!({"a": 1}), serde_json::json!([2])]
        );
        assert!(store.run_notes(id, "none").unwrap().is_empty());
    }
}
