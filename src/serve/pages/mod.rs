//! What `secperf serve` answers, without HTTP: a path and its query are
//! turned into a [`Page`] (or refused with a status and a plain reason),
//! and a page is read from the store as HTML or as its JSON document.
//!
//! Files: [`runs`] (the run list, filtered and paged), [`compare`] (any
//! runs side by side), [`records`] (the lists of campaigns, tracks and
//! bisections), [`frame`] (the bar every page of the server's own
//! carries). A run, a comparison, a campaign, a bisection and a track are
//! the report module's pages.

pub mod compare;
pub mod frame;
pub mod records;
pub mod runs;

use anyhow::Result;
use chrono::Utc;

use super::Served;

/// One page the server has.
#[derive(Debug, Clone, PartialEq)]
pub enum Page {
    Runs(runs::Query),
    Run(i64),
    Compare(compare::Query),
    Campaigns,
    Campaign(String),
    Tracks,
    Track(String),
    Bisections,
    Bisection(String),
}

/// HTML or the JSON twin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Html,
    Json,
}

/// A page's body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Html(String),
    Json(serde_json::Value),
}

/// A request refused: its HTTP status and a plain reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub reason: String,
}

impl Refusal {
    pub fn bad(reason: impl Into<String>) -> Refusal {
        Refusal {
            status: 400,
            reason: reason.into(),
        }
    }
    pub fn missing(reason: impl Into<String>) -> Refusal {
        Refusal {
            status: 404,
            reason: reason.into(),
        }
    }
    /// The store cannot be reached now (a shared store stopped): try
    /// again later.
    pub fn unavailable(reason: impl Into<String>) -> Refusal {
        Refusal {
            status: 503,
            reason: reason.into(),
        }
    }
    /// The store could not be read: the server's side.
    pub fn failed(err: &anyhow::Error) -> Refusal {
        Refusal {
            status: 500,
            reason: format!("the store could not be read: {err:#}"),
        }
    }
}

/// The page a path names (`/runs`, `/runs/3`, `/tracks/ID`, with `.json`
/// for the twin), with the query's `key=value` pairs (decoded).
pub fn route(path: &str, query: &[(String, String)]) -> Result<(Page, Form), Refusal> {
    let (path, form) = match path.strip_suffix(".json") {
        Some(p) => (p, Form::Json),
        None => (path, Form::Html),
    };
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let no_query = |page: Page| {
        if let Some((k, _)) = query.first() {
            return Err(Refusal::bad(format!(
                "{path} takes no query: `{k}` is not one of its keys"
            )));
        }
        Ok((page, form))
    };
    match parts.as_slice() {
        ["runs"] => Ok((Page::Runs(runs::Query::parse(query)?), form)),
        ["runs", id] => no_query(Page::Run(run_id(id)?)),
        ["compare"] => Ok((Page::Compare(compare::Query::parse(query)?), form)),
        ["campaigns"] => no_query(Page::Campaigns),
        ["campaigns", id] => no_query(Page::Campaign(campaign_id(id)?)),
        ["tracks"] => no_query(Page::Tracks),
        ["tracks", id] => no_query(Page::Track(record_id(id, "track")?)),
        ["bisections"] => no_query(Page::Bisections),
        ["bisections", id] => no_query(Page::Bisection(record_id(id, "bisection")?)),
        _ => Err(Refusal::missing(format!(
            "no page at {path}: the pages are /runs, /runs/ID, /compare?runs=A,B, /campaigns, \
             /campaigns/ID, /tracks, /tracks/ID, /bisections and /bisections/ID (each with \
             .json for its document)"
        ))),
    }
}

/// A 404 unless run `id` is stored: by number only, since a label that
/// happens to be digits names another run.
pub fn existing_run(store: &crate::store::Store, served: &Served, id: i64) -> Result<(), Refusal> {
    if matches!(store.resolve_run(&id.to_string()), Ok(found) if found == id) {
        return Ok(());
    }
    Err(Refusal::missing(format!(
        "no run {id} in {} (the list: /runs)",
        served.shown
    )))
}

fn run_id(text: &str) -> Result<i64, Refusal> {
    match text.parse::<i64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(Refusal::bad(format!(
            "`{text}` is not a run id: a run is named by its number (/runs/42)"
        ))),
    }
}

fn campaign_id(text: &str) -> Result<String, Refusal> {
    if (1..=64).contains(&text.len()) && text.chars().all(|c| c.is_ascii_alphanumeric()) {
        Ok(text.to_string())
    } else {
        Err(Refusal::bad(format!(
            "`{text}` is not a campaign id: give it as `secperf results list` shows it (e.g. \
             /campaigns/3f9a1c2e)"
        )))
    }
}

fn record_id(text: &str, what: &str) -> Result<String, Refusal> {
    if text.len() == 16 && text.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(Refusal::bad(format!(
            "`{text}` is not a {what} id: give its 16 hex digits (as `secperf results list` \
             shows them)"
        )))
    }
}

