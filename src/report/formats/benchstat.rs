//! `--format benchstat`: the Go benchmark data format
//! (golang.org/design/14313-benchmark-format), so that Go's `benchstat`
//! can compare secperf results with its own statistics. benchstat compares
//! *files*, one per configuration: [`render_files`] gives each column's
//! file, which `-o DIR` writes as one file each; then
//! `benchstat base.txt patched.txt`. [`render`] concatenates them after
//! `# file: <name>` lines (ignored by benchstat) for stdout.
//!
//! Each file starts with the configuration lines `goos`, `goarch`, `pkg`
//! and the report's machine keys, then one line per sample:
//! `BenchmarkTreeWalk/tasks=4/landlock_fs-ro 1 297.5 ns/op`. The iteration
//! count is 1: the value already is the per-operation figure.

use crate::report::model::Report;

/// One `(configuration name, file contents)` per column, in column order.
pub fn render_files(report: &Report) -> Vec<(String, String)> {
    report
        .columns
        .iter()
        .enumerate()
        .map(|(i, name)| (name.clone(), file(report, i)))
        .collect()
}

/// Every configuration's file, each after a `# file: <name>` line.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for (i, (name, contents)) in render_files(report).into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("# file: {}\n", one_line(&name)));
        out.push_str(&contents);
    }
    if out.is_empty() {
        out.push_str(&header(report));
    }
    out
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Go's name for the architecture (`GOARCH`).
pub(crate) fn goarch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "x86" => "386",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64",
        "loongarch64" => "loong64",
        other => other,
    }
}

/// A configuration key as the format allows it: starts with a lower-case
/// letter, no spaces, no upper case. None if nothing usable is left.
fn config_key(k: &str) -> Option<String> {
    let key: String = k
        .trim()
        .chars()
        .map(|c| match c {
            c if c.is_whitespace() || c == ':' => '-',
            c => c.to_ascii_lowercase(),
        })
        .filter(|c| !c.is_uppercase())
        .collect();
    let first = key.chars().next()?;
    if !first.is_lowercase() {
        return None;
    }
    // The standard keys come first and must not be repeated.
    (!matches!(key.as_str(), "goos" | "goarch" | "pkg")).then_some(key)
}

fn header(report: &Report) -> String {
    let mut out = format!("goos: linux\ngoarch: {}\npkg: secperf\n", goarch());
    for (k, v) in &report.machine {
        if let Some(key) = config_key(k) {
            out.push_str(&format!("{key}: {}\n", one_line(v).trim()));
        }
    }
    out
}

/// "tree_walk" -> "TreeWalk": words split at anything not alphanumeric,
/// each capitalised. Starts with an upper-case letter, as a benchmark name
/// must after "Benchmark".
pub fn camel_case(s: &str) -> String {
    let mut out = String::new();
    for word in s.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    if !out.starts_with(|c: char| c.is_ascii_uppercase()) {
        out.insert(0, 'W');
    }
    out
}

/// A label as one name component: characters outside [A-Za-z0-9_=.-]
/// replaced by '_'.
pub fn sanitize_label(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '_' | '=' | '.' | '-' => c,
            _ => '_',
        })
        .collect()
}

/// The full benchmark name of a row.
pub fn bench_name(workload: &str, tasks: u32, label: &str) -> String {
    let mut name = format!("Benchmark{}/tasks={tasks}", camel_case(workload));
    if !label.is_empty() {
        name.push('/');
        name.push_str(&sanitize_label(label));
    }
    keep_whole(&mut name);
    name
}

/// Ends a benchmark name so that benchstat keeps it whole: a trailing
/// "-N" would be read as GOMAXPROCS and cut off the name.
pub fn keep_whole(name: &mut String) {
    let tail = name.rsplit('-').next().unwrap_or("");
    if name.contains('-') && !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
        name.push('_');
    }
}

