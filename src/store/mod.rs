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
//! be copied or shared as is, every commit is durable, and a reader needs
//! no `-shm`/`-wal` file, so a read-only file in a read-only directory can
//! still be read (WAL would need one). Two writers, or a reader and a
//! writer, that collide wait on the busy timeout ([`BUSY_TIMEOUT`]); every
//! write transaction starts `IMMEDIATE`, or is a single statement, so none
//! can be asked to give up a read lock to avoid a deadlock (the case the
//! busy handler does not cover).
//!
//! Writers open with [`Store::open`], which migrates and writes once at open
//! so an unwritable database fails before a run starts; readers (`results
//! list/show/export`, `compare`, `report`) open with
//! [`Store::open_read_only`], which never writes and so works on a
//! read-only file or directory. A full disk is reported as such, naming the
//! database ([`disk_full`]); results already committed stay.
//!
//! This file opens the database and writes; reading back is in `read.rs`,
//! the schema in `migrations.rs`, value conversions in `codec.rs`.

mod bisections;
pub mod calibrations;
pub mod campaigns;
mod codec;
mod comparisons;
mod cost_probes;
mod guest_clock;
pub use guest_clock::HostSpan;
mod import;
pub use import::RUN_CHILDREN;
pub mod migrations;
mod notes;
mod policy_files;
mod read;
pub mod runs_page;
mod series;
mod tracks;
pub use bisections::BisectionSummary;
pub use campaigns::CampaignSummary;
pub use tracks::TrackSummary;

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

/// How long a statement waits for another process's lock before failing:
/// long enough for a commit on a slow disk or a report reading a large
/// database to finish, short enough that a wedged holder is reported.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Environment variable naming the database when `--db` is not given.
pub const DB_ENV_VAR: &str = "SECPERF_DB";

/// How every "pick another database" hint ends.
const CHOOSE_ANOTHER: &str = "choose another with --db PATH or SECPERF_DB";

/// What still works on a database secperf cannot write.
const READERS_STILL_WORK: &str =
    "commands that only read, such as `results list`, `compare` and `report`, still work on it";

/// Where the database lives: `--db PATH`, else `$SECPERF_DB`, else
/// `dirs::data_dir()/secperf/secperf.db` (`$XDG_DATA_HOME/secperf/...`).
/// Creates the default location's directory when it is missing; a
/// directory the user named that does not exist is a usage error (a typo
/// must not leave new directories behind).
pub fn resolve_db_path(cli: Option<&Path>) -> Result<PathBuf> {
    resolve_db_path_from(cli, std::env::var_os(DB_ENV_VAR), dirs::data_dir())
}

/// The results file used when neither `--db` nor `SECPERF_DB` names a
/// file: `dirs::data_dir()/secperf/secperf.db`.
pub fn default_db_path() -> Result<PathBuf> {
    resolve_db_path_from(None, None, dirs::data_dir())
}

/// Whether `--db` names a shared PostgreSQL store rather than a file.
fn names_shared_store(path: &Path) -> bool {
    path.to_str()
        .is_some_and(|s| s.starts_with("postgresql://") || s.starts_with("postgres://"))
}

/// [`resolve_db_path`] with its environment passed in, for tests.
fn resolve_db_path_from(
    cli: Option<&Path>,
    env: Option<OsString>,
    data_dir: Option<PathBuf>,
) -> Result<PathBuf> {
    let named = cli.or(env
        .as_deref()
        .map(Path::new)
        .filter(|p| !p.as_os_str().is_empty()));
    if let Some(path) = named.filter(|p| names_shared_store(p)) {
        let scheme = path.to_string_lossy();
        let scheme = scheme.split("://").next().unwrap_or("postgresql");
        usage_bail!(
            "--db {scheme}://... names a shared store, and this command writes to a results \
             file: measure into a file (leave out --db, or give a path), then copy the runs \
             with `secperf results push URL`; `results list/show/export`, `compare`, `report` \
             and `campaign` take the URL"
        );
    }
    let path = if let Some(path) = cli {
        // clap fills --db from SECPERF_DB too: name the variable when it
        // holds this path.
        let what = if env.as_deref() == Some(path.as_os_str()) {
            format!("{DB_ENV_VAR}={}", path.display())
        } else {
            format!("--db {}", path.display())
        };
        require_parent_dir(path, &what)?;
        path.to_path_buf()
    } else if let Some(path) = env.filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        require_parent_dir(&path, &format!("{DB_ENV_VAR}={}", path.display()))?;
        path
    } else if let Some(dir) = data_dir {
        let path = dir.join("secperf").join("secperf.db");
        ensure_parent_dir(&path)?;
        path
    } else {
        usage_bail!(
            "cannot find a data directory for the results database (neither $XDG_DATA_HOME \
             nor $HOME is set); {CHOOSE_ANOTHER}"
        );
    };
    Ok(path)
}

