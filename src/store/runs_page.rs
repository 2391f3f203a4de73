//! One page of the run list, filtered: what `secperf serve`'s run list
//! asks for. The filters and the paging are done in SQL, so a page reads
//! its own rows and their counts, not the whole store; only the kernel
//! filter reads the filtered runs' probe snapshots (the release is inside
//! them).

use anyhow::{Context, Result};
use rusqlite::types::Value;

use super::Store;
use super::codec::{int_from_sql, time_from_sql};
use crate::model::RunSummary;

/// What a run must have to be listed; `None` passes everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    pub host: Option<String>,
    /// The kernel release its probe recorded (`uname -r`).
    pub kernel: Option<String>,
    /// A workload it measured (a result or a comparison).
    pub workload: Option<String>,
    /// A mechanism one of its comparisons switched.
    pub mechanism: Option<String>,
    /// A verdict one of its comparisons reached (`slower`, `faster`,
    /// `no-change`, `negligible`).
    pub verdict: Option<String>,
}

/// One page of runs, newest first, and how many runs pass the filter.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPage {
    pub runs: Vec<RunSummary>,
    pub total: usize,
}

impl Store {
    /// The runs passing `filter`, newest first (by start time, then id),
    /// `limit` of them after the first `offset`.
    pub fn list_runs_page(
        &self,
        filter: &RunFilter,
        offset: usize,
        limit: usize,
    ) -> Result<RunPage> {
        let mut clauses: Vec<&str> = Vec::new();
        let mut args: Vec<Value> = Vec::new();
        if let Some(h) = &filter.host {
            clauses.push("r.host = ?");
            args.push(Value::Text(h.clone()));
        }
        if let Some(w) = &filter.workload {
            clauses.push(
                "(EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.id AND x.workload = ?) \
                 OR EXISTS (SELECT 1 FROM comparisons x WHERE x.run_id = r.id AND x.workload = ?))",
            );
            args.push(Value::Text(w.clone()));
            args.push(Value::Text(w.clone()));
        }
        if let Some(m) = &filter.mechanism {
            clauses.push(
                "EXISTS (SELECT 1 FROM comparisons x WHERE x.run_id = r.id AND x.mechanism = ?)",
            );
            args.push(Value::Text(m.clone()));
        }
        if let Some(v) = &filter.verdict {
            clauses.push(
                "EXISTS (SELECT 1 FROM comparisons x WHERE x.run_id = r.id AND x.verdict = ?)",
            );
            args.push(Value::Text(v.clone()));
        }
        let filter_sql = if clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", clauses.join(" AND "))
        };
        let order = "ORDER BY r.started_at DESC, r.id DESC";
        // The ids of the page (and the total), the kernel filter applied
        // in Rust to the runs the SQL filters let through.
        let (ids, total): (Vec<i64>, usize) = if let Some(k) = &filter.kernel {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT r.id, r.system_json FROM runs r {filter_sql} {order}"
            ))?;
            let mut rows = stmt.query(rusqlite::params_from_iter(args.iter()))?;
            let mut passing = Vec::new();
            while let Some(row) = rows.next()? {
                let system: String = row.get(1)?;
                if super::read::kernel_release(&system).as_deref() == Some(k.as_str()) {
                    passing.push(row.get::<_, i64>(0)?);
                }
            }
            let total = passing.len();
            (
                passing.into_iter().skip(offset).take(limit).collect(),
                total,
            )
        } else {
            let total: i64 = self.conn.query_row(
                &format!("SELECT COUNT(*) FROM runs r {filter_sql}"),
                rusqlite::params_from_iter(args.iter()),
                |r| r.get(0),
            )?;
            let mut page_args = args.clone();
            page_args.push(Value::Integer(limit as i64));
            page_args.push(Value::Integer(offset as i64));
            let mut stmt = self.conn.prepare(&format!(
                "SELECT r.id FROM runs r {filter_sql} {order} LIMIT ? OFFSET ?"
            ))?;
            let ids = stmt
                .query_map(rusqlite::params_from_iter(page_args.iter()), |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<i64>>>()?;
            (ids, total as usize)
        };
        let runs = ids
            .iter()
            .map(|&id| self.run_summary(id))
            .collect::<Result<Vec<_>>>()?;
        Ok(RunPage { runs, total })
    }

    /// One run's line of the list.
    fn run_summary(&self, run_id: i64) -> Result<RunSummary> {
        let (label, kind, started_at, finished_at, host, system_json): (
            String,
            String,
            String,
            Option<String>,
            String,
            String,
        ) = self.conn.query_row(
            "SELECT label, kind, started_at, finished_at, host, system_json FROM runs WHERE id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )?;
        let mut counts = [0u32; 2];
        let mut workloads: Vec<String> = Vec::new();
        for (i, table) in ["results", "comparisons"].iter().enumerate() {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT workload, COUNT(*) FROM {table} WHERE run_id = ?1
                 GROUP BY workload ORDER BY MIN(id)"
            ))?;
            let mut rows = stmt.query([run_id])?;
            while let Some(row) = rows.next()? {
                let workload: String = row.get(0)?;
                counts[i] += int_from_sql::<u32>(row.get(1)?, "number of results")?;
                if !workloads.contains(&workload) {
                    workloads.push(workload);
                }
            }
        }
        Ok(RunSummary {
            run_id,
            label,
            kind,
            started_at: time_from_sql(&started_at, "runs.started_at")
                .with_context(|| format!("run {run_id} is corrupt"))?,
            finished_at: finished_at
                .map(|t| time_from_sql(&t, "runs.finished_at"))
                .transpose()
                .with_context(|| format!("run {run_id} is corrupt"))?,
            host,
            kernel: super::read::kernel_release(&system_json),
            results: counts[0],
            comparisons: counts[1],
            workloads,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("runs.db");
        std::fs::copy(
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/runs/runs.db"),
            &db,
        )
        .unwrap();
        let store = Store::open_read_only(&db).unwrap();
        (dir, store)
    }

    #[test]
    fn a_page_is_the_list_filtered_and_cut() {
        let (_dir, store) = fixture();
        let all = store.list_runs().unwrap();
        let page = store
            .list_runs_page(&RunFilter::default(), 0, 1000)
            .unwrap();
        assert_eq!(page.runs, all);
        assert_eq!(page.total, all.len());
        let second = store.list_runs_page(&RunFilter::default(), 1, 2).unwrap();
        assert_eq!(second.runs, all[1..3].to_vec());
        assert_eq!(second.total, all.len());
    }

    #[test]
    fn each_filter_keeps_only_runs_that_have_it() {
        let (_dir, store) = fixture();
        let all = store.list_runs().unwrap();
        let by = |f: RunFilter| -> Vec<i64> {
            store
                .list_runs_page(&f, 0, 1000)
                .unwrap()
                .runs
                .iter()
                .map(|r| r.run_id)
                .collect()
        };
        let w = all[0].workloads[0].clone();
        let want: Vec<i64> = all
            .iter()
            .filter(|r| r.workloads.contains(&w))
            .map(|r| r.run_id)
            .collect();
        assert_eq!(
            by(RunFilter {
                workload: Some(w),
                ..Default::default()
            }),
            want
        );
        let slower = by(RunFilter {
            verdict: Some("slower".into()),
            ..Default::default()
        });
        assert!(!slower.is_empty() && slower.len() < all.len(), "{slower:?}");
        let audit = by(RunFilter {
            mechanism: Some("audit".into()),
            verdict: Some("slower".into()),
            ..Default::default()
        });
        assert!(audit.iter().all(|id| slower.contains(id)), "{audit:?}");
        assert!(
            by(RunFilter {
                host: Some("no such host".into()),
                ..Default::default()
            })
            .is_empty()
        );
        if let Some(k) = all.iter().find_map(|r| r.kernel.clone()) {
            let want: Vec<i64> = all
                .iter()
                .filter(|r| r.kernel.as_deref() == Some(k.as_str()))
                .map(|r| r.run_id)
                .collect();
            assert_eq!(
                by(RunFilter {
                    kernel: Some(k),
                    ..Default::default()
                }),
                want
            );
        }
    }
}
