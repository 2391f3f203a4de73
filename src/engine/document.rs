//! Builds the run document ([`crate::report::doc::RunDoc`]) of a stored
//! run: the run read back, its sweeps and policy files, and the negative
//! control judged over its final verdicts. Measuring commands build it
//! from the store once their run is finished, so what they print and what
//! `results show`, `results export` and `report` print later are the same
//! document.

use anyhow::Result;

use crate::model::Sweep;
use crate::report::doc::RunDoc;
use crate::store::Store;

/// The document of run `run_id` in `store`. A sweep note this secperf
/// cannot read is a problem said in the document, not an error.
pub fn load(store: &Store, run_id: i64) -> Result<RunDoc> {
    let run = store.load_run(run_id)?;
    let mut doc = RunDoc::of(run, store.path().to_path_buf());
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
}