/// Checks that the directory to hold the database the user chose exists
/// (it is never created for them); `what` names the choice in the
/// message ("--db PATH", "SECPERF_DB=PATH"). Other failures to read the
/// directory are left for opening the database to report.
fn require_parent_dir(path: &Path, what: &str) -> Result<()> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => usage_bail!(
            "{what}: {} is not a directory; {CHOOSE_ANOTHER}",
            dir.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => usage_bail!(
            "{what}: directory {} does not exist; create it first (mkdir -p {}) or {CHOOSE_ANOTHER}",
            dir.display(),
            dir.display()
        ),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => usage_bail!(
            "{what}: {} is not a directory (a component of it is a file); {CHOOSE_ANOTHER}",
            dir.display()
        ),
        _ => Ok(()),
    }
}

/// Refuses a path that exists and is no regular file: a directory, or a
/// device, a FIFO or a socket (`--db /dev/null` read as an empty database
/// and then failed to migrate with "disk I/O error").
fn not_a_file(path: &Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let t = meta.file_type();
    let kind = if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        return Ok(());
    };
    anyhow::bail!("it is {kind}, not a file (a results database is a file SQLite writes)")
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

/// Whether `err` is SQLite refusing a read-only connection because a hot
/// rollback journal must be rolled back first (SQLITE_READONLY_ROLLBACK).
fn needs_rollback(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        matches!(
            e.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _))
                if f.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK
        )
    })
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
        Self::open_inner(path).map_err(|err| wrap_open_error(path, err))
    }

    /// Opens an existing database for reading only: nothing is written,
    /// so a read-only file, directory or file system works. A missing file
    /// is created as by [`Store::open`] (and reads as empty). A database
    /// whose schema is older than this secperf's is upgraded when it can be
    /// written, and otherwise refused with a message saying it needs the
    /// upgrade; one written by a newer secperf is refused untouched.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Self::open(path);
        }
        let store = match Self::open_read_only_inner(path) {
            // A writer killed mid-commit left a hot rollback journal, which a
            // read-only connection cannot roll back: one writable open does
            // (SQLite rolls it back on its first read), then read as asked.
            Err(err) if needs_rollback(&err) => {
                drop(Self::open(path).map_err(|e| {
                    UsageError::new(format!(
                        "results database {}: a secperf killed while writing left a journal to \
                         roll back, which takes write access, and opening it for writing failed \
                         ({e:#}); run any secperf command on it where it is writable, or \
                         {CHOOSE_ANOTHER}",
                        path.display()
                    ))
                })?);
                Self::open_read_only_inner(path).map_err(|err| wrap_open_error(path, err))?
            }
            other => other.map_err(|err| wrap_open_error(path, err))?,
        };
        let version = schema_version(&store.conn).map_err(|err| wrap_open_error(path, err))?;
        if version == migrations::MIGRATIONS.len() {
            return Ok(store);
        }
        drop(store);
        // Older schema: upgrade it if we may write, else say why not.
        Self::open(path).map_err(|err| {
            let needs = format!(
                "results database {} has schema version {version} and this secperf needs {}: it \
                 must be upgraded, which takes write access",
                path.display(),
                migrations::MIGRATIONS.len(),
            );
            if let Some(Unwritable { reason, remedy }) = unwritable(path) {
                return UsageError::new(format!(
                    "{needs}, but {reason}; {remedy} and run any secperf command on it, or \
                     {CHOOSE_ANOTHER}"
                ))
                .into();
            }
            UsageError::new(format!(
                "{needs}, and opening it for writing failed ({err:#}); run any secperf command \
                 on it where it is writable, or {CHOOSE_ANOTHER}"
            ))
            .into()
        })
    }

    /// The schema version of the results file at `path`, read without
    /// changing anything (None where it cannot be read that way).
    pub fn file_schema_version(path: &Path) -> Option<usize> {
        let store = Self::open_read_only_inner(path).ok()?;
        schema_version(&store.conn).ok()
    }

    fn open_read_only_inner(path: &Path) -> Result<Store> {
        not_a_file(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.query_row("SELECT COUNT(*) FROM sqlite_schema", [], |r| {
            r.get::<_, i64>(0)
        })
        .context("cannot read it")?;
        migrations::refuse_newer(&conn, path)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    fn open_inner(path: &Path) -> Result<Store> {
        require_parent_dir(path, &format!("results database {}", path.display()))?;
        not_a_file(path)?;
        // No SQLITE_OPEN_URI: a path is always a file name, even "file:x".
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "foreign_keys", true)?;
        let foreign_keys: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
        anyhow::ensure!(foreign_keys, "SQLite refused to enable foreign keys");
        // The first real read: a file that is not a database fails here.
        conn.query_row("SELECT COUNT(*) FROM sqlite_schema", [], |r| {
            r.get::<_, i64>(0)
        })
        .context("cannot read it")?;
        // Refused before any write lock is taken: the file stays as it was
        // (and said first, even when the file is also read-only).
        migrations::refuse_newer(&conn, path)?;
        // SQLite silently falls back to read-only for a file it cannot write.
        if conn.is_readonly(MAIN_DB)? {
            return Err(read_only_error(path).unwrap_or_else(|| {
                UsageError::new(format!(
                    "results database {} cannot be written: SQLite opened it read-only; \
                     {CHOOSE_ANOTHER} ({READERS_STILL_WORK})",
                    path.display()
                ))
                .into()
            }));
        }
        migrations::migrate(&mut conn, path).map_err(|e| disk_full(e, path))?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The database file this store was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The SQLite connection, for copying rows to and from a shared store
    /// (`remote`), which works table by table on the schema itself.
    pub fn connection(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Names the store in messages and documents by `name` instead of its
    /// file: a local copy of a shared store is shown as the store's URL.
    pub fn show_as(&mut self, name: &str) {
        self.path = PathBuf::from(name);
    }

    /// Records the start of a run (unfinished until [`Store::finish_run`]).
    pub fn begin_run(&mut self, meta: &RunMeta) -> Result<i64> {
        self.conn
            .execute(
                "INSERT INTO runs (label, kind, started_at, host, secperf_version, command,
                                   params_json, system_json, uuid)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    meta.label,
                    meta.kind,
                    time_to_sql(&meta.started_at),
                    meta.host,
                    meta.secperf_version,
                    meta.command,
                    json_to_sql(&meta.params, "runs.params_json")?,
                    json_to_sql(&meta.system, "runs.system_json")?,
                    uuid::Uuid::new_v4().to_string(),
                ],
            )
            .with_context(|| {
                format!(
                    "cannot record run '{}' in {}",
                    meta.label,
                    self.path.display()
                )
            })
            .map_err(|e| disk_full(e, &self.path))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Stores one workload result and all its samples in one transaction,
    /// committed before returning. Returns the result's id.
    pub fn add_result(&mut self, run_id: i64, result: &WorkloadResult) -> Result<i64> {
        self.add_result_inner(run_id, result)
            .map_err(|e| disk_full(e, &self.path))
    }

    fn add_result_inner(&mut self, run_id: i64, result: &WorkloadResult) -> Result<i64> {
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
                 started_at, finished_at, child_cpu_json, client_metrics_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                     ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
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
                (!result.client_metrics.is_empty())
                    .then(|| json_to_sql(&result.client_metrics, "results.client_metrics_json"))
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
            .with_context(|| format!("cannot mark run {run_id} finished"))
            .map_err(|e| disk_full(e, &self.path))?;
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

/// The error of opening `path`: a [`UsageError`] naming the path and how
/// to pick another (kept as it is when it already is one, or when the
/// disk is full: a failure of the system, exit code 1, not of the request).
fn wrap_open_error(path: &Path, err: anyhow::Error) -> anyhow::Error {
    if err.chain().any(|e| e.is::<UsageError>()) || is_disk_full(&err) {
        return err;
    }
    // SQLite says "unable to open database file" or "attempt to write a
    // readonly database" whatever the cause: name it when it is read-only.
    if failed_for_lack_of_write_access(&err)
        && let Some(e) = read_only_error(path)
    {
        return e;
    }
    UsageError::new(format!(
        "cannot open results database {}: {} ({CHOOSE_ANOTHER})",
        path.display(),
        chain_text(&err)
    ))
    .into()
}

/// The error chain joined with ": ", without the SQLite error code that
/// repeats the message of the error above it ("unable to open database
/// file: ...: Error code 14: unable to open database file").
fn chain_text(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut after_sqlite_failure = false;
    for e in err.chain() {
        if after_sqlite_failure && e.is::<rusqlite::ffi::Error>() {
            after_sqlite_failure = false;
            continue;
        }
        after_sqlite_failure = matches!(
            e.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(..))
        );
        parts.push(e.to_string());
    }
    parts.join(": ")
}

/// Whether SQLite failed the way it does on a file it may not create or
/// write (SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM).
fn failed_for_lack_of_write_access(err: &anyhow::Error) -> bool {
    use rusqlite::ErrorCode::{CannotOpen, PermissionDenied, ReadOnly};
    err.chain()
        .any(|e| match e.downcast_ref::<rusqlite::Error>() {
            Some(rusqlite::Error::SqliteFailure(f, _)) => {
                matches!(f.code, CannotOpen | ReadOnly | PermissionDenied)
            }
            _ => false,
        })
}

/// Why a database cannot be written, and what would make it writable.
struct Unwritable {
    /// "the file system holding /mnt is mounted read-only".
    reason: String,
    /// "mount it read-write".
    remedy: String,
}

/// Why the database at `path` cannot be created or written, when the file
/// system is mounted read-only or this user lacks write permission on the
/// file or its directory; None when neither explains it.
fn unwritable(path: &Path) -> Option<Unwritable> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (reason, remedy) = if mounted_read_only(dir) {
        (
            format!(
                "the file system holding {} is mounted read-only",
                dir.display()
            ),
            "mount it read-write".to_string(),
        )
    } else if path.exists() && !may_access(path, libc::W_OK) {
        (
            "the file is read-only for this user".to_string(),
            format!("make it writable (chmod u+w {})", path.display()),
        )
    } else if !may_access(dir, libc::W_OK | libc::X_OK) {
        (
            format!(
                "its directory {} is read-only for this user (SQLite creates the database \
                 and its journal there)",
                dir.display()
            ),
            "make the directory writable".to_string(),
        )
    } else {
        return None;
    };
    Some(Unwritable { reason, remedy })
}

/// The usage error for a database that [`unwritable`] explains.
fn read_only_error(path: &Path) -> Option<anyhow::Error> {
    let Unwritable { reason, remedy } = unwritable(path)?;
    let (verb, readers) = if path.exists() {
        ("written", format!(" ({READERS_STILL_WORK})"))
    } else {
        ("created", String::new())
    };
    Some(
        UsageError::new(format!(
            "results database {} cannot be {verb}: {reason}; {remedy}, or {CHOOSE_ANOTHER}{readers}",
            path.display()
        ))
        .into(),
    )
}

/// Whether the file system holding `path` is mounted read-only.
fn mounted_read_only(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: c is a NUL-terminated path and st is large enough for the
    // statvfs the kernel fills in; it is read only when the call succeeds.
    let rc = unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) };
    // SAFETY: statvfs succeeded, so st is initialised.
    rc == 0 && unsafe { st.assume_init() }.f_flag & libc::ST_RDONLY != 0
}

