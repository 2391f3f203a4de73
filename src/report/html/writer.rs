//! HTML for the sections the page shares with the text formats: `<h4>`
//! headings, tables with right-aligned numbers and coloured verdicts,
//! paragraphs, lists, files in collapsed `<details>`, commands in `<pre>`.
//! Everything user-given is escaped. The page's own structure (sections,
//! plots, the table of contents) is `report::html`'s.

use std::fmt::Write as _;

use super::escape::esc;
use crate::report::markup::{Align, Line, Markup, Table, Tone};

#[derive(Debug, Default)]
pub struct Html {
    out: String,
}

/// A table as HTML, footer lines under it.
pub fn table(t: &Table) -> String {
    let shown = t.shown();
    if shown.is_empty() {
        return String::new();
    }
    // A wide table scrolls inside its box, not the page.
    let mut out = format!(
        "<div class=\"scroll\"><table class=\"{}\"><thead><tr>",
        esc(&t.id)
    );
    for &i in &shown {
        let _ = write!(out, "<th>{}</th>", esc(&t.columns[i].title));
    }
    out.push_str("</tr></thead><tbody>");
    for line in &t.lines {
        match line {
            Line::Row(cells) => {
                out.push_str("<tr>");
                for &i in &shown {
                    let cell = &cells[i];
                    let verdict = match cell.tone {
                        Tone::Worse => Some("slower"),
                        Tone::Better => Some("faster"),
                        Tone::Negligible => Some("negligible"),
                        Tone::NoChange => Some("no-change"),
                        Tone::Plain => None,
                    };
                    let classes: Vec<String> = [
                        (t.columns[i].align == Align::Right).then(|| "num".to_string()),
                        verdict.map(|v| format!("verdict-{v}")),
                    ]
                    .into_iter()
                    .flatten()
                    .collect();
                    let class = if classes.is_empty() {
                        String::new()
                    } else {
                        format!(" class=\"{}\"", classes.join(" "))
                    };
                    let text = match &cell.link {
                        // A path (`/runs/3`, from `secperf serve`) as it is, else a
                        // fragment of the page.
                        Some(to) => format!(
                            "<a href=\"{}{}\">{}</a>",
                            if to.starts_with('/') { "" } else { "#" },
                            esc(to),
                            esc(&cell.text)
                        ),
                        None => esc(&cell.text),
                    };
                    let _ = write!(out, "<td{class}>{text}</td>");
                }
                out.push_str("</tr>");
            }
            Line::Divider(Some(label)) => {
                let _ = write!(
                    out,
                    "<tr><th colspan=\"{}\">{}</th></tr>",
                    shown.len(),
                    esc(label)
                );
            }
            Line::Divider(None) | Line::Data(_) => {}
        }
    }
    out.push_str("</tbody></table></div>\n");
    for f in &t.footer {
        let _ = writeln!(out, "<p class=\"legend\">{}</p>", esc(f));
    }
    out
}

impl Markup for Html {
    fn heading(&mut self, text: &str) {
        let _ = writeln!(self.out, "<h4>{}</h4>", esc(text));
    }

    fn table(&mut self, t: &Table) {
        if !t.is_shown() {
            return;
        }
        self.out.push_str(&table(t));
    }

    fn text(&mut self, text: &str) {
        let _ = writeln!(self.out, "<p>{}</p>", esc(text));
    }

    fn list(&mut self, items: &[String]) {
        self.out.push_str("<ul>");
        for item in items {
            let _ = write!(self.out, "<li>{}</li>", esc(item));
        }
        self.out.push_str("</ul>\n");
    }

    fn verbatim(&mut self, title: &str, content: &str) {
        let _ = writeln!(
            self.out,
            "<details><summary>{}</summary><pre>{}</pre></details>",
            esc(title),
            esc(content)
        );
    }

    fn command(&mut self, label: &str, command: &str) {
        let _ = writeln!(
            self.out,
            "<p>{}:</p><pre><code>{}</code></pre>",
            esc(label),
            esc(command)
        );
    }

    fn finish(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::markup::testing::awkward;

    #[test]
    fn tables_escape_and_colour() {
        let s = table(&awkward());
        assert!(
            s.contains("<td class=\"num verdict-slower\">+33.0% [32.0, 34.0] *</td>"),
            "{s}"
        );
        assert!(s.contains("&quot;quoted, with comma&quot;"), "{s}");
        assert!(!s.contains("hodges"), "{s}");
        assert!(s.contains("<p class=\"legend\">"), "{s}");
        let mut m = Html::default();
        m.verbatim("a <file>", "x < y");
        assert_eq!(
            m.finish(),
            "<details><summary>a &lt;file&gt;</summary><pre>x &lt; y</pre></details>\n"
        );
    }
}
