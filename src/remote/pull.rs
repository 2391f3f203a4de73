//! Reading a shared PostgreSQL store as if it were a results file.
//!
//! `results list/show/export`, `compare` and `report` read SQLite. Given a
//! `postgresql://` URL instead, the shared store's rows are copied, ids and
//! all, into a private temporary SQLite file of this secperf's schema, and
//! the command reads that: one code path for every output, and run ids that
//! are the shared store's own. The copy is whole (one query per table), so
//! its cost grows with the store; docs/guide.md gives the figures.
//! `secperf serve` copies once and then brings its copy up to date
//! ([`update`]), reading only what was pushed since.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use postgres::fallible_iterator::FallibleIterator;
use rusqlite::types::Value;

use super::schema::{Table, tables};
use crate::store::Store;

/// A shared store copied to a temporary file, removed when dropped.
pub struct Pulled {
    pub store: Store,
    /// Locked while the copy is in use (see [`sweep_orphans`]); fields drop
    /// in order: the store closes, the lock goes, then the directory.
    _owner: std::fs::File,
    _dir: tempfile::TempDir,
}

/// What the directory of every copy is named with.
const COPY_PREFIX: &str = "secperf-remote-";
/// The file in a copy's directory its process holds an exclusive `flock`
/// on while it lives. It appears already locked (made under another name,
/// locked, then renamed), so a lock that can be taken means its process
/// is gone.
const OWNER_LOCK: &str = "owner.lock";

/// Removes the copies under `root` whose process is gone: a `secperf serve`
/// or `results list --db URL` stopped by Ctrl-C or killed leaves its copy
/// (as large as the store), and the next copy made clears it. A copy
/// without an owner lock (made by an older secperf, or being made) is left.
pub fn sweep_orphans(root: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(COPY_PREFIX) {
            continue;
        }
        let Ok(owner) = std::fs::File::open(e.path().join(OWNER_LOCK)) else {
            continue;
        };
        if owner.try_lock().is_ok() && std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A new directory for a copy, with its owner lock held.
fn copy_dir() -> Result<(tempfile::TempDir, std::fs::File)> {
    sweep_orphans(&std::env::temp_dir());
    let dir = tempfile::Builder::new()
        .prefix(COPY_PREFIX)
        .tempdir()
        .context("creating a temporary directory for the shared store's copy")?;
    let new = dir.path().join(format!("{OWNER_LOCK}.new"));
    let owner = std::fs::File::create(&new)
        .and_then(|f| f.lock().map(|()| f))
        .and_then(|f| std::fs::rename(&new, dir.path().join(OWNER_LOCK)).map(|()| f))
        .with_context(|| format!("locking {}", dir.path().join(OWNER_LOCK).display()))?;
    Ok((dir, owner))
}

impl Pulled {
    /// The copy's file (for more read-only connections to it).
    pub fn path(&self) -> PathBuf {
        self._dir.path().join("remote.db")
    }
}

/// Copies the shared store at `url` into a temporary SQLite store, shown
/// in messages and documents as the URL (without password).
pub fn pull(url: &str) -> Result<Pulled> {
    let shown = super::conn::redact(url);
    let mut client = super::conn::connect(url)?;
    pull_from(&mut client, &shown)
}

/// Copies the shared store `client` is connected to (shown as `shown`)
/// into a temporary SQLite store, with whatever transaction the client
/// is in (`secperf serve` reads in a read-only one).
pub fn pull_from(client: &mut postgres::Client, shown: &str) -> Result<Pulled> {
    let shown = shown.to_string();
    super::schema::check_readable(client, &shown)?;
    let (dir, owner) = copy_dir()?;
    let path: PathBuf = dir.path().join("remote.db");
    let mut writer = Store::open(&path)?;
    // WAL, so that `secperf serve` can bring the copy up to date
    // ([`update`]) while pages read it.
    writer
        .connection()
        .pragma_update(None, "journal_mode", "WAL")
        .context("putting the shared store's copy in WAL mode")?;
    copy_all(client, writer.connection(), &shown)
        .with_context(|| format!("reading the shared store {shown}"))?;
    // Opened before the writer closes: the WAL's files stay while a
    // connection is open, and a read-only one could not make them again.
    let mut store = Store::open_read_only(&path)?;
    drop(writer);
    store.show_as(&shown);
    Ok(Pulled {
        store,
        _owner: owner,
        _dir: dir,
    })
}

fn copy_all(
    client: &mut postgres::Client,
    local: &mut rusqlite::Connection,
    shown: &str,
) -> Result<()> {
    let schema = tables(local)?;
    let tx = local.transaction()?;
    for t in &schema {
        copy_table(client, &tx, t, None, shown)?;
    }
    tx.commit()?;
    Ok(())
}

/// What [`update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Updated {
    /// The copy holds what the store holds now: `runs` runs were added,
    /// and the tables not under a run (campaigns, bisections, tracks) were
    /// read again whole.
    Runs(usize),
    /// The store no longer has a run the copy has (deleted there): the
    /// copy was left as it was, and only a new copy is right.
    NeedsNewCopy,
}

