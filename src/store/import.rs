//! Copying a run from another results database into this one: how a run a
//! VM guest measured (into its own database in a directory shared with the
//! host) lands in the host's store as a normal run.
//!
//! The copy is generic over the schema: every table that hangs off a run
//! (directly, or through a result or a comparison) is copied with its
//! columns read from SQLite itself, so a column added by a later migration
//! is copied without a change here. Both databases must have the same
//! schema version (the guest runs the host's own binary).

use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};

use super::guest_clock::{HostSpan, put_on_host_clock};
use super::{Store, disk_full};

/// Tables keyed by a run, and the tables keyed by their rows.
pub const RUN_CHILDREN: &[(&str, &[(&str, &str)])] = &[
    (
        "results",
        &[("samples", "result_id"), ("result_profiles", "result_id")],
    ),
    (
        "comparisons",
        &[
            ("comparison_pairs", "comparison_id"),
            ("comparison_profiles", "comparison_id"),
        ],
    ),
    ("calibrations", &[]),
    ("run_notes", &[]),
    ("policy_files", &[]),
];

impl Store {
    /// Copies run `run_id` of the database at `src` into this store, with
    /// everything recorded under it, in one transaction. Returns the new
    /// run's id. `system_json`, when given, replaces the run's; `host`,
    /// when given, puts the run's times on the host's clock (a guest's run,
    /// [`super::guest_clock`]).
    pub fn import_run(
        &mut self,
        src: &std::path::Path,
        run_id: i64,
        command: Option<&str>,
        system: Option<&serde_json::Value>,
        host: Option<HostSpan>,
    ) -> Result<i64> {
        let what_text = format!(
            "copying run {run_id} of {} into {}",
            src.display(),
            self.path.display()
        );
        let what = || what_text.clone();
        self.conn
            .execute("ATTACH DATABASE ?1 AS src", [src.to_string_lossy()])
            .with_context(what)?;
        let copied = self.import_attached(run_id, command, system, host);
        let detached = self.conn.execute("DETACH DATABASE src", []);
        let id = copied
            .with_context(what)
            .map_err(|e| disk_full(e, &self.path))?;
        detached.with_context(what)?;
        Ok(id)
    }

    /// The ids of the runs in the database at `src`, oldest first.
    pub fn runs_in(src: &std::path::Path) -> Result<Vec<i64>> {
        let store = Store::open_read_only(src)?;
        let mut stmt = store.conn.prepare("SELECT id FROM runs ORDER BY id")?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        Ok(ids)
    }

    fn import_attached(
        &mut self,
        run_id: i64,
        command: Option<&str>,
        system: Option<&serde_json::Value>,
        host: Option<HostSpan>,
    ) -> Result<i64> {
        let version = |db: &str| -> Result<i64> {
            Ok(self
                .conn
                .query_row(&format!("PRAGMA {db}.user_version"), [], |r| r.get(0))?)
        };
        let (ours, theirs) = (version("main")?, version("src")?);
        if ours != theirs {
            anyhow::bail!(
                "the source database has schema version {theirs}, this one {ours}: both must \
                 come from the same secperf"
            );
        }
        let same: Option<i64> = self
            .conn
            .query_row(
                "SELECT m.id FROM main.runs m JOIN src.runs s ON s.uuid = m.uuid WHERE s.id = ?1",
                [run_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(same) = same {
            anyhow::bail!("run {run_id} is already stored here as run {same} (the same uuid)");
        }
        let tx = self.conn.transaction()?;
        let run_cols = columns(&tx, "runs", &["id"])?;
        let n = tx.execute(
            &format!(
                "INSERT INTO main.runs ({run_cols}) SELECT {run_cols} FROM src.runs WHERE id = ?1"
            ),
            [run_id],
        )?;
        if n == 0 {
            anyhow::bail!("the source database has no run {run_id}");
        }
        let new_run = tx.last_insert_rowid();
        if let Some(command) = command {
            tx.execute(
                "UPDATE main.runs SET command = ?1 WHERE id = ?2",
                params![command, new_run],
            )?;
        }
        if let Some(system) = system {
            tx.execute(
                "UPDATE main.runs SET system_json = ?1 WHERE id = ?2",
                params![serde_json::to_string(system)?, new_run],
            )?;
        }
        for (table, children) in RUN_CHILDREN {
            let cols = columns(&tx, table, &["id", "run_id"])?;
            let ids: Vec<i64> = {
                let mut stmt = tx.prepare(&format!(
                    "SELECT id FROM src.{table} WHERE run_id = ?1 ORDER BY id"
                ))?;
                stmt.query_map([run_id], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?
            };
            for old in ids {
                tx.execute(
                    &format!(
                        "INSERT INTO main.{table} (run_id, {cols}) SELECT ?1, {cols} FROM \
                         src.{table} WHERE id = ?2"
                    ),
                    params![new_run, old],
                )?;
                let new = tx.last_insert_rowid();
                for (child, key) in *children {
                    let child_cols = columns(&tx, child, &["id", key])?;
                    let (insert_cols, select_cols) = if child_cols.is_empty() {
                        (key.to_string(), "?1".to_string())
                    } else {
                        (format!("{key}, {child_cols}"), format!("?1, {child_cols}"))
                    };
                    tx.execute(
                        &format!(
                            "INSERT INTO main.{child} ({insert_cols}) SELECT {select_cols} \
                             FROM src.{child} WHERE {key} = ?2"
                        ),
                        params![new, old],
                    )?;
                }
            }
        }
        if let Some(host) = host {
            put_on_host_clock(&tx, new_run, host)?;
        }
        tx.commit()?;
        Ok(new_run)
    }
}

/// The columns of `table` (as the source has them) but `skip`, joined
/// with commas.
fn columns(conn: &rusqlite::Connection, table: &str, skip: &[&str]) -> Result<String> {
    let mut stmt = conn.prepare(&format!("PRAGMA src.table_info({table})"))?;
    let cols = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(cols
        .into_iter()
        .filter(|c| !skip.contains(&c.as_str()))
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", "))
}
