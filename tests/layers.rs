//! The layering that `src/lib.rs` describes, checked on the source.
//!
//! Every reference from one top-level module to another must go down the
//! layer table [`LAYERS`]: `use crate::x::...` lines, paths in code
//! (`crate::report::number::ns(...)`, `crate::usage_bail!`), grouped uses
//! (`use crate::{a, b}`) and `super::` chains that climb to the crate root.
//! Comments, doc comments and string literals are not code and are
//! skipped. Test code (`#[cfg(test)]` items, and the files of
//! `#[cfg(test)]` modules) is checked like the rest; the only edges that
//! may break the table are the [`KNOWN`] ones, each with its reason, and
//! that list may only shrink: an entry, or a file of one, that nothing
//! needs any more fails too.
//!
//! The modules must also form no cycle. Code that ships is checked for
//! cycles; test code may reach a module above for a fixture or a lock only
//! through an edge of [`KNOWN`] marked `test_only`, and that edge may close
//! a cycle (a workload's test measuring through the runner that runs
//! workloads), which is why test edges are not part of the cycle check.
//!
//! The module tree is walked from `src/lib.rs` along `mod` declarations,
//! as the compiler does; every `.rs` file under `src/` must be reached
//! (`src/main.rs` is the binary's root and only calls `secperf::cli`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top first: a module may use the modules of the layers below
/// its own, never those of its own layer or above.
const LAYERS: &[&[&str]] = &[
    &["cli"],
    &["serve"],
    &["calibrate"],
    &["engine"],
    &["read"],
    &["suites"],
    &["compare"],
    &["predict"],
    &["report"],
    &["remote"],
    &["store"],
    &["safety"],
    &["mechanisms", "profile", "vm"],
    &["kbuild"],
    &["policy"],
    &["runner"],
    &["workloads", "probe"],
    &["model"],
    &["stats"],
    &["params", "sys", "clients"],
    &["error"],
    // Test support only (`#[cfg(test)]`, included from tests/common/skips.rs:
    // how a test skips): it imports nothing of the crate.
    &["testing"],
];

/// An edge against [`LAYERS`] that is known and explained.
struct Known {
    from: &'static str,
    to: &'static str,
    /// Whether only test code may use it.
    test_only: bool,
    /// The files that use it: no other file may.
    files: &'static [&'static str],
    why: &'static str,
}

/// The known edges against the table. Only ever remove entries; an edge
/// that is no longer used fails the test until its entry goes.
const KNOWN: &[Known] = &[
    Known {
        from: "workloads",
        to: "runner",
        test_only: true,
        files: &[
            "src/workloads/command.rs",
            "src/workloads/dbench.rs",
            "src/workloads/exec.rs",
            "src/workloads/file_copy.rs",
            "src/workloads/http.rs",
            "src/workloads/pipe.rs",
            "src/workloads/service/tests.rs",
            "src/workloads/spawn.rs",
            "src/workloads/stream.rs",
        ],
        why: "a workload's tests measure it briefly through \
              `runner::testing::measure_briefly`, to check it really runs",
    },
    Known {
        from: "mechanisms",
        to: "safety",
        test_only: true,
        files: &["src/mechanisms/audit/tests.rs"],
        why: "the audit mechanism's tests change system-wide audit state \
              and take `safety::StateLock` so that they never overlap a \
              measurement or one another",
    },
    Known {
        from: "sys",
        to: "safety",
        test_only: true,
        files: &["src/sys/audit/tests.rs"],
        why: "the audit netlink tests change system-wide audit state and \
              take `safety::StateLock`, as the mechanism's tests do",
    },
    Known {
        from: "store",
        to: "report",
        test_only: true,
        files: &["src/store/tests.rs"],
        why: "a store test round-trips an attribution built by \
              `report::sections::testing::attribution()`",
    },
];

/// One reference from a file to a top-level module.
#[derive(Debug, Clone)]
struct Ref {
    file: String,
    line: usize,
    from: String,
    to: String,
    test: bool,
}