/// Brings `path`, a copy [`pull_from`] made of the same shared store, up
/// to date in place, in one SQLite transaction, reading in whatever
/// transaction `client` is in. A run in a shared store never changes once
/// pushed (each is pushed whole, in one transaction, and never again), so
/// only runs the copy lacks are read, each with every row under it; the
/// small tables not under a run are read again whole. What it costs grows
/// with what was pushed since, not with the store: `secperf serve` makes
/// a copy once and then keeps it up to date.
///
/// The copy is in WAL mode ([`pull_from`]), so readers of it go on while
/// it is updated and see it before or after, never half-way.
pub fn update(client: &mut postgres::Client, path: &Path, shown: &str) -> Result<Updated> {
    let remote_ids: Vec<i64> = client
        .query("SELECT id FROM runs ORDER BY id", &[])
        .with_context(|| format!("reading the runs of {shown}"))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut store = Store::open(path)?;
    let local = store.connection();
    let local_ids: Vec<i64> = local
        .prepare("SELECT id FROM runs ORDER BY id")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let Some(new_ids) = runs_to_add(&local_ids, &remote_ids) else {
        return Ok(Updated::NeedsNewCopy);
    };
    let schema = tables(local)?;
    let tx = local.transaction()?;
    for t in &schema {
        match under_runs(t, &schema) {
            Some(_) if new_ids.is_empty() => {}
            Some(filter) => copy_table(client, &tx, t, Some((&filter, &new_ids)), shown)?,
            None => {
                tx.execute(&format!("DELETE FROM \"{}\"", t.name), [])
                    .with_context(|| format!("emptying {} of the copy", t.name))?;
                copy_table(client, &tx, t, None, shown)?;
            }
        }
    }
    tx.commit()?;
    Ok(Updated::Runs(new_ids.len()))
}

/// The runs of `remote` (ids, ascending) that `local` (ascending) lacks;
/// None when `local` has one that `remote` has not.
fn runs_to_add(local: &[i64], remote: &[i64]) -> Option<Vec<i64>> {
    let mut new = Vec::new();
    let mut l = local.iter().peekable();
    for &r in remote {
        match l.peek() {
            Some(&&x) if x == r => {
                l.next();
            }
            Some(&&x) if x < r => return None,
            _ => new.push(r),
        }
    }
    l.next().is_none().then_some(new)
}

/// For a table whose rows belong to runs (`runs` itself, and every table
/// that references one of those), the condition selecting the rows of the
/// runs `$1` (a BIGINT array), in PostgreSQL; None for a table not under a
/// run.
pub(crate) fn under_runs(t: &Table, schema: &[Table]) -> Option<String> {
    if t.name == "runs" {
        return Some("\"id\" = ANY($1)".into());
    }
    t.references.iter().find_map(|(col, to, to_col)| {
        let parent = schema.iter().find(|p| &p.name == to)?;
        let inner = under_runs(parent, schema)?;
        Some(format!(
            "\"{col}\" IN (SELECT \"{to_col}\" FROM \"{to}\" WHERE {inner})"
        ))
    })
}