fn file(report: &Report, column: usize) -> String {
    let unit: String = if report.unit.trim().is_empty() {
        "ns/op".into()
    } else {
        report.unit.split_whitespace().collect::<Vec<_>>().join("_")
    };
    let mut out = header(report);
    for row in &report.rows {
        let Some(Some(cell)) = row.cells.get(column) else {
            continue;
        };
        let name = bench_name(&row.workload, row.tasks, &row.label);
        let samples = if cell.samples.is_empty() {
            std::slice::from_ref(&cell.value)
        } else {
            &cell.samples[..]
        };
        for v in samples.iter().filter(|v| v.is_finite()) {
            out.push_str(&format!("{name} 1 {v} {unit}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::testing;

    /// `^Benchmark\S+ \d+ [0-9.e+-]+ ns/op$` without a regex crate.
    fn is_result_line(l: &str) -> bool {
        let f: Vec<&str> = l.split(' ').collect();
        f.len() == 4
            && f[0].len() > "Benchmark".len()
            && f[0].starts_with("Benchmark")
            && !f[0].contains(char::is_whitespace)
            && !f[1].is_empty()
            && f[1].bytes().all(|b| b.is_ascii_digit())
            && !f[2].is_empty()
            && f[2].bytes().all(|b| b"0123456789.e+-".contains(&b))
            && f[2].parse::<f64>().is_ok()
            && f[3] == "ns/op"
    }

    fn check_file(contents: &str) -> usize {
        let lines: Vec<&str> = contents.lines().collect();
        assert_eq!(lines[0], "goos: linux");
        assert!(lines[1].starts_with("goarch: "));
        assert_eq!(lines[2], "pkg: secperf");
        let mut results = 0;
        for l in &lines[3..] {
            if l.starts_with("Benchmark") {
                assert!(is_result_line(l), "{l:?}");
                results += 1;
            } else {
                // A configuration line: key without spaces or upper case.
                let (k, _) = l.split_once(": ").unwrap_or_else(|| panic!("{l:?}"));
                assert!(k.starts_with(|c: char| c.is_lowercase()), "{l:?}");
                assert!(
                    !k.contains(|c: char| c.is_whitespace() || c.is_uppercase()),
                    "{l:?}"
                );
            }
        }
        results
    }

    #[test]
    fn one_file_per_configuration() {
        let r = testing::small();
        let files = render_files(&r);
        assert_eq!(files.len(), 3);
        assert_eq!(files[0].0, "run 3 base");
        // 3 samples per present cell; "run 5 patched" lacks tree_walk.
        assert_eq!(check_file(&files[0].1), 6);
        assert_eq!(check_file(&files[1].1), 3);
        assert_eq!(check_file(&files[2].1), 6);
        assert!(files[0].1.contains("\nBenchmarkGetpid/tasks=1 1 "));
        assert!(
            files[0]
                .1
                .contains("\nBenchmarkTreeWalk/tasks=16 1 45000 ns/op\n")
        );
        assert!(files[0].1.contains("\nkernel: 6.8.0-45-generic\n"));
        assert!(
            files[0]
                .1
                .contains("\ncpu: AMD EPYC 7763 64-Core Processor\n")
        );
    }

    #[test]
    fn concatenated_with_file_comments() {
        let r = testing::small();
        let s = render(&r);
        let marks: Vec<&str> = s.lines().filter(|l| l.starts_with("# file: ")).collect();
        assert_eq!(
            marks,
            [
                "# file: run 3 base",
                "# file: run 5 patched",
                "# file: run 7 rcu"
            ]
        );
        assert_eq!(s.lines().filter(|l| l.starts_with("Benchmark")).count(), 15);
    }

    #[test]
    fn awkward_names_become_one_token() {
        let r = testing::awkward();
        for (_, f) in render_files(&r) {
            check_file(&f);
        }
        let f = &render_files(&r)[0].1;
        assert!(f.contains(
            "BenchmarkAReallyQuiteExtraordinarilyLongWorkloadNameForTesting/tasks=4000000000/landlock_fs-ro_rules=_1000__"
        ));
        assert!(f.contains("\nBenchmarkOpenClose/tasks=1/seccomp_allow_kill 1 "));
        // "Intel(R) ..." keeps its value; the machine key is usable.
        assert!(f.contains("\ncpu: Intel(R) Xeon(R)"));
    }

    #[test]
    fn names() {
        assert_eq!(camel_case("tree_walk"), "TreeWalk");
        assert_eq!(camel_case("getpid"), "Getpid");
        assert_eq!(camel_case("open-close2"), "OpenClose2");
        assert_eq!(camel_case("3pipe"), "W3pipe");
        assert_eq!(camel_case(""), "W");
        assert_eq!(
            sanitize_label("landlock:fs ro/x=1.5"),
            "landlock_fs_ro_x=1.5"
        );
        assert_eq!(bench_name("getpid", 2, ""), "BenchmarkGetpid/tasks=2");
        assert_eq!(
            bench_name("getpid", 2, "v-2"),
            "BenchmarkGetpid/tasks=2/v-2_"
        );
        assert_eq!(
            bench_name("getpid", 2, "a-b"),
            "BenchmarkGetpid/tasks=2/a-b"
        );
        assert_eq!(config_key("Kernel Version"), Some("kernel-version".into()));
        assert_eq!(config_key("pkg"), None);
        assert_eq!(config_key("2x"), None);
    }

    #[test]
    fn non_finite_samples_are_left_out() {
        let mut r = testing::small();
        r.rows[0].cells[0].as_mut().unwrap().samples = vec![1.0, f64::NAN, f64::INFINITY];
        r.rows[1].cells[0].as_mut().unwrap().samples.clear();
        let f = &render_files(&r)[0].1;
        assert_eq!(check_file(f), 2);
        assert!(f.contains("BenchmarkTreeWalk/tasks=16 1 45000 ns/op"));
    }
}