/// Reads `page` from the store in `form`.
pub fn answer(served: &Served, page: &Page, form: Form) -> Result<Body, Refusal> {
    let store = served.open()?;
    let now = Utc::now();
    let json = |v: Result<serde_json::Value>| v.map(Body::Json).map_err(|e| Refusal::failed(&e));
    match page {
        Page::Runs(q) => {
            let listed = runs::read(&store, q).map_err(|e| Refusal::failed(&e))?;
            match form {
                Form::Json => Ok(Body::Json(runs::document(served, q, &listed))),
                Form::Html => Ok(Body::Html(runs::html(served, q, &listed, now))),
            }
        }
        Page::Run(id) => {
            existing_run(&store, served, *id)?;
            let doc = crate::read::document::load(&store, *id).map_err(|e| Refusal::failed(&e))?;
            match form {
                Form::Json => json(serde_json::to_value(&doc).map_err(Into::into)),
                Form::Html => {
                    let page = crate::report::html::render(std::slice::from_ref(&doc), now)
                        .map_err(|e| Refusal::failed(&e))?;
                    Ok(Body::Html(frame::around(served, &page.html)))
                }
            }
        }
        Page::Compare(q) => {
            let (report, noise_pct) = compare::read(&store, served, q)?;
            match form {
                Form::Json => json(serde_json::to_value(&report).map_err(Into::into)),
                Form::Html => crate::report::html::compare::page(
                    &report,
                    noise_pct,
                    now,
                    &q.header(&report.columns),
                )
                .map(|p| Body::Html(frame::around(served, &p)))
                .map_err(|e| Refusal::failed(&e)),
            }
        }
        Page::Campaigns => {
            let list = store.list_campaigns().map_err(|e| Refusal::failed(&e))?;
            match form {
                Form::Json => Ok(Body::Json(
                    serde_json::json!({ "db": served.shown, "campaigns": list }),
                )),
                Form::Html => Ok(Body::Html(records::campaigns_html(served, &list, now))),
            }
        }
        Page::Campaign(id) => {
            let missing = || {
                Refusal::missing(format!(
                    "no campaign {id} in {} (the list: /campaigns)",
                    served.shown
                ))
            };
            // By its whole id only: a prefix or `latest` would not name
            // the same campaign tomorrow.
            if store.campaign(id).map_err(|_| missing())?.id != *id {
                return Err(missing());
            }
            let (view, docs) =
                crate::read::campaign::view(&store, id).map_err(|e| Refusal::failed(&e))?;
            match form {
                Form::Json => {
                    let text = crate::report::formats::campaign::render(
                        &view,
                        crate::report::formats::Format::Json,
                        crate::report::formats::RenderOpts { color: false },
                    );
                    json(serde_json::from_str(&text).map_err(Into::into))
                }
                Form::Html => {
                    let page = crate::report::html::campaign::page(&view, &docs, now)
                        .map_err(|e| Refusal::failed(&e))?;
                    let ids: Vec<(String, i64)> = store
                        .campaign_runs(id)
                        .map_err(|e| Refusal::failed(&e))?
                        .into_iter()
                        .map(|r| (r.host, r.run_id))
                        .collect();
                    Ok(Body::Html(frame::around_with(
                        served,
                        &page,
                        &records::compare_hosts(&ids),
                    )))
                }
            }
        }
        Page::Track(id) => {
            let t = store.track(id).map_err(|_| {
                Refusal::missing(format!(
                    "no track {id} in {} (the list: /tracks)",
                    served.shown
                ))
            })?;
            match form {
                Form::Json => json(serde_json::to_value(&t).map_err(Into::into)),
                Form::Html => crate::report::html::track::page(&t, now)
                    .map(|p| Body::Html(frame::around(served, &p)))
                    .map_err(|e| Refusal::failed(&e)),
            }
        }
        Page::Bisection(id) => {
            let b = store.bisection(id).map_err(|_| {
                Refusal::missing(format!(
                    "no bisection {id} in {} (the list: /bisections)",
                    served.shown
                ))
            })?;
            match form {
                Form::Json => json(serde_json::to_value(&b).map_err(Into::into)),
                Form::Html => crate::report::html::bisect::page(&b, now)
                    .map(|p| Body::Html(frame::around(served, &p)))
                    .map_err(|e| Refusal::failed(&e)),
            }
        }
        Page::Tracks => {
            let list = store.list_tracks().map_err(|e| Refusal::failed(&e))?;
            match form {
                Form::Json => Ok(Body::Json(
                    serde_json::json!({ "db": served.shown, "tracks": list }),
                )),
                Form::Html => Ok(Body::Html(records::tracks_html(served, &list, now))),
            }
        }
        Page::Bisections => {
            let list = store.list_bisections().map_err(|e| Refusal::failed(&e))?;
            match form {
                Form::Json => Ok(Body::Json(
                    serde_json::json!({ "db": served.shown, "bisections": list }),
                )),
                Form::Html => Ok(Body::Html(records::bisections_html(served, &list, now))),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A decoded query of `pairs`.
    pub(crate) fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn paths_name_pages_and_their_twins() {
        assert_eq!(route("/runs/3", &[]).unwrap(), (Page::Run(3), Form::Html));
        assert_eq!(
            route("/runs/3.json", &[]).unwrap(),
            (Page::Run(3), Form::Json)
        );
        assert_eq!(
            route("/tracks/ABCDEF0123456789", &[]).unwrap().0,
            Page::Track("abcdef0123456789".into())
        );
        assert_eq!(route("/bisections.json", &[]).unwrap().1, Form::Json);
        assert!(matches!(
            route("/runs", &q(&[("host", "a")])).unwrap().0,
            Page::Runs(_)
        ));
    }

    #[test]
    fn malformed_paths_are_refused_plainly() {
        for (path, status) in [
            ("/runs/x", 400),
            ("/runs/-1", 400),
            ("/runs/0", 400),
            ("/tracks/xyz", 400),
            ("/bisections/0123", 400),
            ("/nowhere", 404),
            ("/runs/1/2", 404),
        ] {
            assert_eq!(route(path, &[]).unwrap_err().status, status, "{path}");
        }
        let e = route("/runs/1", &q(&[("page", "2")])).unwrap_err();
        assert_eq!(e.status, 400);
        assert!(e.reason.contains("`page`"), "{}", e.reason);
    }
}
