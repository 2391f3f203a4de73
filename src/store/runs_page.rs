//! One page of the run list, filtered: what `secperf serve`'s run list
//! asks for. The filters and the paging are done in SQL, each through an
//! index (migration 16; the kernel release through an index on the
//! expression that reads it from the probe's snapshot), so a page reads
//! its own rows and the count of those that pass, not the whole store.

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

/// A run's kernel release in SQL, as `probe::MachineFacts` reads it from
/// the probe's snapshot (`/kernel/release`, or its older
/// `/kernel/release/value`): the expression of the `runs_kernel` index
/// (migration 16), which SQLite uses only for this very text.
pub const KERNEL_SQL: &str = "(CASE WHEN json_valid(system_json) THEN CASE json_type(system_json, \
     '$.kernel.release') WHEN 'text' THEN json_extract(system_json, '$.kernel.release') ELSE \
     json_extract(system_json, '$.kernel.release.value') END END)";

impl Store {
    /// The runs passing `filter`, newest first (by start time, then id),
    /// `limit` of them after the first `offset`.
    pub fn list_runs_page(
        &self,
        filter: &RunFilter,
        offset: usize,
        limit: usize,
    ) -> Result<RunPage> {
        // Each filter is the set of the ids of the runs that pass it, read
        // from its index (migration 16); the runs that pass them all are
        // the sets' intersection. The count is the intersection's size;
        // the page walks the start-time index and keeps the members (the
        // runs' rows, large, are read for the page's runs only).
        let mut sets: Vec<&str> = Vec::new();
        let mut args: Vec<Value> = Vec::new();
        let kernel_set = format!("SELECT id FROM runs WHERE {KERNEL_SQL} = ?");
        let mut add = |set: &'static str, value: &str, times: usize| {
            sets.push(set);
            args.extend(std::iter::repeat_n(Value::Text(value.to_string()), times));
        };
        if let Some(h) = &filter.host {
            add("SELECT id FROM runs WHERE host = ?", h, 1);
        }
        if let Some(w) = &filter.workload {
            add(
                "SELECT run_id FROM results WHERE workload = ? \
                 UNION SELECT run_id FROM comparisons WHERE workload = ?",
                w,
                2,
            );
        }
        if let Some(m) = &filter.mechanism {
            add(
                "SELECT DISTINCT run_id FROM comparisons WHERE mechanism = ?",
                m,
                1,
            );
        }
        if let Some(v) = &filter.verdict {
            add(
                "SELECT DISTINCT run_id FROM comparisons WHERE verdict = ?",
                v,
                1,
            );
        }
        let mut sets: Vec<String> = sets.into_iter().map(str::to_string).collect();
        if let Some(k) = &filter.kernel {
            sets.push(kernel_set);
            args.push(Value::Text(k.clone()));
        }
        let passing = sets.join(" INTERSECT ");
        let (count_sql, page_sql) = if sets.is_empty() {
            (
                "SELECT COUNT(*) FROM runs".to_string(),
                "SELECT r.id FROM runs r".to_string(),
            )
        } else {
            (
                format!("SELECT COUNT(*) FROM ({passing})"),
                // `+r.id`: the set is looked up, not walked, so that the
                // start-time index gives the order.
                format!("SELECT r.id FROM runs r WHERE +r.id IN ({passing})"),
            )
        };
        let total: i64 =
            self.conn
                .query_row(&count_sql, rusqlite::params_from_iter(args.iter()), |r| {
                    r.get(0)
                })?;
        let mut page_args = args.clone();
        page_args.push(Value::Integer(limit as i64));
        page_args.push(Value::Integer(offset as i64));
        let mut stmt = self.conn.prepare(&format!(
            "{page_sql} ORDER BY r.started_at DESC, r.id DESC LIMIT ? OFFSET ?"
        ))?;
        let ids = stmt
            .query_map(rusqlite::params_from_iter(page_args.iter()), |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        let total = total as usize;
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

    #[test]
    fn the_kernel_is_read_in_sql_as_the_probe_reads_it_and_every_filter_uses_its_index() {
        let (dir, store) = fixture();
        drop(store);
        let db = dir.path().join("runs.db");
        let c = rusqlite::Connection::open(&db).unwrap();
        // An older probe's shape, and a snapshot that is no JSON at all.
        c.execute(
            "UPDATE runs SET system_json = '{\"kernel\":{\"release\":{\"value\":\"5.10.0-old\"}}}' \
             WHERE id = (SELECT MIN(id) FROM runs)",
            [],
        )
        .unwrap();
        c.execute(
            "UPDATE runs SET system_json = 'not json' WHERE id = (SELECT MAX(id) FROM runs)",
            [],
        )
        .unwrap();
        let first: i64 = c
            .query_row("SELECT MIN(id) FROM runs", [], |r| r.get(0))
            .unwrap();
        drop(c);
        let store = Store::open_read_only(&db).unwrap();
        let page = store
            .list_runs_page(
                &RunFilter {
                    kernel: Some("5.10.0-old".into()),
                    ..Default::default()
                },
                0,
                50,
            )
            .unwrap();
        assert_eq!(
            page.runs.iter().map(|r| r.run_id).collect::<Vec<_>>(),
            vec![first]
        );
        assert_eq!(page.runs[0].kernel.as_deref(), Some("5.10.0-old"));
        // Each filter's set is read from its index (a store of 100 000
        // runs answers in tens of ms: benches/serve_scale.sh), not by
        // reading every run.
        for (set, index) in [
            (
                format!("SELECT id FROM runs WHERE {KERNEL_SQL} = 'x'"),
                "runs_kernel",
            ),
            ("SELECT id FROM runs WHERE host = 'x'".into(), "runs_host"),
            (
                "SELECT DISTINCT run_id FROM comparisons WHERE verdict = 'x'".into(),
                "comparisons_verdict",
            ),
            (
                "SELECT DISTINCT run_id FROM comparisons WHERE mechanism = 'x'".into(),
                "comparisons_mechanism",
            ),
            (
                "SELECT run_id FROM results WHERE workload = 'x'".into(),
                "results_workload",
            ),
            (
                "SELECT run_id FROM comparisons WHERE workload = 'x'".into(),
                "comparisons_workload",
            ),
        ] {
            let plan: Vec<String> = store
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {set}"))
                .unwrap()
                .query_map([], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert!(plan.iter().any(|l| l.contains(index)), "{set}: {plan:?}");
        }
    }
}
