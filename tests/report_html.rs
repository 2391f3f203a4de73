//! End to end: `secperf report` on real runs made with the CLI (an
//! overhead survey, profiled where `perf_event_open` works here, with a
//! sweep note stored through the library; two `run` ladders), then the
//! page checked as a file and, where Debian's `chromium` is installed,
//! rendered headless: no console errors, nothing fetched, every plot drawn
//! with a size. Without chromium that test is skipped, and fails under CI
//! (see `tests/common/skips.rs`).

use std::path::{Path, PathBuf};
use std::process::Command as Std;
use std::sync::OnceLock;

use serde_json::{Value, json};

mod common;
use common::{TINY, json_of, secperf, skip_missing_tool};

/// The runs, the report written from them and what it should hold.
struct Fixture {
    db: PathBuf,
    ids: Vec<i64>,
    page: PathBuf,
    html: String,
    summary: Value,
    expected: Expected,
}

/// Plots the page must hold, counted from the runs' own JSON.
#[derive(Debug, Default)]
struct Expected {
    forests: usize,
    pairs: usize,
    scaling: usize,
    sweeps: usize,
    bars: usize,
    differential_flames: usize,
    flames: usize,
}

impl Expected {
    fn inline_svgs(&self) -> usize {
        self.forests + self.pairs + self.scaling + self.sweeps + self.bars
    }
    fn images(&self) -> usize {
        self.differential_flames + self.flames
    }
}

