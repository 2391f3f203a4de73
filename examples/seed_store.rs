//! Seeds a large results file for `secperf serve`'s scale benchmark
//! (benches/serve_scale.sh): the runs of a small store (the test
//! fixture's) copied over and over, every row under a run with it, until
//! the store holds the runs asked for. Each copy gets its own ids, uuid,
//! start time (a minute earlier per copy), one of 13 host names and one of
//! 20 kernel releases, so that the run list's filters and its order have
//! something to sort and find.
//!
//! Usage: cargo run --release --example seed_store -- FROM.db OUT.db RUNS

use anyhow::{Context, Result, bail};
use rusqlite::Connection;

/// A table copied with the runs: its columns, its id stride (the first id
/// after the original rows), and its references to other tables.
struct Table {
    name: String,
    columns: Vec<String>,
    stride: i64,
    /// (column, referenced table)
    refs: Vec<(String, String)>,
}

fn tables(c: &Connection) -> Result<Vec<Table>> {
    let names: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::new();
    for name in names {
        let refs: Vec<(String, String)> = c
            .prepare(&format!(
                "SELECT \"from\", \"table\" FROM pragma_foreign_key_list('{name}')"
            ))?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        // Not under a run (tracks, bisections, campaigns), or keyed by
        // what a copy does not change (cost_probes: one per machine and
        // policy).
        if (name != "runs" && refs.is_empty()) || name == "cost_probes" {
            continue;
        }
        let columns: Vec<String> = c
            .prepare(&format!("SELECT name FROM pragma_table_info('{name}')"))?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        // A table keyed by its parent's id (a profile) has no ids of its own.
        let stride: i64 = if columns.iter().any(|c| c == "id") {
            c.query_row(
                &format!("SELECT COALESCE(MAX(id), 0) + 1 FROM {name}"),
                [],
                |r| r.get(0),
            )?
        } else {
            0
        };
        out.push(Table {
            name,
            columns,
            stride,
            refs,
        });
    }
    // Parents first: runs, then what refers to runs, then the rest.
    out.sort_by_key(|t| match t.refs.first().map(|r| r.1.as_str()) {
        None => 0,
        Some("runs") => 1,
        Some(_) => 2,
    });
    Ok(out)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [from, out, runs] = args.as_slice() else {
        bail!("usage: seed_store FROM.db OUT.db RUNS");
    };
    let want: i64 = runs.parse().context("RUNS: a number")?;
    let _ = std::fs::remove_file(out);
    std::fs::copy(from, out).with_context(|| format!("copying {from} to {out}"))?;
    // This secperf's schema, indexes included.
    drop(secperf::store::Store::open(std::path::Path::new(out))?);
    let mut c = Connection::open(out)?;
    c.pragma_update(None, "journal_mode", "OFF")?;
    c.pragma_update(None, "synchronous", "OFF")?;
    let tables = tables(&c)?;
    let base: i64 = c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?;
    if base == 0 {
        bail!("{from} has no runs to copy");
    }
    let stride_of = |name: &str| {
        tables
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.stride)
            .unwrap_or(0)
    };
    let copies = (want + base - 1) / base - 1;
    let statements: Vec<String> = tables
        .iter()
        .map(|t| {
            // Per column: its expression, with ?k the copy's number.
            let exprs: Vec<String> = t
                .columns
                .iter()
                .map(|col| {
                    if col == "id" {
                        return format!("id + ?1 * {}", t.stride);
                    }
                    if let Some((_, to)) = t.refs.iter().find(|(from, _)| from == col) {
                        return format!("{col} + ?1 * {}", stride_of(to));
                    }
                    match (t.name.as_str(), col.as_str()) {
                        ("runs", "uuid") => "uuid || '-' || ?1".to_string(),
                        ("runs", "host") => "'host-' || (?1 % 13)".to_string(),
                        ("runs", "started_at" | "finished_at") => format!(
                            "strftime('%Y-%m-%dT%H:%M:%S', {col}, '-' || ?1 || ' minutes') || \
                             substr({col}, 20)"
                        ),
                        ("runs", "system_json") => "json_set(system_json, '$.kernel.release', \
                             '6.' || (?1 % 20) || '.0-seed')"
                            .to_string(),
                        _ => col.clone(),
                    }
                })
                .collect();
            // The original rows: ids below the stride, or for a table
            // keyed by its parent, the parent's original ids.
            let originals = if t.stride > 0 {
                format!("id < {}", t.stride)
            } else {
                let (col, to) = &t.refs[0];
                format!("{col} < {}", stride_of(to))
            };
            format!(
                "INSERT INTO {name} ({cols}) SELECT {exprs} FROM {name} WHERE {originals}",
                name = t.name,
                cols = t.columns.join(", "),
                exprs = exprs.join(", "),
            )
        })
        .collect();
    let tx = c.transaction()?;
    {
        let mut prepared: Vec<rusqlite::Statement> = statements
            .iter()
            .map(|sql| tx.prepare(sql))
            .collect::<rusqlite::Result<_>>()?;
        for k in 1..=copies {
            for s in prepared.iter_mut() {
                s.execute([k])?;
            }
            if k % 2000 == 0 {
                eprintln!("seed_store: {} runs", base * (k + 1));
            }
        }
    }
    tx.commit()?;
    c.execute_batch("ANALYZE")?;
    let n: i64 = c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?;
    println!("{out}: {n} runs");
    Ok(())
}
