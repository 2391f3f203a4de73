//! A track's timeline: each tested revision's change against the revision
//! tested before it (a dot, joined by a line in branch order) with its
//! interval at its e-LOND level (a bar), the band within half the
//! threshold where a test cannot alarm, alarms coloured by their direction
//! and the commit each alarm came with named above it. rustc-perf's graphs
//! page is the model: one line over the commits, the outliers marked.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Mark, WIDTH, legend, legend_height, range, revisions, svg, tick_style};
use crate::model::track::Direction;

/// One tested revision.
#[derive(Debug, Clone)]
pub struct Point {
    /// Position on the branch (first-parent commits after `from`).
    pub position: usize,
    /// The tick label (an abbreviated commit).
    pub label: String,
    /// NaN for a revision that did not build or boot.
    pub estimate_pct: f64,
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    pub alarm: Option<Direction>,
    /// The commit an alarm came with, abbreviated, when named.
    pub culprit: Option<String>,
}

/// What the chart shows.
#[derive(Debug, Clone)]
pub struct TrackChart {
    pub title: String,
    /// The last position on the x axis.
    pub positions: usize,
    pub from_label: String,
    pub points: Vec<Point>,
    pub threshold_pct: f64,
}

/// The colour of a point: vermillion slower, blue faster, grey no alarm.
fn color(alarm: Option<Direction>) -> RGBColor {
    match alarm {
        Some(Direction::Slower) => super::PALETTE[1],
        Some(Direction::Faster) => super::PALETTE[0],
        None => super::PALETTE[6],
    }
}

/// At most this many positions get a commit under the axis.
const MAX_TICKS: usize = 30;

pub fn draw(c: &TrackChart) -> Result<String> {
    let half = c.threshold_pct / 2.0;
    let mut entries = vec![
        (
            format!("no alarm within ±{half}% (half the threshold)"),
            Mark::Dashed(super::PALETTE[3]),
        ),
        ("no alarm".to_string(), Mark::Dot(color(None))),
    ];
    for d in [Direction::Slower, Direction::Faster] {
        if c.points.iter().any(|p| p.alarm == Some(d)) {
            entries.push((format!("alarm: {}", d.word()), Mark::Dot(color(Some(d)))));
        }
    }
    if c.points.iter().any(|p| !p.estimate_pct.is_finite()) {
        entries.push((
            "did not build or boot".to_string(),
            Mark::Dot(super::PALETTE[5]),
        ));
    }
    let legend_h = legend_height(&entries, WIDTH);
    let height = 380 + legend_h;
    let (lo, hi) = range(
        c.points
            .iter()
            .flat_map(|p| [p.estimate_pct, p.ci_low_pct, p.ci_high_pct])
            .chain([0.0, half, -half]),
        true,
    );
    let n = c.positions.max(1) as f64;
    let few = c.positions < MAX_TICKS;
    svg(WIDTH, height, |root| {
        let (upper, lower) = root.split_vertically(height - legend_h);
        let mut chart = revisions::axes(
            &upper,
            &revisions::Axes {
                title: &c.title,
                n,
                lo,
                hi,
                few,
                x_desc: "commit on the branch, by first parents (0: --from)",
                y_desc: "change vs the revision tested before, % (interval at its level)",
            },
        )?;
        // The band a test cannot alarm in, its edges dashed.
        for y in [half, -half] {
            revisions::dashed(&mut chart, n, y, super::PALETTE[3].stroke_width(2))?;
        }
        // The line through the measured points, in branch order.
        let measured: Vec<(f64, f64)> = c
            .points
            .iter()
            .filter(|p| p.estimate_pct.is_finite())
            .map(|p| (p.position as f64, p.estimate_pct))
            .collect();
        chart.draw_series(std::iter::once(PathElement::new(
            measured,
            super::PALETTE[6].stroke_width(1),
        )))?;
        for p in &c.points {
            let x = p.position as f64;
            let col = color(p.alarm);
            if !p.estimate_pct.is_finite() {
                chart.draw_series(std::iter::once(Cross::new(
                    (x, 0.0),
                    6,
                    super::PALETTE[5].stroke_width(2),
                )))?;
                continue;
            }
            if p.ci_low_pct.is_finite() && p.ci_high_pct.is_finite() {
                chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                    x,
                    p.ci_low_pct,
                    p.estimate_pct,
                    p.ci_high_pct,
                    col.stroke_width(2),
                    10,
                )))?;
            }
            chart.draw_series(std::iter::once(Circle::new(
                (x, p.estimate_pct),
                5,
                col.filled(),
            )))?;
            if let (Some(_), Some(culprit)) = (p.alarm, &p.culprit) {
                let top = p.ci_high_pct.max(p.estimate_pct);
                let (px, py) = chart.backend_coord(&(x, top));
                upper.draw(&Text::new(
                    culprit.clone(),
                    (px, py - 8),
                    tick_style().pos(Pos::new(HPos::Center, VPos::Bottom)),
                ))?;
            }
        }
        if few {
            let mut labels: Vec<(usize, String)> = vec![(0, c.from_label.clone())];
            labels.extend(c.points.iter().map(|p| (p.position, p.label.clone())));
            revisions::commit_labels(&upper, &chart, lo, &labels)?;
        }
        legend(&lower, 70, &entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_draws_every_point_and_names_the_culprit() {
        let point = |position: usize, est: f64, alarm: Option<Direction>| Point {
            position,
            label: format!("c{position}"),
            estimate_pct: est,
            ci_low_pct: est - 1.0,
            ci_high_pct: est + 1.0,
            alarm,
            culprit: alarm.map(|_| format!("culprit{position}")),
        };
        let svg = draw(&TrackChart {
            title: "getppid on master".into(),
            positions: 4,
            from_label: "c0".into(),
            points: vec![
                point(1, 0.2, None),
                point(2, f64::NAN, None),
                point(3, 30.0, Some(Direction::Slower)),
                point(4, -12.0, Some(Direction::Faster)),
            ],
            threshold_pct: 5.0,
        })
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
        assert!(svg.contains("culprit3") && svg.contains("culprit4"));
        assert!(svg.contains("alarm: slower") && svg.contains("alarm: faster"));
        assert!(svg.contains("did not build or boot"));
    }
}
