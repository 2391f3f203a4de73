//! The tables as data, for spreadsheets and pandas: each table is a block
//! of CSV (RFC 4180, written by the `csv` crate) whose header is its
//! columns' field names (`baseline_ns_per_op`, `overhead_pct`, ...) and
//! whose rows hold raw values, never display text: numbers in Rust's
//! shortest round-trip form (`NaN`, `inf` for non-finite ones), an empty
//! field where a value is missing. Blocks are separated by a blank line.
//! Headings, prose, files and commands are not data and are left out.

use super::{Markup, Raw, Table};

#[derive(Debug, Default)]
pub struct Csv {
    out: String,
}

/// One raw value as a CSV field.
fn field(raw: &Raw) -> String {
    match raw {
        Raw::Text(s) => s.clone(),
        Raw::Number(x) => x.to_string(),
        Raw::Int(i) => i.to_string(),
        Raw::Bool(b) => b.to_string(),
        Raw::Empty => String::new(),
    }
}

/// Records of fields as CSV text (RFC 4180 quoting), each ending in `\n`.
pub fn records<I, R, F>(records: I) -> String
where
    I: IntoIterator<Item = R>,
    R: IntoIterator<Item = F>,
    F: AsRef<[u8]>,
{
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in records {
        // Writing to a Vec cannot fail.
        let _ = w.write_record(r);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A table's block: the header and one record per row.
pub fn block(t: &Table) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let header: Vec<&str> = t
        .columns
        .iter()
        .flat_map(|c| c.csv.iter().map(String::as_str))
        .collect();
    // Writing to a Vec cannot fail; a record of the wrong length is a bug
    // in a section, caught by its tests.
    let _ = w.write_record(&header);
    for row in t.all_rows() {
        let record: Vec<String> = t
            .columns
            .iter()
            .zip(row)
            .flat_map(|(c, cell)| {
                (0..c.csv.len()).map(|k| cell.raw.get(k).map_or(String::new(), field))
            })
            .collect();
        let _ = w.write_record(&record);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

impl Markup for Csv {
    fn heading(&mut self, _text: &str) {}

    fn table(&mut self, t: &Table) {
        if t.columns.iter().all(|c| c.csv.is_empty()) {
            return;
        }
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out.push_str(&block(t));
    }

    fn text(&mut self, _text: &str) {}

    fn list(&mut self, _items: &[String]) {}

    fn verbatim(&mut self, _title: &str, _content: &str) {}

    fn command(&mut self, _label: &str, _command: &str) {}

    fn finish(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::awkward;
    use super::*;

    #[test]
    fn raw_values_under_field_names() {
        let mut m = Csv::default();
        m.heading("ignored");
        m.table(&awkward());
        m.text("ignored too");
        let s = m.finish();
        let mut lines = s.lines();
        assert_eq!(
            lines.next(),
            Some(
                "workload,mechanism,tasks,overhead_pct,ci_low_pct,ci_high_pct,p_value,\
                 hodges_lehmann_pct"
            )
        );
        assert_eq!(
            lines.next(),
            Some("getppid,\"seccomp:args,filters=4\",1,33,32,34,0.001,")
        );
        let mut r = csv::Reader::from_reader(s.as_bytes());
        let rows: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            &rows[1][0],
            "dd if=/dev/zero of=/dev/null bs=1 count=200000 \"quoted, with comma\""
        );
    }
}
