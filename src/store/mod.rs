//! Results storage: one embedded SQLite database holding every run.
//!
//! A run is recorded incrementally: [`Store::begin_run`] inserts the run row
//! (with `finished_at` NULL), each [`Store::add_result`] commits one
//! workload's result and all its samples in one transaction, and
//! [`Store::finish_run`] stamps `finished_at`. A crash therefore loses at
//! most the workload being measured, and the interrupted run stays visible
//! in [`Store::list_runs`] as unfinished.
//!
//! Journal mode: SQLite's default rollback journal (with its default
//! `synchronous=FULL`), not WAL. Writes are rare (one commit per workload,
//! seconds apart) and small, so WAL's reader/writer concurrency buys
//! nothing; the rollback journal keeps the database a single file that can
//! be copied or shared as is, and every commit is durable. Readers that
//! collide with a commit wait on the busy timeout.
//!
//! This file opens the database and writes; reading back is in `read.rs`,
//! the schema in `migrations.rs`, value conversions in `codec.rs`, JSON/CSV
//! export in `export.rs`.

pub mod calibrations;
mod codec;
mod comparisons;
pub mod export;
pub mod migrations;
mod notes;
mod read;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::Utc;
use rusqlite::{Connection, MAIN_DB, OpenFlags, OptionalExtension, TransactionBehavior, params};

use crate::error::UsageError;
use crate::model::{RunMeta, WorkloadResult};
use crate::usage_bail;
use codec::{f64s_to_json, json_to_sql, time_to_sql, u64_to_sql};

pub use export::{export_csv, export_json};

/// How long a statement waits for another process's lock before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Environment variable naming the database when `--db` is not given.
pub const DB_ENV_VAR: &str = "SECPERF_DB";

/// How every "pick another database" hint ends.
const CHOOSE_ANOTHER: &str = "choose another with --db PATH or SECPERF_DB";

/// Where the database lives: `--db PATH`, else `$SECPERF_DB`, else
/// `dirs::data_dir()/secperf/secperf.db` (`$XDG_DATA_HOME/secperf/...`).
/// Creates the parent directory when it is missing.
pub fn resolve_db_path(cli: Option<&Path>) -> Result<PathBuf> {
    resolve_db_path_from(cli, std::env::var_os(DB_ENV_VAR), dirs::data_dir())
}

/// [`resolve_db_path`] with its environment passed in, for tests.
fn resolve_db_path_from(
    cli: Option<&Path>,
    env: Option<OsString>,
    data_dir: Option<PathBuf>,
) -> Result<PathBuf> {
    let path = if let Some(path) = cli {
        path.to_path_buf()
    } else if let Some(path) = env.filter(|p| !p.is_empty()) {
        PathBuf::from(path)
    } else if let Some(dir) = data_dir {
        dir.join("secperf").join("secperf.db")
    } else {
        usage_bail!(
            "cannot find a data directory for the results database (neither $XDG_DATA_HOME \
             nor $HOME is set); {CHOOSE_ANOTHER}"
        );
    };
    ensure_parent_dir(&path)?;
    Ok(path)
}

