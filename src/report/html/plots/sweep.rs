//! A parameter sweep: every pair's treatment-minus-baseline ns/op against
//! the swept value, the fitted straight line and its 95% band, so whether
//! the cost grows linearly (and how fast) can be judged by eye.

use anyhow::Result;
use plotters::prelude::*;

use super::{
    GRID, Mark, label_style, legend, legend_height, range, svg, tick_style, ticks, title_style,
};

/// What one sweep chart shows.
#[derive(Debug, Clone)]
pub struct SweepChart {
    pub title: String,
    /// The swept parameter ("filters").
    pub x_desc: String,
    /// (value, delta ns/op) for every pair of every point.
    pub pairs: Vec<(f64, f64)>,
    /// Intercept and slope of the fitted line, if one was fitted.
    pub line: Option<(f64, f64)>,
    /// The band around the line: (x, low, high), in x order.
    pub band: Vec<(f64, f64, f64)>,
    /// What the band is, for the legend.
    pub band_name: String,
}

pub const WIDTH: u32 = 760;
const POINT: RGBColor = super::PALETTE[0];
const LINE: RGBColor = super::PALETTE[1];

pub fn draw(c: &SweepChart) -> Result<String> {
    let mut entries = vec![(
        "one pair: treatment - baseline".to_string(),
        Mark::Dot(POINT),
    )];
    if c.line.is_some() {
        entries.push(("fitted line".to_string(), Mark::Line(LINE)));
    }
    if !c.band.is_empty() {
        entries.push((c.band_name.clone(), Mark::Swatch(super::tint(LINE, 0.2))));
    }
    let legend_h = legend_height(&entries, WIDTH);
    let height = 340 + legend_h;
    let (x_lo, x_hi) = range(c.pairs.iter().map(|p| p.0), false);
    let xs = || c.pairs.iter().map(|p| p.0).filter(|x| x.is_finite());
    let measured = xs().reduce(f64::min).zip(xs().reduce(f64::max));
    let line_at = |x: f64| c.line.map(|(a, b)| a + b * x);
    let ends = measured.map_or(vec![], |(lo, hi)| vec![lo, hi]);
    let (y_lo, y_hi) = range(
        c.pairs
            .iter()
            .map(|p| p.1)
            .chain(c.band.iter().flat_map(|b| [b.1, b.2]))
            .chain(ends.into_iter().filter_map(line_at)),
        true,
    );
    svg(WIDTH, height, |root| {
        let (upper, lower) = root.split_vertically(height - legend_h);
        let mut chart = ChartBuilder::on(&upper)
            .caption(super::shorten(&c.title, 80), title_style())
            .margin(10)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .x_label_formatter(&ticks(x_lo, x_hi))
            .y_label_formatter(&ticks(y_lo, y_hi))
            .x_desc(c.x_desc.as_str())
            .y_desc("ns/op added (treatment - baseline)")
            .label_style(tick_style())
            .axis_desc_style(label_style())
            .draw()?;
        if !c.band.is_empty() {
            let outline: Vec<(f64, f64)> = c
                .band
                .iter()
                .map(|b| (b.0, b.2))
                .chain(c.band.iter().rev().map(|b| (b.0, b.1)))
                .collect();
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                super::tint(LINE, 0.2).filled(),
            )))?;
        }
        chart.draw_series(
            c.pairs
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|&p| Circle::new(p, 4, POINT.mix(0.7).filled())),
        )?;
        // The line over the values measured only: no extrapolation.
        if let (Some((a, b)), Some((lo, hi))) = (c.line, measured) {
            chart.draw_series(LineSeries::new(
                [lo, hi].map(|x| (x, a + b * x)),
                LINE.stroke_width(2),
            ))?;
        }
        legend(&lower, 70, &entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_points_line_and_band() {
        let c = SweepChart {
            title: "seccomp:args filters".into(),
            x_desc: "filters".into(),
            pairs: vec![(1.0, 10.0), (1.0, 12.0), (4.0, 40.0), (4.0, 44.0)],
            line: Some((0.5, 10.2)),
            band: vec![(1.0, 8.0, 13.0), (4.0, 38.0, 46.0)],
            band_name: "95% band of the mean".into(),
        };
        let svg = draw(&c).unwrap();
        assert!(svg.contains("<polygon"), "{svg}");
        assert!(svg.contains("fitted line") && svg.contains("95% band of the mean"));
        assert!(svg.contains("filters"));
        let none = draw(&SweepChart {
            line: None,
            band: vec![],
            ..c
        })
        .unwrap();
        assert!(!none.contains("<polygon") && !none.contains("fitted line"));
    }
}
