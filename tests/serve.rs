//! End to end: `secperf serve` on a store of fixture runs (one of them
//! with `<script>` and quotes in its host name and command line), a track
//! and a bisection (with markup in a commit's subject). Every page and its
//! JSON twin over HTTP; refusals (400, 404, 405) as plain text; bad input
//! at start exits 2; and, where Debian's `chromium` is installed, every
//! page loaded in it: no console error (the pages' Content-Security-Policy
//! forbids any fetch from elsewhere, and a blocked one is logged), every
//! plot drawn with a size, no sideways scroll at 1400 px, and every link
//! of every page answered (a crawl). And the same store pushed to a
//! PostgreSQL cluster of its own (`lab.sh pg-up`), served from there: the
//! same documents, a push seen at the next request, and the cluster
//! stopped: 503 naming it without its password, until it is back.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Std, Stdio};

use serde_json::{Value, json};

mod common;
use common::{json_of, secperf, skip_missing_tool};

const EVIL: &str = "lab\"'<script>alert(1)</script>";

/// A store: the fixture runs, run 1 given a hostile host name and command
/// line, a track and a bisection.
fn store(dir: &Path) -> PathBuf {
    let db = dir.join("runs.db");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/runs/runs.db"),
        &db,
    )
    .unwrap();
    // Migrated to this secperf's schema first.
    drop(secperf::store::Store::open(&db).unwrap());
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE runs SET host = ?1, command = ?2 WHERE id = 1",
        rusqlite::params![
            EVIL,
            format!(
                "[\"secperf\",\"run\",\"--label\",\"{}\"]",
                "<script>x</script>\\\""
            )
        ],
    )
    .unwrap();
    drop(c);
    put_records(&db);
    db
}

fn put_records(db: &Path) {
    use secperf::model::bisect::{
        BisectionRecord, Class, Outcome as Bisected, Revision, Status, Step, Tested,
    };
    use secperf::model::track::{Outcome, Point, Question, TrackRecord};
    let rev = |i: usize| Revision {
        commit: format!("{i}{}", "c".repeat(39)),
        subject: format!("commit {i} <script>alert({i})</script> \"quoted\""),
    };
    let at = chrono::Utc::now();
    let point = |i: usize| Point {
        revision: rev(i + 1),
        position: i + 1,
        baseline: rev(i),
        level: Some(0.002),
        outcome: Outcome::Measured {
            estimate: 0.1 + i as f64,
            ci_low: -0.5,
            ci_high: 0.7 + i as f64,
            pairs: 4,
            run_id: Some(1),
            alarm: None,
        },
        tested_at: at,
        seconds: 60.0,
        culprit: None,
        culprit_note: None,
        bisection: None,
    };
    let track = TrackRecord {
        id: "feedfacefeedface".into(),
        created_at: at,
        updated_at: at,
        command: vec!["track".into(), EVIL.into()],
        question: Question {
            source: "/src/linux".into(),
            branch: "master".into(),
            from: rev(0),
            workload: "getppid".into(),
            mechanisms: vec![],
            append: String::new(),
            config: None,
            metric: secperf::model::Metric::Instructions,
            threshold_pct: 4.0,
            alpha: 0.05,
            batch: 1,
        },
        stream: secperf::stats::online::ELond {
            alpha: 0.05,
            tests: 3,
            alarms: 0,
        },
        points: (0..3).map(point).collect(),
    };
    let step = Step {
        index: 0,
        revision: rev(1),
        class: Class::Bad,
        tested: Tested::Measured {
            estimate: 9.0,
            ci_low: 8.0,
            ci_high: 10.0,
            pairs: 4,
            run_id: Some(1),
        },
        seconds: 60.0,
    };
    let bisection = BisectionRecord {
        id: "beefbeefbeefbeef".into(),
        created_at: at,
        updated_at: at,
        command: vec!["bisect".into()],
        source: "/src/linux".into(),
        workload: "getppid".into(),
        append: String::new(),
        mechanisms: vec![],
        threshold_pct: 4.0,
        alpha: 0.05,
        metric: secperf::model::Metric::Instructions,
        status: Status::Finished,
        outcome: Bisected {
            good: rev(0),
            revisions: vec![rev(1)],
            decisions: 1,
            step_alpha: 0.05,
            steps: vec![step],
            first_bad: Some(rev(1)),
            candidates: vec![],
            verdict: "the first bad commit is commit 1".into(),
            log: vec![],
        },
        attempts: vec![],
    };
    let mut s = secperf::store::Store::open(db).unwrap();
    s.put_track(&track).unwrap();
    s.put_bisection(&bisection).unwrap();
    // A campaign of two hosts: run 3 (its results) and a copy of it.
    let copy = copy_run(db, 3);
    let mut s = secperf::store::Store::open(db).unwrap();
    s.add_campaign(&secperf::store::campaigns::CampaignRecord {
        id: CAMPAIGN.into(),
        created_at: at,
        command: vec!["run".into(), "-w".into(), "getppid".into()],
        hosts: vec!["h1".into(), EVIL.into()],
        parallel: 2,
    })
    .unwrap();
    s.tag_campaign_run(3, CAMPAIGN, "h1").unwrap();
    s.tag_campaign_run(copy, CAMPAIGN, EVIL).unwrap();
}

