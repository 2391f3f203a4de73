//! A campaign's runs side by side ([`CampaignView`], built by
//! `report::campaign`), written once through the [`Markup`] interface
//! for every text format and for the HTML page's tables: the hosts, the
//! host x item table (turned, one row per host, past
//! [`MAX_HOST_COLUMNS`] hosts), the probe facts that differ between the
//! hosts, and the hosts without a finished run.
//!
//! The data formats (CSV) get the cells in the long layout instead: one
//! record per host and item under [`CSV_FIELDS`].

use super::super::campaign::{CampaignView, HostCell, HostColumn, Item, cell_text};
use super::super::markup::{Align, Cell, Column, Markup, Raw, Table, Tone};
use super::super::number;

/// More hosts than this and the table turns: one row per host.
pub const MAX_HOST_COLUMNS: usize = 6;

/// The fields of the data table, one record per host and item.
pub const CSV_FIELDS: [&str; 10] = [
    "campaign", "host", "run_id", "item", "kind", "estimate", "ci_low", "ci_high", "unit",
    "verdict",
];

/// What the cells mean.
pub const LEGEND: &str = "Comparisons: overhead in % of the baseline's ns/op with its \
                          interval as that host's run shows it (* slower or faster, = \
                          negligible, ~ no difference detected). Results: median ns/op with \
                          its 95% interval, and ops/s.";

/// "secperf campaign ID: N host(s) with a finished run".
pub fn title(view: &CampaignView) -> String {
    format!(
        "secperf campaign {}: {} host(s) with a finished run",
        view.campaign,
        view.hosts.len()
    )
}

/// "h1 (run 3, 6.18.0, AMD EPYC 7763)".
fn host_line(h: &HostColumn) -> String {
    let mut parts = vec![format!("run {}", h.run_id)];
    parts.extend(h.kernel.clone());
    parts.extend(h.cpu.clone());
    format!("{} ({})", h.host, parts.join(", "))
}

/// Writes the view.
pub fn write(view: &CampaignView, m: &mut dyn Markup) {
    m.heading(&title(view));
    m.text(LEGEND);
    if !view.hosts.is_empty() {
        m.list(&view.hosts.iter().map(host_line).collect::<Vec<_>>());
    }
    if view.items.is_empty() {
        m.text("(no comparisons or results)");
    } else {
        m.table(&items(view, |_| None));
        m.table(&cells(view));
    }
    if !view.differences.is_empty() {
        m.heading("Differences between hosts");
        m.table(&differences(view));
    } else if view.hosts.len() > 1 {
        m.text("No differences between the hosts' probe snapshots.");
    }
    if !view.missing.is_empty() {
        m.text(&format!(
            "No finished run from: {}",
            view.missing.join(", ")
        ));
    }
}

/// "3.361M ops/s" of a result's cell.
fn ops_text(c: &HostCell) -> Option<String> {
    c.ops_per_sec
        .filter(|s| s.median.is_finite() && s.median > 0.0)
        .map(|s| format!("{} ops/s", number::si(s.median)))
}

/// A host's figure of an item, toned by its verdict; "-" where missing.
fn figure(item: &Item, c: Option<&HostCell>) -> Cell {
    let Some(c) = c else {
        return Cell::text("-");
    };
    let mut text = cell_text(item.kind, c);
    if let Some(ops) = ops_text(c) {
        text.push_str(&format!("; {ops}"));
    }
    Cell::text(text).tone(c.verdict.map_or(Tone::Plain, Tone::of))
}

/// The host x item table for people: a column per host and a row per
/// item, or past [`MAX_HOST_COLUMNS`] hosts a row per host. `link` gives
/// an item's anchor where the page has one (the HTML page's plots).
pub fn items(view: &CampaignView, link: impl Fn(&Item) -> Option<String>) -> Table {
    let host_title = |h: &HostColumn| format!("{} (run {})", h.host, h.run_id);
    if view.hosts.len() > MAX_HOST_COLUMNS {
        let mut columns = vec![Column::shown("host", Align::Left)];
        columns.extend(
            view.items
                .iter()
                .map(|i| Column::shown(&i.label, Align::Right).wrapping()),
        );
        let mut t = Table::new("campaign", columns);
        for (col, h) in view.hosts.iter().enumerate() {
            let mut row = vec![Cell::text(host_title(h))];
            row.extend(view.items.iter().map(|i| figure(i, i.cells[col].as_ref())));
            t.row(row);
        }
        return t;
    }
    let mut columns = vec![Column::shown("item", Align::Left)];
    columns.extend(
        view.hosts
            .iter()
            .map(|h| Column::shown(&host_title(h), Align::Right).wrapping()),
    );
    let mut t = Table::new("campaign", columns);
    for item in &view.items {
        let mut label = Cell::text(item.label.as_str());
        if let Some(anchor) = link(item) {
            label = label.link(anchor);
        }
        let mut row = vec![label];
        row.extend(item.cells.iter().map(|c| figure(item, c.as_ref())));
        t.row(row);
    }
    t
}

