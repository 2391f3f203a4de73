//! The run's facts: what ran, when, where, on what machine; and (in the
//! stored view, after the results, where a reader looks last) the whole
//! security configuration its probe recorded.

use super::super::doc::RunDoc;
use super::super::markup::Markup;

/// How the figures of a run of `kind` were obtained.
fn design(kind: &str) -> &'static str {
    match kind {
        "overhead" | "calibrate" => {
            "paired: randomised A/B pairs in one run, so drift between them cancels out"
        }
        "suite" => "the current configuration, and randomised A/B pairs where a post switched one",
        _ => "one configuration, no comparison",
    }
}

pub fn facts(doc: &RunDoc, m: &mut dyn Markup) {
    let meta = &doc.meta;
    m.heading(&format!("secperf {}: {}", meta.kind, doc.name()));
    let started = meta.started_at.format("%Y-%m-%d %H:%M:%S UTC");
    let mut items = vec![match doc.finished_at {
        Some(f) => format!(
            "ran {started} to {} on {}",
            f.format("%H:%M:%S UTC"),
            meta.host
        ),
        None => format!(
            "started {started} on {}; unfinished: it stopped before all its measurements \
             were done (what was measured is shown)",
            meta.host
        ),
    }];
    items.push(format!("design: {}", design(&meta.kind)));
    let machine = doc.machine();
    let cpu = machine
        .cpu_model
        .as_deref()
        .map_or(String::new(), |c| format!(", {c}"));
    items.push(format!("machine: {}{cpu}", machine.line()));
    let settings = doc.settings();
    items.push(match settings.seed {
        Some(seed) => format!("secperf {}, seed {seed}", meta.secperf_version),
        None => format!("secperf {}", meta.secperf_version),
    });
    m.list(&items);
}

/// The whole security configuration the run's probe recorded.
pub fn security(doc: &RunDoc, m: &mut dyn Markup) {
    match serde_json::from_value::<crate::probe::SystemInfo>(doc.meta.system.clone()) {
        Ok(info) => m.verbatim(
            "Security configuration",
            super::probe::render(&info).trim_end(),
        ),
        Err(_) => {
            m.text("(The security configuration was recorded in an older format: see --json.)")
        }
    }
}
