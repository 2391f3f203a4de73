//! The schema of a shared PostgreSQL store, kept in step with SQLite's.
//!
//! A shared store holds exactly what a results file holds. Rather than a
//! second list of migrations that could drift from the first, its tables are
//! derived from the SQLite schema of this secperf (every migration of
//! `store::migrations` applied): the same tables, columns, keys, unique
//! constraints and indexes, with SQLite's types mapped to PostgreSQL's
//! (INTEGER to BIGINT: the client is strict about widths; REAL to DOUBLE
//! PRECISION; an `id INTEGER PRIMARY KEY` to an identity column). CHECK
//! constraints are left to the SQLite side, where runs are measured.
//!
//! The version (the number of SQLite migrations the tables match) is kept
//! in `secperf_schema`. Bringing a remote up to this secperf's version
//! creates the tables it lacks and adds the columns it lacks, in one
//! transaction under an advisory lock, so two pushes from two hosts cannot
//! race. A remote written by a newer secperf is refused, as a newer SQLite
//! file is.

use anyhow::{Context, Result};
use rusqlite::Connection;

use crate::error::UsageError;
use crate::store::migrations::{MIGRATIONS, RENAMED};

/// The table that records the remote schema's version.
pub const VERSION_TABLE: &str = "secperf_schema";

/// Key of the advisory lock held while a remote schema changes ("secperf").
const LOCK_KEY: i64 = 0x0073_6563_7065_7266;

/// One column of a SQLite table, as `PRAGMA table_info` gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub sqlite_type: String,
    pub not_null: bool,
    pub default: Option<String>,
    /// Position in the primary key (1-based); 0 when not part of it.
    pub pk: i64,
}

/// One table of the SQLite schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    /// (column, referenced table, referenced column).
    pub references: Vec<(String, String, String)>,
    /// Column lists of UNIQUE constraints declared in the table.
    pub uniques: Vec<Vec<String>>,
}

impl Table {
    /// Whether the table's key is an `id` column the database assigns.
    pub fn has_generated_id(&self) -> bool {
        let pk: Vec<&Column> = self.columns.iter().filter(|c| c.pk > 0).collect();
        pk.len() == 1 && pk[0].name == "id" && pk[0].sqlite_type.eq_ignore_ascii_case("INTEGER")
    }

    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }
}