/// The cells as data: one record per host and item.
fn cells(view: &CampaignView) -> Table {
    let mut t = Table::new(
        "campaign",
        CSV_FIELDS.iter().map(|f| Column::data(f)).collect(),
    );
    for item in &view.items {
        for (h, c) in view.hosts.iter().zip(&item.cells) {
            let c = c.as_ref();
            let raw: [Raw; 10] = [
                view.campaign.as_str().into(),
                h.host.as_str().into(),
                Raw::Int(h.run_id),
                item.label.as_str().into(),
                item.kind.name().into(),
                c.map(|c| c.estimate).into(),
                c.map(|c| c.ci_low).into(),
                c.map(|c| c.ci_high).into(),
                item.unit.as_str().into(),
                c.and_then(|c| c.verdict).map(|v| v.to_string()).into(),
            ];
            t.data_row(raw.into_iter().map(|r| Cell::value("", r)).collect());
        }
    }
    t
}

/// The probe facts that differ: a row per fact, a column per host ("-"
/// where a host's snapshot lacks it).
pub fn differences(view: &CampaignView) -> Table {
    let mut columns = vec![Column::new("fact", Align::Left, "fact")];
    columns.extend(
        view.hosts
            .iter()
            .map(|h| Column::new(&h.host, Align::Left, &h.host)),
    );
    let mut t = Table::new("differences", columns);
    for d in &view.differences {
        let mut row = vec![Cell::text(d.key.as_str())];
        row.extend(d.values.iter().map(|v| match v {
            Some(v) => Cell::text(v.as_str()),
            None => Cell::value("-", Raw::Empty),
        }));
        t.row(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::campaign::testing;
    use crate::report::markup::{Kind, text::WIDTH, writer};

    fn three_hosts() -> CampaignView {
        let (hosts, docs) = testing::three_hosts();
        crate::report::campaign::view("c1", &hosts, &docs)
    }

    fn render(view: &CampaignView, kind: Kind) -> String {
        let mut m = writer(kind);
        write(view, m.as_mut());
        m.finish()
    }

    #[test]
    fn every_format_shows_every_host_and_item() {
        let view = three_hosts();
        for kind in [
            Kind::Terminal { color: false },
            Kind::Email,
            Kind::Plain,
            Kind::Markdown,
        ] {
            let s = render(&view, kind);
            for h in &view.hosts {
                assert!(s.contains(&h.host), "{kind:?}: {}\n{s}", h.host);
            }
            for i in &view.items {
                let short: String = i.label.chars().take(8).collect();
                assert!(s.contains(&short), "{kind:?}: {}\n{s}", i.label);
            }
            assert!(s.contains("Differences between hosts"), "{kind:?}\n{s}");
        }
        for l in render(&view, Kind::Email).lines() {
            assert!(l.len() <= WIDTH && l.is_ascii(), "{l:?}");
        }
    }

    #[test]
    fn csv_is_one_record_per_host_and_item_then_the_differences() {
        let view = three_hosts();
        let s = render(&view, Kind::Csv);
        let first = s.split("\n\n").next().unwrap();
        let mut r = csv::Reader::from_reader(first.as_bytes());
        assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), CSV_FIELDS);
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), view.items.len() * view.hosts.len(), "{s}");
        assert!(s.contains("\nfact,"), "the differences are data too: {s}");
    }

    #[test]
    fn many_hosts_turn_the_table() {
        let mut view = three_hosts();
        let h = view.hosts[0].clone();
        for k in 0..5 {
            let mut extra = h.clone();
            extra.host = format!("extra{k}");
            view.hosts.push(extra);
            for i in &mut view.items {
                let c = i.cells[0].clone();
                i.cells.push(c);
            }
        }
        let t = items(&view, |_| None);
        assert_eq!(t.columns[0].title, "host");
        assert_eq!(t.rows().count(), view.hosts.len());
    }
}
