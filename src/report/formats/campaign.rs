//! A campaign's view ([`CampaignView`]) in every `--format` of `results
//! show --campaign`: the text formats are `report::sections::campaign`
//! written through the one markup interface; json is the view as serde
//! writes it; benchstat gives one line per host and item, named after the
//! item and the host.

use super::benchstat::{camel_case, goarch, keep_whole, sanitize_label};
use super::{Format, RenderOpts, markup_kind};
use crate::model::Mode;
use crate::report::campaign::{CampaignView, Item, ItemKind};
use crate::report::markup::writer;

/// The view as text in `format`, ending in a newline.
pub fn render(view: &CampaignView, format: Format, opts: RenderOpts) -> String {
    let mut s = match (format, markup_kind(format, opts.color)) {
        (_, Some(kind)) => {
            let mut m = writer(kind);
            crate::report::sections::campaign::write(view, m.as_mut());
            m.finish()
        }
        (Format::Benchstat, None) => benchstat(view),
        (_, None) => serde_json::to_string_pretty(view).unwrap_or_else(|e| {
            serde_json::json!({ "error": format!("serializing the campaign view: {e}") })
                .to_string()
        }),
    };
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

fn one_line(s: &str) -> String {
    s.split(['\n', '\r']).collect::<Vec<_>>().join(" ")
}

/// An item's benchmark name on a host:
/// `BenchmarkGetppid/tasks=1/seccomp_allow/host=h1`.
pub fn bench_name(item: &Item, host: &str) -> String {
    let mut words = item.workload.split_whitespace();
    let mut name = format!(
        "Benchmark{}/tasks={}",
        camel_case(words.next().unwrap_or("")),
        item.tasks
    );
    let rest: Vec<&str> = words.collect();
    if !rest.is_empty() {
        name.push('/');
        name.push_str(&sanitize_label(&rest.join("_")));
    }
    if let Some(t) = &item.treatment {
        name.push('/');
        name.push_str(&sanitize_label(t));
    }
    if item.mode != Mode::Process {
        name.push_str(&format!("/mode={}", item.mode));
    }
    if let Some(repeat) = item.label.rsplit_once(" #").map(|(_, n)| n)
        && repeat.bytes().all(|b| b.is_ascii_digit())
    {
        name.push_str(&format!("/repeat={repeat}"));
    }
    name.push_str("/host=");
    name.push_str(&sanitize_label(host));
    keep_whole(&mut name);
    name
}

fn benchstat(view: &CampaignView) -> String {
    let mut out = format!(
        "goos: linux\ngoarch: {}\npkg: secperf\ncampaign: {}\n",
        goarch(),
        one_line(&view.campaign)
    );
    let num = |x: f64| x.is_finite().then(|| x.to_string());
    for item in &view.items {
        for (h, c) in view.hosts.iter().zip(&item.cells) {
            let Some(c) = c else { continue };
            let mut values: Vec<String> = Vec::new();
            match item.kind {
                ItemKind::Comparison => {
                    if let Some(v) = c.treatment_ns_per_op.and_then(num) {
                        values.push(format!("{v} ns/op"));
                    }
                    if let Some(v) = c.baseline_ns_per_op.and_then(num) {
                        values.push(format!("{v} baseline-ns/op"));
                    }
                    if let Some(v) = num(c.estimate) {
                        values.push(format!("{v} overhead-%"));
                    }
                }
                ItemKind::Result => {
                    if let Some(v) = num(c.estimate) {
                        values.push(format!("{v} ns/op"));
                    }
                    if let Some(v) = c.ops_per_sec.and_then(|s| num(s.median)) {
                        values.push(format!("{v} ops/s"));
                    }
                }
            }
            if values.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "{} 1 {}\n",
                bench_name(item, &h.host),
                values.join(" ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::report::campaign::testing::{doc, three_hosts};
    use crate::report::campaign::view;
    use crate::report::doc::RunDoc;
    use crate::report::markup::text::WIDTH;
    use crate::report::sections::campaign::CSV_FIELDS;
    use crate::stats::decision::Verdict;

    #[test]
    fn a_host_lacking_an_item_gets_an_empty_cell_and_a_missing_host_is_named() {
        let (hosts, docs) = three_hosts();
        let v = view("c1", &hosts, &docs);
        let csv = render(&v, Format::Csv, RenderOpts::default());
        assert!(
            csv.contains("c1,beta,4,seccomp:allow on getpid tasks=1,comparison,,,,%,\n"),
            "{csv}"
        );
        for f in [Format::Table, Format::Email, Format::Markdown] {
            let s = render(&v, f, RenderOpts::default());
            assert!(
                s.contains(" - ") || s.contains("| -") || s.contains("-\n"),
                "{f:?}: {s}"
            );
            assert!(s.contains("No finished run from: gamma"), "{f:?}: {s}");
        }
        let json: Value = serde_json::from_str(&render(&v, Format::Json, Default::default()))
            .expect("JSON parses");
        assert_eq!(json["missing"][0], "gamma");
    }

    #[test]
    fn differences_are_shown_per_host() {
        let (hosts, docs) = three_hosts();
        let v = view("c1", &hosts, &docs);
        let table = render(&v, Format::Table, RenderOpts::default());
        assert!(table.contains("Differences between hosts:"), "{table}");
        let line = table
            .lines()
            .find(|l| l.contains("kernel.release"))
            .unwrap_or_else(|| panic!("{table}"));
        assert!(
            line.contains("6.18.0") && line.contains("6.19.1"),
            "{table}"
        );
    }

    #[test]
    fn every_format_names_every_host() {
        let (hosts, docs) = three_hosts();
        let v = view("c1", &hosts, &docs);
        for &f in <Format as clap::ValueEnum>::value_variants() {
            for color in [false, true] {
                let s = render(&v, f, RenderOpts { color });
                assert!(!s.trim().is_empty(), "{f:?}");
                assert!(s.ends_with('\n'), "{f:?}");
                for h in ["alpha", "beta"] {
                    assert!(s.contains(h), "{f:?} lacks {h}: {s}");
                }
                if f != Format::Table || !color {
                    assert!(!s.contains('\x1b'), "{f:?}");
                }
            }
        }
    }

    #[test]
    fn csv_has_one_line_per_item_and_host() {
        let (hosts, docs) = three_hosts();
        let v = view("c1", &hosts, &docs);
        let s = render(&v, Format::Csv, RenderOpts::default());
        // The cells, then (after a blank line) the facts that differ.
        let cells = s.split("\n\n").next().unwrap();
        let mut r = ::csv::ReaderBuilder::new().from_reader(cells.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header, CSV_FIELDS);
        let records: Vec<::csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(records.len(), v.items.len() * v.hosts.len());
        assert!(records.iter().all(|x| x.len() == 10 && &x[0] == "c1"));
        let slower = records
            .iter()
            .find(|x| &x[1] == "alpha" && &x[3] == "seccomp:allow on getppid tasks=1")
            .unwrap();
        assert_eq!(&slower[4], "comparison");
        assert_eq!(&slower[5], "12");
        assert_eq!(&slower[6], "10");
        assert_eq!(&slower[9], "slower");
    }

    #[test]
    fn email_is_ascii_within_72_columns() {
        let (hosts, mut docs) = three_hosts();
        docs[0].meta.system["kernel"]["cmdline"] =
            "a-very-long-kernel-command-line=with,many,words "
                .repeat(5)
                .into();
        let v = view("c1", &hosts, &docs);
        let s = render(&v, Format::Email, RenderOpts::default());
        for l in s.lines() {
            assert!(l.is_ascii(), "{l:?}");
            assert!(l.chars().count() <= WIDTH, "{l:?}");
        }
        assert!(s.contains("+12.0% [10.0, 14.0] *"), "{s}");
    }

    #[test]
    fn many_hosts_turn_the_table() {
        let hosts: Vec<String> = (0..8).map(|i| format!("host{i}")).collect();
        let docs: Vec<RunDoc> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                doc(
                    "c1",
                    h,
                    i as i64 + 1,
                    "6.18.0",
                    &[("getppid", i as f64, Verdict::NoChange)],
                    &[],
                )
            })
            .collect();
        let v = view("c1", &hosts, &docs);
        assert!(v.differences.is_empty(), "{:?}", v.differences);
        let s = render(&v, Format::Table, RenderOpts::default());
        for h in &hosts {
            assert!(s.contains(h.as_str()), "{s}");
        }
        let md = render(&v, Format::Markdown, RenderOpts::default());
        let rows = md.lines().filter(|l| l.starts_with('|')).count();
        assert_eq!(rows, 2 + hosts.len(), "{md}");
    }

    #[test]
    fn benchstat_lines_name_the_host() {
        let (hosts, docs) = three_hosts();
        let v = view("c1", &hosts, &docs);
        let s = render(&v, Format::Benchstat, RenderOpts::default());
        let lines: Vec<&str> = s.lines().filter(|l| l.starts_with("Benchmark")).collect();
        // 3 items on alpha, 2 on beta.
        assert_eq!(lines.len(), 5, "{s}");
        assert!(
            lines.contains(
                &"BenchmarkGetppid/tasks=1/seccomp_allow/host=alpha 1 336 ns/op 300 baseline-ns/op 12 overhead-%"
            ),
            "{s}"
        );
        assert!(
            lines.contains(
                &"BenchmarkGetppid/tasks=1/host=beta 1 45000 ns/op 22222.222222222223 ops/s"
            ),
            "{s}"
        );
        for l in lines {
            let f: Vec<&str> = l.split(' ').collect();
            assert!(f.len() >= 4 && f.len().is_multiple_of(2), "{l}");
            assert_eq!(f[1], "1");
            assert!(f[2].parse::<f64>().is_ok(), "{l}");
        }
    }
}
