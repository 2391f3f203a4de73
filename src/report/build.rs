//! The grid ([`super::model::Report`]) of one run, for the formats that
//! compare configurations column by column: benchstat wants one block of
//! samples per configuration (the baseline arm and the treatment arm of an
//! overhead run, the one configuration of `run`).

use super::doc::RunDoc;
use super::model::{Cell, DesignKind, Report, Row};

/// The run as a grid: for comparisons, one row per comparison with the
/// baseline and treatment arms' per-pair ns/op; otherwise one row per
/// result with its samples.
pub fn of_doc(doc: &RunDoc) -> Report {
    let paired = !doc.comparisons.is_empty();
    let rows = if paired {
        doc.comparisons
            .iter()
            .map(|c| {
                let o = &c.overhead_pct;
                let mut treatment =
                    Cell::from_samples(c.pair_data.iter().map(|p| p.treatment_per_op).collect());
                treatment.change_pct = Some(o.estimate);
                treatment.ci_low_pct = Some(o.ci_low);
                treatment.ci_high_pct = Some(o.ci_high);
                treatment.p_value = Some(o.p_value);
                treatment.verdict = Some(o.verdict);
                Row {
                    workload: super::label::workload(&c.workload, &c.workload_params),
                    tasks: c.tasks,
                    label: super::label::treatment(c),
                    unit: None,
                    cells: vec![
                        Some(Cell::from_samples(
                            c.pair_data.iter().map(|p| p.baseline_per_op).collect(),
                        )),
                        Some(treatment),
                    ],
                }
            })
            .collect()
    } else {
        doc.results
            .iter()
            .map(|r| Row {
                workload: super::label::workload(&r.workload, &r.params),
                tasks: r.tasks,
                label: String::new(),
                unit: None,
                cells: vec![Some(Cell::from_samples(
                    r.sample_data.iter().map(|s| s.ns_per_op).collect(),
                ))],
            })
            .collect()
    };
    Report {
        title: format!("secperf {}", doc.meta.kind),
        design: if paired {
            DesignKind::Paired
        } else {
            DesignKind::Single
        },
        unit: "ns/op".into(),
        sign_convention: "% overhead = exp(median over pairs of ln(treatment/baseline)) - 1: \
                          positive = slower with the mechanism"
            .into(),
        columns: if paired {
            vec!["baseline".into(), "treatment".into()]
        } else {
            vec![doc.name()]
        },
        rows,
        summary: vec![],
        warnings: vec![],
        machine: super::model::machine(&doc.meta),
        command: doc.meta.command.clone(),
    }
}
