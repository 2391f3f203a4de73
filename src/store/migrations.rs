//! Numbered schema migrations, tracked in `PRAGMA user_version`.
//!
//! `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`. Each one
//! runs in its own `BEGIN IMMEDIATE` transaction together with the version
//! bump, and the version is re-read inside that transaction, so two secperf
//! processes opening a fresh database at once cannot both apply the same
//! step. Never edit a released migration: append a new one.
//!
//! Column conventions (see `codec.rs`): timestamps are RFC 3339 text in UTC
//! with nine fractional digits (sortable as text); `*_json` columns hold
//! JSON; a NULL in a REAL column means NaN (SQLite cannot store NaN).

use std::path::Path;

use anyhow::{Context, Result};
use rusqlite::{Connection, TransactionBehavior};

use crate::error::UsageError;

/// Schema steps, oldest first. The schema version of a database is the
/// number of steps applied to it.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs, results, samples.
    r#"
CREATE TABLE runs (
    -- AUTOINCREMENT: ids of deleted runs are never reused, so "run 42"
    -- in old notes never silently means a different run.
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    label            TEXT NOT NULL,
    kind             TEXT NOT NULL,
    started_at       TEXT NOT NULL,
    finished_at      TEXT,               -- NULL until finish_run: unfinished/crashed
    host             TEXT NOT NULL,
    secperf_version  TEXT NOT NULL,
    command          TEXT NOT NULL,
    params_json      TEXT NOT NULL,
    system_json      TEXT NOT NULL
);
CREATE INDEX runs_label ON runs(label, started_at);
CREATE INDEX runs_started_at ON runs(started_at);

CREATE TABLE results (
    id                          INTEGER PRIMARY KEY,
    run_id                      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    workload                    TEXT NOT NULL,
    mode                        TEXT NOT NULL CHECK (mode IN ('process', 'thread')),
    tasks                       INTEGER NOT NULL,
    pinned                      INTEGER NOT NULL CHECK (pinned IN (0, 1)),
    cpus_json                   TEXT NOT NULL,
    params_json                 TEXT NOT NULL,
    sample_ms                   INTEGER NOT NULL,
    warmup_samples              INTEGER NOT NULL,
    kept_samples                INTEGER NOT NULL,
    ops_per_sec_median          REAL,
    ops_per_sec_ci_low          REAL,
    ops_per_sec_ci_high         REAL,
    ns_per_op_median            REAL,
    ns_per_op_ci_low            REAL,
    ns_per_op_ci_high           REAL,
    -- Optional secondary rate; all unit_rate_* NULL when the workload has none.
    unit_rate_unit              TEXT,
    unit_rate_per_op            INTEGER,
    unit_rate_per_sec_median    REAL,
    unit_rate_per_sec_ci_low    REAL,
    unit_rate_per_sec_ci_high   REAL,
    started_at                  TEXT NOT NULL,
    finished_at                 TEXT NOT NULL,
    CHECK ((unit_rate_unit IS NULL) = (unit_rate_per_op IS NULL))
);
CREATE INDEX results_run_id ON results(run_id);

CREATE TABLE samples (
    id                          INTEGER PRIMARY KEY,
    result_id                   INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    idx                         INTEGER NOT NULL,
    elapsed_ns                  INTEGER NOT NULL,
    ops                         INTEGER NOT NULL,
    ops_per_sec                 REAL,
    ns_per_op                   REAL,
    per_task_ops_per_sec_json   TEXT NOT NULL,
    involuntary_ctxt_switches   INTEGER NOT NULL,
    steal_ms                    REAL,
    flags_json                  TEXT NOT NULL,
    UNIQUE (result_id, idx)     -- also the index for result_id lookups and cascades
);
"#,
    // 2: A/B comparisons of `secperf overhead` and their pairs.
    r#"
CREATE TABLE comparisons (
    id                    INTEGER PRIMARY KEY,
    run_id                INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    workload              TEXT NOT NULL,
    workload_params_json  TEXT NOT NULL,
    mechanism             TEXT NOT NULL,
    variant               TEXT NOT NULL,
    params_json           TEXT NOT NULL,
    mode                  TEXT NOT NULL CHECK (mode IN ('process', 'thread')),
    tasks                 INTEGER NOT NULL,
    pairs                 INTEGER NOT NULL,
    sample_ms             INTEGER NOT NULL,
    samples_per_half      INTEGER NOT NULL,
    baseline_ns_per_op    REAL,
    treatment_ns_per_op   REAL,
    overhead_pct          REAL,
    overhead_ci_low       REAL,
    overhead_ci_high      REAL,
    p_value               REAL,
    verdict               TEXT NOT NULL
);
CREATE INDEX comparisons_run_id ON comparisons(run_id);

