//! The text `secperf calibrate` prints (the JSON is the report itself).

use std::fmt::Write;

use super::CalibrationReport;

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}%")
    } else {
        "n/a".to_string()
    }
}

/// The report as plain text: A/A false positives, the injected slowdowns,
/// the smallest detectable effect.
pub fn text(r: &CalibrationReport) -> String {
    let d = &r.design;
    let mut s = String::new();
    let pairs = if d.sequential {
        format!(
            "sequential: each comparison stops once settled, at most {} pairs",
            d.pairs
        )
    } else {
        format!("{} pairs", d.pairs)
    };
    let _ = writeln!(
        s,
        "Calibration of the A/B method on {} (1 task, {}; {pairs}; halves of {} x {} ms, \
         warmup {}), {:.0} s",
        r.workload, d.mode, d.samples_per_half, d.sample_ms, d.warmup, r.elapsed_s
    );
    let _ = writeln!(s);
    let fp = &r.aa.false_positives;
    let _ = writeln!(
        s,
        "A/A control (none against none, {} comparisons):",
        fp.total
    );
    let _ = writeln!(
        s,
        "  false positives: {} (95% Wilson interval): {}",
        fp.describe(),
        r.aa.assessment
    );
    if let Some(x) = &r.aa.excluding_zero {
        let _ = writeln!(
            s,
            "  intervals excluding 0 (noise band or not): {}",
            x.describe()
        );
    }
    if let Some(n) = r.aa.mean_pairs {
        let _ = writeln!(s, "  pairs per comparison: {n:.1} on average");
    }
    let _ = writeln!(s);
    if let Some(reason) = &r.injected_skipped {
        let _ = writeln!(s, "Injected slowdowns: skipped: {reason}");
    } else {
        let _ = writeln!(
            s,
            "Injected slowdowns (truth: {} pooled comparisons of {} pairs; then short comparisons):",
            d.counts.truth_comparisons, d.counts.truth_pairs
        );
        for i in &r.injected {
            let _ = writeln!(s, "  {}", i.treatment);
            match &i.truth {
                Some(t) => {
                    let _ = writeln!(
                        s,
                        "    truth            {:+.1}% [{:.1}, {:.1}] ({} pairs)",
                        t.pct, t.ci_low_pct, t.ci_high_pct, t.pairs
                    );
                }
                None => {
                    let _ = writeln!(s, "    truth            not measured");
                }
            }
            let _ = writeln!(s, "    detected         {}", i.detected.describe());
            let _ = writeln!(s, "    CI covers truth  {}", i.covered.describe());
            if let Some(n) = i.mean_pairs {
                let _ = writeln!(s, "    pairs            {n:.1} on average");
            }
            let _ = writeln!(s, "    {}", i.assessment);
            if let Some(reason) = &i.skipped {
                let _ = writeln!(s, "    skipped: {reason}");
            }
        }
    }
    let _ = writeln!(s);
    let m = &r.min_effect;
    let _ = writeln!(
        s,
        "Smallest slowdown detectable with 80% power at alpha 0.05 (an approximation):"
    );
    let _ = writeln!(
        s,
        "  sd of per-pair ln(B/A) {:.4} (robust; classic {:.4}; from {} A/A pairs); \
         one pair takes {:.3} s",
        m.sd_log_ratio, m.sd_log_ratio_classic, m.sd_from_pairs, m.pair_seconds
    );
    let _ = writeln!(
        s,
        "  {:>6} pairs ({:>5.1} s): {}",
        10,
        10.0 * m.pair_seconds,
        pct(m.ten_pairs_min_effect_pct)
    );
    let _ = writeln!(
        s,
        "  {:>6} pairs ({:>5.1} s budget): {}",
        m.budget_pairs,
        m.budget_s,
        pct(m.budget_min_effect_pct)
    );
    let _ = write!(s, "  ({})", m.method);
    if let Some(sbs) = &r.side_by_side {
        let _ = write!(s, "\n\n{}", side_by_side(sbs));
    }
    s
}

/// The side-by-side replay: a block per test, as measured and with
/// outliers injected.
pub fn side_by_side(b: &super::replay::SideBySide) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Side by side: the sequential tests on the same pairs ({}):",
        b.method
    );
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
        let _ = writeln!(s, "  {name}, {outliers}:");
        let _ = writeln!(
            s,
            "    A/A alone: false {}; {:.1} pairs on average",
            row.aa_alone.describe(),
            row.aa_mean_pairs
        );
        let _ = writeln!(
            s,
            "    A/A tables of {} with any false verdict: FWER (Holm) {}; FDR (e-BH) {}",
            b.table_size,
            row.aa_tables_fwer.describe(),
            row.aa_tables_fdr.describe()
        );
        for i in &row.injected {
            let _ = writeln!(
                s,
                "    {}: detected {}; covered {}; {:.1} pairs on average",
                i.treatment,
                i.detected.describe(),
                i.covered.describe(),
                i.mean_pairs
            );
        }
        if let Some(m) = &row.mixed_fdr {
            let _ = writeln!(
                s,
                "    mixed tables of {} ({} A/A, the rest injected), FDR (e-BH): false discovery \
                 proportion {:.1}% on average over {} tables; tables with any false discovery {}; \
                 injected detected {}, {:.1} pairs on average",
                b.table_size,
                crate::calibrate::replay::MIXED_NULLS,
                m.mean_fdp * 100.0,
                m.tables,
                m.any_false.describe(),
                m.injected_detected.describe(),
                m.injected_mean_pairs
            );
        }
    }
    s.truncate(s.trim_end().len());
    s
}
