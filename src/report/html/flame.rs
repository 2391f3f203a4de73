//! Flame graphs with inferno: an ordinary one for a profiled `run` result,
//! a differential one (treatment against baseline) for a profiled
//! comparison.
//!
//! Embedding: inferno writes a whole SVG document with an XML prolog, a
//! DOCTYPE, its own `<style>` (which, inline, would restyle every `text`
//! of the page), fixed element ids (which would repeat with two graphs)
//! and a script for zoom and search. So each graph is cleaned (prolog,
//! DOCTYPE, comments, script, `onload` and the dead "Search" control
//! removed) and embedded as `<img src="data:image/svg+xml;base64,...">`:
//! a separate document, valid next to the others, in which no script would
//! run anyway. What is lost is hovering for a frame's full name; frame
//! labels are still drawn (truncated to fit) and the tables beside the
//! graph name the symbols.
//!
//! Units: the differential graph is drawn in ns/op, not raw samples: each
//! arm's sample counts are scaled to that arm's ns/op (a stack's share of
//! the arm's samples x the arm's ns/op, in picoseconds so counts stay
//! whole), as the attribution tables are. Widths are the treatment's ns/op
//! per stack; colour is the change in ns/op (red: more in the treatment,
//! blue: less). Code only the baseline ran has no width there, so it is
//! not drawn (inferno's rule); the tables show it.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use inferno::flamegraph::{self, Options};

use super::blocks::base64;
use super::escape::esc;

/// Folded stacks: `outer;...;leaf` -> samples.
pub type Folded = BTreeMap<String, u64>;

/// One arm of a comparison: its stacks and its ns/op.
#[derive(Debug, Clone, Copy)]
pub struct Arm<'a> {
    pub folded: &'a Folded,
    pub ns_per_op: f64,
}

/// An ordinary flame graph of `folded` (widths in samples) as an `<img>`;
/// None when there are no samples.
pub fn flame(title: &str, folded: &Folded) -> Result<Option<String>> {
    let lines: Vec<String> = folded
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(stack, n)| format!("{stack} {n}"))
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    let mut opt = options(title, "samples");
    let svg = draw(&mut opt, &lines)?;
    Ok(Some(img(&svg, title)))
}

/// A differential flame graph of `treatment` against `baseline`, in ns/op
/// (see the module header) as an `<img>`; None when either arm has no
/// samples.
pub fn differential(title: &str, baseline: Arm<'_>, treatment: Arm<'_>) -> Result<Option<String>> {
    let (Some(before), Some(after)) = (scaled(baseline), scaled(treatment)) else {
        return Ok(None);
    };
    let mut diff = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        before.as_bytes(),
        after.as_bytes(),
        &mut diff,
    )
    .context("building a differential flame graph")?;
    let diff = String::from_utf8(diff).context("differential folded stacks")?;
    let lines: Vec<String> = diff.lines().map(str::to_string).collect();
    let mut opt = options(title, "ps/op");
    let svg = draw(&mut opt, &lines)?;
    Ok(Some(img(&svg, title)))
}

/// An arm's stacks as folded lines in picoseconds per operation; None
/// without samples or a usable ns/op.
fn scaled(arm: Arm<'_>) -> Option<String> {
    let total: u64 = arm.folded.values().sum();
    if total == 0 || !(arm.ns_per_op.is_finite() && arm.ns_per_op > 0.0) {
        return None;
    }
    let ps_per_sample = arm.ns_per_op * 1000.0 / total as f64;
    let mut out = String::new();
    for (stack, n) in arm.folded {
        let ps = (*n as f64 * ps_per_sample).round() as u64;
        if ps > 0 {
            out.push_str(&format!("{stack} {ps}\n"));
        }
    }
    Some(out)
}

fn options(title: &str, count_name: &str) -> Options<'static> {
    let mut opt = Options::default();
    opt.title = title.to_string();
    opt.count_name = count_name.to_string();
    // Colours from the function names, the same on every run.
    opt.hash = true;
    opt.deterministic = true;
    opt
}

fn draw(opt: &mut Options<'_>, lines: &[String]) -> Result<String> {
    let mut svg = Vec::new();
    flamegraph::from_lines(opt, lines.iter().map(String::as_str), &mut svg)
        .context("drawing a flame graph")?;
    Ok(clean(&String::from_utf8(svg).context("flame graph SVG")?))
}

/// Removes from an SVG document what the page does not need or must not
/// carry: the XML prolog, the DOCTYPE (it names an external DTD),
/// comments, scripts, `onload` handlers and inferno's search control.
pub fn clean(svg: &str) -> String {
    let mut s = svg.to_string();
    for (open, close) in [
        ("<?xml", "?>"),
        ("<!DOCTYPE", ">"),
        ("<!--", "-->"),
        ("<script", "</script>"),
    ] {
        s = remove_all(&s, open, close);
    }
    s = s.replace(" onload=\"init(evt)\"", "");
    for id in ["search", "matched", "unzoom"] {
        s = remove_element(&s, "text", &format!("id=\"{id}\""));
    }
    s.trim_start().to_string()
}