CREATE TABLE comparison_pairs (
    id                    INTEGER PRIMARY KEY,
    comparison_id         INTEGER NOT NULL REFERENCES comparisons(id) ON DELETE CASCADE,
    idx                   INTEGER NOT NULL,
    run_order             TEXT NOT NULL CHECK (run_order IN ('AB', 'BA')),
    baseline_ns_per_op    REAL,
    treatment_ns_per_op   REAL,
    UNIQUE (comparison_id, idx)
);
"#,
    // 3: calibrations of `secperf calibrate` (the method checked on this machine).
    r#"
CREATE TABLE calibrations (
    id                    INTEGER PRIMARY KEY,
    run_id                INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    workload              TEXT NOT NULL,
    created_at            TEXT NOT NULL,
    aa_comparisons        INTEGER NOT NULL,
    aa_false_positives    INTEGER NOT NULL,
    sd_log_ratio          REAL,               -- per-pair ln(B/A), pooled within comparisons
    pair_seconds          REAL,
    budget_s              REAL,
    min_effect_pct        REAL,               -- 80% power, alpha 0.05, in budget_s
    min_effect_pairs      INTEGER NOT NULL,
    json                  TEXT NOT NULL       -- the whole report, design included
);
CREATE INDEX calibrations_run_id ON calibrations(run_id);
CREATE INDEX calibrations_workload ON calibrations(workload, created_at);
"#,
    // 4: notes a command attaches to a run besides its results (a suite's
    // SELinux AVC counters per workload).
    r#"
CREATE TABLE run_notes (
    id                    INTEGER PRIMARY KEY,
    run_id                INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name                  TEXT NOT NULL,
    json                  TEXT NOT NULL
);
CREATE INDEX run_notes_run_id ON run_notes(run_id, name);
"#,
    // 5: where the time goes (`--profile`): a comparison's attribution
    // table and the folded stacks of each arm, a result's profile and its
    // folded stacks (for flame graphs).
    r#"
CREATE TABLE comparison_profiles (
    comparison_id         INTEGER PRIMARY KEY REFERENCES comparisons(id) ON DELETE CASCADE,
    attribution_json      TEXT NOT NULL,      -- groups, symbols, samples, notes
    folded_baseline       TEXT NOT NULL,      -- "outer;...;leaf COUNT" lines
    folded_treatment      TEXT NOT NULL
);

CREATE TABLE result_profiles (
    result_id             INTEGER PRIMARY KEY REFERENCES results(id) ON DELETE CASCADE,
    profile_json          TEXT NOT NULL,      -- groups, symbols, samples, notes
    folded                TEXT NOT NULL       -- "outer;...;leaf COUNT" lines
);
"#,
    // 6: CPU time per operation of the processes a workload started (the
    // `command` workload): {runs, user_ns_per_op, sys_ns_per_op}, and for a
    // comparison [baseline, treatment]. NULL for other workloads.
    r#"
ALTER TABLE results ADD COLUMN child_cpu_json TEXT;
ALTER TABLE comparisons ADD COLUMN child_cpu_json TEXT;
"#,
    // 7: the sequential design's stop: {max_pairs, family, stopped}; NULL
    // for a comparison of a fixed number of pairs.
    r#"
ALTER TABLE comparisons ADD COLUMN sequential_json TEXT;
"#,
    // 8: a comparison the run stopped inside (Ctrl-C, a failing half),
    // kept with the pairs finished before; and the policy files a run
    // measured, as read (an OCI seccomp profile, an audit rules file).
    r#"
ALTER TABLE comparisons ADD COLUMN unfinished INTEGER NOT NULL DEFAULT 0
    CHECK (unfinished IN (0, 1));
CREATE TABLE policy_files (
    id                    INTEGER PRIMARY KEY,
    run_id                INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    treatment             TEXT NOT NULL,      -- "audit:rules=/tmp/stig.rules"
    param                 TEXT NOT NULL,      -- "rules", "profile"
    path                  TEXT NOT NULL,
    sha256                TEXT NOT NULL,      -- of the bytes read, lowercase hex
    bytes                 INTEGER NOT NULL,
    content               TEXT NOT NULL
);
CREATE INDEX policy_files_run_id ON policy_files(run_id);
"#,
    // 9: a load client's own figures (the `service` workload with a client
    // secperf reads: requests/s, latency): a result's medians
    // [{name, value, higher_is_better}], a pair's values per half
    // [{name, higher_is_better, baseline, treatment}], and a comparison's
    // changes with their paired intervals. NULL for other workloads.
    r#"
