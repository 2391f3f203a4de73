//! The bar on top of every page the server sends: where to go (runs,
//! tracks, bisections), which store it reads, and that a page's JSON
//! document is its path with `.json`. The report module's pages are sent
//! whole, with the bar put in after `<body>`.

use crate::report::html::escape::esc;

use super::super::Served;

/// The bar's markup.
pub fn bar(served: &Served) -> String {
    format!(
        "<nav class=\"serve\"><a href=\"/runs\">Runs</a> <a href=\"/campaigns\">Campaigns</a> \
         <a href=\"/tracks\">Tracks</a> <a href=\"/bisections\">Bisections</a> <span class=\"store\">store: {} (read-only; \
         each page's document: its path with .json)</span></nav>\n",
        esc(&served.shown)
    )
}

/// The bar's style, put in the page's `<head>`.
pub const CSS: &str = "nav.serve { display: flex; gap: 1rem; flex-wrap: wrap; align-items: baseline; \
     padding: 0.4rem 0; border-bottom: 1px solid #ccc; } nav.serve .store { color: #555; \
     font-size: 0.85rem; overflow-wrap: anywhere; } .pager { display: flex; gap: 1rem; } \
     form.filter { display: flex; gap: 0.5rem; flex-wrap: wrap; align-items: end; } \
     form.filter label { display: flex; flex-direction: column; font-size: 0.85rem; }\n";

/// A page of the report module with the bar in it.
pub fn around(served: &Served, page: &str) -> String {
    around_with(served, page, "")
}

/// A page of the report module with the bar in it and `extra` (ready
/// markup: the server's own links) under the bar.
pub fn around_with(served: &Served, page: &str, extra: &str) -> String {
    let page = page.replacen("</style>", &format!("{CSS}</style>"), 1);
    match page.find("<body>") {
        Some(i) => {
            let at = i + "<body>".len();
            format!("{}\n{}{extra}{}", &page[..at], bar(served), &page[at..])
        }
        None => page,
    }
}

/// A refusal as a browser gets it: its reason (escaped) in a small page
/// with the bar, every path of one of the server's pages it names a link
/// (`/runs`, but not `/runs/ID`, which names none, nor the store's path).
pub fn refusal(served: &Served, status: u16, reason: &str) -> String {
    let mut text = String::new();
    for (i, word) in reason.split(' ').enumerate() {
        if i > 0 {
            text.push(' ');
        }
        let lead = word.len() - word.trim_start_matches(['(', '`']).len();
        let core = word[lead..].trim_end_matches([')', ',', '.', ';', ':', '`']);
        let tail = &word[lead + core.len()..];
        let root = core
            .trim_start_matches('/')
            .split(['/', '?', '.'])
            .next()
            .unwrap_or("");
        let page = core.starts_with('/')
            && ["runs", "compare", "campaigns", "tracks", "bisections"].contains(&root)
            && core
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "/?=&,._-".contains(c));
        if page {
            text.push_str(&format!(
                "{}<a href=\"{}\">{}</a>{}",
                esc(&word[..lead]),
                esc(core),
                esc(core),
                esc(tail)
            ));
        } else {
            text.push_str(&esc(word));
        }
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{status}: \
         secperf serve</title><style>body {{ font-family: system-ui, sans-serif; margin: 1rem \
         1.5rem; }} {CSS}</style></head><body>\n{}<h2>{status}</h2><p class=\"refusal\">{text}\
         </p></body></html>\n",
        bar(served)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_links_the_pages_it_names() {
        // Issue 53: the 404 page's `/runs` was not a link.
        let served = Served {
            source: crate::serve::Source::File("/x".into()),
            shown: "/x".into(),
        };
        let page = refusal(
            &served,
            404,
            "no run 9 in /x (the list: /runs); pages are /runs/ID and /compare?runs=A,B <b>",
        );
        assert!(
            page.contains("(the list: <a href=\"/runs\">/runs</a>);"),
            "{page}"
        );
        assert!(!page.contains("href=\"/runs/ID\""), "{page}");
        assert!(!page.contains("href=\"/x\""), "{page}");
        assert!(!page.contains("<b>"), "{page}");
        assert!(page.contains("<nav class=\"serve\">"), "{page}");
    }

    #[test]
    fn the_bar_goes_after_body_and_names_the_store_escaped() {
        let served = Served {
            source: crate::serve::Source::File("/x".into()),
            shown: "<script>alert(1)</script>".into(),
        };
        let page = around(
            &served,
            "<html><head><style>a{}</style></head><body><h1>x</h1>",
        );
        assert!(page.contains("<body>\n<nav class=\"serve\">"), "{page}");
        assert!(page.contains("&lt;script&gt;"), "{page}");
        assert!(!page.contains("<script>"), "{page}");
        assert!(page.contains("nav.serve"), "{page}");
    }
}