/// The fixture's campaign.
const CAMPAIGN: &str = "c0ffee42";

/// Copies run `id` with its results and their samples (a new uuid, a
/// minute later, another host); returns the copy's id.
fn copy_run(db: &Path, id: i64) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    let cols = |table: &str| -> Vec<String> {
        c.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<Vec<String>>>()
            .unwrap()
            .into_iter()
            .filter(|n| n != "id")
            .collect()
    };
    // Each column as it is, but those named in `set`.
    let copy = |table: &str, set: &[(&str, String)], filter: &str| {
        let names = cols(table);
        let exprs: Vec<String> = names
            .iter()
            .map(|n| {
                set.iter()
                    .find(|(k, _)| k == n)
                    .map_or(n.clone(), |(_, v)| v.clone())
            })
            .collect();
        c.execute(
            &format!(
                "INSERT INTO {table} ({}) SELECT {} FROM {table} WHERE {filter}",
                names.join(", "),
                exprs.join(", ")
            ),
            [],
        )
        .unwrap();
        c.last_insert_rowid()
    };
    let run = copy(
        "runs",
        &[
            ("uuid", "uuid || '-copy'".into()),
            ("label", "'ladder again'".into()),
            ("host", format!("'{}'", EVIL.replace('\'', "''"))),
        ],
        &format!("id = {id}"),
    );
    let results: Vec<i64> = c
        .prepare("SELECT id FROM results WHERE run_id = ?1 ORDER BY id")
        .unwrap()
        .query_map([id], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    for r in results {
        let new = copy(
            "results",
            &[("run_id", run.to_string())],
            &format!("id = {r}"),
        );
        copy(
            "samples",
            &[
                ("result_id", new.to_string()),
                ("ns_per_op", "ns_per_op * 1.25".into()),
            ],
            &format!("result_id = {r}"),
        );
    }
    run
}

/// A running `secperf serve`, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(db: &Path) -> Server {
    start_with(db, &[])
}

fn start_with(db: &Path, extra: &[&str]) -> Server {
    start_env(db, &[], extra)
}

