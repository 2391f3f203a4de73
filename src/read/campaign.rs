//! A stored campaign read back: its hosts side by side
//! (`report::campaign::CampaignView`) and the document of each of its
//! runs, what `results campaign`, `report --campaign` and `serve`'s
//! campaign page draw.

use anyhow::Result;

use crate::report::campaign::CampaignView;
use crate::report::doc::RunDoc;
use crate::store::Store;

/// The campaign `spec` names in `store`, side by side per host, and its
/// runs' documents.
pub fn view(store: &Store, spec: &str) -> Result<(CampaignView, Vec<RunDoc>)> {
    let record = store.campaign(spec)?;
    let docs = store
        .campaign_runs(&record.id)?
        .iter()
        .map(|r| super::document::load(store, r.run_id))
        .collect::<Result<Vec<_>>>()?;
    Ok((
        crate::report::campaign::view(&record.id, &record.hosts, &docs),
        docs,
    ))
}
