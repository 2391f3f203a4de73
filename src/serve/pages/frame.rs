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

#[cfg(test)]
mod tests {
    use super::*;

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