fn start_env(db: &Path, env: &[(&str, &Path)], extra: &[&str]) -> Server {
    let mut child = Std::new(env!("CARGO_BIN_EXE_secperf"))
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .arg("--db")
        .arg(db)
        .args(["--json", "serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    assert_eq!(v["db"], db.display().to_string());
    Server {
        child,
        url: v["url"].as_str().unwrap().trim_end_matches('/').to_string(),
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// GET `path`: status, content type, body.
fn get(s: &Server, path: &str, accept: Option<&str>) -> (u16, String, String) {
    let mut req = agent().get(format!("{}{path}", s.url));
    if let Some(a) = accept {
        req = req.header("Accept", a);
    }
    let mut r = req.call().unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let ct = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = r.body_mut().read_to_string().unwrap();
    (r.status().as_u16(), ct, body)
}

/// What `secperf --json ARGS` prints about the same store.
fn cli_json(db: &Path, args: &[&str]) -> Value {
    let out = secperf(db).arg("--json").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)
}

#[test]
fn every_page_and_its_json_twin_is_served_and_stored_text_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let s = start(&db);
    let listed = cli_json(&db, &["results", "list"]);
    let runs = listed["runs"].as_array().unwrap();

    // The list, newest first, and its twin.
    let (code, ct, html) = get(&s, "/runs", None);
    assert_eq!((code, ct.as_str()), (200, "text/html; charset=utf-8"));
    assert!(html.contains("href=\"/runs/1\""), "{html}");
    assert!(html.contains(&format!("store: {}", db.display())), "{html}");
    let (code, ct, body) = get(&s, "/runs.json", None);
    assert_eq!((code, ct.as_str()), (200, "application/json"));
    let doc: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["runs"], listed["runs"], "the page is the list");
    assert_eq!(doc["total"], runs.len());
    let (_, _, by_accept) = get(&s, "/runs", Some("application/json"));
    assert_eq!(serde_json::from_str::<Value>(&by_accept).unwrap(), doc);
    // Filtered and paged by the query: the link alone gives the same page.
    let host = runs.last().unwrap()["host"].as_str().unwrap().to_string();
    let q = format!("/runs.json?host={}", urlencode(&host));
    let (_, _, body) = get(&s, &q, None);
    let doc: Value = serde_json::from_str(&body).unwrap();
    let want = runs.iter().filter(|r| r["host"] == host.as_str()).count();
    assert_eq!(doc["total"], want, "{doc}");
    assert_eq!(doc["filter"], json!({ "host": host }));
    let (_, _, body) = get(&s, "/runs.json?verdict=slower&page=1", None);
    let slower: Value = serde_json::from_str(&body).unwrap();
    assert!(slower["total"].as_u64().unwrap() < runs.len() as u64);

    // A run: the report's page, and `results show RUN --json`.
    let (code, _, html) = get(&s, "/runs/1", None);
    assert_eq!(code, 200);
    assert!(html.contains("secperf report"), "{html}");
    assert!(!html.contains("<script>"), "a stored host name escaped");
    assert!(html.contains("&lt;script&gt;"), "{html}");
    let (_, _, body) = get(&s, "/runs/1.json", None);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        cli_json(&db, &["results", "show", "1"])
    );
    // A track and a bisection, their lists, and their twins.
    for (list, one, args) in [
        (
            "/tracks",
            "/tracks/feedfacefeedface",
            ["--track", "feedfacefeedface"],
        ),
        (
            "/bisections",
            "/bisections/beefbeefbeefbeef",
            ["--bisection", "beefbeefbeefbeef"],
        ),
    ] {
        let (code, _, html) = get(&s, list, None);
        assert_eq!(code, 200, "{list}");
        assert!(html.contains(&format!("href=\"{one}\"")), "{html}");
        let (code, _, html) = get(&s, one, None);
        assert_eq!(code, 200, "{one}");
        assert!(!html.contains("<script>"), "{one}: subjects escaped");
        let (_, _, body) = get(&s, &format!("{one}.json"), None);
        let mut show = vec!["results", "show"];
        show.extend(args);
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            cli_json(&db, &show),
            "{one}"
        );
    }
    // Two runs compared, and a campaign of two hosts: `compare` and
    // `results show --campaign`'s documents, stored text escaped.
    let (code, _, body) = get(&s, "/compare.json?runs=3,7", None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        cli_json(&db, &["compare", "3", "7"])
    );
    let (code, _, html) = get(&s, "/compare?runs=3,7", None);
    assert_eq!(code, 200, "{html}");
    assert!(html.contains("<svg"), "the forest plot");
    assert!(
        html.contains("Reproduce") || html.contains("secperf compare 3 7"),
        "{html}"
    );
    assert!(!html.contains("<script>"), "a stored host name escaped");
    let (code, _, html) = get(&s, "/campaigns", None);
    assert_eq!(code, 200);
    assert!(
        html.contains(&format!("href=\"/campaigns/{CAMPAIGN}\"")),
        "{html}"
    );
    let (_, _, body) = get(&s, "/campaigns.json", None);
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list["campaigns"][0]["id"], CAMPAIGN);
    assert_eq!(list["campaigns"][0]["runs"], 2);
    let (code, _, html) = get(&s, &format!("/campaigns/{CAMPAIGN}"), None);
    assert_eq!(code, 200, "{html}");
    assert!(html.contains("href=\"/compare?runs=3,7\""), "{html}");
    assert!(!html.contains("<script>"), "a host name escaped");
    let (_, _, body) = get(&s, &format!("/campaigns/{CAMPAIGN}.json"), None);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        cli_json(&db, &["results", "show", "--campaign", CAMPAIGN])
    );

    // `/` is the list.
    let (code, _, html) = get(&s, "/", None);
    assert_eq!(code, 200);
    assert!(html.contains("href=\"/runs/1\""));
}