/// Copies the rows of `t` (all, or those `filter` selects with its run
/// ids) from the shared store into `tx`, streamed row by row (memory stays
/// flat however large the store).
fn copy_table(
    client: &mut postgres::Client,
    tx: &rusqlite::Transaction,
    t: &Table,
    filter: Option<(&str, &Vec<i64>)>,
    shown: &str,
) -> Result<()> {
    let remote_cols = super::schema::remote_columns(client, &t.name)?;
    if remote_cols.is_empty() {
        return Ok(());
    }
    let cols: Vec<&str> = t
        .column_names()
        .into_iter()
        .filter(|c| remote_cols.iter().any(|r| r == c))
        .collect();
    let quoted: Vec<String> = cols.iter().map(|c| format!("\"{c}\"")).collect();
    let order = if t.has_generated_id() {
        " ORDER BY id"
    } else {
        ""
    };
    let marks: Vec<String> = (1..=cols.len()).map(|i| format!("?{i}")).collect();
    let mut stmt = tx.prepare(&format!(
        "INSERT INTO \"{}\" ({}) VALUES ({})",
        t.name,
        quoted.join(", "),
        marks.join(", ")
    ))?;
    let select = format!(
        "SELECT {} FROM \"{}\"{}{order}",
        quoted.join(", "),
        t.name,
        filter
            .map(|(f, _)| format!(" WHERE {f}"))
            .unwrap_or_default()
    );
    let reading = || format!("reading table {} of {shown}", t.name);
    let mut rows = match filter {
        Some((_, ids)) => client.query_raw(&select, [ids as &(dyn postgres::types::ToSql + Sync)]),
        None => client.query_raw(&select, std::iter::empty::<i32>()),
    }
    .with_context(reading)?;
    while let Some(row) = rows.next().with_context(reading)? {
        let values = (0..cols.len())
            .map(|i| super::value::from_row(&row, i))
            .collect::<Result<Vec<Value>>>()?;
        stmt.execute(rusqlite::params_from_iter(values))
            .with_context(|| format!("copying a row of {}", t.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_whose_process_is_gone_is_swept_and_a_live_one_is_not() {
        let root = tempfile::tempdir().unwrap();
        let copy = |name: &str, locked: bool| {
            let d = root.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("remote.db"), "x").unwrap();
            let f = std::fs::File::create(d.join(OWNER_LOCK)).unwrap();
            if locked {
                f.lock().unwrap();
            }
            (d, f)
        };
        // A live copy: its lock is held (by another open file: flock is
        // per open file, as between processes).
        let (live, _held) = copy("secperf-remote-live", true);
        // Its process gone: the lock is free.
        let (gone, f) = copy("secperf-remote-gone", false);
        drop(f);
        // Not a copy, and a copy of an older secperf (no lock file).
        std::fs::create_dir(root.path().join("something-else")).unwrap();
        std::fs::create_dir(root.path().join("secperf-remote-older")).unwrap();
        assert_eq!(sweep_orphans(root.path()), 1);
        assert!(live.exists() && !gone.exists());
        assert!(root.path().join("something-else").exists());
        assert!(root.path().join("secperf-remote-older").exists());
    }

    #[test]
    fn the_runs_a_copy_lacks_and_a_store_that_lost_one() {
        assert_eq!(runs_to_add(&[], &[1, 2, 5]), Some(vec![1, 2, 5]));
        assert_eq!(runs_to_add(&[1, 2], &[1, 2, 5, 9]), Some(vec![5, 9]));
        // A run pushed late with an id below the newest (two pushes at
        // once commit out of order) is still found.
        assert_eq!(runs_to_add(&[1, 2, 5], &[1, 2, 3, 5, 6]), Some(vec![3, 6]));
        assert_eq!(runs_to_add(&[1, 2], &[1, 2]), Some(vec![]));
        // Deleted in the store: only a new copy is right.
        assert_eq!(runs_to_add(&[1, 2, 5], &[1, 5, 6]), None);
        assert_eq!(runs_to_add(&[1, 2, 5], &[1, 2]), None);
    }

    #[test]
    fn every_table_is_under_a_run_or_referenced_by_none() {
        // update() empties and reads again whole the tables not under a
        // run; that is right only while no table references one of them.
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("t.db")).unwrap();
        let schema = tables(store.connection()).unwrap();
        let whole: Vec<&str> = schema
            .iter()
            .filter(|t| under_runs(t, &schema).is_none())
            .map(|t| t.name.as_str())
            .collect();
        assert!(
            whole.contains(&"tracks") && whole.contains(&"campaigns"),
            "{whole:?}"
        );
        assert!(!whole.contains(&"samples") && !whole.contains(&"comparison_pairs"));
        for t in &schema {
            for (_, to, _) in &t.references {
                assert!(!whole.contains(&to.as_str()), "{} references {to}", t.name);
            }
        }
        let samples = schema.iter().find(|t| t.name == "samples").unwrap();
        assert_eq!(
            under_runs(samples, &schema).unwrap(),
            "\"result_id\" IN (SELECT \"id\" FROM \"results\" WHERE \"run_id\" IN \
             (SELECT \"id\" FROM \"runs\" WHERE \"id\" = ANY($1)))"
        );
    }
}
