//! One comparison's pairs in measurement order: both arms' figure per
//! operation per pair (ns/op, or instructions/op for a run that counted
//! them), so drift over the run and an order effect (AB against BA) show.
//! Pairs measured BA (treatment first) are shaded and drawn with
//! triangles.

use anyhow::Result;
use plotters::prelude::*;

use super::{
    BASELINE, GRID, Mark, SHADE, TREATMENT, label_style, legend, legend_height, per_op_unit, range,
    svg, tick_style, ticks, title_style,
};
use crate::model::Metric;

/// One pair, in the order it was measured.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    /// Treatment first.
    pub ba: bool,
    pub baseline_per_op: f64,
    pub treatment_per_op: f64,
}

pub const WIDTH: u32 = 640;

/// The chart of `pairs`, figures of `metric`.
pub fn draw(title: &str, pairs: &[Pair], metric: Metric) -> Result<String> {
    let entries = vec![
        ("baseline".to_string(), Mark::Line(BASELINE)),
        ("treatment".to_string(), Mark::Line(TREATMENT)),
        (
            "AB pair (baseline first)".to_string(),
            Mark::Dot(super::BLACK_ISH),
        ),
        (
            "BA pair (treatment first, shaded)".to_string(),
            Mark::Triangle(super::BLACK_ISH),
        ),
    ];
    let legend_h = legend_height(&entries, WIDTH);
    let height = 300 + legend_h;
    let values = pairs
        .iter()
        .flat_map(|p| [p.baseline_per_op, p.treatment_per_op]);
    let (div, unit) = per_op_unit(metric, values.clone().fold(0.0, f64::max));
    let (lo, hi) = range(values.map(|v| v / div), false);
    let y_label = ticks(lo, hi);
    let n = pairs.len().max(1) as f64;
    svg(WIDTH, height, |root| {
        let (upper, lower) = root.split_vertically(height - legend_h);
        let mut chart = ChartBuilder::on(&upper)
            .caption(super::shorten(title, 64), title_style())
            .margin(10)
            .margin_right(20)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0.5..n + 0.5, lo..hi)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .disable_x_mesh()
            .x_labels(pairs.len().clamp(2, 20))
            .x_label_formatter(&|v| {
                if v.fract() == 0.0 {
                    format!("{v:.0}")
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&y_label)
            .x_desc("pair, in measurement order")
            .y_desc(unit)
            .label_style(tick_style())
            .axis_desc_style(label_style())
            .draw()?;
        chart.draw_series(
            pairs
                .iter()
                .enumerate()
                .filter(|(_, p)| p.ba)
                .map(|(i, _)| {
                    let x = i as f64 + 1.0;
                    Rectangle::new([(x - 0.5, lo), (x + 0.5, hi)], SHADE.filled())
                }),
        )?;
        for (color, value) in [
            (BASELINE, (|p: &Pair| p.baseline_per_op) as fn(&Pair) -> f64),
            (TREATMENT, |p: &Pair| p.treatment_per_op),
        ] {
            let points: Vec<(f64, f64, bool)> = pairs
                .iter()
                .enumerate()
                .map(|(i, p)| (i as f64 + 1.0, value(p) / div, p.ba))
                .filter(|(_, y, _)| y.is_finite())
                .collect();
            chart.draw_series(LineSeries::new(
                points.iter().map(|&(x, y, _)| (x, y)),
                color.stroke_width(2),
            ))?;
            chart.draw_series(
                points
                    .iter()
                    .filter(|p| !p.2)
                    .map(|&(x, y, _)| Circle::new((x, y), 4, color.filled())),
            )?;
            chart.draw_series(
                points
                    .iter()
                    .filter(|p| p.2)
                    .map(|&(x, y, _)| TriangleMarker::new((x, y), 6, color.stroke_width(2))),
            )?;
        }
        legend(&lower, 64, &entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_both_arms_and_shades_ba_pairs() {
        let pairs: Vec<Pair> = (0..6)
            .map(|i| Pair {
                ba: i % 2 == 1,
                baseline_per_op: 300.0 + i as f64,
                treatment_per_op: 340.0 - i as f64,
            })
            .collect();
        let svg = draw("getppid", &pairs, Metric::Time).unwrap();
        // Three BA pairs: three shaded columns.
        let shade = "fill=\"#ECECEC\"";
        assert_eq!(svg.matches(shade).count(), 3, "3 shaded columns: {svg}");
        assert!(svg.contains("ns/op"));
        assert!(svg.contains("baseline") && svg.contains("treatment"));
    }

    #[test]
    fn counted_instructions_are_drawn_in_instructions_with_distinct_ticks() {
        // Issue 53: an instruction run's pairs were drawn in ns/op, its
        // five ticks all reading "331".
        let pairs: Vec<Pair> = (0..3)
            .map(|i| Pair {
                ba: i == 1,
                baseline_per_op: 330.6 + 0.1 * i as f64,
                treatment_per_op: 330.8 + 0.05 * i as f64,
            })
            .collect();
        let svg = draw("getppid", &pairs, Metric::Instructions).unwrap();
        assert!(svg.contains("instructions/op"), "{svg}");
        assert!(
            !svg.lines().any(|l| ["ns/op", "us/op"].contains(&l.trim())),
            "{svg}"
        );
        let labels: Vec<&str> = svg
            .split("</text>")
            .filter_map(|t| t.rsplit('>').next())
            .map(str::trim)
            .filter(|t| t.starts_with("330") || t.starts_with("331"))
            .collect();
        let mut distinct = labels.clone();
        distinct.sort();
        distinct.dedup();
        assert!(labels.len() >= 3, "{labels:?}");
        assert_eq!(distinct.len(), labels.len(), "{labels:?}");
    }
}
