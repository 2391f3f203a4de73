//! A bisection: each tested revision's slowdown against `--good` (a dot)
//! with its interval at the step's level (a bar), in commit order, coloured
//! by the step's class; the line at half the threshold that classifies,
//! the threshold itself, and the first bad commit marked. Whether the
//! step from good to bad is as sharp as the bisection assumed (0 before
//! the culprit, at least the threshold from it on) reads at a glance.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{BLACK_ISH, Mark, WIDTH, legend, legend_height, range, revisions, svg, tick_style};
use crate::model::bisect::Class;

/// One tested revision.
#[derive(Debug, Clone)]
pub struct Point {
    /// Position in commit order (0: `--good`).
    pub position: usize,
    /// The tick label (an abbreviated commit).
    pub label: String,
    pub estimate_pct: f64,
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    pub class: Class,
}

/// What the chart shows.
#[derive(Debug, Clone)]
pub struct BisectChart {
    pub title: String,
    /// Revisions after `--good` (the last is `--bad`).
    pub revisions: usize,
    pub good_label: String,
    pub points: Vec<Point>,
    pub threshold_pct: f64,
    /// The first bad commit's position, when found.
    pub first_bad: Option<usize>,
}

/// The colour of a class: vermillion bad, blue good, grey the rest.
pub fn class_color(c: Class) -> RGBColor {
    match c {
        Class::Bad => super::PALETTE[1],
        Class::Good => super::PALETTE[0],
        Class::Undecided => super::PALETTE[6],
        Class::Skip => super::PALETTE[5],
    }
}

/// At most this many positions get a commit under the axis.
const MAX_TICKS: usize = 40;

pub fn draw(c: &BisectChart) -> Result<String> {
    let t = c.threshold_pct;
    let mut entries = vec![
        (format!("threshold ({t}%)"), Mark::Dashed(BLACK_ISH)),
        (
            format!("classifies: half the threshold ({}%)", t / 2.0),
            Mark::Line(super::PALETTE[3]),
        ),
    ];
    for class in [Class::Good, Class::Bad, Class::Undecided, Class::Skip] {
        if c.points.iter().any(|p| p.class == class) {
            entries.push((class.word().to_string(), Mark::Dot(class_color(class))));
        }
    }
    let legend_h = legend_height(&entries, WIDTH);
    let height = 380 + legend_h;
    let (lo, hi) = range(
        c.points
            .iter()
            .flat_map(|p| [p.estimate_pct, p.ci_low_pct, p.ci_high_pct])
            .chain([0.0, t]),
        true,
    );
    let n = c.revisions as f64;
    // Commits under the axis: the good one and every tested one, while
    // there are few enough to read.
    let mut labels: Vec<(usize, String)> = vec![(0, c.good_label.clone())];
    labels.extend(c.points.iter().map(|p| (p.position, p.label.clone())));
    let few = c.revisions < MAX_TICKS;
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
                x_desc: if few {
                    "revision, in commit order (0: --good)"
                } else {
                    "position in commit order (0: --good)"
                },
                y_desc: "slowdown vs --good, % (interval at the step's level)",
            },
        )?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, t / 2.0), (n + 0.5, t / 2.0)],
            super::PALETTE[3].stroke_width(2),
        )))?;
        // The threshold, dashed.
        revisions::dashed(&mut chart, n, t, BLACK_ISH.stroke_width(1))?;
        if let Some(f) = c.first_bad {
            let x = f as f64 - 0.5;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, lo), (x, hi)],
                super::PALETTE[1].stroke_width(1),
            )))?;
            let (px, py) = chart.backend_coord(&(x, hi));
            upper.draw(&Text::new(
                "first bad →".to_string(),
                (px - 4, py + 4),
                tick_style().pos(Pos::new(HPos::Right, VPos::Top)),
            ))?;
        }
        chart.draw_series(std::iter::once(Circle::new(
            (0.0, 0.0),
            5,
            BLACK_ISH.stroke_width(2),
        )))?;
        for p in &c.points {
            let color = class_color(p.class);
            let x = p.position as f64;
            if p.ci_low_pct.is_finite() && p.ci_high_pct.is_finite() {
                let mid = if p.estimate_pct.is_finite() {
                    p.estimate_pct
                } else {
                    (p.ci_low_pct + p.ci_high_pct) / 2.0
                };
                chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                    x,
                    p.ci_low_pct,
                    mid,
                    p.ci_high_pct,
                    color.stroke_width(2),
                    10,
                )))?;
            }
            if p.estimate_pct.is_finite() {
                chart.draw_series(std::iter::once(Circle::new(
                    (x, p.estimate_pct),
                    5,
                    color.filled(),
                )))?;
            } else {
                // Skipped: a cross on the zero line.
                chart.draw_series(std::iter::once(Cross::new(
                    (x, 0.0),
                    6,
                    color.stroke_width(2),
                )))?;
            }
        }
        if few {
            revisions::commit_labels(&upper, &chart, lo, &labels)?;
        }
        legend(&lower, 70, &entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(position: usize, est: f64, class: Class) -> Point {
        Point {
            position,
            label: format!("c{position}"),
            estimate_pct: est,
            ci_low_pct: est - 10.0,
            ci_high_pct: est + 10.0,
            class,
        }
    }

    #[test]
    fn draws_each_tested_revision_the_lines_and_the_classes_present() {
        let svg = draw(&BisectChart {
            title: "getppid".into(),
            revisions: 8,
            good_label: "g0".into(),
            points: vec![
                point(8, 101.0, Class::Bad),
                point(4, -1.5, Class::Good),
                point(6, 74.0, Class::Bad),
            ],
            threshold_pct: 50.0,
            first_bad: Some(6),
        })
        .unwrap();
        for text in [
            "g0",
            "c4",
            "c6",
            "c8",
            "threshold (50%)",
            "first bad",
            "\ngood\n",
            "\nbad\n",
        ] {
            assert!(svg.contains(text), "{text}: {svg}");
        }
        assert!(!svg.contains("\nundecided\n"), "absent classes stay out");
    }

    #[test]
    fn survives_skips_and_long_series() {
        let mut p = point(3, f64::NAN, Class::Skip);
        p.ci_low_pct = f64::NAN;
        p.ci_high_pct = f64::NAN;
        let svg = draw(&BisectChart {
            title: "t".into(),
            revisions: 5000,
            good_label: "g".into(),
            points: vec![p, point(5000, 20.0, Class::Bad)],
            threshold_pct: 5.0,
            first_bad: None,
        })
        .unwrap();
        assert!(svg.contains("<svg"));
        assert!(svg.contains("\nskip\n"));
    }
}
