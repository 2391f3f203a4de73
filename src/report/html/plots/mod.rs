//! Charts as inline SVG, drawn with plotters' SVG backend. One file per
//! kind of chart; this one holds what they share: the canvas, colours,
//! text styles, axis ranges and the legend strip.
//!
//! Text: plotters is built without a font backend (no `ttf`, which needs
//! system packages), so it lays text out with its built-in estimate
//! (about 0.7 em per character) and writes every title, tick and axis
//! label as an SVG `<text>` element; the browser draws it with the page's
//! sans-serif font. Sizes of label areas are therefore set here, from the
//! longest label, rather than measured. Legends are drawn in a strip below
//! the axes (never over the data), one row per few entries.

pub mod bars;
pub mod bisect;
pub mod forest;
pub mod lines;
pub mod pairs;
pub mod revisions;
pub mod sweep;
pub mod track;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The SVG backend's drawing area every chart draws on.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What a chart's drawing closure returns; any plotters error.
pub type Drawn = std::result::Result<(), Box<dyn std::error::Error>>;

/// Font family of every chart's text (the browser picks the face).
pub const FONT: &str = "sans-serif";
/// plotters' SVG backend writes `font-size = size / 1.24`; these are the
/// sizes passed in, giving about 16, 13 and 12 px.
pub const TITLE_SIZE: f64 = 20.0;
pub const LABEL_SIZE: f64 = 16.0;
pub const TICK_SIZE: f64 = 15.0;
/// Pixels per character the layouts here assume for tick and legend text
/// (a generous estimate for 12-13 px sans-serif).
pub const CHAR_PX: u32 = 7;

/// Default chart width in SVG pixels (the page scales it to fit).
pub const WIDTH: u32 = 960;

/// Okabe-Ito colours: distinguishable with the common colour-vision
/// deficiencies, readable on white.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(120, 120, 120), // grey
    RGBColor(0, 0, 0),       // black
];

/// The two arms of a comparison.
pub const BASELINE: RGBColor = PALETTE[0];
pub const TREATMENT: RGBColor = PALETTE[1];
pub const GRID: RGBColor = RGBColor(225, 225, 225);
pub const BLACK_ISH: RGBColor = RGBColor(40, 40, 40);
pub const SHADE: RGBColor = RGBColor(236, 236, 236);

/// `c` at `alpha` over white, as an opaque colour (bands, legends).
pub fn tint(c: RGBColor, alpha: f64) -> RGBColor {
    let mix = |v: u8| (f64::from(v) * alpha + 255.0 * (1.0 - alpha)).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// The colour of a group of kernel functions, the same in every chart:
/// saturated for the security mechanisms' groups, greys and pale tones
/// for the rest, so the part a mechanism adds stands out. Unknown names
/// get a palette colour from their position.
pub fn group_color(name: &str, position: usize) -> RGBColor {
    match name {
        "audit" => RGBColor(213, 94, 0),
        "seccomp" => RGBColor(0, 158, 115),
        "LSM framework" => RGBColor(204, 121, 167),
        "selinux" => RGBColor(0, 114, 178),
        "apparmor" => RGBColor(230, 159, 0),
        "landlock" => RGBColor(86, 180, 233),
        "bpf_lsm" => RGBColor(240, 228, 66),
        "cred" => RGBColor(153, 79, 0),
        "syscall entry/exit" => RGBColor(127, 153, 178),
        "scheduler" => RGBColor(186, 176, 140),
        "interrupts" => RGBColor(214, 214, 214),
        "kernel (other)" => RGBColor(158, 158, 158),
        "kernel (unsymbolised)" => RGBColor(96, 96, 96),
        "user space" => RGBColor(190, 214, 235),
        _ => series_color(position),
    }
}

/// The colour of series `i`.
pub fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Draws a `width` x `height` SVG with `draw` and returns the markup.
pub fn svg(width: u32, height: u32, draw: impl FnOnce(&Area<'_>) -> Drawn) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| anyhow!("drawing a chart: {e}"))?;
        draw(&root).map_err(|e| anyhow!("drawing a chart: {e}"))?;
        root.present()
            .map_err(|e| anyhow!("drawing a chart: {e}"))?;
    }
    Ok(out)
}

pub fn title_style() -> TextStyle<'static> {
    (FONT, TITLE_SIZE)
        .into_font()
        .style(FontStyle::Bold)
        .color(&BLACK)
}

pub fn label_style() -> TextStyle<'static> {
    (FONT, LABEL_SIZE).into_font().color(&BLACK)
}

