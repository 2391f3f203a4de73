//! Exports of stored runs for other tools: the whole run as JSON, or one
//! CSV row per sample for spreadsheets and pandas.
//!
//! The CSV quoting is a dozen lines written here (RFC 4180: a field with a
//! comma, quote, CR or LF is wrapped in quotes and its quotes doubled)
//! rather than pulling in the `csv` crate for one writer. Rows end in `\n`.
//! Floats are printed with Rust's shortest round-trip formatting, so values
//! read back exactly; NaN and infinities print as `NaN`, `inf`, `-inf`.

use std::fmt::Write as _;

use anyhow::{Context, Result};

use crate::model::{Params, StoredRun};

use super::codec::time_to_sql;

/// The CSV header, one column per field of [`export_csv`]'s rows.
pub const CSV_HEADER: &str = "run_id,label,started_at,host,workload,mode,tasks,pinned,params,\
sample_ms,sample_index,elapsed_ns,ops,ops_per_sec,ns_per_op,involuntary_ctxt_switches,steal_ms,\
flags";

/// The run as pretty-printed JSON (the serde form of [`StoredRun`]).
pub fn export_json(run: &StoredRun) -> Result<String> {
    serde_json::to_string_pretty(run)
        .with_context(|| format!("cannot encode run {} as JSON", run.run_id))
}

/// One row per sample of every result of every run, with [`CSV_HEADER`].
/// `params` is `k=v;k=v` (sorted by key), `flags` is `a;b`.
pub fn export_csv(runs: &[StoredRun]) -> String {
    let mut out = String::new();
    out.push_str(CSV_HEADER);
    out.push('\n');
    for run in runs {
        let run_id = run.run_id.to_string();
        let started_at = time_to_sql(&run.meta.started_at);
        for result in &run.results {
            let params = render_params(&result.params);
            let mode = result.mode.to_string();
            let tasks = result.tasks.to_string();
            let pinned = result.pinned.to_string();
            let sample_ms = result.sample_ms.to_string();
            for s in &result.sample_data {
                let fields: [&str; 18] = [
                    &run_id,
                    &run.meta.label,
                    &started_at,
                    &run.meta.host,
                    &result.workload,
                    &mode,
                    &tasks,
                    &pinned,
                    &params,
                    &sample_ms,
                    &s.index.to_string(),
                    &s.elapsed_ns.to_string(),
                    &s.ops.to_string(),
                    &s.ops_per_sec.to_string(),
                    &s.ns_per_op.to_string(),
                    &s.involuntary_ctxt_switches.to_string(),
                    &s.steal_ms.to_string(),
                    &s.flags.join(";"),
                ];
                write_row(&mut out, &fields);
            }
        }
    }
    out
}

/// `k=v;k=v`, in key order.
fn render_params(params: &Params) -> String {
    let mut out = String::new();
    for (i, (k, v)) in params.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        let _ = write!(out, "{k}={v}");
    }
    out
}

fn write_row(out: &mut String, fields: &[&str]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&csv_field(field));
    }
    out.push('\n');
}

/// One CSV field, quoted when it contains a comma, quote, CR or LF.
pub fn csv_field(field: &str) -> std::borrow::Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\"")).into()
    } else {
        field.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Mode, RunMeta, Sample, Summary, WorkloadResult};
    use chrono::DateTime;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field(""), "");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field("cr\r"), "\"cr\r\"");
    }

    fn run_with_awkward_strings() -> StoredRun {
        let t = DateTime::from_timestamp(1_700_000_000, 250_000_000).expect("valid");
        let summary = Summary {
            median: 1.0,
            ci_low: 0.5,
            ci_high: 1.5,
        };
        StoredRun {
            run_id: 7,
            meta: RunMeta {
                label: "base, \"patched\"".into(),
                kind: "run".into(),
                started_at: t,
                host: "box\n2".into(),
                secperf_version: "0.1.0".into(),
                command: "secperf run".into(),
                params: serde_json::json!({}),
                system: serde_json::json!({}),
            },
            finished_at: Some(t),
            comparisons: Vec::new(),
            results: vec![WorkloadResult {
                workload: "open".into(),
                mode: Mode::Thread,
                tasks: 2,
                pinned: true,
                cpus: vec![0, 1],
                params: [
                    ("depth".to_string(), "4".to_string()),
                    ("a".to_string(), "x,y".to_string()),
                ]
                .into_iter()
                .collect(),
                sample_ms: 100,
                warmup_samples: 1,
                samples: 1,
                ops_per_sec: summary,
                ns_per_op: summary,
                unit_rate: None,
                sample_data: vec![Sample {
                    index: 0,
                    elapsed_ns: 100_000_000,
                    ops: 12345,
                    ops_per_sec: 123450.5,
                    ns_per_op: 0.1,
                    per_task_ops_per_sec: vec![1.0, 2.0],
                    involuntary_ctxt_switches: 3,
                    steal_ms: 0.0,
                    flags: vec!["preempted".into(), "steal".into()],
                }],
                started_at: t,
                finished_at: t,
                profile: None,
                child_cpu: None,
            }],
        }
    }

    #[test]
    fn csv_has_header_and_one_quoted_row_per_sample() {
        let csv = export_csv(&[run_with_awkward_strings()]);
        let expected = format!(
            "{CSV_HEADER}\n7,\"base, \"\"patched\"\"\",2023-11-14T22:13:20.250000000Z,\"box\n2\",\
             open,thread,2,true,\"a=x,y;depth=4\",100,0,100000000,12345,123450.5,0.1,3,0,\
             preempted;steal\n"
        );
        assert_eq!(csv, expected);
        assert_eq!(CSV_HEADER.split(',').count(), 18);
    }

    #[test]
    fn json_export_is_the_serde_form() {
        let run = run_with_awkward_strings();
        let json = export_json(&run).expect("encodes");
        let back: StoredRun = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, run);
    }
}