#[test]
fn the_modules_follow_the_layers() {
    let crate_ = Crate::read(Path::new(env!("CARGO_MANIFEST_DIR")));
    let level = levels();
    let placed: BTreeSet<&str> = level.keys().copied().collect();
    let declared: BTreeSet<&str> = crate_.top.iter().map(String::as_str).collect();
    assert_eq!(
        placed, declared,
        "the layer table must place every module of src/lib.rs exactly once"
    );
    for k in KNOWN {
        assert!(
            level[k.to] >= level[k.from],
            "KNOWN {} -> {} follows the layers already: remove it",
            k.from,
            k.to
        );
    }
    let mut used: BTreeSet<(usize, String)> = BTreeSet::new();
    let mut violations = Vec::new();
    for r in &crate_.refs {
        if level[r.to.as_str()] < level[r.from.as_str()] {
            continue;
        }
        let known = KNOWN.iter().position(|k| {
            k.from == r.from
                && k.to == r.to
                && (r.test || !k.test_only)
                && k.files.contains(&r.file.as_str())
        });
        match known {
            Some(i) => {
                used.insert((i, r.file.clone()));
            }
            None => violations.push(format!(
                "{}:{}: {} -> {}{}",
                r.file,
                r.line,
                r.from,
                r.to,
                if r.test { " (test code)" } else { "" }
            )),
        }
    }
    assert!(
        violations.is_empty(),
        "references against the layering of src/lib.rs (fix them, or add a \
         KNOWN edge with its reason):\n{}",
        violations.join("\n")
    );
    let stale: Vec<String> = KNOWN
        .iter()
        .enumerate()
        .flat_map(|(i, k)| k.files.iter().map(move |f| (i, k, *f)))
        .filter(|(i, _, f)| !used.contains(&(*i, f.to_string())))
        .map(|(_, k, f)| format!("{f}: {} -> {} ({})", k.from, k.to, k.why))
        .collect();
    assert!(
        stale.is_empty(),
        "KNOWN edges a file no longer uses: remove them\n{}",
        stale.join("\n")
    );
}

/// `serve` only reads the store: the run documents and campaign views it
/// draws come from `read`, never from the engine that measures (test
/// code included).
#[test]
fn serve_reads_without_the_engine() {
    let crate_ = Crate::read(Path::new(env!("CARGO_MANIFEST_DIR")));
    let used: Vec<String> = crate_
        .refs
        .iter()
        .filter(|r| r.from == "serve" && r.to == "engine")
        .map(|r| format!("{}:{}", r.file, r.line))
        .collect();
    assert!(
        used.is_empty(),
        "serve uses the engine (use crate::read instead): {}",
        used.join(", ")
    );
}

/// The command line parses, makes one call into the engine per command
/// and renders (issue 54): it runs nothing of the engine's work. It may
/// not reach the runner, the journal and locks (`safety`), raw system
/// calls and kernel queries (`sys`) or kernel builds (`kbuild`), and it
/// may read the store but never write it: no writable `Store::open`, no
/// call of a store method that takes `&mut self`.
const CLI_MAY_NOT_USE: &[&str] = &["runner", "safety", "sys", "kbuild"];

/// Files of `src/cli/` still allowed what [`CLI_MAY_NOT_USE`] forbids,
/// each with its reason; the list may only shrink.
const CLI_KNOWN: &[(&str, &str)] = &[];