pub fn tick_style() -> TextStyle<'static> {
    (FONT, TICK_SIZE).into_font().color(&BLACK_ISH)
}

/// A range covering `values` (non-finite ones ignored) with 6% padding on
/// each side, optionally stretched to include 0; never empty.
pub fn range(values: impl IntoIterator<Item = f64>, include_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if include_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.06
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (
        if include_zero && lo == 0.0 {
            0.0
        } else {
            lo - pad
        },
        hi + pad,
    )
}

/// A tick value with as few digits as keep it readable: 2.5M, 12k, 0.25, 3.
pub fn tick(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let a = v.abs();
    let (x, suffix) = match a {
        a if a >= 1e9 => (v / 1e9, "G"),
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e4 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let digits = match x.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        _ => 3,
    };
    let text = trim(format!("{x:.digits$}"));
    if text == "-0" {
        format!("0{suffix}")
    } else {
        format!("{text}{suffix}")
    }
}

/// Tick labels for an axis from `lo` to `hi`: one scale for the whole
/// axis (k, M, G from the largest value, as [`tick`]), and as many
/// decimals as keep ticks a tenth of the range apart distinct, so that an
/// axis from 330.6 to 331.0 reads 330.6, 330.7, ... and not 331 five times.
pub fn ticks(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let top = lo.abs().max(hi.abs());
    let (div, suffix) = match top {
        a if a >= 1e9 => (1e9, "G"),
        a if a >= 1e6 => (1e6, "M"),
        a if a >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let step = (hi - lo).abs() / 10.0 / div;
    let decimals = if step.is_finite() && step > 0.0 {
        (-step.log10()).ceil().clamp(0.0, 9.0) as usize
    } else {
        0
    };
    move |v: &f64| {
        let text = format!("{:.decimals$}", v / div);
        if text
            .trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            "0".to_string()
        } else {
            format!("{text}{suffix}")
        }
    }
}

/// The unit a time axis is drawn in: the divisor from ns and its name,
/// chosen from the largest value (as [`crate::report::ns`] does).
pub fn time_unit(max_ns: f64) -> (f64, &'static str) {
    match max_ns.abs() {
        a if a >= 1e9 => (1e9, "s/op"),
        a if a >= 1e6 => (1e6, "ms/op"),
        a if a >= 1e4 => (1e3, "us/op"),
        _ => (1.0, "ns/op"),
    }
}

/// The unit an axis of a metric's figures per operation is drawn in: a
/// time's as [`time_unit`]; counted instructions in instructions (ticks
/// scale them with k, M).
pub fn per_op_unit(metric: crate::model::Metric, max: f64) -> (f64, &'static str) {
    match metric {
        crate::model::Metric::Time => time_unit(max),
        crate::model::Metric::Instructions => (1.0, "instructions/op"),
    }
}

/// How an entry of a legend is drawn.
#[derive(Debug, Clone, Copy)]
pub enum Mark {
    /// A line with a point on it.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A filled circle.
    Dot(RGBColor),
    /// A hollow triangle.
    Triangle(RGBColor),
    /// A filled square (bars, bands).
    Swatch(RGBColor),
}

/// Height of a legend strip with `entries` at `width`.
pub fn legend_height(entries: &[(String, Mark)], width: u32) -> u32 {
    if entries.is_empty() {
        return 0;
    }
    legend_rows(entries, width).len() as u32 * 22 + 8
}

/// Entry widths packed into rows that fit `width`.
fn legend_rows(entries: &[(String, Mark)], width: u32) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = vec![vec![]];
    let mut x = 0;
    for (i, (text, _)) in entries.iter().enumerate() {
        let w = entry_width(text);
        if x + w > width.saturating_sub(40) && !rows.last().unwrap().is_empty() {
            rows.push(vec![]);
            x = 0;
        }
        rows.last_mut().unwrap().push(i);
        x += w;
    }
    rows
}

fn entry_width(text: &str) -> u32 {
    34 + text.chars().count() as u32 * CHAR_PX + 18
}

/// Draws a legend strip on `area` (the bottom band of a chart), entries
/// left to right from `left`, wrapping as needed.
pub fn legend(area: &Area<'_>, left: i32, entries: &[(String, Mark)]) -> Drawn {
    let width = area.dim_in_pixel().0;
    let text = tick_style().pos(Pos::new(HPos::Left, VPos::Center));
    for (row, indices) in legend_rows(entries, width).iter().enumerate() {
        let y = 12 + row as i32 * 22;
        let mut x = left;
        for &i in indices {
            let (label, mark) = &entries[i];
            draw_mark(area, (x, y), *mark)?;
            area.draw(&Text::new(label.clone(), (x + 30, y), text.clone()))?;
            x += entry_width(label) as i32;
        }
    }
    Ok(())
}

