//! The policy files a run measured (`policy_files`): stored as they were
//! read, with their SHA-256, so a run can be read and repeated after its
//! files changed or went away.

use anyhow::{Context, Result};
use rusqlite::params;

use super::codec::int_from_sql;
use super::{Store, no_run_error, run_exists};
use crate::model::PolicyFile;

impl Store {
    /// Stores `file` with run `run_id` (committed at once).
    pub fn add_policy_file(&mut self, run_id: i64, file: &PolicyFile) -> Result<()> {
        if !run_exists(&self.conn, run_id)? {
            return Err(no_run_error(run_id));
        }
        self.conn
            .execute(
                "INSERT INTO policy_files (run_id, treatment, param, path, sha256, bytes, content)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    run_id,
                    file.treatment,
                    file.param,
                    file.path,
                    file.sha256,
                    i64::try_from(file.bytes).unwrap_or(i64::MAX),
                    file.content
                ],
            )
            .with_context(|| format!("cannot store policy file {} of run {run_id}", file.path))
            .map_err(|e| super::disk_full(e, &self.path))?;
        Ok(())
    }

    /// The policy files of run `run_id`, in the order they were stored.
    pub fn policy_files(&self, run_id: i64) -> Result<Vec<PolicyFile>> {
        let mut stmt = self.conn.prepare(
            "SELECT treatment, param, path, sha256, bytes, content FROM policy_files
             WHERE run_id = ?1 ORDER BY id",
        )?;
        let mut rows = stmt.query([run_id])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(PolicyFile {
                treatment: row.get(0)?,
                param: row.get(1)?,
                path: row.get(2)?,
                sha256: row.get(3)?,
                bytes: int_from_sql(row.get(4)?, "policy_files.bytes")?,
                content: row.get(5)?,
            });
        }
        Ok(out)
    }

    /// Whether run `run_id` holds any measurement (a result or a
    /// comparison with at least one pair).
    pub fn run_has_data(&self, run_id: i64) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM results WHERE run_id = ?1)
                 OR EXISTS (SELECT 1 FROM comparisons WHERE run_id = ?1 AND pairs > 0)",
            [run_id],
            |r| r.get(0),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_files_round_trip_and_go_with_their_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let file = PolicyFile {
            treatment: "audit:rules=/tmp/r.rules".into(),
            param: "rules".into(),
            path: "/tmp/r.rules".into(),
            sha256: "00".repeat(32),
            bytes: 3,
            content: "-D\n".into(),
        };
        assert!(store.add_policy_file(99, &file).is_err());
        let run = crate::model::testing::run(0, "l", "6.18", vec![]);
        let id = store.begin_run(&run.meta).unwrap();
        assert!(!store.run_has_data(id).unwrap());
        store.add_policy_file(id, &file).unwrap();
        assert_eq!(store.policy_files(id).unwrap(), vec![file]);
        store
            .add_result(id, &crate::model::testing::result("getppid", &[300.0]))
            .unwrap();
        assert!(store.run_has_data(id).unwrap());
        store.delete_run(id).unwrap();
        assert!(store.policy_files(id).unwrap().is_empty());
    }
}
