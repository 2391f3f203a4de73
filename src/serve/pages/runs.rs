//! The run list: newest first, filtered by host, kernel, workload,
//! mechanism and verdict, [`PER_PAGE`] runs a page. The filters are the
//! URL's query (`/runs?host=lab1&verdict=slower&page=2`), so a filtered
//! page's link is enough to see it again.

use chrono::{DateTime, Utc};

use crate::model::RunSummary;
use crate::report::html::Doc;
use crate::report::html::blocks::para;
use crate::report::html::escape::esc;
use crate::store::Store;
use crate::store::runs_page::{RunFilter, RunPage};

use super::super::Served;
use super::Refusal;

/// Runs on one page.
pub const PER_PAGE: usize = 50;

/// The query's keys, in the form's order.
const KEYS: &[&str] = &["host", "kernel", "workload", "mechanism", "verdict"];

/// What the list is asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    pub filter: RunFilter,
    /// From 1.
    pub page: usize,
}

impl Query {
    /// The query's pairs: the filters (an empty value is no filter) and
    /// `page`; anything else is refused, as a value that cannot be.
    pub fn parse(pairs: &[(String, String)]) -> Result<Query, Refusal> {
        let mut q = Query {
            page: 1,
            ..Query::default()
        };
        for (k, v) in pairs {
            let v = v.trim();
            let value = (!v.is_empty()).then(|| v.to_string());
            match k.as_str() {
                "host" => q.filter.host = value,
                "kernel" => q.filter.kernel = value,
                "workload" => q.filter.workload = value,
                "mechanism" => q.filter.mechanism = value,
                "verdict" => {
                    if let Some(v) = &value
                        && v.parse::<crate::stats::decision::Verdict>().is_err()
                    {
                        return Err(Refusal::bad(format!(
                            "verdict={v}: a verdict is slower, faster, no-change or negligible"
                        )));
                    }
                    q.filter.verdict = value;
                }
                "page" => match v.parse::<usize>() {
                    Ok(n) if (1..=1_000_000).contains(&n) => q.page = n,
                    _ => {
                        return Err(Refusal::bad(format!("page={v}: a page is a number from 1")));
                    }
                },
                other => {
                    return Err(Refusal::bad(format!(
                        "`{other}` is not a key of /runs: its keys are {} and page",
                        KEYS.join(", ")
                    )));
                }
            }
        }
        Ok(q)
    }

    fn value(&self, key: &str) -> Option<&str> {
        let f = &self.filter;
        match key {
            "host" => f.host.as_deref(),
            "kernel" => f.kernel.as_deref(),
            "workload" => f.workload.as_deref(),
            "mechanism" => f.mechanism.as_deref(),
            "verdict" => f.verdict.as_deref(),
            _ => None,
        }
    }

    /// The query string of this list at `page` (empty filters left out).
    pub fn link(&self, page: usize) -> String {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for k in KEYS {
            if let Some(v) = self.value(k) {
                s.append_pair(k, v);
            }
        }
        if page > 1 {
            s.append_pair("page", &page.to_string());
        }
        let q = s.finish();
        if q.is_empty() {
            "/runs".to_string()
        } else {
            format!("/runs?{q}")
        }
    }
}

/// The page's runs.
pub fn read(store: &Store, q: &Query) -> anyhow::Result<RunPage> {
    store.list_runs_page(&q.filter, (q.page - 1) * PER_PAGE, PER_PAGE)
}

fn pages(total: usize) -> usize {
    total.div_ceil(PER_PAGE).max(1)
}

/// The JSON twin: the page's runs as `results list --json` gives them,
/// with the filter and the paging.
pub fn document(served: &Served, q: &Query, listed: &RunPage) -> serde_json::Value {
    let filter: serde_json::Map<String, serde_json::Value> = KEYS
        .iter()
        .filter_map(|k| q.value(k).map(|v| (k.to_string(), v.into())))
        .collect();
    serde_json::json!({
        "db": served.shown,
        "filter": filter,
        "page": q.page,
        "pages": pages(listed.total),
        "per_page": PER_PAGE,
        "total": listed.total,
        "runs": listed.runs,
    })
}

