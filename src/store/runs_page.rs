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

/// What a run must have to be listed; `None` passes everything. Host,
/// kernel and workload match what starts with them (`kernel=6.1` finds
/// 6.1.0-48-amd64, `workload=get` getppid); a mechanism is its name or
/// the start of it, and `NAME:VARIANT` (`seccomp:allow`, as the tables
/// name treatments) its variant too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    pub host: Option<String>,
    /// The kernel release its probe recorded (`uname -r`).
    pub kernel: Option<String>,
    /// A workload it measured (a result or a comparison).
    pub workload: Option<String>,
    /// A mechanism one of its comparisons switched (`seccomp`, or
    /// `seccomp:allow` with its variant).
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
        let mut sets: Vec<String> = Vec::new();
        let mut args: Vec<Value> = Vec::new();
        // A prefix as a range of the column's index: `col >= 'get' AND col
        // < 'get' || U+10FFFF` (every text that starts with it, and only
        // those, for text below U+10FFFF).
        let starts = |col: &str| format!("({col} >= ? AND {col} < ? || char(1114111))");
        let text = |v: &str| Value::Text(v.to_string());
        if let Some(h) = &filter.host {
            sets.push(format!("SELECT id FROM runs WHERE {}", starts("host")));
            args.extend([text(h), text(h)]);
        }
        if let Some(w) = &filter.workload {
            sets.push(format!(
                "SELECT run_id FROM results WHERE {} \
                 UNION SELECT run_id FROM comparisons WHERE {}",
                starts("workload"),
                starts("workload")
            ));
            args.extend([text(w), text(w), text(w), text(w)]);
        }
        if let Some(m) = &filter.mechanism {
            match m.split_once(':') {
                // As the tables name it: the variant before its parameters.
                Some((name, variant)) => {
                    let variant = variant.split(',').next().unwrap_or("").trim();
                    sets.push(format!(
                        "SELECT DISTINCT run_id FROM comparisons WHERE mechanism = ? AND {}",
                        starts("variant")
                    ));
                    args.extend([text(name.trim()), text(variant), text(variant)]);
                }
                None => {
                    sets.push(format!(
                        "SELECT DISTINCT run_id FROM comparisons WHERE {}",
                        starts("mechanism")
                    ));
                    args.extend([text(m), text(m)]);
                }
            }
        }
        if let Some(v) = &filter.verdict {
            sets.push("SELECT DISTINCT run_id FROM comparisons WHERE verdict = ?".to_string());
            args.push(text(v));
        }
        if let Some(k) = &filter.kernel {
            sets.push(format!("SELECT id FROM runs WHERE {}", starts(KERNEL_SQL)));
            args.extend([text(k), text(k)]);
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
        let (mechanisms, verdicts) = super::read::comparison_tally(&self.conn, Some(run_id))?
            .remove(&run_id)
            .unwrap_or_default();
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
            mechanisms,
            verdicts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ids of the runs passing `f`, in the list's order.
    fn passing(store: &Store, f: RunFilter) -> Vec<i64> {
        store
            .list_runs_page(&f, 0, 1000)
            .unwrap()
            .runs
            .iter()
            .map(|r| r.run_id)
            .collect()
    }

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
        let by = |f: RunFilter| passing(&store, f);
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
    fn filters_match_what_starts_with_them_and_a_mechanism_by_its_variant_too() {
        // Issue 53: kernel=6.1 and workload=get found nothing, nor did
        // mechanism=seccomp:allow, the name the tables use.
        let (_dir, store) = fixture();
        let ids = |f: RunFilter| passing(&store, f);
        let all = store.list_runs().unwrap();
        let getppid: Vec<i64> = all
            .iter()
            .filter(|r| r.workloads.iter().any(|w| w == "getppid"))
            .map(|r| r.run_id)
            .collect();
        assert!(!getppid.is_empty());
        let get = ids(RunFilter {
            workload: Some("get".into()),
            ..Default::default()
        });
        assert!(getppid.iter().all(|id| get.contains(id)), "{get:?}");
        let kernel = all.iter().find_map(|r| r.kernel.clone()).unwrap();
        let start: String = kernel.chars().take(3).collect();
        let by_start = ids(RunFilter {
            kernel: Some(start),
            ..Default::default()
        });
        let by_whole = ids(RunFilter {
            kernel: Some(kernel),
            ..Default::default()
        });
        assert!(!by_whole.is_empty() && by_whole.iter().all(|id| by_start.contains(id)));
        let (mechanism, variant): (String, String) = store
            .conn
            .query_row(
                "SELECT mechanism, variant FROM comparisons LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let by_name = ids(RunFilter {
            mechanism: Some(mechanism.clone()),
            ..Default::default()
        });
        let by_variant = ids(RunFilter {
            mechanism: Some(format!("{mechanism}:{variant}")),
            ..Default::default()
        });
        assert!(!by_variant.is_empty(), "{mechanism}:{variant}");
        assert!(by_variant.iter().all(|id| by_name.contains(id)));
        assert!(
            ids(RunFilter {
                mechanism: Some(format!("{mechanism}:no-such-variant")),
                ..Default::default()
            })
            .is_empty()
        );
        // A prefix is no pattern: % and _ are themselves.
        assert!(
            ids(RunFilter {
                workload: Some("%".into()),
                ..Default::default()
            })
            .is_empty()
        );
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
        // A prefix is a range of the index, as list_runs_page asks.
        let starts = |col: &str| format!("({col} >= 'x' AND {col} < 'x' || char(1114111))");
        for (set, index) in [
            (
                format!("SELECT id FROM runs WHERE {}", starts(KERNEL_SQL)),
                "runs_kernel",
            ),
            (
                format!("SELECT id FROM runs WHERE {}", starts("host")),
                "runs_host",
            ),
            (
                "SELECT DISTINCT run_id FROM comparisons WHERE verdict = 'x'".into(),
                "comparisons_verdict",
            ),
            (
                format!(
                    "SELECT DISTINCT run_id FROM comparisons WHERE {}",
                    starts("mechanism")
                ),
                "comparisons_mechanism",
            ),
            (
                format!(
                    "SELECT DISTINCT run_id FROM comparisons WHERE mechanism = 'x' AND {}",
                    starts("variant")
                ),
                "comparisons_mechanism",
            ),
            (
                format!("SELECT run_id FROM results WHERE {}", starts("workload")),
                "results_workload",
            ),
            (
                format!(
                    "SELECT run_id FROM comparisons WHERE {}",
                    starts("workload")
                ),
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