#[test]
fn bad_requests_are_refused_plainly_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let before = std::fs::read(&db).unwrap();
    let s = start(&db);
    for (path, code, says) in [
        ("/runs/999999", 404, "no run 999999"),
        ("/runs/abc", 400, "not a run id"),
        ("/runs/1%3Cscript%3E", 400, "not a run id"),
        ("/runs?verdict=worse", 400, "slower, faster"),
        ("/runs?page=0", 400, "from 1"),
        ("/runs?colour=red", 400, "not a key"),
        ("/tracks/0000000000000000", 404, "no track"),
        ("/bisections/zz", 400, "16 hex digits"),
        ("/compare?runs=3", 400, "two runs or more"),
        ("/compare?runs=3,x", 400, "not a run id"),
        ("/compare?runs=1,2,3,4,5,6,7,8,9", 400, "at most 8"),
        ("/compare?runs=3,999999", 404, "no run 999999"),
        ("/campaigns/c0ffee", 404, "no campaign c0ffee"),
        ("/campaigns/%3Cx%3E", 400, "not a campaign id"),
        ("/etc/passwd", 404, "no page at"),
    ] {
        let (c, ct, body) = get(&s, path, None);
        assert_eq!(c, code, "{path}: {body}");
        assert_eq!(ct, "text/plain; charset=utf-8", "{path}");
        assert!(body.contains(says), "{path}: {body}");
        assert!(!body.contains("<script>"), "{path}: {body}");
    }
    let r = agent()
        .post(format!("{}/runs", s.url))
        .send_empty()
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);
    // Slow clients (a request half sent, a connection opened and left)
    // hold nothing of anyone else's.
    use std::io::Write as _;
    let addr = s.url.trim_start_matches("http://").to_string();
    let mut half = std::net::TcpStream::connect(&addr).unwrap();
    half.write_all(b"GET /runs HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let idle: Vec<_> = (0..20)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    let (c, _, _) = get(&s, "/runs", None);
    assert_eq!(c, 200, "answered beside slow clients");
    drop((half, idle));
    drop(s);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "serve wrote the store"
    );
}

#[test]
fn bad_input_at_start_exits_2_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let s = start(&db);
    let port = s.url.rsplit(':').next().unwrap().to_string();
    for (args, says) in [
        (
            vec!["serve", "--bind", &format!("127.0.0.1:{port}")],
            "is in use",
        ),
        (vec!["serve", "--bind", "localhost"], "invalid"),
    ] {
        let out = secperf(&db).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = secperf(&dir.path().join("none.db"))
        .args(["serve", "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a results file"), "{err}");
    assert!(!dir.path().join("none.db").exists(), "nothing made");
}