/// Whether this user may access `path` in `mode` (access(2): root passes
/// permission checks, but not a read-only mount).
fn may_access(path: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: c is a NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// The schema version (`user_version`) of an open database.
fn schema_version(conn: &Connection) -> Result<usize> {
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .context("cannot read the schema version")?;
    usize::try_from(version).with_context(|| format!("schema version {version} is invalid"))
}

/// Whether SQLite failed because the file system is full (SQLITE_FULL, or
/// an I/O error carrying ENOSPC/EDQUOT).
pub fn is_disk_full(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| match e.downcast_ref::<rusqlite::Error>() {
            Some(rusqlite::Error::SqliteFailure(f, _)) => f.code == rusqlite::ErrorCode::DiskFull,
            _ => e
                .downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::raw_os_error)
                .is_some_and(|c| c == libc::ENOSPC || c == libc::EDQUOT),
        })
}

/// `err` with a first line saying the disk holding `path` is full, when
/// that is why it failed (not a usage error: exit code 1). What was
/// committed before stays: each write is one transaction, rolled back whole.
pub fn disk_full(err: anyhow::Error, path: &Path) -> anyhow::Error {
    if !is_disk_full(&err) {
        return err;
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    err.context(format!(
        "the disk holding the results database {} is full (no space left in {}); results \
         committed before are kept: free space there or choose another database with --db \
         PATH or SECPERF_DB",
        path.display(),
        dir.display()
    ))
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
