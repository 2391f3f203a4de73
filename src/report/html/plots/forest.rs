//! The overhead forest plot: one row per comparison, its overhead estimate
//! (a dot) with the interval its verdict was decided on (a bar, at the
//! level the axis names), the noise band shaded around 0, coloured by
//! verdict, so a whole survey reads at a glance.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    BLACK_ISH, GRID, Mark, SHADE, WIDTH, label_style, label_width, legend, legend_height, range,
    shorten, svg, tick_style, title_style,
};
use crate::stats::decision::Verdict;

/// One comparison of the plot.
#[derive(Debug, Clone)]
pub struct Row {
    pub label: String,
    pub estimate_pct: f64,
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    pub verdict: Verdict,
}

/// The verdicts in legend order.
const VERDICTS: [Verdict; 4] = [
    Verdict::Slower,
    Verdict::Faster,
    Verdict::NoChange,
    Verdict::Negligible,
];

/// The colour of a verdict: vermillion slower, blue faster, grey no
/// change, green negligible.
pub fn verdict_color(v: Verdict) -> RGBColor {
    match v {
        Verdict::Slower => super::PALETTE[1],
        Verdict::Faster => super::PALETTE[0],
        Verdict::NoChange => super::PALETTE[6],
        Verdict::Negligible => super::PALETTE[2],
    }
}

const ROW_PX: u32 = 26;
const MAX_LABEL: usize = 60;

/// The forest plot of `rows` (top to bottom) with the noise band
/// +-`noise_pct`; `unit` is what the overhead is a percentage of
/// ("ns/op"), `interval` what the bars are ("98.2% interval").
pub fn draw(
    title: &str,
    rows: &[Row],
    noise_pct: f64,
    unit: &str,
    interval: &str,
) -> Result<String> {
    let n = rows.len();
    let labels: Vec<String> = rows.iter().map(|r| shorten(&r.label, MAX_LABEL)).collect();
    let label_w = label_width(labels.iter().map(|l| l.chars().count()), 100, 440);
    let mut entries = vec![(format!("noise band ±{noise_pct}%"), Mark::Swatch(SHADE))];
    // The verdicts in the words of what the overhead is of.
    let metric = crate::model::Metric::of_per_op_unit(unit);
    for v in VERDICTS {
        if rows.iter().any(|r| r.verdict == v) {
            entries.push((
                crate::report::number::verdict_text(metric, v),
                Mark::Dot(verdict_color(v)),
            ));
        }
    }
    let legend_h = legend_height(&entries, WIDTH);
    let height = 60 + ROW_PX * n.max(1) as u32 + 56 + legend_h;
    svg(WIDTH, height, |root| {
        let (upper, lower) = root.split_vertically(height - legend_h);
        let (lo, hi) = range(
            rows.iter()
                .flat_map(|r| [r.estimate_pct, r.ci_low_pct, r.ci_high_pct])
                .chain([-noise_pct, noise_pct]),
            true,
        );
        let top = n as f64 - 0.5;
        let mut chart = ChartBuilder::on(&upper)
            .caption(super::shorten(title, 100), title_style())
            .margin(10)
            .margin_right(28)
            .x_label_area_size(50)
            .y_label_area_size(label_w)
            .build_cartesian_2d(lo..hi, -0.5..top.max(0.5))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .x_desc(format!("overhead, % of baseline {unit} ({interval})"))
            .x_label_formatter(&|v| format!("{v:+.0}%"))
            .label_style(tick_style())
            .axis_desc_style(label_style())
            .draw()?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(-noise_pct, -0.5), (noise_pct, top)],
            SHADE.filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, -0.5), (0.0, top)],
            BLACK_ISH.stroke_width(1),
        )))?;
        let text = tick_style().pos(Pos::new(HPos::Right, VPos::Center));
        for (i, (r, label)) in rows.iter().zip(&labels).enumerate() {
            let y = (n - 1 - i) as f64;
            let c = verdict_color(r.verdict);
            if r.ci_low_pct.is_finite() && r.ci_high_pct.is_finite() {
                let mid = if r.estimate_pct.is_finite() {
                    r.estimate_pct
                } else {
                    (r.ci_low_pct + r.ci_high_pct) / 2.0
                };
                chart.draw_series(std::iter::once(ErrorBar::new_horizontal(
                    y,
                    r.ci_low_pct,
                    mid,
                    r.ci_high_pct,
                    c.stroke_width(2),
                    10,
                )))?;
            }
            if r.estimate_pct.is_finite() {
                chart.draw_series(std::iter::once(Circle::new(
                    (r.estimate_pct, y),
                    5,
                    c.filled(),
                )))?;
            }
            let (x, py) = chart.backend_coord(&(lo, y));
            upper.draw(&Text::new(label.clone(), (x - 8, py), text.clone()))?;
        }
        legend(&lower, label_w as i32, &entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, est: f64, verdict: Verdict) -> Row {
        Row {
            label: label.into(),
            estimate_pct: est,
            ci_low_pct: est - 2.0,
            ci_high_pct: est + 2.0,
            verdict,
        }
    }

    #[test]
    fn draws_each_row_label_and_the_verdicts_present() {
        let svg = draw(
            "Overhead",
            &[
                row("seccomp:allow on getppid", 12.0, Verdict::Slower),
                row("none:control on getppid <x>", 0.2, Verdict::NoChange),
            ],
            1.0,
            "ns/op",
            "98.2% interval",
        )
        .unwrap();
        assert!(svg.contains("seccomp:allow on getppid"), "{svg}");
        assert!(svg.contains("&lt;x&gt;"), "labels are escaped: {svg}");
        assert!(svg.contains("slower") && svg.contains("no-change"));
        assert!(
            !svg.contains(">faster<"),
            "absent verdicts stay out of the legend"
        );
        assert!(svg.contains("noise band ±1%"));
        assert!(svg.contains("Overhead"));
        assert!(
            svg.contains("(98.2% interval)"),
            "the level the bars are at"
        );
    }

    #[test]
    fn survives_missing_intervals() {
        let mut r = row("a", f64::NAN, Verdict::NoChange);
        r.ci_low_pct = f64::NAN;
        assert!(
            draw("t", &[r], 1.0, "ns/op", "95% interval")
                .unwrap()
                .contains("<svg")
        );
        assert!(
            draw("t", &[], 1.0, "ns/op", "95% interval")
                .unwrap()
                .contains("<svg")
        );
    }
}