fn ensure_parent_dir(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.exists() => std::fs::create_dir_all(dir)
            .map_err(|e| {
                UsageError::new(format!(
                    "cannot create directory {} for results database {}: {e} ({CHOOSE_ANOTHER})",
                    dir.display(),
                    path.display()
                ))
                .into()
            }),
        _ => Ok(()),
    }
}

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its
    /// schema up to date. Any failure (unwritable location, a directory, a
    /// file that is not a database, a schema newer than this binary) is a
    /// [`UsageError`] naming the path and how to pick another.
    pub fn open(path: &Path) -> Result<Store> {
        Self::open_inner(path).map_err(|err| {
            if err.chain().any(|e| e.is::<UsageError>()) {
                err
            } else {
                UsageError::new(format!(
                    "cannot open results database {}: {err:#} ({CHOOSE_ANOTHER})",
                    path.display()
                ))
                .into()
            }
        })
    }

    fn open_inner(path: &Path) -> Result<Store> {
        ensure_parent_dir(path)?;
        if path.is_dir() {
            anyhow::bail!("it is a directory");
        }
        // No SQLITE_OPEN_URI: a path is always a file name, even "file:x".
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "foreign_keys", true)?;
        let foreign_keys: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
        anyhow::ensure!(foreign_keys, "SQLite refused to enable foreign keys");
        // SQLite silently falls back to read-only for a file it cannot write.
        if conn.is_readonly(MAIN_DB)? {
            anyhow::bail!("the file is read-only");
        }
        // The first real read: a file that is not a database fails here.
        conn.query_row("SELECT COUNT(*) FROM sqlite_schema", [], |r| {
            r.get::<_, i64>(0)
        })
        .context("cannot read it")?;
        migrations::migrate(&mut conn, path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The database file this store was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records the start of a run (unfinished until [`Store::finish_run`]).
    pub fn begin_run(&mut self, meta: &RunMeta) -> Result<i64> {
        self.conn
            .execute(
                "INSERT INTO runs (label, kind, started_at, host, secperf_version, command,
                                   params_json, system_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    meta.label,
                    meta.kind,
                    time_to_sql(&meta.started_at),
                    meta.host,
                    meta.secperf_version,
                    meta.command,
                    json_to_sql(&meta.params, "runs.params_json")?,
                    json_to_sql(&meta.system, "runs.system_json")?,
                ],
            )
            .with_context(|| {
                format!(
                    "cannot record run '{}' in {}",
                    meta.label,
                    self.path.display()
                )
            })?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Stores one workload result and all its samples in one transaction,
    /// committed before returning. Returns the result's id.
    pub fn add_result(&mut self, run_id: i64, result: &WorkloadResult) -> Result<i64> {
        let context = || {
            format!(
                "cannot store result of workload {} ({} tasks) for run {run_id}",
                result.workload, result.tasks
            )
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .with_context(context)?;
        if !run_exists(&tx, run_id)? {
            return Err(no_run_error(run_id)).with_context(context);
        }
        let unit_rate = result.unit_rate.as_ref();
        let unit_rate_per_op = unit_rate
            .map(|u| u64_to_sql(u.per_op, "results.unit_rate_per_op"))
            .transpose()?;
        tx.execute(
            "INSERT INTO results (
                 run_id, workload, mode, tasks, pinned, cpus_json, params_json, sample_ms,
                 warmup_samples, kept_samples,
                 ops_per_sec_median, ops_per_sec_ci_low, ops_per_sec_ci_high,
                 ns_per_op_median, ns_per_op_ci_low, ns_per_op_ci_high,
                 unit_rate_unit, unit_rate_per_op,
                 unit_rate_per_sec_median, unit_rate_per_sec_ci_low, unit_rate_per_sec_ci_high,
                 started_at, finished_at, child_cpu_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                     ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
            params![
                run_id,
                result.workload,
                result.mode.to_string(),
                result.tasks,
                result.pinned,
                json_to_sql(&result.cpus, "results.cpus_json")?,
                json_to_sql(&result.params, "results.params_json")?,
                u64_to_sql(result.sample_ms, "results.sample_ms")?,
                result.warmup_samples,
                result.samples,
                result.ops_per_sec.median,
                result.ops_per_sec.ci_low,
                result.ops_per_sec.ci_high,
                result.ns_per_op.median,
                result.ns_per_op.ci_low,
                result.ns_per_op.ci_high,
                unit_rate.map(|u| u.unit.as_str()),
                unit_rate_per_op,
                unit_rate.map(|u| u.per_sec.median),
                unit_rate.map(|u| u.per_sec.ci_low),
                unit_rate.map(|u| u.per_sec.ci_high),
                time_to_sql(&result.started_at),
                time_to_sql(&result.finished_at),
                result
                    .child_cpu
                    .as_ref()
                    .map(|c| json_to_sql(c, "results.child_cpu_json"))
                    .transpose()?,
            ],
        )
        .with_context(context)?;
        let result_id = tx.last_insert_rowid();
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO samples (result_id, idx, elapsed_ns, ops, ops_per_sec, ns_per_op,
                         per_task_ops_per_sec_json, involuntary_ctxt_switches, steal_ms,
                         flags_json)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .with_context(context)?;
            for s in &result.sample_data {
                insert
                    .execute(params![
                        result_id,
                        s.index,
                        u64_to_sql(s.elapsed_ns, "samples.elapsed_ns")?,
                        u64_to_sql(s.ops, "samples.ops")?,
                        s.ops_per_sec,
                        s.ns_per_op,
                        f64s_to_json(&s.per_task_ops_per_sec),
                        u64_to_sql(
                            s.involuntary_ctxt_switches,
                            "samples.involuntary_ctxt_switches"
                        )?,
                        s.steal_ms,
                        json_to_sql(&s.flags, "samples.flags_json")?,
                    ])
                    .with_context(|| format!("cannot store sample {}", s.index))
                    .with_context(context)?;
            }
        }
        if let Some(p) = &result.profile {
            tx.execute(
                "INSERT INTO result_profiles (result_id, profile_json, folded) VALUES (?1, ?2, ?3)",
                params![
                    result_id,
                    json_to_sql(p, "result_profiles.profile_json")?,
                    comparisons::folded_to_text(&p.folded),
                ],
            )
            .with_context(context)?;
        }
        tx.commit().with_context(context)?;
        Ok(result_id)
    }

    /// Marks the run finished now.
    pub fn finish_run(&mut self, run_id: i64) -> Result<()> {
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET finished_at = ?1 WHERE id = ?2",
                params![time_to_sql(&Utc::now()), run_id],
            )
            .with_context(|| format!("cannot mark run {run_id} finished"))?;
        if changed == 0 {
            return Err(no_run_error(run_id));
        }
        Ok(())
    }

    /// Deletes a run with its results and samples (foreign-key cascade).
    pub fn delete_run(&mut self, run_id: i64) -> Result<()> {
        let deleted = self
            .conn
            .execute("DELETE FROM runs WHERE id = ?1", [run_id])
            .with_context(|| format!("cannot delete run {run_id}"))?;
        if deleted == 0 {
            return Err(no_run_error(run_id));
        }
        Ok(())
    }
}

fn run_exists(conn: &Connection, run_id: i64) -> Result<bool> {
    Ok(conn
        .query_row("SELECT 1 FROM runs WHERE id = ?1", [run_id], |_| Ok(()))
        .optional()?
        .is_some())
}

fn no_run_error(run_id: i64) -> anyhow::Error {
    UsageError::new(format!(
        "no run with id {run_id} (see `secperf results list`)"
    ))
    .into()
}
