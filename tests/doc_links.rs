//! The documentation's links hold: in `README.md`, every other `*.md` at
//! the repository root and every `docs/*.md`, each relative markdown link
//! `[text](path)` or `[text](path#anchor)` points to a file that exists,
//! and an anchor into a markdown file (or `#anchor` alone, into the same
//! file) names one of its headings by GitHub's slug rule. Links in code
//! (fenced blocks, inline code) are not links; `http(s)://` and `mailto:`
//! links are not checked. And the README stays a front door: at most
//! `README_MAX_LINES` lines.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `path` as shown in messages: relative to the repository.
fn shown(path: &Path) -> String {
    let root = root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The `*.md` files directly in `dir`, sorted.
fn markdown_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
}

/// The documents checked: the root's markdown and `docs/`'s.
fn documents() -> Vec<PathBuf> {
    let mut files = markdown_in(&root());
    files.extend(markdown_in(&root().join("docs")));
    files
}

/// `line` with its inline code spans blanked out.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
        let fence = &rest[start..start + ticks];
        let after = &rest[start + ticks..];
        let Some(end) = after.find(fence) else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&" ".repeat(ticks * 2 + end));
        rest = &after[end + ticks..];
    }
    out.push_str(rest);
    out
}

/// The prose of a markdown text: (line number, line) outside fenced code
/// blocks, inline code blanked out.
fn prose(text: &str) -> Vec<(usize, String)> {
    outside_fences(text)
        .into_iter()
        .map(|(i, line)| (i, without_code_spans(&line)))
        .collect()
}

/// The lines of a markdown text outside fenced code blocks, as written.
fn outside_fences(text: &str) -> Vec<(usize, String)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match fence {
            Some(f) if trimmed.starts_with(f) => fence = None,
            Some(_) => {}
            None if trimmed.starts_with("```") => fence = Some("```"),
            None if trimmed.starts_with("~~~") => fence = Some("~~~"),
            None => lines.push((i + 1, line.to_string())),
        }
    }
    lines
}

/// The target of the link whose `](` ends at the start of `rest`: up to
/// the matching `)`, without a title or angle brackets.
fn target(rest: &str) -> Option<&str> {
    let mut depth = 0usize;
    let end = rest.char_indices().find_map(|(i, c)| match c {
        '(' => {
            depth += 1;
            None
        }
        ')' if depth == 0 => Some(i),
        ')' => {
            depth -= 1;
            None
        }
        _ => None,
    })?;
    let inside = rest[..end].trim();
    if let Some(bracketed) = inside.strip_prefix('<') {
        return bracketed.split('>').next();
    }
    inside.split_whitespace().next()
}

/// The links of a markdown text: (line number, target).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in prose(text) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(t) = target(rest) {
                found.push((number, t.to_string()));
            }
        }
    }
    found
}

/// GitHub's anchor for a heading's text: lowercase, `[text](url)` read as
/// its text, every character but letters, digits, spaces, '-' and '_'
/// dropped, spaces turned into '-'.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // [text](url) -> text
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](") else {
            break;
        };
        let Some(close) = rest[open + mid..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + mid]);
        rest = &rest[open + mid + close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a markdown text's ATX headings; a repeated slug gets
/// `-1`, `-2`, ... as on GitHub.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    // Headings keep their code spans: GitHub slugs their text.
    for (_, line) in outside_fences(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let title = line[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        out.push(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// Whether a link leaves the repository (not checked).
fn external(target: &str) -> bool {
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|p| target.starts_with(p))
}

/// What is wrong with `target`, linked from `doc`, if anything.
fn problem(doc: &Path, target: &str) -> Option<String> {
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let path = path.replace("%20", " ");
    let file = if path.is_empty() {
        doc.to_path_buf()
    } else if let Some(from_root) = path.strip_prefix('/') {
        root().join(from_root)
    } else {
        doc.parent().unwrap().join(&path)
    };
    if !file.exists() {
        return Some(format!("{} does not exist", shown(&file)));
    }
    let anchor = anchor?;
    if file.extension().is_none_or(|x| x != "md") {
        return None;
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let known = anchors(&text);
    if known.iter().any(|a| a == anchor) {
        return None;
    }
    Some(format!(
        "no heading of {} has the anchor #{anchor} (its anchors: {})",
        shown(&file),
        known.join(", ")
    ))
}

#[test]
fn relative_links_point_to_files_and_headings() {
    let docs = documents();
    assert!(
        docs.iter().any(|d| d.ends_with("README.md")),
        "no README.md among {docs:?}"
    );
    let mut checked = 0;
    let mut broken = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for (line, target) in links(&text) {
            if external(&target) {
                continue;
            }
            checked += 1;
            if let Some(p) = problem(doc, &target) {
                broken.push(format!("{}:{line}: ({target}): {p}", shown(doc)));
            }
        }
    }
    assert!(checked > 0, "no relative link found in {docs:?}");
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn slugs_follow_githubs_rule() {
    assert_eq!(
        anchors("## `overhead`: what it costs\n```\n## not a heading\n```\n"),
        ["overhead-what-it-costs"]
    );
    assert_eq!(slug("How a suite runs"), "how-a-suite-runs");
    assert_eq!(slug("creds-2008"), "creds-2008");
    assert_eq!(
        slug("`secperf calibrate`: the method checks itself"),
        "secperf-calibrate-the-method-checks-itself"
    );
    assert_eq!(
        slug("4.5 Sequential stops (why?)"),
        "45-sequential-stops-why"
    );
    assert_eq!(
        slug("snake_case and  two spaces"),
        "snake_case-and--two-spaces"
    );
    assert_eq!(slug("See [the docs](docs/x.md)"), "see-the-docs");
    assert_eq!(
        anchors("# A\n## A\n```\n# not a heading\n```\n### A\n#no\n"),
        ["a", "a-1", "a-2"]
    );
}

#[test]
fn links_in_code_are_not_links_and_text_may_span_lines() {
    let text = "see [the\nmethod](docs/m.md#4-why \"title\") and `[x](nope.md)`\n\
                ```\n[y](nope.md)\n```\n[z](<a b.md>) [w](https://example.com)\n";
    let all = links(text);
    let found: Vec<(usize, &str)> = all.iter().map(|(l, t)| (*l, t.as_str())).collect();
    assert_eq!(
        found,
        [
            (2, "docs/m.md#4-why"),
            (6, "a b.md"),
            (6, "https://example.com")
        ]
    );
}

/// The README's most lines: it is the front door (what secperf is, how to
/// install it, a first run, one example per job, the commands and the
/// documentation); usage lives in docs/guide.md, worked examples in
/// docs/examples.md, history in CHANGELOG.md.
const README_MAX_LINES: usize = 330;

#[test]
fn the_readme_stays_a_front_door() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let n = text.lines().count();
    assert!(
        n <= README_MAX_LINES,
        "README.md has {n} lines, more than {README_MAX_LINES}: move usage to docs/guide.md, \
         examples to docs/examples.md, history to CHANGELOG.md"
    );
    for section in [
        "## Install",
        "## A first run",
        "## Commands",
        "## Documentation",
    ] {
        assert!(text.contains(section), "README.md lost {section}");
    }
}