/// The list's page.
pub fn html(served: &Served, q: &Query, listed: &RunPage, now: DateTime<Utc>) -> String {
    let mut doc = Doc::default();
    doc.open(2, "runs", "runs", "Runs");
    doc.push(&form(q));
    let n = pages(listed.total);
    if listed.runs.is_empty() {
        let text = if listed.total > 0 {
            // Issue 53: past the last page it said the store was empty.
            format!(
                "Page {} is past the last page of this list: {} on {}. <a href=\"{}\">The \
                 last page</a>, <a href=\"{}\">the first</a>.",
                q.page,
                crate::report::number::count(listed.total, "run"),
                crate::report::number::count(n, "page"),
                esc(&q.link(n)),
                esc(&q.link(1))
            )
        } else if q.filter == RunFilter::default() {
            "No run in this store yet (`secperf run` or `secperf overhead` makes one).".into()
        } else {
            format!(
                "No run passes this filter. <a href=\"/runs\">Every run</a>. {}",
                esc(MATCHING)
            )
        };
        doc.push(&format!("<p class=\"empty\">{text}</p>\n"));
    } else {
        doc.push(&list(&listed.runs));
    }
    doc.push(&format!(
        "<p class=\"pager\">{}<span>page {} of {n}, {} run(s)</span>{}</p>\n",
        if q.page > 1 {
            format!("<a href=\"{}\">newer</a>", esc(&q.link(q.page - 1)))
        } else {
            String::new()
        },
        q.page,
        listed.total,
        if q.page < n {
            format!("<a href=\"{}\">older</a>", esc(&q.link(q.page + 1)))
        } else {
            String::new()
        },
    ));
    doc.close();
    super::records::page(served, doc, "runs", now)
}

/// How the filters match, said under the form.
const MATCHING: &str = "Host, kernel and workload match what starts with them (kernel 6.1 \
                        finds 6.1.0-48-amd64); a mechanism is a name (seccomp) or a name and \
                        its variant (seccomp:allow), as the tables name them; a verdict is \
                        slower, faster, negligible or no-change.";

/// The page's runs as a table inside a form: each with a box to tick,
/// and a button that compares the ticked runs (a GET of /compare, the
/// first ticked the baseline).
fn list(runs: &[RunSummary]) -> String {
    let mut s = String::from(
        "<form class=\"pick\" method=\"get\" action=\"/compare\">\
         <div class=\"scroll\"><table class=\"runs\"><thead><tr><th>Compare</th><th>Run</th>\
         <th>Started (UTC)</th><th>Host</th><th>Kernel</th><th>Label</th><th>Workloads</th>\
         <th>Mechanisms</th><th>Verdicts</th><th>Results</th></tr></thead><tbody>",
    );
    for r in runs {
        s.push_str(&format!(
            "<tr><td><input type=\"checkbox\" name=\"run\" value=\"{id}\" \
             aria-label=\"compare run {id}\"></td><td><a href=\"/runs/{id}\">{id}</a></td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"num\">{}</td></tr>",
            esc(&format!(
                "{}{}",
                r.started_at.format("%Y-%m-%d %H:%M"),
                if r.finished_at.is_none() {
                    " (unfinished)"
                } else {
                    ""
                }
            )),
            esc(&r.host),
            esc(r.kernel.as_deref().unwrap_or("")),
            esc(&r.label),
            esc(&r.workloads.join(", ")),
            esc(&r.mechanisms.join(", ")),
            verdicts(r),
            r.results,
            id = r.run_id,
        ));
    }
    s.push_str(
        "</tbody></table></div><p><button type=\"submit\">Compare the runs ticked</button> \
         (two to eight; the oldest is the baseline)</p></form>\n",
    );
    s
}

