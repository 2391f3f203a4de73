//! The lists of tracks and of bisections, newest first, each row linking
//! to its page (the report module's track and bisection pages).

use chrono::{DateTime, Utc};

use crate::report::html::Doc;
use crate::report::html::blocks::{Cell, para, table};
use crate::store::{BisectionSummary, TrackSummary};

use super::super::Served;
use super::frame;

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