fn run_json(db: &Path, args: &[&str]) -> Value {
    let out = secperf(db).args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A sweep as `overhead --sweep` stores it (three values, two pairs each).
fn sweep() -> Value {
    let points: Vec<Value> = [1.0, 2.0, 4.0]
        .iter()
        .map(|&x: &f64| {
            json!({
                "value": x,
                "comparison": format!("seccomp:args,filters={x}"),
                "delta_ns_per_op": [20.0 + 12.0 * x - 2.0, 20.0 + 12.0 * x + 2.0],
                "overhead_pct": 4.0 * x,
            })
        })
        .collect();
    json!({
        "key": "filters",
        "label": "seccomp:args on getppid tasks=1",
        "model": "ns/op added = entry cost + cost per filter x filters",
        "intercept_name": "entry cost",
        "slope_name": "per filter",
        "points": points,
        "fit": {
            "intercept": {"estimate": 20.0, "ci_low": 15.0, "ci_high": 25.0},
            "slope": {"estimate": 12.0, "ci_low": 10.0, "ci_high": 14.0},
            "n": 6, "r_squared": 0.98, "residual_sd": 2.2,
            "lack_of_fit_p": 0.8, "straight": true
        }
    })
}

/// This process's directory under cargo's test scratch space (the page and
/// its screenshot stay there for a look); those of finished runs are removed.
fn work_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    if let Ok(entries) = std::fs::read_dir(root) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(pid) = name.strip_prefix("report_html-")
                && !Path::new("/proc").join(pid).exists()
            {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let dir = root.join(format!("report_html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = work_dir();
        let db = dir.join("t.db");

        // A small survey, profiled; seccomp where this machine has it.
        let mut overhead: Vec<&str> = vec!["overhead", "-m", "none", "-w", "getppid"];
        overhead.extend(["--profile", "--profile-pairs", "2"]);
        overhead.extend(TINY);
        let mut with_seccomp = overhead.clone();
        with_seccomp.extend(["-m", "seccomp", "-m", "seccomp:args"]);
        let out = secperf(&db)
            .args(&with_seccomp)
            .arg("--json")
            .output()
            .unwrap();
        let survey: Value = if out.status.success() {
            serde_json::from_slice(&out.stdout).unwrap()
        } else {
            eprintln!(
                "seccomp unavailable, surveying none only: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            run_json(&db, &overhead)
        };
        let survey_id = survey["run_id"].as_i64().unwrap();
        let ladder = [
            "run",
            "-w",
            "getppid",
            "-t",
            "1,2",
            "--no-pin",
            "--samples",
            "2",
            "--sample-ms",
            "20",
        ];
        let profiled_ladder = [&ladder[..], &["--profile"]].concat();
        let ladder_id = run_json(&db, &profiled_ladder)["run_id"].as_i64().unwrap();
        let again = [&ladder[..], &["--label", "again"]].concat();
        let again_id = run_json(&db, &again)["run_id"].as_i64().unwrap();

        // No CLI stores a sweep yet: through the library, as overhead will.
        let mut store = secperf::store::Store::open(&db).unwrap();
        store
            .add_run_note(survey_id, secperf::model::Sweep::NOTE, &sweep())
            .unwrap();
        drop(store);

        let ids = vec![survey_id, ladder_id, again_id];
        let expected = expect(&db, &ids);
        let page = dir.join("x.html");
        let refs = [
            survey_id.to_string(),
            ladder_id.to_string(),
            "again".to_string(),
        ];
        let out = secperf(&db)
            .arg("report")
            .args(&refs)
            .arg("-o")
            .arg(&page)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
        let html = std::fs::read_to_string(&page).unwrap();
        Fixture {
            db,
            ids,
            page,
            html,
            summary,
            expected,
        }
    })
}

/// What the page must show, from `results show --json` of each run.
fn expect(db: &Path, ids: &[i64]) -> Expected {
    let mut e = Expected {
        sweeps: 1,
        ..Default::default()
    };
    let mut ladders = 0;
    for id in ids {
        let run = run_json(db, &["results", "show", &id.to_string()]);
        let comparisons = run["comparisons"].as_array().cloned().unwrap_or_default();
        if !comparisons.is_empty() {
            e.forests += 1;
        }
        for c in &comparisons {
            if !c["pair_data"].as_array().unwrap().is_empty() {
                e.pairs += 1;
            }
            let a = &c["attribution"];
            if a.is_object() {
                if !a["groups"].as_array().unwrap().is_empty() {
                    e.bars += 1;
                }
                if a["samples"]["total"].as_u64().unwrap() > 0 {
                    e.differential_flames += 1;
                }
            }
        }
        let results = run["results"].as_array().cloned().unwrap_or_default();
        if results.len() >= 2 {
            ladders += 1;
        }
        for r in &results {
            if r["profile"]["samples"]["total"].as_u64().unwrap_or(0) > 0 {
                e.flames += 1;
            }
        }
    }
    assert_eq!(ladders, 2);
    // One workload at 1 and 2 tasks: ops/s and ns/op, both ladders overlaid.
    e.scaling = 2;
    e
}

#[test]
fn report_has_a_plot_per_expected_chart() {
    let f = fixture();
    let e = &f.expected;
    eprintln!("expected plots: {e:?}");
    assert_eq!(
        f.summary["path"].as_str().map(PathBuf::from),
        Some(std::fs::canonicalize(&f.page).unwrap())
    );
    assert_eq!(f.summary["runs"], json!(f.ids));
    assert_eq!(f.summary["plots"], e.inline_svgs() + e.images());

    let html = &f.html;
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<html").count(), 1, "one document");
    assert_eq!(html.matches("</html>").count(), 1);
    assert_eq!(html.matches("<svg ").count(), e.inline_svgs());
    assert_eq!(
        html.matches("src=\"data:image/svg+xml;base64,").count(),
        e.images()
    );
    for (class, n) in [
        ("forest", e.forests),
        ("pairs", e.pairs),
        ("scaling", e.scaling),
        ("sweep", e.sweeps),
        ("attribution-bars", e.bars),
        ("flame differential", e.differential_flames),
        ("flame", e.flames),
    ] {
        assert_eq!(
            html.matches(&format!("<figure class=\"{class}\">")).count(),
            n,
            "{class}"
        );
    }
    // Each run's header and exact command; both ladders in the scaling
    // charts' legends.
    for id in &f.ids {
        assert!(html.contains(&format!("<section id=\"run-{id}\" class=\"run\">")));
    }
    assert!(html.contains("overhead -m none -w getppid"));
    let scaling = html.split("<section id=\"run-").next().unwrap();
    assert!(scaling.contains(&format!("\nrun {}\n</text>", f.ids[1])));
    assert!(scaling.contains(&format!("\nagain (run {})\n</text>", f.ids[2])));
    assert!(html.contains("per filter"));
    // Nothing from the network.
    for bad in ["<script", "<link", "@import", "url(http"] {
        assert!(!html.contains(bad), "{bad}");
    }
}

#[test]
fn report_to_stdout_is_the_page_and_text_names_the_file() {
    let f = fixture();
    let out = secperf(&f.db)
        .args(["report", "latest", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>") && text.trim_end().ends_with("</html>"));

    let dir = tempfile::tempdir().unwrap();
    let out = secperf(&f.db)
        .current_dir(dir.path())
        .args(["report", "latest"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let default = dir.path().join("secperf-report.html");
    assert!(default.is_file());
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains(
            &std::fs::canonicalize(&default)
                .unwrap()
                .display()
                .to_string()
        ),
        "{said}"
    );
}

#[test]
fn bad_run_references_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    for args in [
        &["report", "999"][..],
        &["report", "latest"][..],
        &["report", "no-such-label", "-o", "x.html"][..],
    ] {
        let out = secperf(&db)
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("secperf: error:"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!dir.path().join("x.html").exists());
    let out = secperf(&db)
        .args(["report", "1", "-o", "-", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Runs chromium headless with `args` on `page`.
fn chromium(page: &Path, profile: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = if Std::new("timeout").arg("--version").output().is_ok() {
        let mut c = Std::new("timeout");
        c.args(["120", "chromium"]);
        c
    } else {
        Std::new("chromium")
    };
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,2000",
        "--virtual-time-budget=5000",
        "--run-all-compositor-stages-before-draw",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .arg(format!("file://{}", page.display()));
    cmd.output().unwrap()
}

/// Console messages and uncaught errors of the page in chromium's log
/// (its own dbus, GPU and sandbox lines are not the page's).
fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

/// Injected into a copy of the page (the report itself has no script):
/// records failed loads, then at `load` writes every plot's size, whether
/// each image decoded, and every resource fetched into `<pre id=probe>`.
const PROBE: &str = r#"<script>
window.__errors = [];
window.addEventListener('error', function (e) {
  var t = e.target;
  window.__errors.push(t && t !== window ? 'load failed: ' + (t.src || t.href || t.tagName)
                                         : String(e.message));
}, true);
window.addEventListener('load', function () {
  var out = { drawings: [], resources: [], errors: window.__errors };
  document.querySelectorAll('figure > svg, figure > img').forEach(function (el) {
    var r = el.getBoundingClientRect();
    out.drawings.push({ cls: el.parentNode.className, w: r.width, h: r.height,
      decoded: el.tagName !== 'IMG' || (el.complete && el.naturalWidth > 0) });
  });
  performance.getEntriesByType('resource').forEach(function (e) { out.resources.push(e.name); });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"#;

#[test]
fn report_renders_in_chromium() {
    let test = "report_renders_in_chromium";
    // Checked first: the fixture measures.
    if let Err(e) = Std::new("chromium").arg("--version").output() {
        let reason = format!("chromium is not installed (Debian: apt-get install chromium): {e}");
        skip_missing_tool(test, "chromium", &reason);
        return;
    }
    let f = fixture();
    let dir = tempfile::tempdir().unwrap();
    // The page as written: chromium logs no console message for it.
    let out = chromium(&f.page, &dir.path().join("a"), &["--dump-dom"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(console_lines(&out.stderr), Vec::<String>::new());
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains("secperf report"), "{dom}");

    // A probed copy: every plot drawn with a size, images decoded, nothing
    // fetched, no error.
    let probed = dir.path().join("probed.html");
    let html = f.html.replacen(
        "<meta charset=\"utf-8\">",
        &format!("<meta charset=\"utf-8\">{PROBE}"),
        1,
    );
    std::fs::write(&probed, html).unwrap();
    let out = chromium(&probed, &dir.path().join("b"), &["--dump-dom"]);
    assert_eq!(console_lines(&out.stderr), Vec::<String>::new());
    let dom = String::from_utf8_lossy(&out.stdout);
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe did not run: {dom}"));
    let probe: Value = serde_json::from_str(&probe.replace("&amp;", "&")).unwrap();
    assert_eq!(probe["errors"], json!([]), "{probe}");
    assert_eq!(probe["resources"], json!([]), "{probe}");
    let drawings = probe["drawings"].as_array().unwrap();
    assert_eq!(
        drawings.len(),
        f.summary["plots"].as_u64().unwrap() as usize
    );
    for d in drawings {
        assert!(
            d["w"].as_f64().unwrap() > 100.0 && d["h"].as_f64().unwrap() > 50.0,
            "a plot without a size: {d}"
        );
        assert_eq!(d["decoded"], true, "an image that did not decode: {d}");
    }

    // And a screenshot of it (kept beside the page for a look).
    let shot = f.page.with_extension("png");
    let _ = std::fs::remove_file(&shot);
    let out = chromium(
        &f.page,
        &dir.path().join("c"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,4000",
            "--hide-scrollbars",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
}

/// A stored track of three tested revisions: one unchanged, one that did
/// not build, one slower alarm named to its commit (a subject with markup
/// in it, which the page must escape).
fn stored_track(db: &Path) -> String {
    use secperf::model::bisect::Revision;
    use secperf::model::track::{Direction, Outcome, Point, Question, TrackRecord};
    let rev = |i: usize, subject: &str| Revision {
        commit: format!("{i}{}", "c".repeat(39)),
        subject: subject.to_string(),
    };
    let point = |i: usize, outcome: Outcome, level: Option<f64>| Point {
        revision: rev(i, &format!("commit {i} <script>alert({i})</script>")),
        position: i,
        baseline: rev(i - 1, "before"),
        level,
        outcome,
        tested_at: chrono::Utc::now(),
        seconds: 90.0,
        culprit: (i == 3).then(|| rev(3, "the culprit")),
        culprit_note: None,
        bisection: None,
    };
    let measured = |estimate: f64, alarm| Outcome::Measured {
        estimate,
        ci_low: estimate - 3.0,
        ci_high: estimate + 3.0,
        pairs: 9,
        run_id: None,
        alarm,
    };
    let now = chrono::Utc::now();
    let t = TrackRecord {
        id: "0123456789abcdef".into(),
        created_at: now,
        updated_at: now,
        command: vec![
            "track".into(),
            "/src/linux".into(),
            "-w".into(),
            "getppid".into(),
        ],
        question: Question {
            source: "/src/linux".into(),
            branch: "master".into(),
            from: rev(0, "v6.1"),
            workload: "getppid".into(),
            mechanisms: vec![],
            append: "audit=1".into(),
            config: None,
            metric: secperf::model::Metric::Time,
            threshold_pct: 5.0,
            alpha: 0.05,
            batch: 1,
        },
        stream: secperf::stats::online::ELond {
            alpha: 0.05,
            tests: 2,
            alarms: 1,
        },
        points: vec![
            point(1, measured(0.4, None), Some(0.0027)),
            point(
                2,
                Outcome::Failed {
                    why: "the build of r2 failed".into(),
                },
                None,
            ),
            point(3, measured(35.0, Some(Direction::Slower)), Some(0.0004)),
        ],
    };
    secperf::store::Store::open(db)
        .unwrap()
        .put_track(&t)
        .unwrap();
    t.id
}

#[test]
fn a_track_page_renders_in_chromium() {
    let test = "a_track_page_renders_in_chromium";
    if let Err(e) = Std::new("chromium").arg("--version").output() {
        let reason = format!("chromium is not installed (Debian: apt-get install chromium): {e}");
        skip_missing_tool(test, "chromium", &reason);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let id = stored_track(&db);
    let page = dir.path().join("track.html");
    let out = secperf(&db)
        .args(["--json", "report", "--track", "latest", "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = json_of(&out.stdout);
    assert_eq!(summary["track"], id.as_str());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script>alert"), "stored text is escaped");
    assert!(html.contains("class=\"track_points\""));
    let out = chromium(&page, &dir.path().join("a"), &["--dump-dom"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(console_lines(&out.stderr), Vec::<String>::new());
    let probed = dir.path().join("probed.html");
    std::fs::write(
        &probed,
        html.replacen(
            "<meta charset=\"utf-8\">",
            &format!("<meta charset=\"utf-8\">{PROBE}"),
            1,
        ),
    )
    .unwrap();
    let out = chromium(&probed, &dir.path().join("b"), &["--dump-dom"]);
    assert_eq!(console_lines(&out.stderr), Vec::<String>::new());
    let dom = String::from_utf8_lossy(&out.stdout);
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe did not run: {dom}"));
    let probe: Value = serde_json::from_str(&probe.replace("&amp;", "&")).unwrap();
    assert_eq!(probe["errors"], json!([]), "{probe}");
    assert_eq!(probe["resources"], json!([]), "{probe}");
    let drawings = probe["drawings"].as_array().unwrap();
    assert_eq!(drawings.len(), 1, "{probe}");
    assert!(
        drawings[0]["w"].as_f64().unwrap() > 100.0 && drawings[0]["h"].as_f64().unwrap() > 50.0,
        "{probe}"
    );
}
