//! `--format csv`: one line per (row, configuration) cell, for spreadsheets,
//! pandas and R. Long ("tidy") layout so that any number of configurations
//! fits one fixed header; every sample is in the `samples` field, joined
//! with ';'. Missing cells (a configuration without that row) have no line.
//! Empty fields mean "not applicable" (the baseline's change, a report
//! without statistics). Written by the `csv` crate (RFC 4180 quoting).

use crate::report::model::Report;

pub const HEADER: &str = "workload,tasks,label,configuration,unit,value,cv_pct,change_pct,ci_low_pct,ci_high_pct,p_value,verdict,samples";

pub fn render(report: &Report) -> String {
    let mut records: Vec<Vec<String>> = vec![HEADER.split(',').map(String::from).collect()];
    let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for row in &report.rows {
        for (column, cell) in report.columns.iter().zip(&row.cells) {
            let Some(cell) = cell else { continue };
            let samples: Vec<String> = cell.samples.iter().map(f64::to_string).collect();
            let fields = [
                row.workload.clone(),
                row.tasks.to_string(),
                row.label.clone(),
                column.clone(),
                report.unit.clone(),
                cell.value.to_string(),
                num(cell.cv_pct),
                num(cell.change_pct),
                num(cell.ci_low_pct),
                num(cell.ci_high_pct),
                num(cell.p_value),
                cell.verdict
                    .map(<&str>::from)
                    .unwrap_or_default()
                    .to_string(),
                samples.join(";"),
            ];
            records.push(fields.to_vec());
        }
    }
    crate::report::markup::csv::records(records)
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// A small RFC 4180 reader: records of fields, honouring quotes.
    fn parse(s: &str) -> Vec<Vec<String>> {
        let mut records = Vec::new();
        let mut record = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                (true, '"') => quoted = false,
                (true, c) => field.push(c),
                (false, '"') => quoted = true,
                (false, ',') => record.push(std::mem::take(&mut field)),
                (false, '\n') => {
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                }
                (false, c) => field.push(c),
            }
        }
        assert!(field.is_empty() && record.is_empty(), "no trailing newline");
        records
    }

    #[test]
    fn one_line_per_present_cell() {
        let r = testing::small();
        let s = render(&r);
        let recs = parse(&s);
        assert_eq!(recs[0].join(","), HEADER);
        // 2 rows x 3 columns, one missing.
        assert_eq!(recs.len(), 1 + 5);
        assert!(recs.iter().all(|r| r.len() == 13));
        let slower = &recs[2];
        assert_eq!(slower[0], "getpid");
        assert_eq!(slower[1], "1");
        assert_eq!(slower[3], "run 5 patched");
        assert_eq!(slower[4], "ns/op");
        assert_eq!(slower[7], "12.3");
        assert_eq!(slower[11], "slower");
        assert_eq!(slower[12].split(';').count(), 3);
        assert!(slower[12].split(';').all(|x| x.parse::<f64>().is_ok()));
        // The baseline has no change, interval, p or verdict.
        assert_eq!(&recs[1][7..12], ["", "", "", "", ""]);
        assert_eq!(recs[3][11], "no-change");
        assert_eq!(recs[5][3], "run 7 rcu");
        assert_eq!(recs[5][11], "faster");
    }

    #[test]
    fn awkward_names_are_quoted() {
        let r = testing::awkward();
        let s = render(&r);
        assert!(s.contains("\"open,close\""));
        assert!(s.contains("\"landlock \u{2192} fs-ro, \"\"strict\"\"\""));
        let recs = parse(&s);
        assert_eq!(recs.len(), 1 + 5 + 4);
        assert!(recs.iter().all(|r| r.len() == 13));
        assert_eq!(recs[1][2], r.rows[0].label);
        assert_eq!(recs[2][3], r.columns[1]);
        assert_eq!(recs[7][0], "open,close");
    }
}
