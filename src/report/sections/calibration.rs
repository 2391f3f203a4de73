//! The text `secperf calibrate` prints (the JSON is the report itself):
//! the design, the A/A control, the injected slowdowns, the smallest
//! detectable effect and, when it was asked for, the sequential tests side
//! by side. Each is one block of lines laid out here (indented figures
//! under a title) and handed to the markup writer; blocks are separated
//! by a blank line, and the text ends without a newline, as the command
//! has always printed it.

use crate::model::calibration::{CalibrationReport, MIXED_NULLS, SideBySide};
use crate::report::markup::{self, Kind, Markup};

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}%")
    } else {
        "n/a".to_string()
    }
}

/// The text a writer gives, without its final newline.
fn unterminated(mut m: Box<dyn Markup>) -> String {
    let mut s = m.finish();
    s.truncate(s.trim_end().len());
    s
}

/// The report as plain text: A/A false positives, the injected slowdowns,
/// the smallest detectable effect.
pub fn text(r: &CalibrationReport) -> String {
    let mut m = markup::writer(Kind::Terminal { color: false });
    write(r, m.as_mut());
    unterminated(m)
}

/// The side-by-side replay as plain text.
pub fn side_by_side(b: &SideBySide) -> String {
    let mut m = markup::writer(Kind::Terminal { color: false });
    write_side_by_side(b, m.as_mut());
    unterminated(m)
}

/// The report's blocks, written to `m`.
pub fn write(r: &CalibrationReport, m: &mut dyn Markup) {
    let d = &r.design;
    let mut s: Vec<String> = Vec::new();
    let pairs = if d.sequential {
        format!(
            "sequential: each comparison stops once settled, at most {} pairs",
            d.pairs
        )
    } else {
        format!("{} pairs", d.pairs)
    };
    s.push(format!(
        "Calibration of the A/B method on {} (1 task, {}; {pairs}; halves of {} x {} ms, \
         warmup {}), {:.0} s",
        r.workload, d.mode, d.samples_per_half, d.sample_ms, d.warmup, r.elapsed_s
    ));
    m.lines(&std::mem::take(&mut s));
    let fp = &r.aa.false_positives;
    s.push(format!(
        "A/A control (none against none, {} comparisons):",
        fp.total
    ));
    s.push(format!(
        "  false positives: {} (95% Wilson interval): {}",
        fp.describe(),
        r.aa.assessment
    ));
    if let Some(x) = &r.aa.excluding_zero {
        s.push(format!(
            "  intervals excluding 0 (noise band or not): {}",
            x.describe()
        ));
    }
    if let Some(n) = r.aa.mean_pairs {
        s.push(format!("  pairs per comparison: {n:.1} on average"));
    }
    m.lines(&std::mem::take(&mut s));
    if let Some(reason) = &r.injected_skipped {
        s.push(format!("Injected slowdowns: skipped: {reason}"));
    } else {
        s.push(format!(
            "Injected slowdowns (truth: {} pooled comparisons of {} pairs; then short comparisons):",
            d.counts.truth_comparisons, d.counts.truth_pairs
        ));
        for i in &r.injected {
            s.push(format!("  {}", i.treatment));
            match &i.truth {
                Some(t) => {
                    s.push(format!(
                        "    truth            {:+.1}% [{:.1}, {:.1}] ({} pairs)",
                        t.pct, t.ci_low_pct, t.ci_high_pct, t.pairs
                    ));
                }
                None => {
                    s.push("    truth            not measured".to_string());
                }
            }
            s.push(format!("    detected         {}", i.detected.describe()));
            s.push(format!("    CI covers truth  {}", i.covered.describe()));
            if let Some(n) = i.mean_pairs {
                s.push(format!("    pairs            {n:.1} on average"));
            }
            s.push(format!("    {}", i.assessment));
            if let Some(reason) = &i.skipped {
                s.push(format!("    skipped: {reason}"));
            }
        }
    }
    m.lines(&std::mem::take(&mut s));
    let me = &r.min_effect;
    s.push(
        "Smallest slowdown detectable with 80% power at alpha 0.05 (an approximation):".to_string(),
    );
    s.push(format!(
        "  sd of per-pair ln(B/A) {:.4} (robust; classic {:.4}; from {} A/A pairs); \
         one pair takes {:.3} s",
        me.sd_log_ratio, me.sd_log_ratio_classic, me.sd_from_pairs, me.pair_seconds
    ));
    s.push(format!(
        "  {:>6} pairs ({:>5.1} s): {}",
        10,
        10.0 * me.pair_seconds,
        pct(me.ten_pairs_min_effect_pct)
    ));
    s.push(format!(
        "  {:>6} pairs ({:>5.1} s budget): {}",
        me.budget_pairs,
        me.budget_s,
        pct(me.budget_min_effect_pct)
    ));
    s.push(format!("  ({})", me.method));
    m.lines(&s);
    if let Some(sbs) = &r.side_by_side {
        write_side_by_side(sbs, m);
    }
}

/// The side-by-side replay, one block: a part per test, as measured and
/// with outliers injected.
pub fn write_side_by_side(b: &SideBySide, m: &mut dyn Markup) {
    let mut s: Vec<String> = Vec::new();
    s.push(format!(
        "Side by side: the sequential tests on the same pairs ({}):",
        b.method
    ));
    for row in &b.rows {
        let outliers = if row.outliers {
            format!("{:.0}% outlier pairs injected", b.outlier_share * 100.0)
        } else {
            "pairs as measured".to_string()
        };
        let name = match row.test {
            crate::stats::decision::SeqTest::Both => {
                "both tests (sign and t, e-values averaged)".to_string()
            }
            test => format!("{test} test"),
        };
        s.push(format!("  {name}, {outliers}:"));
        s.push(format!(
            "    A/A alone: false {}; {:.1} pairs on average",
            row.aa_alone.describe(),
            row.aa_mean_pairs
        ));
        s.push(format!(
            "    A/A tables of {} with any false verdict: FWER (Holm) {}; FDR (e-BH) {}",
            b.table_size,
            row.aa_tables_fwer.describe(),
            row.aa_tables_fdr.describe()
        ));
        for i in &row.injected {
            s.push(format!(
                "    {}: detected {}; covered {}; {:.1} pairs on average",
                i.treatment,
                i.detected.describe(),
                i.covered.describe(),
                i.mean_pairs
            ));
        }
        if let Some(x) = &row.mixed_fdr {
            s.push(format!(
                "    mixed tables of {} ({} A/A, the rest injected), FDR (e-BH): false discovery \
                 proportion {:.1}% on average over {} tables; tables with any false discovery {}; \
                 injected detected {}, {:.1} pairs on average",
                b.table_size,
                MIXED_NULLS,
                x.mean_fdp * 100.0,
                x.tables,
                x.any_false.describe(),
                x.injected_detected.describe(),
                x.injected_mean_pairs
            ));
        }
    }
    m.lines(&s);
}
