//! The lists of campaigns, tracks and bisections, newest first, each row
//! linking to its page (the report module's campaign, track and bisection
//! pages), and a campaign's links to compare its hosts.

use chrono::{DateTime, Utc};

use crate::report::html::Doc;
use crate::report::html::blocks::{Cell, para, table};
use crate::report::html::escape::esc;
use crate::store::{BisectionSummary, CampaignSummary, TrackSummary};

use super::super::Served;
use super::frame;

/// The campaigns' page.
pub fn campaigns_html(served: &Served, list: &[CampaignSummary], now: DateTime<Utc>) -> String {
    let mut doc = Doc::default();
    doc.open(2, "campaigns", "campaigns", "Campaigns");
    if list.is_empty() {
        doc.push(&para(
            "empty",
            "No campaign in this store (`secperf campaign` makes one).",
        ));
    } else {
        let rows: Vec<Vec<Cell>> = list
            .iter()
            .map(|c| {
                vec![
                    Cell::Link {
                        text: c.id.clone(),
                        to: format!("/campaigns/{}", c.id),
                    },
                    Cell::Text(c.created_at.format("%Y-%m-%d %H:%M").to_string()),
                    Cell::Text(format!("secperf {}", shell_words::join(&c.command))),
                    Cell::Text(c.hosts.join(", ")),
                    Cell::Num(c.runs.to_string()),
                ]
            })
            .collect();
        doc.push(&table(
            "campaigns",
            &["Campaign", "Started (UTC)", "Command", "Hosts", "Runs"],
            &rows,
        ));
    }
    doc.close();
    page(served, doc, "Campaigns", now)
}

/// A campaign's links to compare its first host's run with each other
/// host's (`/compare`), under the bar.
pub fn compare_hosts(runs: &[(String, i64)]) -> String {
    let Some((first_host, first)) = runs.first() else {
        return String::new();
    };
    let links: Vec<String> = runs[1..]
        .iter()
        .map(|(host, id)| {
            format!(
                "<a href=\"/compare?runs={first},{id}\">{} against {}</a>",
                esc(host),
                esc(first_host)
            )
        })
        .collect();
    if links.is_empty() {
        return String::new();
    }
    format!(
        "<nav class=\"serve compare\">Compare the hosts' runs: {}</nav>\n",
        links.join(" ")
    )
}

/// The tracks' page.
pub fn tracks_html(served: &Served, list: &[TrackSummary], now: DateTime<Utc>) -> String {
    let mut doc = Doc::default();
    doc.open(2, "tracks", "tracks", "Tracks");
    if list.is_empty() {
        doc.push(&para(
            "empty",
            "No track in this store (`secperf track` makes one).",
        ));
    } else {
        let rows: Vec<Vec<Cell>> = list
            .iter()
            .map(|t| {
                vec![
                    Cell::Link {
                        text: t.id.clone(),
                        to: format!("/tracks/{}", t.id),
                    },
                    Cell::Text(t.updated_at.format("%Y-%m-%d %H:%M").to_string()),
                    Cell::Text(t.workload.clone()),
                    Cell::Text(t.branch.clone()),
                    Cell::Text(t.source.clone()),
                    Cell::Num(t.tested.to_string()),
                    Cell::Num(t.alarms.to_string()),
                ]
            })
            .collect();
        doc.push(&table(
            "tracks",
            &[
                "Track",
                "Updated (UTC)",
                "Workload",
                "Branch",
                "Source",
                "Tested",
                "Alarms",
            ],
            &rows,
        ));
    }
    doc.close();
    page(served, doc, "Tracks", now)
}

/// The bisections' page.
pub fn bisections_html(served: &Served, list: &[BisectionSummary], now: DateTime<Utc>) -> String {
    let mut doc = Doc::default();
    doc.open(2, "bisections", "bisections", "Bisections");
    if list.is_empty() {
        doc.push(&para(
            "empty",
            "No bisection in this store (`secperf bisect`, or a track's alarm, makes one).",
        ));
    } else {
        let rows: Vec<Vec<Cell>> = list
            .iter()
            .map(|b| {
                vec![
                    Cell::Link {
                        text: b.id.clone(),
                        to: format!("/bisections/{}", b.id),
                    },
                    Cell::Text(b.updated_at.format("%Y-%m-%d %H:%M").to_string()),
                    Cell::Text(b.status.word().to_string()),
                    Cell::Text(b.workload.clone()),
                    Cell::Num(b.revisions.to_string()),
                    Cell::Num(b.steps.to_string()),
                    Cell::Text(b.verdict.clone()),
                ]
            })
            .collect();
        doc.push(&table(
            "bisections",
            &[
                "Bisection",
                "Updated (UTC)",
                "Status",
                "Workload",
                "Revisions",
                "Steps",
                "Verdict",
            ],
            &rows,
        ));
    }
    doc.close();
    page(served, doc, "Bisections", now)
}

/// A page of the server's own: the report's frame, the bar in it.
pub fn page(served: &Served, doc: Doc, what: &str, now: DateTime<Utc>) -> String {
    let html = doc.into_page(
        &format!("secperf: {what}"),
        &format!(
            "Read from {} at {} UTC by secperf {}.",
            served.shown,
            now.format("%Y-%m-%d %H:%M:%S"),
            env!("CARGO_PKG_VERSION")
        ),
        "",
    );
    frame::around(served, &html)
}
