//! Line charts of several series against one x (scaling curves: ops/s or
//! ns/op against tasks), each point with its 95% interval as an error bar
//! where it has one. Dashed series are a comparison's baseline arm.

use anyhow::Result;
use plotters::prelude::*;

use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    BLACK_ISH, GRID, Mark, label_style, legend, legend_height, range, svg, tick, tick_style, ticks,
    title_style,
};

/// One point with its interval (NaN bounds: none).
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub color: RGBColor,
    pub dashed: bool,
    pub points: Vec<Point>,
}

/// What the axes say.
#[derive(Debug, Clone)]
pub struct Axes {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    /// Only whole numbers are labelled on x (task counts).
    pub whole_x: bool,
}

pub const WIDTH: u32 = 640;

/// The chart of `series` (points in x order).
pub fn draw(axes: &Axes, series: &[Series]) -> Result<String> {
    let entries: Vec<(String, Mark)> = if series.len() > 1 {
        series
            .iter()
            .map(|s| {
                let mark = if s.dashed {
                    Mark::Dashed(s.color)
                } else {
                    Mark::Line(s.color)
                };
                (s.name.clone(), mark)
            })
            .collect()
    } else {
        vec![]
    };
    let legend_h = legend_height(&entries, WIDTH);
    let height = 320 + legend_h;
    let points = || series.iter().flat_map(|s| s.points.iter());
    let xs: Vec<f64> = {
        let mut xs: Vec<f64> = points().map(|p| p.x).filter(|x| x.is_finite()).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs
    };
    // Task ladders that double (1, 2, 4, ... 64) crowd the left of a
    // linear axis: draw them on a log2 axis, labelled with the counts.
    let log = axes.whole_x
        && xs.first().is_some_and(|&lo| lo > 0.0)
        && xs
            .last()
            .zip(xs.first())
            .is_some_and(|(hi, lo)| hi / lo >= 8.0);
    let fx = move |x: f64| if log { x.log2() } else { x };
    let (x_lo, x_hi) = range(xs.iter().map(|&x| fx(x)), false);
    let (y_lo, y_hi) = range(points().flat_map(|p| [p.y, p.low, p.high]), true);
    let x_desc = if log {
        format!("{} (log scale)", axes.x_desc)
    } else {
        axes.x_desc.clone()
    };
    svg(WIDTH, height, |root| {
        let (upper, lower) = root.split_vertically(height - legend_h);
        let mut chart = ChartBuilder::on(&upper)
            .caption(super::shorten(&axes.title, 64), title_style())
            .margin(10)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
        let (y_label, x_label) = (ticks(y_lo, y_hi), ticks(x_lo, x_hi));
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(WHITE)
            .bold_line_style(GRID)
            .y_label_formatter(&y_label)
            .x_desc(x_desc.as_str())
            .y_desc(axes.y_desc.as_str())
            .label_style(tick_style())
            .axis_desc_style(label_style());
        if axes.whole_x {
            // Ticks only at the values measured (drawn below).
            mesh.x_labels(0).disable_x_mesh();
        } else {
            mesh.x_label_formatter(&x_label);
        }
        mesh.draw()?;
        if axes.whole_x {
            chart.draw_series(xs.iter().map(|&x| {
                PathElement::new(vec![(fx(x), y_lo), (fx(x), y_hi)], GRID.stroke_width(1))
            }))?;
            let text = tick_style().pos(Pos::new(HPos::Center, VPos::Top));
            for &x in &xs {
                let (px, py) = chart.backend_coord(&(fx(x), y_lo));
                upper.draw(&PathElement::new(
                    vec![(px, py), (px, py + 5)],
                    BLACK_ISH.stroke_width(1),
                ))?;
                upper.draw(&Text::new(tick(x), (px, py + 8), text.clone()))?;
            }
        }
        for s in series {
            let style = s.color.stroke_width(2);
            let line: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| p.x.is_finite() && p.y.is_finite())
                .map(|p| (fx(p.x), p.y))
                .collect();
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(line.clone(), 6, 4, style))?;
            } else {
                chart.draw_series(LineSeries::new(line.clone(), style))?;
            }
            chart.draw_series(
                s.points
                    .iter()
                    .filter(|p| p.low.is_finite() && p.high.is_finite() && p.y.is_finite())
                    .map(|p| ErrorBar::new_vertical(fx(p.x), p.low, p.y, p.high, style, 8)),
            )?;
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, s.color.filled())))?;
        }
        legend(&lower, 70, &entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, dashed: bool) -> Series {
        Series {
            name: name.into(),
            color: super::super::series_color(0),
            dashed,
            points: [1.0, 2.0, 4.0]
                .iter()
                .map(|&x| Point {
                    x,
                    y: 100.0 * x,
                    low: 95.0 * x,
                    high: f64::NAN,
                })
                .collect(),
        }
    }

    #[test]
    fn legend_only_with_several_series() {
        let axes = Axes {
            title: "getppid: ops/s".into(),
            x_desc: "tasks".into(),
            y_desc: "ops/s".into(),
            whole_x: true,
        };
        let one = draw(&axes, &[series("run 1", false)]).unwrap();
        assert!(!one.contains("run 1"), "{one}");
        let two = draw(&axes, &[series("run 1", false), series("run 2", true)]).unwrap();
        assert!(two.contains("run 1") && two.contains("run 2"));
        assert!(two.contains("tasks") && two.contains("ops/s"));
        // Ticks at the task counts measured, and nowhere else.
        for t in ["1", "2", "4"] {
            assert!(
                one.contains(&format!("\n{t}\n</text>")),
                "no tick {t}: {one}"
            );
        }
        assert!(!one.contains("\n3\n</text>"), "{one}");
        assert!(!one.contains("log scale"));
    }

    #[test]
    fn doubling_ladders_get_a_log_axis() {
        let mut s = series("run 1", false);
        s.points.push(Point {
            x: 64.0,
            y: 1.0,
            low: f64::NAN,
            high: f64::NAN,
        });
        let axes = Axes {
            title: "t".into(),
            x_desc: "tasks".into(),
            y_desc: "ops/s".into(),
            whole_x: true,
        };
        let svg = draw(&axes, &[s]).unwrap();
        assert!(svg.contains("tasks (log scale)"), "{svg}");
        assert!(svg.contains("\n64\n</text>"));
    }
}