/// "2 slower, 1 no-change", each verdict coloured as the report colours
/// it, with links to the list filtered by it.
fn verdicts(r: &RunSummary) -> String {
    r.verdicts
        .iter()
        .map(|(v, n)| {
            let class = if v == "unfinished" {
                String::new()
            } else {
                format!(" class=\"verdict-{}\"", esc(v))
            };
            format!("<span{class}>{n} {}</span>", esc(v))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The filter's form: a GET of /runs, so its result is a link.
fn form(q: &Query) -> String {
    let mut s = String::from("<form class=\"filter\" method=\"get\" action=\"/runs\">");
    for k in KEYS {
        s.push_str(&format!(
            "<label>{k}<input name=\"{k}\" value=\"{}\"></label>",
            esc(q.value(k).unwrap_or(""))
        ));
    }
    s.push_str("<button type=\"submit\">Filter</button></form>\n");
    s.push_str(&para("hint", MATCHING));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_query_is_read_and_written_back_the_same() {
        let q = Query::parse(&pairs(&[
            ("host", "lab 1&2"),
            ("verdict", "slower"),
            ("workload", ""),
            ("page", "3"),
        ]))
        .unwrap();
        assert_eq!(q.filter.host.as_deref(), Some("lab 1&2"));
        assert_eq!(q.filter.workload, None);
        assert_eq!(q.page, 3);
        assert_eq!(q.link(2), "/runs?host=lab+1%262&verdict=slower&page=2");
        assert_eq!(Query::parse(&[]).unwrap().link(1), "/runs");
    }

    #[test]
    fn a_bad_query_is_refused_with_what_it_takes() {
        for (k, v, says) in [
            ("verdict", "worse", "slower, faster"),
            ("page", "0", "from 1"),
            ("page", "two", "from 1"),
            ("colour", "red", "host, kernel"),
        ] {
            let e = Query::parse(&pairs(&[(k, v)])).unwrap_err();
            assert_eq!(e.status, 400);
            assert!(e.reason.contains(says), "{k}={v}: {}", e.reason);
        }
    }

    #[test]
    fn a_page_past_the_last_says_so_and_links_back() {
        // Issue 53: /runs?page=99 said the store was empty.
        let served = Served {
            source: crate::serve::Source::File("/x".into()),
            shown: "/x".into(),
        };
        let q = Query::parse(&pairs(&[("page", "99")])).unwrap();
        let page = html(
            &served,
            &q,
            &RunPage {
                runs: Vec::new(),
                total: 9,
            },
            Utc::now(),
        );
        assert!(!page.contains("No run in this store yet"), "{page}");
        assert!(
            page.contains("Page 99 is past the last page of this list: 9 runs on 1 page"),
            "{page}"
        );
        assert!(page.contains("href=\"/runs\""), "{page}");
    }

    #[test]
    fn stored_text_is_escaped_in_the_list() {
        let served = Served {
            source: crate::serve::Source::File("/x".into()),
            shown: "/x".into(),
        };
        let run = RunSummary {
            run_id: 7,
            label: "<script>alert('l')</script>".into(),
            kind: "run".into(),
            started_at: Utc::now(),
            finished_at: None,
            host: "\"><script>h</script>".into(),
            kernel: Some("<b>6.1</b>".into()),
            results: 1,
            comparisons: 0,
            workloads: vec!["getppid".into()],
            mechanisms: vec!["<i>m</i>".into()],
            verdicts: [("<v>".to_string(), 1)].into_iter().collect(),
        };
        let q = Query::parse(&pairs(&[("host", "\"><script>q</script>")])).unwrap();
        let page = html(
            &served,
            &q,
            &RunPage {
                runs: vec![run],
                total: 1,
            },
            Utc::now(),
        );
        assert!(!page.contains("<script>"), "{page}");
        assert!(!page.contains("<b>6.1"), "{page}");
        assert!(!page.contains("<i>m") && !page.contains("<v>"), "{page}");
        // Issue 53: the list had no mechanism or verdict counts, and no
        // way to pick runs to compare.
        assert!(page.contains("&lt;i&gt;m&lt;/i&gt;"), "{page}");
        assert!(page.contains(">1 &lt;v&gt;</span>"), "{page}");
        assert!(
            page.contains("<form class=\"pick\" method=\"get\" action=\"/compare\">"),
            "{page}"
        );
        assert!(page.contains("name=\"run\" value=\"7\""), "{page}");
        assert!(page.contains("href=\"/runs/7\""), "{page}");
    }
}
