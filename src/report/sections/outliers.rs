//! Outlier pairs: pairs whose log ratio is far from the others' by the
//! MAD rule, listed under the comparisons and kept in every figure (the
//! statistics are medians and order statistics, which they barely move).

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::Markup;

/// Modified z-score beyond which a sample or pair is reported as an
/// outlier (Iglewicz and Hoaglin).
pub const OUTLIER_Z: f64 = 3.5;

pub fn outlier_pairs(doc: &RunDoc, m: &mut dyn Markup) {
    let mut items = Vec::new();
    for c in &doc.comparisons {
        let r: Vec<f64> = c
            .pair_data
            .iter()
            .map(|p| (p.treatment_ns_per_op / p.baseline_ns_per_op).ln())
            .collect();
        let idx = crate::stats::outliers::mad_outliers(&r, OUTLIER_Z);
        if !idx.is_empty() {
            let pairs: Vec<String> = idx.iter().map(|i| (i + 1).to_string()).collect();
            items.push(format!(
                "{}: pair {} of {} (kept)",
                label::comparison(c),
                pairs.join(", "),
                c.pair_data.len()
            ));
        }
    }
    if items.is_empty() {
        return;
    }
    m.heading(&format!("Outlier pairs (MAD, modified z > {OUTLIER_Z})"));
    m.list(&items);
}