ALTER TABLE results ADD COLUMN client_metrics_json TEXT;
ALTER TABLE comparison_pairs ADD COLUMN metrics_json TEXT;
ALTER TABLE comparisons ADD COLUMN client_metrics_json TEXT;
"#,
    // 10: the cost probes of `secperf predict`'s models: one A/B figure
    // (ns added per operation, with its interval) per machine, treatment,
    // workload and policy-file digest, the latest kept, with the run that
    // measured it.
    r#"
CREATE TABLE cost_probes (
    machine TEXT NOT NULL,
    spec TEXT NOT NULL,
    workload TEXT NOT NULL,
    policy_sha256 TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    measured_at TEXT NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (machine, spec, workload, policy_sha256)
);
"#,
    // 11: many machines, one store. A run's identity across databases: a
    // random UUID recorded when it starts (runs stored before this step get
    // one here), so that `results push` and campaigns store each run once.
    // A run a campaign pulled from a host is tagged with the campaign and
    // the host's name; the campaign's own record is its command and hosts.
    r#"
ALTER TABLE runs ADD COLUMN uuid TEXT;
UPDATE runs SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' ||
    substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + abs(random()) % 4, 1) ||
    substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
CREATE UNIQUE INDEX runs_uuid ON runs(uuid);
ALTER TABLE runs ADD COLUMN campaign TEXT;
ALTER TABLE runs ADD COLUMN campaign_host TEXT;
CREATE INDEX runs_campaign ON runs(campaign, campaign_host);
CREATE TABLE campaigns (
    id           TEXT PRIMARY KEY,
    created_at   TEXT NOT NULL,
    command_json TEXT NOT NULL,   -- the measuring command's arguments
    hosts_json   TEXT NOT NULL,   -- the hosts, in the order given
    parallel     INTEGER NOT NULL
);
"#,
    // 12: bisections (`secperf bisect`): one row per bisection, rewritten
    // after every step; each measured step is a run of its own, which the
    // record names by id.
    r#"
CREATE TABLE bisections (
    id           TEXT PRIMARY KEY,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    status       TEXT NOT NULL,   -- in-progress, finished, stopped
    record_json  TEXT NOT NULL    -- model::bisect::BisectionRecord
);
CREATE INDEX bisections_updated_at ON bisections(updated_at);
"#,
    // 13: intervals shown at the table's level. A comparison's
    // overhead_ci_* is then the interval its verdict was decided on (at
    // ci_alpha: alpha / m under Holm, alpha x R / m under e-BH), and its
    // own 95% interval is kept beside it. NULL: the interval is its own.
    r#"
ALTER TABLE comparisons ADD COLUMN ci_alpha REAL;
ALTER TABLE comparisons ADD COLUMN own_ci_low REAL;
ALTER TABLE comparisons ADD COLUMN own_ci_high REAL;
"#,
    // 14: a measure is a dimension of a comparison, not columns named ns.
    // A comparison's figures per operation are in its `measure` (time, or
    // instructions counted by icount or the PMU; comparisons stored before
    // this step measured time), and the measures beside it (a client's
    // figures, a server's CPU, time beside instructions) are kept as the
    // client's figures were: a pair's values per half, a comparison's
    // changes with their intervals and verdicts. The columns these steps
    // rename are in RENAMED, which a shared PostgreSQL store follows.
    r#"
ALTER TABLE comparisons RENAME COLUMN baseline_ns_per_op TO baseline_per_op;
ALTER TABLE comparisons RENAME COLUMN treatment_ns_per_op TO treatment_per_op;
ALTER TABLE comparisons RENAME COLUMN client_metrics_json TO beside_json;
ALTER TABLE comparisons ADD COLUMN measure TEXT NOT NULL DEFAULT 'time';
ALTER TABLE comparison_pairs RENAME COLUMN baseline_ns_per_op TO baseline_per_op;
ALTER TABLE comparison_pairs RENAME COLUMN treatment_ns_per_op TO treatment_per_op;
ALTER TABLE comparison_pairs RENAME COLUMN metrics_json TO beside_json;
"#,
    // 15: tracks (`secperf track`): one row per track, rewritten after
    // every tested revision; each measured test is a run of its own, which
    // the record names by id.
    r#"
CREATE TABLE tracks (
    id           TEXT PRIMARY KEY,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    record_json  TEXT NOT NULL    -- model::track::TrackRecord
);
CREATE INDEX tracks_updated_at ON tracks(updated_at);
"#,
    // 16: indexes for the filters of the run list (`secperf serve`), so
    // that a page of a store of 100 000 runs reads the runs that pass, not
    // every run: by host, by the kernel release the run's probe recorded
    // (an expression: the same as `store::runs_page::KERNEL_SQL`), and the
    // runs of a workload, mechanism or verdict.
    r#"
