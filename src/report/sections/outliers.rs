//! Outlier pairs: pairs whose log ratio is far from the others' by the
//! MAD rule, listed under the comparisons and kept in every figure (the
//! statistics are medians and order statistics, which they barely move).

use super::super::doc::RunDoc;
use super::super::label;
use super::super::markup::Markup;

/// Modified z-score beyond which a sample or pair is reported as an
/// outlier (Iglewicz and Hoaglin).
pub const OUTLIER_Z: f64 = 3.5;

/// The outlier pairs of each comparison, or (`every` false) one line
/// counting them and saying where the list is.
pub fn outlier_pairs(doc: &RunDoc, every: bool, m: &mut dyn Markup) {
    let mut items = Vec::new();
    let mut pairs_total = 0;
    for c in &doc.comparisons {
        let r: Vec<f64> = c
            .pair_data
            .iter()
            .map(|p| (p.treatment_per_op / p.baseline_per_op).ln())
            .collect();
        let idx = crate::stats::outliers::mad_outliers(&r, OUTLIER_Z);
        pairs_total += idx.len();
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
    if !every {
        m.text(&format!(
            "Outlier pairs (MAD, modified z > {OUTLIER_Z}): {pairs_total} in {} of the {} \
             comparisons, kept in every figure (each listed by `secperf results show {}`).",
            items.len(),
            doc.comparisons.len(),
            doc.run_id
        ));
        return;
    }
    m.heading(&format!("Outlier pairs (MAD, modified z > {OUTLIER_Z})"));
    m.list(&items);
}