/// The tables of a SQLite results database, in the order they were created
/// (parents before the tables that reference them).
pub fn tables(conn: &Connection) -> Result<Vec<Table>> {
    let names: Vec<String> = {
        let mut stmt = conn.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             ORDER BY rowid",
        )?;
        stmt.query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut out = Vec::new();
    for name in names {
        let columns = {
            let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{name}\")"))?;
            stmt.query_map([], |r| {
                Ok(Column {
                    name: r.get(1)?,
                    sqlite_type: r.get(2)?,
                    not_null: r.get::<_, i64>(3)? != 0,
                    default: r.get(4)?,
                    pk: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?
        };
        let references = {
            let mut stmt = conn.prepare(&format!("PRAGMA foreign_key_list(\"{name}\")"))?;
            stmt.query_map([], |r| Ok((r.get(3)?, r.get(2)?, r.get(4)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?
        };
        let unique_indexes: Vec<String> = {
            let mut stmt = conn.prepare(&format!("PRAGMA index_list(\"{name}\")"))?;
            stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .filter(|(_, unique, origin)| *unique != 0 && origin == "u")
            .map(|(index, _, _)| index)
            .collect()
        };
        let mut uniques = Vec::new();
        for index in unique_indexes {
            let mut stmt = conn.prepare(&format!("PRAGMA index_info(\"{index}\")"))?;
            let cols = stmt
                .query_map([], |r| r.get::<_, String>(2))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            uniques.push(cols);
        }
        uniques.sort();
        out.push(Table {
            name,
            columns,
            references,
            uniques,
        });
    }
    Ok(out)
}

/// The PostgreSQL type for a SQLite column type.
pub fn pg_type(sqlite_type: &str) -> &'static str {
    match sqlite_type.to_ascii_uppercase().as_str() {
        "INTEGER" | "INT" | "BIGINT" => "BIGINT",
        "REAL" | "DOUBLE" | "FLOAT" => "DOUBLE PRECISION",
        "BLOB" => "BYTEA",
        _ => "TEXT",
    }
}

/// A column's definition in PostgreSQL, for CREATE TABLE or ADD COLUMN.
fn column_sql(table: &Table, c: &Column, adding: bool) -> String {
    let mut sql = format!("\"{}\" {}", c.name, pg_type(&c.sqlite_type));
    if table.has_generated_id() && c.pk > 0 {
        sql.push_str(" GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
        return sql;
    }
    // A NOT NULL column added to a table with rows needs a default, as in
    // SQLite.
    if c.not_null && (!adding || c.default.is_some()) {
        sql.push_str(" NOT NULL");
    }
    if let Some(d) = &c.default {
        sql.push_str(&format!(" DEFAULT {d}"));
    }
    if let Some((_, to, to_col)) = table.references.iter().find(|(from, _, _)| *from == c.name) {
        sql.push_str(&format!(
            " REFERENCES \"{to}\"(\"{to_col}\") ON DELETE CASCADE"
        ));
    }
    sql
}

/// `CREATE TABLE IF NOT EXISTS` for a table.
pub fn create_table_sql(t: &Table) -> String {
    let mut parts: Vec<String> = t.columns.iter().map(|c| column_sql(t, c, false)).collect();
    if !t.has_generated_id() {
        let mut pk: Vec<&Column> = t.columns.iter().filter(|c| c.pk > 0).collect();
        pk.sort_by_key(|c| c.pk);
        if !pk.is_empty() {
            let cols: Vec<String> = pk.iter().map(|c| format!("\"{}\"", c.name)).collect();
            parts.push(format!("PRIMARY KEY ({})", cols.join(", ")));
        }
    }
    for u in &t.uniques {
        let cols: Vec<String> = u.iter().map(|c| format!("\"{c}\"")).collect();
        parts.push(format!("UNIQUE ({})", cols.join(", ")));
    }
    format!(
        "CREATE TABLE IF NOT EXISTS \"{}\" (\n    {}\n)",
        t.name,
        parts.join(",\n    ")
    )
}

/// The schema's explicit indexes as PostgreSQL statements (`IF NOT EXISTS`),
/// less those on expressions of SQLite's JSON functions (`runs_kernel`):
/// they serve SQLite's run list, which a shared store is read through (a
/// copy in SQLite, `remote::pull`, with every index), and PostgreSQL has
/// no such functions.
pub fn index_sql(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid",
    )?;
    let sqls = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(sqls
        .into_iter()
        .filter(|s| !s.contains("json_"))
        .map(|s| {
            s.replacen(
                "CREATE UNIQUE INDEX ",
                "CREATE UNIQUE INDEX IF NOT EXISTS ",
                1,
            )
            .replacen("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ", 1)
        })
        .collect())
}

/// The remote's schema version; None when it holds no secperf tables yet.
pub fn remote_version(client: &mut postgres::Client) -> Result<Option<i64>> {
    let exists: bool = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&VERSION_TABLE])?
        .get(0);
    if !exists {
        return Ok(None);
    }
    let row = client.query_opt(&format!("SELECT version FROM {VERSION_TABLE}"), &[])?;
    Ok(row.map(|r| r.get::<_, i64>(0)))
}

/// The columns the remote's table `table` has (none: no such table).
pub fn remote_columns(
    client: &mut impl postgres::GenericClient,
    table: &str,
) -> Result<Vec<String>> {
    Ok(client
        .query(
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1",
            &[&table],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// The error for a remote written by a newer secperf.
pub fn newer_error(url: &str, version: i64) -> anyhow::Error {
    UsageError::new(format!(
        "the store at {url} was written by a newer secperf (schema {version}; this secperf knows \
         up to {}): upgrade secperf on this machine",
        MIGRATIONS.len()
    ))
    .into()
}

/// Checks that a remote can be read by this secperf: it exists and is not
/// newer. Returns its version.
pub fn check_readable(client: &mut postgres::Client, url: &str) -> Result<i64> {
    match remote_version(client)? {
        None => Err(UsageError::new(format!(
            "{url} holds no secperf results yet: push some with `secperf results push {url}`"
        ))
        .into()),
        Some(v) if v > MIGRATIONS.len() as i64 => Err(newer_error(url, v)),
        Some(v) => Ok(v),
    }
}

/// Brings the remote's tables to the schema of `local` (a migrated results
/// database of this secperf), creating what is missing, under an advisory
/// lock in one transaction. Refuses a newer remote.
pub fn migrate_remote(local: &Connection, client: &mut postgres::Client, url: &str) -> Result<()> {
    let ours = MIGRATIONS.len() as i64;
    let wanted = tables(local).context("reading the local schema")?;
    let indexes = index_sql(local)?;
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])?;
    tx.batch_execute(&format!(
        "CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version BIGINT NOT NULL)"
    ))?;
    let version: Option<i64> = tx
        .query_opt(&format!("SELECT version FROM {VERSION_TABLE}"), &[])?
        .map(|r| r.get(0));
    if let Some(v) = version {
        if v > ours {
            return Err(newer_error(url, v));
        }
        if v == ours {
            return Ok(tx.commit()?);
        }
    }
    for t in &wanted {
        tx.batch_execute(&create_table_sql(t))
            .with_context(|| format!("creating table {} at {url}", t.name))?;
        let mut have = remote_columns(&mut tx, &t.name)?;
        // A column a migration renamed keeps its values: renamed here too,
        // where the local schema has the new name and the remote the old.
        let wanted_names = t.column_names();
        for &(_, table, old, new) in RENAMED.iter().filter(|r| r.1 == t.name) {
            let renamed_here = wanted_names.contains(&new) && !wanted_names.contains(&old);
            if renamed_here && have.iter().any(|c| c == old) && !have.iter().any(|c| c == new) {
                tx.batch_execute(&format!(
                    "ALTER TABLE \"{table}\" RENAME COLUMN \"{old}\" TO \"{new}\""
                ))
                .with_context(|| format!("renaming column {table}.{old} to {new} at {url}"))?;
                have = remote_columns(&mut tx, &t.name)?;
            }
        }
        for c in t.columns.iter().filter(|c| !have.contains(&c.name)) {
            tx.batch_execute(&format!(
                "ALTER TABLE \"{}\" ADD COLUMN {}",
                t.name,
                column_sql(t, c, true)
            ))
            .with_context(|| format!("adding column {}.{} at {url}", t.name, c.name))?;
        }
    }
    for sql in &indexes {
        tx.batch_execute(sql)
            .with_context(|| format!("creating an index at {url}: {sql}"))?;
    }
    tx.execute(&format!("DELETE FROM {VERSION_TABLE}"), &[])?;
    tx.execute(
        &format!("INSERT INTO {VERSION_TABLE} (version) VALUES ($1)"),
        &[&ours],
    )?;
    tx.commit()
        .with_context(|| format!("committing the schema at {url}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        drop(crate::store::Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        (dir, conn)
    }

    #[test]
    fn every_table_of_the_sqlite_schema_maps_to_postgres() {
        let (_dir, conn) = schema();
        let tables = tables(&conn).unwrap();
        let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
        for want in [
            "runs",
            "results",
            "samples",
            "comparisons",
            "comparison_pairs",
            "campaigns",
            "cost_probes",
        ] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        // Parents come before the tables that reference them.
        for (i, t) in tables.iter().enumerate() {
            for (_, to, _) in &t.references {
                let j = names.iter().position(|n| n == to).unwrap();
                assert!(j < i, "{} references {to}, created later", t.name);
            }
        }
        let runs = create_table_sql(&tables[names.iter().position(|n| *n == "runs").unwrap()]);
        assert!(
            runs.contains("\"id\" BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
            "{runs}"
        );
        assert!(runs.contains("\"uuid\" TEXT"), "{runs}");
        let samples = tables.iter().find(|t| t.name == "samples").unwrap();
        let sql = create_table_sql(samples);
        assert!(sql.contains("UNIQUE (\"result_id\", \"idx\")"), "{sql}");
        assert!(
            sql.contains(
                "\"result_id\" BIGINT NOT NULL REFERENCES \"results\"(\"id\") ON DELETE CASCADE"
            ),
            "{sql}"
        );
        assert!(sql.contains("\"steal_ms\" DOUBLE PRECISION"), "{sql}");
        // A key that is also a reference is not an identity.
        let profiles = tables.iter().find(|t| t.name == "result_profiles").unwrap();
        let sql = create_table_sql(profiles);
        assert!(!sql.contains("IDENTITY"), "{sql}");
        assert!(sql.contains("PRIMARY KEY (\"result_id\")"), "{sql}");
        let probes = tables.iter().find(|t| t.name == "cost_probes").unwrap();
        let sql = create_table_sql(probes);
        assert!(
            sql.contains("PRIMARY KEY (\"machine\", \"spec\", \"workload\", \"policy_sha256\")"),
            "{sql}"
        );
        let comparisons = tables.iter().find(|t| t.name == "comparisons").unwrap();
        let unfinished = comparisons
            .columns
            .iter()
            .find(|c| c.name == "unfinished")
            .unwrap();
        assert_eq!(
            column_sql(comparisons, unfinished, true),
            "\"unfinished\" BIGINT NOT NULL DEFAULT 0"
        );
    }

    #[test]
    fn indexes_are_created_only_when_missing() {
        let (_dir, conn) = schema();
        let sqls = index_sql(&conn).unwrap();
        assert!(
            sqls.iter()
                .any(|s| s == "CREATE UNIQUE INDEX IF NOT EXISTS runs_uuid ON runs(uuid)"),
            "{sqls:?}"
        );
        assert!(sqls.iter().all(|s| s.contains("IF NOT EXISTS")), "{sqls:?}");
        // The run list's filters' indexes, but not SQLite's JSON expression.
        assert!(
            sqls.iter().any(|s| s.contains("comparisons_verdict")),
            "{sqls:?}"
        );
        assert!(!sqls.iter().any(|s| s.contains("runs_kernel")), "{sqls:?}");
    }
}