CREATE INDEX runs_host ON runs(host, started_at);
CREATE INDEX runs_kernel ON runs((CASE WHEN json_valid(system_json) THEN CASE json_type(system_json, '$.kernel.release') WHEN 'text' THEN json_extract(system_json, '$.kernel.release') ELSE json_extract(system_json, '$.kernel.release.value') END END), started_at);
CREATE INDEX results_workload ON results(workload, run_id);
CREATE INDEX comparisons_workload ON comparisons(workload, run_id);
CREATE INDEX comparisons_mechanism ON comparisons(mechanism, run_id);
CREATE INDEX comparisons_verdict ON comparisons(verdict, run_id);
"#,
    // 17: every stored time is the host's. A run measured in a `--vm`
    // guest was stamped by the guest's clock, which under icount counts
    // instructions and ran minutes ahead. No table changes: the step is
    // Rust ([`STEPS`]), which mends those runs from their guest facts and
    // records in each guest run's `vm.stamps` whose clock its times are.
    r#"
-- data only: store::guest_clock::mend
"#,
];

/// Steps in Rust, run after the SQL of the migration with the same number
/// (1-based) in its transaction; each may return a sentence for the user
/// (what it could not do).
type Step = fn(&Connection) -> Result<Option<String>>;
const STEPS: &[(usize, Step)] = &[(17, super::guest_clock::mend)];

/// What the migrations of this process had to tell the user, each naming
/// its database; taken (and printed) by the command line at its end.
static NOTICES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The migrations' notices so far, emptied.
pub fn take_notices() -> Vec<String> {
    NOTICES
        .lock()
        .map(|mut n| std::mem::take(&mut *n))
        .unwrap_or_default()
}

/// The columns a migration renamed: (the migration's number, table, old
/// name, new name). A shared store ([`crate::remote`]), whose tables are
/// derived from this schema and only ever gain columns, renames these
/// before adding what it lacks, so that what it holds keeps its values.
pub const RENAMED: &[(usize, &str, &str, &str)] = &[
    (14, "comparisons", "baseline_ns_per_op", "baseline_per_op"),
    (14, "comparisons", "treatment_ns_per_op", "treatment_per_op"),
    (14, "comparisons", "client_metrics_json", "beside_json"),
    (
        14,
        "comparison_pairs",
        "baseline_ns_per_op",
        "baseline_per_op",
    ),
    (
        14,
        "comparison_pairs",
        "treatment_ns_per_op",
        "treatment_per_op",
    ),
    (14, "comparison_pairs", "metrics_json", "beside_json"),
];

/// Refuses a database written by a newer secperf (a schema version above
/// `MIGRATIONS.len()`), reading only `user_version`: nothing is locked for
/// writing or changed.
pub fn refuse_newer(conn: &Connection, path: &Path) -> Result<()> {
    let version = super::schema_version(conn)?;
    if version > MIGRATIONS.len() {
        return Err(newer_error(path, version));
    }
    Ok(())
}

/// The usage error (exit code 2) for a schema newer than this secperf's.
fn newer_error(path: &Path, version: usize) -> anyhow::Error {
    UsageError::new(format!(
        "results database {} was written by a newer secperf (schema {version}; this secperf knows \
         up to {}): upgrade secperf or use another --db",
        path.display(),
        MIGRATIONS.len(),
    ))
    .into()
}

/// Brings the schema up to `MIGRATIONS.len()`. Also performs one write
/// (re-setting `user_version`) when nothing is pending, so that a database
/// that opens but cannot be written (e.g. a read-only directory that blocks
/// the rollback journal) fails here, at open, rather than mid-run.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let known = MIGRATIONS.len();
    loop {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .context("cannot begin a write transaction")?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .context("cannot read the schema version")?;
        let version = usize::try_from(version)
            .with_context(|| format!("schema version {version} is invalid"))?;
        if version > known {
            return Err(newer_error(path, version));
        }
        if version == known {
            tx.pragma_update(None, "user_version", version as i64)
                .context("cannot write to the database")?;
            tx.commit().context("cannot write to the database")?;
            return Ok(());
        }
        tx.execute_batch(MIGRATIONS[version])
            .with_context(|| format!("schema migration {} failed", version + 1))?;
        let mut said = Vec::new();
        for (_, step) in STEPS.iter().filter(|(n, _)| *n == version + 1) {
            said.extend(
                step(&tx).with_context(|| format!("schema migration {} failed", version + 1))?,
            );
        }
        tx.pragma_update(None, "user_version", (version + 1) as i64)
            .with_context(|| format!("cannot record schema version {}", version + 1))?;
        tx.commit()
            .with_context(|| format!("cannot commit schema migration {}", version + 1))?;
        if let Ok(mut notices) = NOTICES.lock() {
            notices.extend(
                said.into_iter()
                    .map(|s| format!("results database {}: {s}", path.display())),
            );
        }
    }
}