#[test]
fn the_command_line_runs_nothing_of_the_engines_work() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crate_ = Crate::read(root);
    let known = |file: &str| CLI_KNOWN.iter().any(|(f, _)| *f == file);
    // `crate::say!`, stderr's wrapped line, is defined in `sys::terminal`
    // and is the command line's as much as anyone's.
    let mut used: Vec<String> = crate_
        .paths
        .iter()
        .filter(|(file, _, path, _, _)| {
            file.starts_with("src/cli/")
                && !known(file)
                && path
                    .first()
                    .is_some_and(|m| CLI_MAY_NOT_USE.contains(&m.as_str()))
                && path.last().is_none_or(|n| n != "say")
        })
        .map(|(file, _, path, line, _)| format!("{file}:{line} uses {}", path.join("::")))
        .collect();
    // The store's writing methods: every `pub fn NAME(&mut self` in it.
    let mut store_files = Vec::new();
    rust_files(&root.join("src/store"), &mut store_files);
    let mut writes: BTreeSet<String> = BTreeSet::new();
    for f in &store_files {
        let code = strip(&std::fs::read_to_string(f).unwrap());
        for (i, _) in code.match_indices("(&mut self") {
            let head = &code[..i];
            if let Some(at) = head.rfind("pub fn ") {
                let name = head[at + 7..].split(['<', '(']).next().unwrap_or("").trim();
                if !name.is_empty() && !head[at..].contains('{') {
                    writes.insert(name.to_string());
                }
            }
        }
    }
    assert!(
        writes.contains("delete_run") && writes.contains("put_bisection"),
        "the scan found the store's writing methods: {writes:?}"
    );
    let mut cli_files = Vec::new();
    rust_files(&root.join("src/cli"), &mut cli_files);
    for f in cli_files {
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        if known(&rel) {
            continue;
        }
        let code = strip(&std::fs::read_to_string(&f).unwrap());
        let tests_from = code.find("#[cfg(test)]").unwrap_or(code.len());
        let code = &code[..tests_from];
        let line = |i: usize| code[..i].lines().count();
        for (i, _) in code.match_indices("Store::open(") {
            used.push(format!("{rel}:{} opens the store to write", line(i)));
        }
        for w in &writes {
            for (i, _) in code.match_indices(&format!(".{w}(")) {
                used.push(format!("{rel}:{} writes the store ({w})", line(i)));
            }
        }
    }
    assert!(
        used.is_empty(),
        "the command line does the engine's work (move it into the engine, which cli calls \
         once): {}",
        used.join(", ")
    );
    for (f, why) in CLI_KNOWN {
        assert!(
            root.join(f).is_file(),
            "CLI_KNOWN names {f}, which is gone ({why})"
        );
    }
}

#[test]
fn the_modules_form_no_cycle() {
    let crate_ = Crate::read(Path::new(env!("CARGO_MANIFEST_DIR")));
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in crate_.refs.iter().filter(|r| !r.test) {
        graph.entry(&r.from).or_default().insert(&r.to);
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("the top-level modules form a cycle: {}", cycle.join(" -> "));
    }
}

/// The rooms of `src/report/`, top first, as [`LAYERS`] is for the crate:
/// a room may use the rooms below its own, never those of its layer or
/// above, in code and in tests alike. One pipeline: the data of a run
/// (`doc`, `suite`, `model`, `campaign`'s view) and the words and
/// numbers (`label`, `number`) at the bottom; `markup` (the
/// interface and the text formats) above them; `sections` writes
/// everything once against it; `formats` (`--format`'s dispatch, json,
/// benchstat) and `html` (the page, whose tables `html::writer` draws)
/// on top.
const REPORT_LAYERS: &[&[&str]] = &[
    &["html", "formats", "export", "table"],
    &["sections"],
    &["campaign", "markup", "build"],
    &["doc"],
    &["suite"],
    &["model", "label", "number"],
];

#[test]
fn the_report_is_one_pipeline() {
    let crate_ = Crate::read(Path::new(env!("CARGO_MANIFEST_DIR")));
    let level: BTreeMap<&str, usize> = REPORT_LAYERS
        .iter()
        .rev()
        .enumerate()
        .flat_map(|(i, layer)| layer.iter().map(move |m| (*m, i)))
        .collect();
    let rooms: BTreeSet<String> = crate_
        .paths
        .iter()
        .filter(|(_, m, ..)| m.len() >= 2 && m[0] == "report")
        .map(|(_, m, ..)| m[1].clone())
        .collect();
    let placed: BTreeSet<String> = level.keys().map(|m| m.to_string()).collect();
    let unplaced: Vec<&String> = rooms.difference(&placed).collect();
    assert!(
        unplaced.is_empty(),
        "REPORT_LAYERS must place every module of src/report/: {unplaced:?}"
    );
    let mut violations = Vec::new();
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (file, module, path, line, test) in &crate_.paths {
        if module.len() < 2 || module[0] != "report" || path.len() < 2 || path[0] != "report" {
            continue;
        }
        let (from, to) = (module[1].as_str(), path[1].as_str());
        if from == to || !level.contains_key(to) {
            continue;
        }
        graph.entry(from).or_default().insert(to);
        if level[to] >= level[from] {
            violations.push(format!(
                "{file}:{line}: report::{from} -> report::{to}{}",
                if *test { " (test code)" } else { "" }
            ));
        }
    }
    assert!(
        violations.is_empty(),
        "references inside src/report/ against REPORT_LAYERS:\n{}",
        violations.join("\n")
    );
    assert!(find_cycle(&graph).is_none());
}