#[test]
fn a_token_is_asked_of_every_request_and_its_file_must_be_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let file = dir.path().join("token");
    let token = "s3cr3t-t0ken-0123456789";
    std::fs::write(&file, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = |args: &[&str], says: &str| {
        let out = secperf(&db)
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    let f = file.to_str().unwrap();
    refused(&["--token", f], "chmod 600");
    refused(&["--token", "/nonexistent/token"], "cannot read it");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let s = start_with(&db, &["--token", f]);
    let (code, _, body) = get(&s, "/runs", None);
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("?token=TOKEN"), "{body}");
    assert!(!body.contains(token), "{body}");
    let call = |agent: &ureq::Agent, path: &str, header: Option<(&str, String)>| {
        let mut req = agent.get(format!("{}{path}", s.url));
        if let Some((k, v)) = header {
            req = req.header(k, v);
        }
        req.call().unwrap()
    };
    let a = agent();
    let r = call(
        &a,
        "/runs.json",
        Some(("Authorization", format!("Bearer {token}"))),
    );
    assert_eq!(r.status().as_u16(), 200);
    let r = call(
        &a,
        "/runs.json",
        Some(("Authorization", "Bearer wrong-token-0000000".into())),
    );
    assert_eq!(r.status().as_u16(), 401);
    // A browser: ?token= once, then the cookie, the address without it.
    let no_redirects: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let r = call(&no_redirects, &format!("/runs?host=vm&token={token}"), None);
    assert_eq!(r.status().as_u16(), 303);
    assert_eq!(r.headers()["location"], "/runs?host=vm");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let r = call(&a, "/runs", Some(("Cookie", pair)));
    assert_eq!(r.status().as_u16(), 200);
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Injected into a copy of each page (the served pages run no script: the
/// server's policy forbids it): every plot's size, the page's width
/// against the window's, every fetch and every link, into `<pre
/// id=probe>`.
const PROBE: &str = r#"<script>
window.addEventListener('load', function () {
  var out = { drawings: [], resources: [], links: [],
              scroll_width: document.documentElement.scrollWidth, window_width: window.innerWidth };
  document.querySelectorAll('figure > svg, figure > img').forEach(function (el) {
    var r = el.getBoundingClientRect();
    out.drawings.push({ w: r.width, h: r.height });
  });
  performance.getEntriesByType('resource').forEach(function (e) { out.resources.push(e.name); });
  document.querySelectorAll('a[href]').forEach(function (a) { out.links.push(a.getAttribute('href')); });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"#;

fn chromium(target: &str, profile: &Path) -> std::process::Output {
    Std::new("timeout")
        .args(["120", "chromium"])
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1400,2000",
            "--virtual-time-budget=5000",
            "--run-all-compositor-stages-before-draw",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(target)
        .output()
        .unwrap()
}

fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_page_renders_in_chromium_and_every_link_resolves() {
    let test = "every_page_renders_in_chromium_and_every_link_resolves";
    if let Err(e) = Std::new("chromium").arg("--version").output() {
        let reason = format!("chromium is not installed (Debian: apt-get install chromium): {e}");
        skip_missing_tool(test, "chromium", &reason);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let s = start(&db);
    let mut todo = vec!["/runs".to_string()];
    let mut seen = std::collections::BTreeSet::new();
    let mut n = 0;
    while let Some(path) = todo.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let (code, ct, html) = get(&s, &path, None);
        assert_eq!(code, 200, "a link to {path}: {html}");
        assert!(ct.starts_with("text/html"), "{path}");
        // Served as it is: chromium logs no console message (a fetch the
        // policy blocked, a script error) for it.
        n += 1;
        let out = chromium(
            &format!("{}{path}", s.url),
            &dir.path().join(format!("p{n}")),
        );
        assert!(
            out.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(console_lines(&out.stderr), Vec::<String>::new(), "{path}");
        // A probed copy: sizes, width, fetches, links.
        let copy = dir.path().join(format!("page{n}.html"));
        std::fs::write(
            &copy,
            html.replacen(
                "<meta charset=\"utf-8\">",
                &format!("<meta charset=\"utf-8\">{PROBE}"),
                1,
            ),
        )
        .unwrap();
        let out = chromium(
            &format!("file://{}", copy.display()),
            &dir.path().join(format!("q{n}")),
        );
        let dom = String::from_utf8_lossy(&out.stdout);
        let probe = dom
            .split("<pre id=\"probe\">")
            .nth(1)
            .and_then(|s| s.split("</pre>").next())
            .unwrap_or_else(|| panic!("{path}: the probe did not run: {dom}"));
        let probe: Value = serde_json::from_str(&probe.replace("&amp;", "&")).unwrap();
        assert_eq!(probe["resources"], json!([]), "{path}: {probe}");
        assert!(
            probe["scroll_width"].as_f64().unwrap() <= probe["window_width"].as_f64().unwrap(),
            "{path} scrolls sideways at 1400 px: {probe}"
        );
        for d in probe["drawings"].as_array().unwrap() {
            assert!(
                d["w"].as_f64().unwrap() > 100.0 && d["h"].as_f64().unwrap() > 50.0,
                "{path}: a plot without a size: {d}"
            );
        }
        for l in probe["links"].as_array().unwrap() {
            let l = l.as_str().unwrap();
            if l.starts_with('/') {
                if !seen.contains(l) {
                    todo.push(l.to_string());
                }
            } else {
                assert!(l.starts_with('#'), "{path}: a link out of the server: {l}");
            }
        }
    }
    // The lists, each run, the track and the bisection.
    assert!(seen.contains("/runs/1"), "{seen:?}");
    assert!(seen.contains("/tracks/feedfacefeedface"), "{seen:?}");
    assert!(seen.contains("/bisections/beefbeefbeefbeef"), "{seen:?}");
    eprintln!("{} pages crawled in chromium", seen.len());
}

/// A PostgreSQL cluster of this test's own (`lab.sh pg-up`), taken down
/// when dropped: the test stops and starts it, which the cluster that
/// `.ci/run` starts for every test must not see.
struct OwnPg {
    dir: PathBuf,
    url: String,
}

impl OwnPg {
    fn lab(args: &[&str]) -> std::process::Output {
        let out = Std::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scripts/lab.sh"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "lab.sh {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn up(dir: &Path, port: u16) -> OwnPg {
        let _ = Self::lab(&["pg-down", dir.to_str().unwrap()]);
        let out = Self::lab(&["pg-up", dir.to_str().unwrap(), &port.to_string()]);
        let url = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .expect("pg-up prints the URL")
            .trim()
            .to_string();
        OwnPg {
            dir: dir.to_path_buf(),
            url,
        }
    }

    fn pgpass(&self) -> PathBuf {
        self.dir.join("pgpass")
    }

    /// `secperf --db DB ARGS` with the cluster's password file.
    fn secperf(&self, db: &str, args: &[&str]) -> std::process::Output {
        Std::new(env!("CARGO_BIN_EXE_secperf"))
            .env("PGPASSFILE", self.pgpass())
            .args(["--db", db])
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for OwnPg {
    fn drop(&mut self) {
        let _ = Std::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scripts/lab.sh"))
            .args(["pg-down", self.dir.to_str().unwrap()])
            .output();
    }
}

#[test]
fn a_shared_store_is_served_as_a_file_is_and_a_stopped_one_is_503_until_it_is_back() {
    let test = "a_shared_store_is_served_as_a_file_is_and_a_stopped_one_is_503_until_it_is_back";
    if !std::fs::read_dir("/usr/lib/postgresql").is_ok_and(|mut d| d.next().is_some()) {
        skip_missing_tool(test, "postgresql", "PostgreSQL is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let pg = OwnPg::up(Path::new("/tmp/secperf-test-serve-pg"), 25438);
    let password = std::fs::read_to_string(pg.pgpass())
        .unwrap()
        .trim()
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    assert!(password.len() >= 8, "the lab's password");
    let push = || {
        let out = pg.secperf(db.to_str().unwrap(), &["results", "push", &pg.url]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    push();
    let cli = |args: &[&str]| {
        let mut all = vec!["--json"];
        all.extend(args);
        let out = pg.secperf(&pg.url, &all);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json_of(&out.stdout)
    };
    let pgpass = pg.pgpass();
    let mut s = start_env(Path::new(&pg.url), &[("PGPASSFILE", &pgpass)], &[]);

    // The same documents as the CLI reading the shared store, with the
    // shared store's run ids; stored text escaped.
    let listed = cli(&["results", "list"]);
    let (code, _, body) = get(&s, "/runs.json", None);
    assert_eq!(code, 200, "{body}");
    let doc: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(doc["runs"], listed["runs"]);
    assert_eq!(doc["db"], pg.url.as_str());
    let first = listed["runs"].as_array().unwrap().last().unwrap()["run_id"]
        .as_i64()
        .unwrap();
    let (code, _, body) = get(&s, &format!("/runs/{first}.json"), None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        cli(&["results", "show", &first.to_string()])
    );
    let (code, _, html) = get(&s, "/runs", None);
    assert_eq!(code, 200);
    assert!(html.contains(&format!("store: {}", pg.url)), "{html}");
    assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"));
    for path in ["/tracks/feedfacefeedface", "/bisections/beefbeefbeefbeef"] {
        let (code, _, html) = get(&s, path, None);
        assert_eq!(code, 200, "{path}: {html}");
        assert!(!html.contains("<script>"), "{path}");
    }

    // Two runs compared and the campaign, as from a results file.
    let with_results: Vec<String> = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["results"].as_u64() > Some(0))
        .map(|r| r["run_id"].to_string())
        .collect();
    assert_eq!(with_results.len(), 2, "{listed}");
    let (code, _, body) = get(
        &s,
        &format!("/compare.json?runs={}", with_results.join(",")),
        None,
    );
    assert_eq!(code, 200, "{body}");
    let mut args = vec!["compare"];
    args.extend(with_results.iter().map(String::as_str));
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), cli(&args));
    let (code, _, body) = get(&s, &format!("/campaigns/{CAMPAIGN}.json"), None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        cli(&["results", "show", "--campaign", CAMPAIGN])
    );

    // A push while it serves is seen at the next request.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE runs SET uuid = 'a-new-run-pushed-while-serving' WHERE id = 1",
        [],
    )
    .unwrap();
    drop(c);
    push();
    // Requests at once after a push: one copies, the others read the copy
    // before it or wait for the new one; every one is answered.
    let totals: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|_| {
                scope.spawn(|| {
                    let (code, _, body) = get(&s, "/runs.json", None);
                    assert_eq!(code, 200, "{body}");
                    serde_json::from_str::<Value>(&body).unwrap()["total"]
                        .as_u64()
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let before = doc["total"].as_u64().unwrap();
    assert!(
        totals.iter().all(|&t| t == before || t == before + 1),
        "{totals:?}"
    );
    let (_, _, body) = get(&s, "/runs.json", None);
    let after: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        after["total"].as_u64().unwrap(),
        doc["total"].as_u64().unwrap() + 1,
        "{after}"
    );
    // The copy was brought up to date in place (only the new run read),
    // and says what a fresh copy of the store says: the list, the new run
    // with every row under it, the tracks and bisections read again.
    assert_eq!(after["runs"], cli(&["results", "list"])["runs"]);
    // The newest id (it is listed by the run's start, which is run 1's).
    let new_run = after["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_i64().unwrap())
        .max()
        .unwrap();
    let (code, _, body) = get(&s, &format!("/runs/{new_run}.json"), None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        cli(&["results", "show", &new_run.to_string()])
    );
    for path in ["/tracks.json", "/bisections.json"] {
        let (code, _, body) = get(&s, path, None);
        assert_eq!(code, 200, "{path}: {body}");
    }
    // A run deleted in the store: the copy cannot be updated, and a new
    // one is made.
    let mut admin = secperf::remote::conn::connect(&pg.url.replacen(
        "secperf@",
        &format!("secperf:{password}@"),
        1,
    ))
    .unwrap();
    admin
        .execute("DELETE FROM runs WHERE id = $1", &[&new_run])
        .unwrap();
    drop(admin);
    let (_, _, body) = get(&s, "/runs.json", None);
    let deleted: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(deleted["runs"], doc["runs"], "{deleted}");
    let (code, _, _) = get(&s, &format!("/runs/{new_run}.json"), None);
    assert_eq!(code, 404);
    // Pushed again, it is back (with a new id).
    push();
    let (_, _, body) = get(&s, "/runs.json", None);
    let after: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(after["runs"], cli(&["results", "list"])["runs"]);
    assert_eq!(after["total"], doc["total"].as_u64().unwrap() + 1);

    // Stopped: 503 naming the store (no password), and back by itself.
    OwnPg::lab(&["pg-stop", pg.dir.to_str().unwrap()]);
    for path in ["/runs", &format!("/runs/{first}"), "/tracks.json"] {
        let (code, ct, body) = get(&s, path, None);
        assert_eq!(code, 503, "{path}: {body}");
        assert_eq!(ct, "text/plain; charset=utf-8");
        assert!(body.contains(&pg.url), "{body}");
        assert!(body.contains("served again once it is back"), "{body}");
        assert!(!body.contains(&password), "{body}");
    }
    OwnPg::lab(&["pg-up", pg.dir.to_str().unwrap(), "25438"]);
    let (code, _, body) = get(&s, "/runs.json", None);
    assert_eq!(code, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), after);

    // Its log names the store and never the password.
    let _ = s.child.kill();
    let mut log = String::new();
    use std::io::Read as _;
    s.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(log.contains("cannot be read"), "{log}");
    assert!(!log.contains(&password), "{log}");
    // Every update in place worked (none fell back to a new copy).
    assert!(!log.contains("up to date failed"), "{log}");

    // Not reachable at start: exit 2 with what to do, no password.
    OwnPg::lab(&["pg-stop", pg.dir.to_str().unwrap()]);
    let out = pg.secperf(&pg.url, &["serve", "--bind", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("start it, check the URL"), "{err}");
    assert!(!err.contains(&password), "{err}");
}
