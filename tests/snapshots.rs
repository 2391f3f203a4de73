//! Every output of the stored runs in `tests/fixtures/runs/runs.db` (real
//! runs: see its README), as snapshots: the terminal table right after
//! measuring and in `results show`, email, markdown, csv, the run document
//! (`--json`), benchstat and the HTML page. A change to any output shows
//! up here as a diff to review; accept it with
//! `INSTA_UPDATE=always cargo test --test snapshots`.

use secperf::report::doc::RunDoc;
use secperf::report::markup::Kind;
use secperf::report::sections::{Parts, render};

/// The fixture runs, read through the store as `results show` reads them,
/// with the database path made stable.
fn docs() -> Vec<RunDoc> {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("runs.db");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/runs/runs.db"),
        &db,
    )
    .expect("copy the fixture database");
    let store = secperf::store::Store::open(&db).expect("open the fixture database");
    store
        .list_runs()
        .expect("list")
        .iter()
        .rev()
        .map(|r| {
            let mut doc = secperf::read::document::load(&store, r.run_id).expect("load");
            doc.db = "runs.db".into();
            // The fixture predates run UUIDs: opening it gives each run a
            // random one.
            doc.uuid = Some(format!("00000000-0000-4000-8000-{:012}", r.run_id));
            doc
        })
        .collect()
}

/// The page without its drawings: each inline SVG chart and each flame
/// graph image is named by its size, so the snapshot shows the page's text
/// and structure (`tests/report_html.rs` checks the drawings in a browser).
fn without_drawings(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 4);
    let mut rest = html;
    loop {
        let svg = rest.find("<svg ");
        let img = rest.find("data:image/svg+xml;base64,");
        match (svg, img) {
            (Some(i), img) if img.is_none_or(|j| i < j) => {
                out.push_str(&rest[..i]);
                let end = rest[i..].find("</svg>").map_or(rest.len(), |e| i + e + 6);
                out.push_str(&format!("<svg: {} bytes>", end - i));
                rest = &rest[end..];
            }
            (_, Some(j)) => {
                let start = j + "data:image/svg+xml;base64,".len();
                out.push_str(&rest[..start]);
                let len = rest[start..].find('"').unwrap_or(rest.len() - start);
                out.push_str(&format!("<{len} bytes of base64>"));
                rest = &rest[start + len..];
            }
            _ => break,
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn every_format_of_every_stored_run() {
    let docs = docs();
    assert_eq!(docs.len(), 5, "the fixture holds five runs");
    for doc in &docs {
        let name = doc.meta.label.clone();
        let views = [
            ("measured", Parts::MEASURED, Kind::Terminal { color: false }),
            ("stored", Parts::STORED, Kind::Terminal { color: false }),
            ("email", Parts::REPORT, Kind::Email),
            ("markdown", Parts::REPORT, Kind::Markdown),
            ("csv", Parts::REPORT, Kind::Csv),
        ];
        for (view, parts, kind) in views {
            insta::assert_snapshot!(format!("{name}-{view}"), render(doc, parts, kind));
        }
        insta::assert_snapshot!(
            format!("{name}-json"),
            serde_json::to_string_pretty(doc).expect("json")
        );
        let report = secperf::report::build::of_doc(doc);
        insta::assert_snapshot!(
            format!("{name}-benchstat"),
            secperf::report::formats::render(
                &report,
                secperf::report::formats::Format::Benchstat,
                &Default::default()
            )
            .expect("benchstat")
        );
    }
}

#[test]
fn the_html_page_of_the_stored_runs() {
    let docs = docs();
    let generated = chrono::DateTime::from_timestamp(1_764_100_000, 0).expect("time");
    let page = secperf::report::html::render(&docs, generated).expect("page");
    insta::assert_snapshot!("page", without_drawings(&page.html));
}

/// Issue 44: at 80 columns the survey's table collapsed to one letter a
/// line ("g/e/t/p/p/i/d"). At every width from 60 up, each word of each
/// cell shown stays whole on one line of the table, every line fits, and
/// columns left out are said so.
#[test]
fn the_survey_table_keeps_every_word_whole_at_60_to_120_columns() {
    let docs = docs();
    let survey = docs
        .iter()
        .find(|d| d.meta.label == "survey")
        .expect("the fixture's survey");
    let table = secperf::report::sections::comparisons_table(survey);
    for width in [60u16, 80, 100, 120] {
        let text = render(
            survey,
            Parts::MEASURED,
            Kind::TerminalAt {
                color: false,
                width,
            },
        );
        // The lines of the comparisons' grid or stacked blocks: what comes
        // before the table's legend.
        let block: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("baseline:"))
            .collect();
        assert!(block.len() > 7, "{width}: no table\n{text}");
        for l in block.iter().filter(|l| !l.starts_with("Left out")) {
            assert!(
                l.chars().count() <= usize::from(width),
                "{width}: a line of {} columns: {l}\n{text}",
                l.chars().count()
            );
        }
        let left_out = block
            .iter()
            .find(|l| l.starts_with("Left out to fit"))
            .copied()
            .unwrap_or("");
        for row in table.rows() {
            for (i, cell) in row.iter().enumerate() {
                let col = &table.columns[i];
                if !col.shown
                    || left_out.contains(&format!(" {},", col.title))
                    || left_out.contains(&format!(" {} (", col.title))
                {
                    continue;
                }
                for word in cell.text.split_whitespace().filter(|w| w.len() > 2) {
                    assert!(
                        block.iter().any(|l| l.contains(word)),
                        "{width}: '{word}' of {} is broken\n{}",
                        col.title,
                        block.join("\n")
                    );
                }
            }
        }
        // What is left out is what the priority allows: the p-value and
        // the verdict (whose mark is in the overhead cell), never a name.
        for title in ["workload", "mechanism", "overhead"] {
            assert!(!left_out.contains(title), "{width}: {left_out}");
        }
    }
}