/// Every folder's rooms form no cycle, at every depth: within
/// `src/engine/`, `src/stats/`, `src/policy/audit_rules/` and the rest, a
/// module that uses a sibling is not used by it, directly or around
/// (test code aside: a room's tests may take fixtures from a sibling).
/// `src/report/` is held closer still, by [`REPORT_LAYERS`].
#[test]
fn no_folder_has_a_cycle_between_its_rooms() {
    let crate_ = Crate::read(Path::new(env!("CARGO_MANIFEST_DIR")));
    let modules: BTreeSet<Vec<String>> = crate_.paths.iter().map(|(_, m, ..)| m.clone()).collect();
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut sites: BTreeMap<(Vec<String>, String, String), String> = BTreeMap::new();
    for (file, module, path, line, test) in &crate_.paths {
        if *test {
            continue;
        }
        let k = module.iter().zip(path).take_while(|(a, b)| a == b).count();
        if k == 0 || k >= module.len() || k >= path.len() {
            continue;
        }
        // Only a sibling module counts, not an item of the folder's own
        // mod.rs.
        if !modules.contains(&path[..=k]) {
            continue;
        }
        let folder = module[..k].to_vec();
        let (from, to) = (module[k].clone(), path[k].clone());
        graphs
            .entry(folder.clone())
            .or_default()
            .entry(from.clone())
            .or_default()
            .insert(to.clone());
        sites
            .entry((folder, from, to))
            .or_insert_with(|| format!("{file}:{line}"));
    }
    let mut cycles = Vec::new();
    for (folder, graph) in &graphs {
        let g: BTreeMap<&str, BTreeSet<&str>> = graph
            .iter()
            .map(|(k, v)| (k.as_str(), v.iter().map(String::as_str).collect()))
            .collect();
        if let Some(cycle) = find_cycle(&g) {
            let at: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    let key = (folder.clone(), w[0].to_string(), w[1].to_string());
                    format!(
                        "{} -> {} at {}",
                        w[0],
                        w[1],
                        sites.get(&key).map_or("?", |s| s)
                    )
                })
                .collect();
            cycles.push(format!("{}: {}", folder.join("::"), at.join("; ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "rooms of a folder that use each other:\n{}",
        cycles.join("\n")
    );
}

/// Raw system calls go through `src/sys/` (which names the call in every
/// error): `libc::syscall(` appears nowhere else outside test code (a
/// test file, or below a file's `#[cfg(test)]`).
#[test]
fn raw_system_calls_go_through_sys() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut outside = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        if rel.starts_with("src/sys/") || rel.ends_with("/tests.rs") {
            continue;
        }
        let code = strip(&std::fs::read_to_string(&f).unwrap());
        let tests_from = code.find("#[cfg(test)]").unwrap_or(code.len());
        for (i, _) in code.match_indices("libc::syscall(") {
            if i < tests_from {
                let line = code[..i].lines().count();
                outside.push(format!("{rel}:{line}"));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "raw system calls outside src/sys/ (add a wrapper there): {}",
        outside.join(", ")
    );
}

#[test]
fn the_scanner_finds_references_in_code_only() {
    let src = r####"
//! crate::engine in a doc comment
use crate::model::{self, Comparison};
use crate::{stats::median, report};
/* crate::cli /* nested */ crate::cli */
fn f<'a>(x: &'a str) -> char {
    let _ = "crate::cli \" crate::cli";
    let _ = r#"crate::cli "# ;
    let _ = b'"';
    let _ = '{';
    crate::usage_bail!("no");
    let _ = super::super::store::Store::open(x);
    let _ = super::sibling::g();
    crate::sys::cpus::allowed_cpus();
    'x'
}
#[cfg(test)]
mod tests {
    use crate::probe::Probed;
}
#[cfg(test)]
fn helper(x: [u8; 2]) -> crate::runner::Tick { todo!() }
#[cfg(test)]
mod fixtures;
mod plain;
fn after() { crate::workloads::find("x"); }
"####;
    let macros = BTreeMap::from([("usage_bail".to_string(), "error".to_string())]);
    let top: BTreeSet<String> = [
        "cli",
        "engine",
        "model",
        "stats",
        "report",
        "error",
        "store",
        "sys",
        "probe",
        "runner",
        "workloads",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let module = ["compare".to_string(), "inner".to_string()];
    let scan = scan("src/compare/inner.rs", &module, false, src, &top, &macros);
    let found: Vec<(usize, &str, bool)> = scan
        .refs
        .iter()
        .map(|r| (r.line, r.to.as_str(), r.test))
        .collect();
    assert_eq!(
        found,
        [
            (3, "model", false),
            (4, "stats", false),
            (4, "report", false),
            (11, "error", false),
            (12, "store", false),
            (14, "sys", false),
            (19, "probe", true),
            (22, "runner", true),
            (26, "workloads", false),
        ]
    );
    let mods: Vec<(&str, bool)> = scan
        .mods
        .iter()
        .map(|m| (m.name.as_str(), m.test))
        .collect();
    assert_eq!(mods, [("fixtures", true), ("plain", false)]);
}

/// Each module's layer, 0 for the lowest.
fn levels() -> BTreeMap<&'static str, usize> {
    let mut out = BTreeMap::new();
    for (i, layer) in LAYERS.iter().rev().enumerate() {
        for m in *layer {
            assert!(out.insert(*m, i).is_none(), "{m} is placed twice");
        }
    }
    out
}

/// A cycle of `graph`, as its nodes with the first repeated at the end.
fn find_cycle<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        node: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        done: &mut BTreeSet<&'a str>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(i) = path.iter().position(|n| *n == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node);
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node);
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut done, &mut Vec::new()))
}

