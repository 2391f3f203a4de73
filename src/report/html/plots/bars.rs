//! Stacked horizontal bars: one bar per arm (baseline, treatment), split
//! into segments (groups of kernel functions, or user and system CPU
//! time), so where an arm's ns/op go and which part grew read side by side.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    GRID, Mark, label_style, label_width, legend, legend_height, range, svg, tick_style, ticks,
    time_unit, title_style,
};

/// One bar: its label and one value (ns) per segment, in segment order.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub values_ns: Vec<f64>,
}

pub const WIDTH: u32 = 960;
const BAR_PX: u32 = 44;

/// The chart of `bars`, each split into `segments` (named and coloured,
/// in order).
pub fn draw(
    title: &str,
    x_desc: &str,
    segments: &[(String, RGBColor)],
    bars: &[Bar],
) -> Result<String> {
    let entries: Vec<(String, Mark)> = segments
        .iter()
        .map(|(s, c)| (s.clone(), Mark::Swatch(*c)))
        .collect();
    let legend_h = legend_height(&entries, WIDTH);
    let height = 60 + BAR_PX * bars.len().max(1) as u32 + 56 + legend_h;
    let totals: Vec<f64> = bars
        .iter()
        .map(|b| {
            b.values_ns
                .iter()
                .filter(|v| v.is_finite() && **v > 0.0)
                .sum()
        })
        .collect();
    let (div, unit) = time_unit(totals.iter().copied().fold(0.0, f64::max));
    let (_, hi) = range(totals.iter().map(|t| t / div), true);
    let label_w = label_width(bars.iter().map(|b| b.label.chars().count()), 90, 300);
    let n = bars.len();
    svg(WIDTH, height, |root| {
        let (upper, lower) = root.split_vertically(height - legend_h);
        let top = n as f64 - 0.5;
        let mut chart = ChartBuilder::on(&upper)
            .caption(super::shorten(title, 100), title_style())
            .margin(10)
            .margin_right(28)
            .x_label_area_size(50)
            .y_label_area_size(label_w)
            .build_cartesian_2d(0.0..hi, -0.5..top.max(0.5))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .x_label_formatter(&ticks(0.0, hi))
            .x_desc(format!("{x_desc}, {unit}"))
            .label_style(tick_style())
            .axis_desc_style(label_style())
            .draw()?;
        let text = tick_style().pos(Pos::new(HPos::Right, VPos::Center));
        for (i, bar) in bars.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let mut x = 0.0;
            for (j, v) in bar.values_ns.iter().enumerate() {
                if !(v.is_finite() && *v > 0.0) {
                    continue;
                }
                let w = v / div;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x, y - 0.35), (x + w, y + 0.35)],
                    segments.get(j).map_or(super::BLACK_ISH, |s| s.1).filled(),
                )))?;
                x += w;
            }
            let (px, py) = chart.backend_coord(&(0.0, y));
            upper.draw(&Text::new(bar.label.clone(), (px - 8, py), text.clone()))?;
        }
        legend(&lower, label_w as i32, &entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rectangle_per_positive_segment() {
        let segments = vec![
            ("audit".to_string(), super::super::series_color(0)),
            ("seccomp".to_string(), super::super::series_color(1)),
        ];
        let bars = vec![
            Bar {
                label: "baseline".into(),
                values_ns: vec![100.0, 0.0],
            },
            Bar {
                label: "treatment".into(),
                values_ns: vec![110.0, 25.0],
            },
        ];
        let svg = draw("where the time goes", "ns per operation", &segments, &bars).unwrap();
        let seccomp = format!(
            "fill=\"#{:02X}{:02X}{:02X}\"",
            segments[1].1.0, segments[1].1.1, segments[1].1.2
        );
        // The treatment's seccomp segment and the legend swatch.
        assert_eq!(svg.matches(&seccomp).count(), 2, "{svg}");
        assert!(svg.contains("ns per operation, ns/op"));
        assert!(svg.contains("baseline") && svg.contains("treatment"));
    }
}
