//! Builds the run document ([`crate::report::doc::RunDoc`]) of a stored
//! run: the run read back, its sweeps and policy files, the negative
//! control judged over its final verdicts and, for a suite run, the
//! suite's report as data ([`super::suite::suite_doc`]). Measuring commands build it
//! from the store once their run is finished, so what they print and what
//! `results show`, `results export` and `report` print later are the same
//! document.

use anyhow::Result;

use crate::model::Sweep;
use crate::report::doc::RunDoc;
use crate::store::Store;

/// The document of run `run_id` in `store`. A sweep note this secperf
/// cannot read, or a suite run whose report it cannot rebuild, is a
/// problem said in the document, not an error.
pub fn load(store: &Store, run_id: i64) -> Result<RunDoc> {
    let run = store.load_run(run_id)?;
    let suite = (run.meta.kind == "suite").then(|| super::suite::suite_doc(store, &run, None));
    let mut doc = RunDoc::of(run, store.path().to_path_buf());
    match suite {
        Some(Ok(s)) => doc.suite = Some(s),
        Some(Err(e)) => doc.problems.push(format!(
            "The suite report of this run could not be rebuilt ({e:#}); its results and \
             comparisons are shown as stored."
        )),
        None => {}
    }
    for (i, note) in store
        .run_notes(run_id, Sweep::NOTE)?
        .into_iter()
        .enumerate()
    {
        match serde_json::from_value::<Sweep>(note) {
            Ok(s) => doc.sweeps.push(s),
            Err(e) => doc.problems.push(format!(
                "Sweep note {} of this run could not be read ({e}); it is left out.",
                i + 1
            )),
        }
    }
    for note in store.run_notes(run_id, crate::vm::arms::NOTE)? {
        match serde_json::from_value(note) {
            Ok(arms) => doc.boot_arms = arms,
            Err(e) => doc.problems.push(format!(
                "The boot arms of this run could not be read ({e}); they are left out."
            )),
        }
    }
    doc.policy_files = store.policy_files(run_id)?;
    doc.negative_control = super::control::judge(&doc.comparisons);
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::testing::overhead_doc;

    #[test]
    fn a_stored_run_comes_back_as_its_document() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("d.db")).unwrap();
        let want = overhead_doc();
        let id = store.begin_run(&want.meta).unwrap();
        for c in &want.comparisons {
            store.add_comparison(id, c).unwrap();
        }
        for s in &want.sweeps {
            store
                .add_run_note(id, Sweep::NOTE, &serde_json::to_value(s).unwrap())
                .unwrap();
        }
        store
            .add_run_note(id, Sweep::NOTE, &serde_json::json!({"not": "a sweep"}))
            .unwrap();
        for f in &want.policy_files {
            store.add_policy_file(id, f).unwrap();
        }
        let doc = load(&store, id).unwrap();
        assert_eq!(doc.comparisons.len(), want.comparisons.len());
        assert!(doc.comparisons[4].unfinished);
        assert_eq!(doc.sweeps, want.sweeps);
        assert_eq!(doc.policy_files, want.policy_files);
        assert_eq!(doc.negative_control, want.negative_control);
        assert_eq!(doc.problems.len(), 1, "{:?}", doc.problems);
        assert!(doc.finished_at.is_none(), "never finished");
        // The JSON reads back as the same document.
        let json = serde_json::to_string(&doc).unwrap();
        let back: RunDoc = serde_json::from_str(&json).unwrap();
        assert_eq!(back.comparisons.len(), doc.comparisons.len());
        assert_eq!(back.policy_files, doc.policy_files);
    }

    /// A stored run of suite avc-2004 (`--quick` on 1 CPU) with `write`
    /// measured and its AVC counters noted, its record at `version`.
    fn suite_run(store: &mut Store, version: u32) -> i64 {
        use crate::read::suite::{AVC_NOTE, SuiteRecord};
        use crate::suites::{PlanCtx, avc_2004};
        let def = &avc_2004::SUITE;
        let plan = (def.plan)(&PlanCtx {
            quick: true,
            cpus: 1,
        });
        let record = SuiteRecord {
            suite: def.name.into(),
            version,
            quick: true,
            cpus: 1,
            pairs: 10,
            seed: 7,
            skipped: vec![],
            plan: serde_json::to_value(&plan).unwrap(),
            profile: None,
        };
        let mut meta = overhead_doc().meta;
        meta.kind = "suite".into();
        meta.params = serde_json::to_value(&record).unwrap();
        let id = store.begin_run(&meta).unwrap();
        let item = &plan.current[0];
        let mut r = crate::model::testing::result(item.workload, &[1000.0, 1010.0, 990.0]);
        r.params = item.full_params();
        store.add_result(id, &r).unwrap();
        let delta = crate::model::AvcDelta {
            workload: item.name(),
            tasks: 1,
            stats: crate::model::AvcStats {
                lookups: 10,
                hits: 9,
                ..Default::default()
            },
        };
        store
            .add_run_note(id, AVC_NOTE, &serde_json::to_value(&delta).unwrap())
            .unwrap();
        store.finish_run(id).unwrap();
        id
    }

    #[test]
    fn a_suite_run_comes_back_with_its_report() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("d.db")).unwrap();
        let id = suite_run(&mut store, crate::suites::avc_2004::SUITE.version);
        let doc = load(&store, id).unwrap();
        assert!(doc.problems.is_empty(), "{:?}", doc.problems);
        let s = doc.suite.as_ref().expect("the suite part");
        assert_eq!(s.name, "avc-2004");
        assert!(s.ab.is_none(), "nothing was paired");
        assert!(s.runs.report.rows[0].cells[0].is_some(), "{:?}", s.runs);
        assert_eq!(s.avc.as_ref().unwrap()[0].stats.hits, 9);
        // Loaded twice, the same document; its JSON reads back as it.
        assert_eq!(load(&store, id).unwrap(), doc);
        let back: RunDoc = serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
        assert_eq!(back.suite, doc.suite);
    }

    #[test]
    fn a_suite_run_of_another_version_keeps_its_data_and_says_why_no_report() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("d.db")).unwrap();
        let id = suite_run(&mut store, 999);
        let doc = load(&store, id).unwrap();
        assert!(doc.suite.is_none());
        assert_eq!(doc.results.len(), 1);
        assert!(
            doc.problems[0].contains("avc-2004 v999, this secperf has v1"),
            "{:?}",
            doc.problems
        );
    }
}
