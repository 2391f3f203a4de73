//! What a series' two charts draw alike (a bisection's slowdowns,
//! `plots::bisect`; a track's timeline, `plots::track`): revisions by
//! position on the x axis, their change in % on the y axis with the zero
//! line, horizontal lines dashed across, and the commits under the axis
//! while there are few. What each marks (a bisection's classes and first
//! bad commit; a track's band, alarms and culprits) stays in its own file.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Area, BLACK_ISH, GRID, label_style, tick_style, title_style};

/// A series' chart: positions -0.5..n + 0.5 by % change.
pub type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The frame of a series' chart.
pub struct Axes<'t> {
    pub title: &'t str,
    /// The last position.
    pub n: f64,
    /// The y range, %.
    pub lo: f64,
    pub hi: f64,
    /// Whether every position gets its commit under the axis.
    pub few: bool,
    pub x_desc: &'t str,
    pub y_desc: &'t str,
}

/// The chart's frame on `upper`, its mesh and the zero line drawn.
pub fn axes<'a, 'b>(
    upper: &'a Area<'b>,
    a: &Axes<'_>,
) -> Result<Chart<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(upper)
        .caption(super::shorten(a.title, 100), title_style())
        .margin(10)
        .margin_right(28)
        .x_label_area_size(if a.few { 72 } else { 50 })
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..a.n + 0.5, a.lo..a.hi)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .bold_line_style(GRID)
        .x_labels(if a.few { 0 } else { 10 })
        .x_label_formatter(&|v| format!("{v:.0}"))
        .x_desc(a.x_desc)
        .y_desc(a.y_desc)
        .y_label_formatter(&|v| format!("{v:+.0}%"))
        .label_style(tick_style())
        .axis_desc_style(label_style())
        .draw()?;
    let n = a.n;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(-0.5, 0.0), (n + 0.5, 0.0)],
        BLACK_ISH.stroke_width(1),
    )))?;
    Ok(chart)
}

/// A horizontal line at `y`, dashed across the chart's `n` positions.
pub fn dashed(
    chart: &mut Chart<'_, '_>,
    n: f64,
    y: f64,
    style: ShapeStyle,
) -> Result<(), Box<dyn std::error::Error>> {
    let step = (n + 1.0) / 60.0;
    let mut x = -0.5;
    while x < n + 0.5 {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, y), ((x + step / 2.0).min(n + 0.5), y)],
            style,
        )))?;
        x += step;
    }
    Ok(())
}

/// Each position's number and commit under the axis.
pub fn commit_labels(
    upper: &Area<'_>,
    chart: &Chart<'_, '_>,
    lo: f64,
    labels: &[(usize, String)],
) -> Result<(), Box<dyn std::error::Error>> {
    let style = tick_style().pos(Pos::new(HPos::Center, VPos::Top));
    for (pos, label) in labels {
        let (px, py) = chart.backend_coord(&(*pos as f64, lo));
        upper.draw(&Text::new(format!("{pos}"), (px, py + 6), style.clone()))?;
        upper.draw(&Text::new(label.clone(), (px, py + 22), style.clone()))?;
    }
    Ok(())
}