fn draw_mark(area: &Area<'_>, (x, y): (i32, i32), mark: Mark) -> Drawn {
    match mark {
        Mark::Line(c) => {
            area.draw(&PathElement::new(
                vec![(x, y), (x + 24, y)],
                c.stroke_width(2),
            ))?;
            area.draw(&Circle::new((x + 12, y), 3, c.filled()))?;
        }
        Mark::Dashed(c) => {
            for s in [0, 10, 20] {
                area.draw(&PathElement::new(
                    vec![(x + s, y), (x + s + 5, y)],
                    c.stroke_width(2),
                ))?;
            }
        }
        Mark::Dot(c) => area.draw(&Circle::new((x + 12, y), 5, c.filled()))?,
        Mark::Triangle(c) => area.draw(&TriangleMarker::new((x + 12, y), 6, c.stroke_width(2)))?,
        Mark::Swatch(c) => {
            area.draw(&Rectangle::new(
                [(x + 4, y - 7), (x + 20, y + 7)],
                c.filled(),
            ))?;
        }
    }
    Ok(())
}

/// Width of a label area that holds `labels` at tick size.
pub fn label_width(labels: impl IntoIterator<Item = usize>, min: u32, max: u32) -> u32 {
    let chars = labels.into_iter().max().unwrap_or(0) as u32;
    (chars * CHAR_PX + 16).clamp(min, max)
}

/// Truncates a label to `max` characters with an ellipsis.
pub fn shorten(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        label.to_string()
    } else {
        let kept: String = label.chars().take(max.saturating_sub(1)).collect();
        format!("{kept}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_distinct_at_every_scale() {
        // Issue 53: getppid's axis of counted instructions read "331" five
        // times.
        for (lo, hi) in [
            (330.6, 331.0),
            (0.0, 1.0),
            (1.0e6, 1.0005e6),
            (-2.0, 2.0),
            (12_000.0, 12_010.0),
            (0.001, 0.0012),
        ] {
            let label = ticks(lo, hi);
            let labels: Vec<String> = (0..=10)
                .map(|i| lo + (hi - lo) * i as f64 / 10.0)
                .map(|v| label(&v))
                .collect();
            let mut distinct = labels.clone();
            distinct.dedup();
            assert_eq!(distinct.len(), labels.len(), "{lo}..{hi}: {labels:?}");
        }
        assert_eq!(ticks(0.0, 100.0)(&50.0), "50");
        assert_eq!(ticks(330.6, 331.0)(&330.65), "330.65");
        assert_eq!(ticks(0.0, 2.0e6)(&1.5e6), "1.5M");
        assert_eq!(ticks(-1.0, 1.0)(&-0.0), "0");
        assert_eq!(ticks(0.0, 3.5e6)(&0.0), "0");
    }

    #[test]
    fn ranges_pad_and_survive_degenerate_input() {
        assert_eq!(range([], false), (0.0, 1.0));
        assert_eq!(range([f64::NAN], true), (0.0, 1.0));
        let (lo, hi) = range([5.0, 5.0], false);
        assert!(lo < 5.0 && hi > 5.0);
        let (lo, hi) = range([10.0, 20.0], true);
        assert_eq!(lo, 0.0);
        assert!(hi > 20.0);
        let (lo, hi) = range([-3.0, 7.0], false);
        assert!(lo < -3.0 && hi > 7.0);
    }

    #[test]
    fn legends_wrap_to_the_width() {
        let entries: Vec<(String, Mark)> = (0..12)
            .map(|i| (format!("series number {i}"), Mark::Line(series_color(i))))
            .collect();
        assert!(legend_height(&entries, 960) > legend_height(&entries[..2], 960));
        assert_eq!(legend_height(&[], 960), 0);
        let s = svg(400, 100, |root| legend(root, 10, &entries)).unwrap();
        assert!(s.starts_with("<svg"), "{s}");
        assert!(s.contains("series number 11"));
    }

    #[test]
    fn ticks_and_labels() {
        assert_eq!(tick(3.0), "3");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(25_000.0), "25k");
        assert_eq!(tick(6_000_000.0), "6M");
        assert_eq!(tick(2_500_000.0), "2.5M");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(-0.0001), "0");
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(shorten("abc", 4), "abc");
    }
}