/// A path a file names: (file, the file's module, the absolute path, line,
/// whether it is test code).
type PathRef = (String, Vec<String>, Vec<String>, usize, bool);

/// The crate as far as the layering goes.
struct Crate {
    /// The top-level modules, as `src/lib.rs` declares them.
    top: BTreeSet<String>,
    refs: Vec<Ref>,
    /// Every absolute path each file names.
    paths: Vec<PathRef>,
}

impl Crate {
    /// Walks the module tree from `src/lib.rs` and collects every
    /// reference between top-level modules.
    fn read(root: &Path) -> Crate {
        let src = root.join("src");
        let lib = src.join("lib.rs");
        let text = |p: &Path| {
            std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        };
        let rel = |p: &Path| p.strip_prefix(root).unwrap().display().to_string();
        // Pass 1: the files of the tree, each with its module path and
        // whether it is test code, and the exported macros.
        let mut files: Vec<(PathBuf, Vec<String>, bool)> = Vec::new();
        let mut todo = vec![(lib.clone(), Vec::<String>::new(), false)];
        let empty = BTreeSet::new();
        let no_macros = BTreeMap::new();
        while let Some((path, module, test)) = todo.pop() {
            let code = text(&path);
            let s = scan(&rel(&path), &module, test, &code, &empty, &no_macros);
            let own_dir = if module.is_empty() || path.file_name().unwrap() == "mod.rs" {
                path.parent().unwrap().to_path_buf()
            } else {
                path.with_extension("")
            };
            for m in s.mods {
                let mut dir = own_dir.clone();
                dir.extend(&m.inline);
                let file = [
                    dir.join(format!("{}.rs", m.name)),
                    dir.join(&m.name).join("mod.rs"),
                ]
                .into_iter()
                .find(|f| f.is_file());
                let Some(file) = file else {
                    // A test-only module included from outside src/ with
                    // #[path] (lib.rs's `testing`, tests/common/skips.rs):
                    // not part of the layered code.
                    assert!(m.test, "{}: no file for mod {}", rel(&path), m.name);
                    continue;
                };
                let mut child = module.clone();
                child.extend(m.inline.iter().cloned());
                child.push(m.name.clone());
                todo.push((file, child, m.test));
            }
            files.push((path, module, test));
        }
        let mut top: BTreeSet<String> = files
            .iter()
            .filter(|(_, m, _)| m.len() == 1)
            .map(|(_, m, _)| m[0].clone())
            .collect();
        // The test-support module lives outside src/ (see LAYERS).
        top.insert("testing".to_string());
        let mut macros = BTreeMap::new();
        for (path, module, _) in &files {
            for name in exported_macros(&strip(&text(path))) {
                let owner = module.first().cloned().unwrap_or_default();
                macros.insert(name, owner);
            }
        }
        // Every file under src/ is in the tree.
        let reached: BTreeSet<PathBuf> = files.iter().map(|(p, ..)| p.clone()).collect();
        let mut all = Vec::new();
        rust_files(&src, &mut all);
        let unreached: Vec<String> = all
            .iter()
            .filter(|p| !reached.contains(*p) && **p != src.join("main.rs"))
            .map(|p| rel(p))
            .collect();
        assert!(
            unreached.is_empty(),
            "files under src/ that no mod declaration reaches: {unreached:?}"
        );
        // Pass 2: the references.
        let mut refs = Vec::new();
        let mut paths = Vec::new();
        for (path, module, test) in &files {
            if module.is_empty() {
                continue; // lib.rs: only `pub mod` lines
            }
            let s = scan(&rel(path), module, *test, &text(path), &top, &macros);
            refs.extend(s.refs);
            paths.extend(
                s.paths
                    .into_iter()
                    .map(|(p, line, test)| (rel(path), module.clone(), p, line, test)),
            );
        }
        refs.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        Crate { top, refs, paths }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source with comments, string and character literals blanked out
/// (newlines kept, so lines still count).
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let blank = |out: &mut String, s: &[char]| {
        for &ch in s {
            out.push(if ch == '\n' { '\n' } else { ' ' });
        }
    };
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        let prev_ident = i > 0 && ident(c[i - 1]);
        if at(i) == '/' && at(i + 1) == '/' {
            let end = (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len());
            blank(&mut out, &c[i..end]);
            i = end;
        } else if at(i) == '/' && at(i + 1) == '*' {
            let (mut depth, mut k) = (0, i);
            loop {
                if at(k) == '/' && at(k + 1) == '*' {
                    depth += 1;
                    k += 2;
                } else if at(k) == '*' && at(k + 1) == '/' {
                    depth -= 1;
                    k += 2;
                    if depth == 0 {
                        break;
                    }
                } else if k >= c.len() {
                    break;
                } else {
                    k += 1;
                }
            }
            blank(&mut out, &c[i..k.min(c.len())]);
            i = k.min(c.len());
        } else if !prev_ident && (at(i) == '"' || matches!(at(i), 'b' | 'c' | 'r')) {
            // A string: "..", b"..", c"..", r#".."#, br#".."#.
            let mut k = i;
            if matches!(at(k), 'b' | 'c') {
                k += 1;
            }
            let raw = at(k) == 'r';
            if raw {
                k += 1;
            }
            let hashes = (k..c.len()).take_while(|&j| c[j] == '#').count();
            if at(k + hashes) != '"' || (!raw && hashes > 0) {
                // An identifier (`r#type`, `bytes`, ...), not a string.
                let end = (i..c.len()).find(|&j| !ident(c[j])).unwrap_or(c.len());
                let end = end.max(i + 1);
                out.extend(&c[i..end]);
                i = end;
                continue;
            }
            k += hashes + 1;
            loop {
                if k >= c.len() {
                    break;
                }
                if !raw && c[k] == '\\' {
                    k += 2;
                } else if c[k] == '"' && (k + 1..k + 1 + hashes).all(|j| at(j) == '#') {
                    k += 1 + hashes;
                    break;
                } else {
                    k += 1;
                }
            }
            let k = k.min(c.len());
            blank(&mut out, &c[i..k]);
            i = k;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal ('a', '\n', '\u{7f}'), not a lifetime.
            let mut k = i + 1;
            if at(k) == '\\' {
                k += 2;
            } else {
                k += 1;
            }
            while k < c.len() && c[k] != '\'' {
                k += 1;
            }
            let k = (k + 1).min(c.len());
            blank(&mut out, &c[i..k]);
            i = k;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
}

/// The identifiers and punctuation of stripped source, with their lines.
fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let end = (i..c.len())
                .find(|&j| !(c[j].is_alphanumeric() || c[j] == '_'))
                .unwrap_or(c.len());
            let word: String = c[i..end].iter().collect();
            if !ch.is_ascii_digit() {
                out.push((Tok::Ident(word), line));
            }
            i = end;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// The names of the `macro_rules!` macros a file defines.
fn exported_macros(code: &str) -> Vec<String> {
    let t = tokens(code);
    t.windows(3)
        .filter_map(|w| match w {
            [
                (Tok::Ident(m), _),
                (Tok::Punct('!'), _),
                (Tok::Ident(name), _),
            ] if m == "macro_rules" => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// A `mod name;` declaration.
struct ModDecl {
    name: String,
    /// Inline modules it sits in (`mod a { mod b; }`: ["a"]).
    inline: Vec<String>,
    test: bool,
}

struct Scan {
    refs: Vec<Ref>,
    mods: Vec<ModDecl>,
    /// Every `crate::` or `super::` path, made absolute ("report",
    /// "markup", ...; a group gives one path per item), with its line and
    /// whether it is test code: what the checks inside a module read.
    paths: Vec<(Vec<String>, usize, bool)>,
}

/// What a `{` opened.
enum Frame {
    /// A block or an item's body; whether it is test code.
    Block { test: bool },
    /// An inline `mod name {`.
    Mod { name: String, test: bool },
    /// A use group `::{`.
    Group,
}

/// The absolute paths a path starting at token `k` names, after `base`
/// (the module its `crate::` or `super::` prefix reached): `a::b::c` one,
/// `a::{b, c::d}` one per item (each to its first name).
fn follow(t: &[(Tok, usize)], mut k: usize, base: Vec<String>) -> Vec<(Vec<String>, usize)> {
    let ident = |i: usize| match t.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.clone()),
        _ => None,
    };
    let punct = |i: usize, p: char| matches!(t.get(i), Some((Tok::Punct(q), _)) if *q == p);
    let line = t.get(k).map_or(0, |x| x.1);
    let mut path = base;
    loop {
        if let Some(n) = ident(k) {
            path.push(n);
            if punct(k + 1, ':') && punct(k + 2, ':') {
                k += 3;
                continue;
            }
            return vec![(path, line)];
        }
        if !punct(k, '{') {
            return vec![(path, line)];
        }
        let mut out = Vec::new();
        let (mut depth, mut first) = (0, true);
        while k < t.len() {
            match &t[k].0 {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Tok::Punct(',') if depth == 1 => first = true,
                Tok::Ident(n) if depth == 1 && first => {
                    let mut p = path.clone();
                    if n != "self" {
                        p.push(n.clone());
                    }
                    out.push((p, t[k].1));
                    first = false;
                }
                _ => {}
            }
            k += 1;
        }
        return out;
    }
}

/// The references to other top-level modules in one file, and its `mod`
/// declarations. `module` is the file's module path (["report", "html",
/// "sweeps"]), `test` whether the whole file is test code; `top` the
/// top-level modules and `macros` the exported macros with their modules.
fn scan(
    file: &str,
    module: &[String],
    test: bool,
    src: &str,
    top: &BTreeSet<String>,
    macros: &BTreeMap<String, String>,
) -> Scan {
    let t = tokens(&strip(src));
    let mut out = Scan {
        refs: Vec::new(),
        mods: Vec::new(),
        paths: Vec::new(),
    };
    let ident = |i: usize| match t.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let punct = |i: usize, p: char| matches!(t.get(i), Some((Tok::Punct(q), _)) if *q == p);
    let path_sep = |i: usize| punct(i, ':') && punct(i + 1, ':');
    let mut stack: Vec<Frame> = Vec::new();
    // A `#[cfg(test)]` waiting for its item, and the bracket depth it was
    // seen at (a `;` inside `[u8; 2]` does not end the item).
    let mut pending: Option<usize> = None;
    let mut brackets = 0usize;
    let mut i = 0;
    while i < t.len() {
        let in_test = test
            || pending.is_some()
            || stack.iter().any(|f| match f {
                Frame::Block { test } | Frame::Mod { test, .. } => *test,
                Frame::Group => false,
            });
        let line = t[i].1;
        match &t[i].0 {
            Tok::Punct('#') if punct(i + 1, '[') || (punct(i + 1, '!') && punct(i + 2, '[')) => {
                let open = if punct(i + 1, '[') { i + 1 } else { i + 2 };
                let (mut depth, mut k) = (0, open);
                while k < t.len() {
                    if punct(k, '[') {
                        depth += 1;
                    } else if punct(k, ']') {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    k += 1;
                }
                let inner: Vec<&Tok> = t[open + 1..k].iter().map(|(tok, _)| tok).collect();
                let cfg_test = [
                    Tok::Ident("cfg".into()),
                    Tok::Punct('('),
                    Tok::Ident("test".into()),
                    Tok::Punct(')'),
                ];
                if inner.len() == 4 && inner.iter().zip(&cfg_test).all(|(a, b)| *a == b) {
                    pending = Some(brackets);
                }
                i = k + 1;
                continue;
            }
            Tok::Punct('(') | Tok::Punct('[') => brackets += 1,
            Tok::Punct(')') | Tok::Punct(']') => brackets = brackets.saturating_sub(1),
            Tok::Punct('{') => {
                let frame = if i >= 2 && path_sep(i - 2) {
                    Frame::Group
                } else if ident(i.wrapping_sub(2)) == Some("mod") {
                    Frame::Mod {
                        name: ident(i - 1).unwrap().to_string(),
                        test: in_test,
                    }
                } else {
                    Frame::Block { test: in_test }
                };
                if !matches!(frame, Frame::Group) {
                    pending = None;
                }
                stack.push(frame);
            }
            Tok::Punct('}') => {
                stack.pop();
            }
            Tok::Punct(';') if pending == Some(brackets) => pending = None,
            Tok::Ident(kw) if kw == "mod" && punct(i + 2, ';') => {
                let inline = stack
                    .iter()
                    .filter_map(|f| match f {
                        Frame::Mod { name, .. } => Some(name.clone()),
                        _ => None,
                    })
                    .collect();
                out.mods.push(ModDecl {
                    name: ident(i + 1).unwrap().to_string(),
                    inline,
                    test: in_test,
                });
            }
            Tok::Ident(root) if (root == "crate" || root == "super") && path_sep(i + 1) => {
                // The module path here, inline modules included.
                let mut here: Vec<String> = module.to_vec();
                here.extend(stack.iter().filter_map(|f| match f {
                    Frame::Mod { name, .. } => Some(name.clone()),
                    _ => None,
                }));
                let mut k = i;
                let at_root = if root == "crate" {
                    k += 3;
                    true
                } else {
                    let mut up = 0;
                    while ident(k) == Some("super") && path_sep(k + 1) {
                        up += 1;
                        k += 3;
                    }
                    assert!(
                        up <= here.len(),
                        "{file}:{line}: super beyond the crate root"
                    );
                    here.len() == up
                };
                let base: Vec<String> = if root == "crate" {
                    Vec::new()
                } else {
                    let up = (i..k).filter(|&j| ident(j) == Some("super")).count();
                    here[..here.len() - up].to_vec()
                };
                let paths = follow(&t, k, base);
                if at_root && !module.is_empty() {
                    // The top-level module (or exported macro) each path
                    // names: `crate::{a::x, b}` names a and b.
                    let mut names: Vec<(String, usize)> = Vec::new();
                    for (p, line) in &paths {
                        if let Some(n) = p.first()
                            && !names.iter().any(|(m, _)| m == n)
                        {
                            names.push((n.clone(), *line));
                        }
                    }
                    for (n, line) in names {
                        let to = if top.is_empty() || top.contains(&n) {
                            n
                        } else if let Some(m) = macros.get(&n) {
                            m.clone()
                        } else {
                            panic!("{file}:{line}: crate::{n} is neither a module nor a macro");
                        };
                        if to != module[0] && !top.is_empty() {
                            out.refs.push(Ref {
                                file: file.to_string(),
                                line,
                                from: module[0].clone(),
                                to,
                                test: in_test,
                            });
                        }
                    }
                }
                for (path, line) in paths {
                    out.paths.push((path, line, in_test));
                }
                // Go on after the root; a group's braces are seen as a Group.
                i += 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}