/// `s` without every span from `open` to the next `close` (inclusive).
fn remove_all(s: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        match rest[start..].find(close) {
            Some(end) => rest = &rest[start + end + close.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `s` without the first `<tag ...>...</tag>` whose start tag contains
/// `attr`.
fn remove_element(s: &str, tag: &str, attr: &str) -> String {
    let open = format!("<{tag} ");
    let close = format!("</{tag}>");
    let mut from = 0;
    while let Some(i) = s[from..].find(&open) {
        let start = from + i;
        let Some(tag_end) = s[start..].find('>') else {
            break;
        };
        if s[start..start + tag_end].contains(attr) {
            if let Some(end) = s[start..].find(&close) {
                return format!("{}{}", &s[..start], &s[start + end + close.len()..]);
            }
            break;
        }
        from = start + tag_end;
    }
    s.to_string()
}

fn img(svg: &str, alt: &str) -> String {
    format!(
        "<img class=\"flame\" alt=\"{}\" src=\"data:image/svg+xml;base64,{}\">",
        esc(alt),
        base64(svg.as_bytes())
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Decodes the SVG of an `<img>` this module made (for tests).
    pub(crate) fn decode(img: &str) -> String {
        let b64 = img
            .split("base64,")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap();
        let val = |c: u8| -> u32 {
            match c {
                b'A'..=b'Z' => u32::from(c - b'A'),
                b'a'..=b'z' => u32::from(c - b'a') + 26,
                b'0'..=b'9' => u32::from(c - b'0') + 52,
                b'+' => 62,
                _ => 63,
            }
        };
        let mut out = Vec::new();
        for chunk in b64.as_bytes().chunks(4) {
            let pad = chunk.iter().filter(|&&c| c == b'=').count();
            let n = chunk
                .iter()
                .map(|&c| if c == b'=' { 0 } else { val(c) })
                .fold(0u32, |acc, v| (acc << 6) | v);
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            out.extend_from_slice(&bytes[..3 - pad]);
        }
        String::from_utf8(out).unwrap()
    }

    pub(crate) fn folded(stacks: &[(&str, u64)]) -> Folded {
        stacks.iter().map(|(s, n)| (s.to_string(), *n)).collect()
    }

    #[test]
    fn flame_graph_is_a_clean_svg_image() {
        let f = folded(&[
            ("entry_SYSCALL_64;do_syscall_64;__x64_sys_getppid", 30),
            ("entry_SYSCALL_64;do_syscall_64;__audit_syscall_exit", 10),
            ("[user];getppid", 5),
        ]);
        let img = flame("getppid <1 task>", &f).unwrap().unwrap();
        assert!(img.starts_with("<img class=\"flame\" alt=\"getppid &lt;1 task&gt;\""));
        let svg = decode(&img);
        assert!(svg.starts_with("<svg"), "{}", &svg[..200]);
        for gone in [
            "<?xml",
            "<!DOCTYPE",
            "<script",
            "onload",
            "<!--",
            ">Search<",
        ] {
            assert!(!svg.contains(gone), "{gone} left in the SVG");
        }
        assert!(svg.contains("do_syscall_64"));
        assert!(flame("empty", &Folded::new()).unwrap().is_none());
    }

    #[test]
    fn differential_is_in_ns_per_op_and_colours_growth_red() {
        let base = folded(&[("a;b", 50), ("a;c", 50)]);
        let treat = folded(&[("a;b", 50), ("a;c", 50), ("a;seccomp", 100)]);
        // Same samples per arm would hide the growth; ns/op show it: the
        // treatment's 200 samples cost 200 ns/op, the baseline's 100 ns/op.
        let img = differential(
            "diff",
            Arm {
                folded: &base,
                ns_per_op: 100.0,
            },
            Arm {
                folded: &treat,
                ns_per_op: 200.0,
            },
        )
        .unwrap()
        .unwrap();
        let svg = decode(&img);
        // 100 ns/op of seccomp in the treatment, none before: 100 000 ps/op.
        assert!(svg.contains("seccomp (100,000 ps/op"), "{svg}");
        // b and c did not change (50 ns/op each in both arms): +0.00%.
        assert!(svg.contains("b (50,000 ps/op, 25.00%; 0.00%)"), "{svg}");
        assert!(
            differential(
                "none",
                Arm {
                    folded: &base,
                    ns_per_op: f64::NAN
                },
                Arm {
                    folded: &treat,
                    ns_per_op: 1.0
                }
            )
            .unwrap()
            .is_none()
        );
    }

    #[test]
    fn removes_elements_and_spans() {
        assert_eq!(remove_all("a<!--x-->b<!--y-->c", "<!--", "-->"), "abc");
        assert_eq!(
            remove_element(
                "<text id=\"a\">A</text><text id=\"search\">S</text>",
                "text",
                "id=\"search\""
            ),
            "<text id=\"a\">A</text>"
        );
    }
}
