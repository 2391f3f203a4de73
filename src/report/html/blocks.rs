//! The HTML building blocks every section uses: tables (drawn by
//! [`super::writer`], as every table is), key/value facts, figures,
//! paragraphs, anchors, and base64 (the `base64` crate) for the flame
//! graphs' `data:` images. The text they are given is escaped
//! ([`super::escape`]); only a fact given as markup is written as it is.

use std::fmt::Write as _;

use super::escape::esc;
use crate::report::markup::{Align, Cell as MCell, Column, Table};

/// A cell of [`table`]: text, a number (right-aligned), or text linking
/// to a fragment of the page.
pub enum Cell {
    Text(String),
    Num(String),
    Link { text: String, to: String },
}

/// A table with a header row, drawn as every table of the page is
/// ([`super::writer::table`]): a column holding a number is
/// right-aligned.
pub fn table(class: &str, header: &[&str], rows: &[Vec<Cell>]) -> String {
    let align = |i: usize| {
        if rows.iter().any(|r| matches!(r.get(i), Some(Cell::Num(_)))) {
            Align::Right
        } else {
            Align::Left
        }
    };
    let columns = header
        .iter()
        .enumerate()
        .map(|(i, h)| Column::shown(h, align(i)))
        .collect();
    let mut t = Table::new(class, columns);
    for row in rows {
        t.row(
            row.iter()
                .map(|c| match c {
                    Cell::Text(s) | Cell::Num(s) => MCell::text(s.as_str()),
                    Cell::Link { text, to } => MCell::text(text.as_str()).link(to.as_str()),
                })
                .collect(),
        );
    }
    super::writer::table(&t)
}

/// A fact's value: text (escaped) or ready markup.
pub enum Fact {
    Text(String),
    Html(String),
}

/// A key/value table (a run's header, its security configuration).
pub fn facts(class: &str, rows: &[(String, Fact)]) -> String {
    let mut out = format!("<table class=\"{}\"><tbody>", esc(class));
    for (key, value) in rows {
        let value = match value {
            Fact::Text(t) => esc(t),
            Fact::Html(h) => h.clone(),
        };
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}</th><td>{value}</td></tr>",
            esc(key)
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

/// A figure: the drawing (inline SVG or an image) and a caption saying
/// how to read it.
pub fn figure(class: &str, drawing: &str, caption: &str) -> String {
    format!(
        "<figure class=\"{}\">{drawing}<figcaption>{}</figcaption></figure>\n",
        esc(class),
        esc(caption)
    )
}

/// A paragraph of escaped text with a class ("note", "empty").
pub fn para(class: &str, text: &str) -> String {
    format!("<p class=\"{}\">{}</p>\n", esc(class), esc(text))
}

/// Standard base64 (RFC 4648, with padding), for `data:` URIs.
pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A fragment id made of safe characters: `run-3-pairs-2`.
pub fn anchor(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| {
            p.chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn tables_escape_cells_and_align_numbers() {
        let t = table(
            "t",
            &["name", "ns/op"],
            &[vec![Cell::Text("<b>".into()), Cell::Num("1.0 ns".into())]],
        );
        assert!(t.contains("<td>&lt;b&gt;</td>"), "{t}");
        assert!(t.contains("<td class=\"num\">1.0 ns</td>"), "{t}");
        assert_eq!(anchor(&["run", "3", "a:b c"]), "run-3-a-b-c");
    }
}
