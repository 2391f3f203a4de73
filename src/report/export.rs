//! `results export --format csv`: every measurement of the runs as one
//! long table for spreadsheets and pandas: a row per sample of each result
//! (`record` = `sample`) and a row per pair of each comparison (`record` =
//! `pair`), with the run and what was measured repeated on every row.
//! Written by the `csv` crate (RFC 4180); numbers in Rust's shortest
//! round-trip form, so they read back exactly (`NaN`, `inf` for
//! non-finite values); empty fields where a column does not apply.

use chrono::SecondsFormat;

use super::doc::RunDoc;
use super::label::params_field;

/// The header, one field per column of [`samples_csv`]'s rows.
pub const CSV_HEADER: [&str; 24] = [
    "run_id",
    "label",
    "started_at",
    "host",
    "record",
    "workload",
    "params",
    "treatment",
    "mode",
    "tasks",
    "pinned",
    "sample_ms",
    "index",
    "order",
    "elapsed_ns",
    "ops",
    "ops_per_sec",
    "ns_per_op",
    "baseline_per_op",
    "treatment_per_op",
    "involuntary_ctxt_switches",
    "steal_ms",
    "flags",
    "unfinished",
];

/// One row per sample and per pair of every run, under [`CSV_HEADER`].
pub fn samples_csv(docs: &[RunDoc]) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing records to a Vec cannot fail.
    let _ = w.write_record(CSV_HEADER);
    for doc in docs {
        let run = [
            doc.run_id.to_string(),
            doc.meta.label.clone(),
            doc.meta
                .started_at
                .to_rfc3339_opts(SecondsFormat::Nanos, true),
            doc.meta.host.clone(),
        ];
        for r in &doc.results {
            for s in &r.sample_data {
                let mut row: Vec<String> = run.to_vec();
                row.extend([
                    "sample".into(),
                    r.workload.clone(),
                    params_field(&r.params),
                    String::new(),
                    r.mode.to_string(),
                    r.tasks.to_string(),
                    r.pinned.to_string(),
                    r.sample_ms.to_string(),
                    s.index.to_string(),
                    String::new(),
                    s.elapsed_ns.to_string(),
                    s.ops.to_string(),
                    s.ops_per_sec.to_string(),
                    s.ns_per_op.to_string(),
                    String::new(),
                    String::new(),
                    s.involuntary_ctxt_switches.to_string(),
                    s.steal_ms.to_string(),
                    s.flags.join(";"),
                    String::new(),
                ]);
                let _ = w.write_record(&row);
            }
        }
        for c in &doc.comparisons {
            for p in &c.pair_data {
                let mut row: Vec<String> = run.to_vec();
                row.extend([
                    "pair".into(),
                    c.workload.clone(),
                    params_field(&c.workload_params),
                    super::label::treatment(c),
                    c.mode.to_string(),
                    c.tasks.to_string(),
                    String::new(),
                    c.sample_ms.to_string(),
                    p.index.to_string(),
                    p.order.clone(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    p.baseline_per_op.to_string(),
                    p.treatment_per_op.to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                    c.unfinished.to_string(),
                ]);
                let _ = w.write_record(&row);
            }
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::testing::{overhead_doc, run_doc};

    #[test]
    fn one_row_per_sample_and_per_pair() {
        let docs = [overhead_doc(), run_doc()];
        let text = samples_csv(&docs);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(r.headers().unwrap().len(), CSV_HEADER.len());
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        let pairs: usize = docs[0].comparisons.iter().map(|c| c.pair_data.len()).sum();
        let samples: usize = docs[1].results.iter().map(|r| r.sample_data.len()).sum();
        assert_eq!(rows.len(), pairs + samples);
        assert_eq!(&rows[0][4], "pair");
        assert_eq!(&rows[0][7], "seccomp:args,filters=4");
        let b: f64 = rows[0][18].parse().unwrap();
        assert_eq!(b, docs[0].comparisons[0].pair_data[0].baseline_per_op);
        assert_eq!(&rows[pairs][4], "sample");
        assert_eq!(&rows[pairs][6], "depth=16");
        assert_eq!(&rows[pairs][1], "fixture");
    }

    #[test]
    fn awkward_strings_are_quoted() {
        let mut doc = run_doc();
        doc.meta.label = "base, \"patched\"".into();
        doc.meta.host = "box\n2".into();
        let text = samples_csv(&[doc.clone()]);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let row = r.records().next().unwrap().unwrap();
        assert_eq!(&row[1], doc.meta.label);
        assert_eq!(&row[3], "box\n2");
    }
}
