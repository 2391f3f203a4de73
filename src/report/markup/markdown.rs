//! GitHub-flavoured markdown, for an issue or a pull request: `###`
//! headings, pipe tables (right-aligned numbers), bullet lists, fenced code
//! for files and commands. Pipes and newlines in cells are escaped, and a
//! fence is always longer than any run of backticks it encloses.

use super::{Align, Line, Markup, Table};

#[derive(Debug, Default)]
pub struct Markdown {
    out: String,
    /// The rule under a table's header without spaces (`|---|---:|`), as
    /// `secperf predict --format markdown` has always written it; else
    /// `| --- | ---: |`.
    tight_rule: bool,
}

impl Markdown {
    /// Tables ruled `|---|---:|` under their header.
    pub fn tight() -> Markdown {
        Markdown {
            tight_rule: true,
            ..Markdown::default()
        }
    }

    fn block(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    fn line(&mut self, text: &str) {
        self.out.push_str(text.trim_end());
        self.out.push('\n');
    }

    fn fenced(&mut self, info: &str, content: &str) {
        let longest = content.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat((longest + 1).max(3));
        self.line(&format!("{fence}{info}"));
        for l in content.lines() {
            self.out.push_str(l);
            self.out.push('\n');
        }
        self.line(&fence);
    }
}

/// A cell's text made safe inside a pipe table.
fn cell(text: &str) -> String {
    let one_line = text.split(['\n', '\r']).collect::<Vec<_>>().join(" ");
    one_line.replace('|', "\\|")
}

impl Markup for Markdown {
    fn heading(&mut self, text: &str) {
        self.block();
        self.line(&format!("### {}", cell(text)));
    }

    fn table(&mut self, table: &Table) {
        if !table.is_shown() {
            return;
        }
        self.block();
        let shown = table.shown();
        let row = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
        self.line(&row(shown
            .iter()
            .map(|&i| cell(&table.columns[i].title))
            .collect()));
        let rule: Vec<String> = shown
            .iter()
            .map(|&i| match table.columns[i].align {
                Align::Left => "---".to_string(),
                Align::Right => "---:".to_string(),
            })
            .collect();
        if self.tight_rule {
            self.line(&format!("|{}|", rule.join("|")));
        } else {
            self.line(&row(rule));
        }
        for line in &table.lines {
            match line {
                Line::Row(cells) => {
                    self.line(&row(shown.iter().map(|&i| cell(&cells[i].text)).collect()))
                }
                Line::Divider(Some(label)) => {
                    let mut cells = vec![String::new(); shown.len()];
                    cells[0] = format!("**{}**", cell(label));
                    self.line(&row(cells));
                }
                Line::Data(_) | Line::Divider(None) => {}
            }
        }
        for f in &table.footer {
            self.out.push('\n');
            self.line(f);
        }
    }

    fn text(&mut self, text: &str) {
        self.block();
        self.line(text);
    }

    fn list(&mut self, items: &[String]) {
        self.block();
        for item in items {
            self.line(&format!("- {}", cell(item)));
        }
    }

    fn verbatim(&mut self, title: &str, content: &str) {
        self.block();
        self.line(&format!("**{}**", cell(title)));
        self.out.push('\n');
        self.fenced("", content);
    }

    fn command(&mut self, label: &str, command: &str) {
        self.block();
        self.line(&format!("{label}:"));
        self.out.push('\n');
        self.fenced("sh", command);
    }

    fn finish(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::awkward;
    use super::*;

    #[test]
    fn pipe_tables_escape_and_align() {
        let mut m = Markdown::default();
        m.heading("Overhead");
        m.table(&awkward());
        let s = m.finish();
        assert!(
            s.starts_with("### Overhead\n\n| workload | mechanism |"),
            "{s}"
        );
        assert!(s.contains("| --- | --- | ---: | ---: | ---: |\n"), "{s}");
        assert!(!s.contains("hodges"));
        for l in s.lines().filter(|l| l.starts_with('|')) {
            assert_eq!(l.matches(" | ").count(), 4, "{l}");
        }
    }

    #[test]
    fn a_tight_writer_rules_its_tables_without_spaces() {
        let mut m = Markdown::tight();
        m.table(&awkward());
        let s = m.finish();
        assert!(s.contains("\n|---|---|---:|---:|---:|\n"), "{s}");
        assert!(s.starts_with("| workload | mechanism |"), "{s}");
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        let mut m = Markdown::default();
        m.verbatim("rules", "a ```` b\n");
        let s = m.finish();
        assert!(s.contains("\n`````\na ```` b\n`````\n"), "{s}");
    }
}
