//! End to end: `secperf overhead -m audit:rules=FILE`, a rules file in
//! auditctl syntax as the treatment.
//!
//! Without root: a bad or missing rules file exits with code 2 naming the
//! file (and each bad line) before anything runs. As root with audit
//! available (else each test is skipped, see `tests/common/skips.rs`): a watch the kernel
//! refuses stops the run with FILE:LINE and the kernel's errno and leaves
//! audit as it was; a good file is measured with the tiny design and audit
//! is left byte for byte as it was (rule listing and enabled flag); a run
//! SIGKILLed while the file's rules are loaded is undone by `secperf
//! restore`. The live tests hold secperf's default state lock (so live
//! tests and runs elsewhere on the machine wait for them), run secperf
//! with a private state directory, and put audit back on drop whatever
//! happens.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use secperf::safety::StateLock;
use secperf::sys::audit::{AuditState, RuleData};

use common::{
    PutBack, TINY, WATCHED, audit_state, no_phantom_rules, secperf, state_lock, usable_audit,
};

const SECPERF: &str = env!("CARGO_BIN_EXE_secperf");

static SERIAL: Mutex<()> = Mutex::new(());

/// How long to wait for something before calling it lost: a guard against
/// hanging, not a time check.
const HANG_GUARD: Duration = Duration::from_secs(300);

/// What a live test holds while it runs.
struct Live {
    test: String,
    _serial: MutexGuard<'static, ()>,
    _lock: StateLock,
    before: AuditState,
    _put_back: PutBack,
}

impl Drop for Live {
    /// After a test that passed: audit as it was, then (in the CI's guest
    /// step) no phantom audit rules.
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let _ = secperf::sys::audit::AuditSocket::open().and_then(|s| s.set_state(&self.before));
        no_phantom_rules(&self.test);
    }
}

/// The live-test context, or `None` when `test` is skipped here.
fn live(test: &str) -> Option<Live> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    usable_audit(test)?;
    let lock = state_lock(test)?;
    // Read after the lock: the state may have changed while we waited.
    let before = audit_state();
    Some(Live {
        test: test.to_string(),
        _serial: serial,
        _lock: lock,
        _put_back: PutBack(before.clone()),
        before,
    })
}

/// Writes `text` as `name` in `dir`.
fn write_rules(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A small realistic file whose rules never record while getppid runs:
/// control lines, syscall rules on other syscalls (one prepended), a
/// never rule on every syscall for a uid nobody has, a watch, an exclude
/// rule. The watch is on [`WATCHED`], whose directory never vanishes: a
/// watch under a temporary directory that goes while the rule is loaded
/// would leave the kernel counting a rule that is gone (phantom rules).
fn harmless_rules() -> String {
    format!(
        "## secperf end-to-end test rules\n\
         -D\n\
         -b 8192\n\
         -f 1\n\
         -a always,exit -F arch=b64 -S acct,swapoff -F auid>=1000 -F auid!=unset -k secperf-test\n\
         -A always,exit -F arch=b64 -S pivot_root -k secperf-test\n\
         -a never,exit -S all -F uid=2147483632\n\
         -w {WATCHED} -p wa -k secperf-test\n\
         -a never,exclude -F msgtype=1999\n"
    )
}

/// `secperf overhead -m audit:rules=FILE -w getppid` with the tiny
/// design, in a private state directory.
fn overhead(db: &Path, state: &Path, rules: &Path, extra: &[&str]) -> std::process::Output {
    let spec = format!("audit:rules={}", rules.display());
    secperf(db)
        .env("SECPERF_STATE_DIR", state)
        .args(extra)
        .args(["overhead", "-m", &spec, "-w", "getppid"])
        .args(TINY)
        .output()
        .expect("running secperf")
}

#[test]
fn a_bad_rules_file_exits_2_naming_each_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let rules = write_rules(
        dir.path(),
        "bad.rules",
        "# two mistakes and a good line\n\
         -a always,exit -F arch=b64 -S frobnicate -k x\n\
         -a always,exit -F arch=b64 -S getppid -k ok\n\
         -w etc/passwd -p wa\n",
    );
    let out = overhead(
        &dir.path().join("r.db"),
        &dir.path().join("state"),
        &rules,
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let file = rules.display();
    assert!(stderr.contains(&format!("{file}: 2 bad lines")), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{file}:2: -a always,exit -F arch=b64 -S frobnicate -k x: unknown syscall"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{file}:4: -w etc/passwd -p wa: the watched path")),
        "{stderr}"
    );
    assert!(!stderr.contains(&format!("{file}:3:")), "{stderr}");
}

#[test]
fn a_missing_rules_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.rules");
    let out = overhead(
        &dir.path().join("r.db"),
        &dir.path().join("state"),
        &missing,
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&missing.display().to_string()), "{stderr}");
    // rules= with another variant, and the variant without a file.
    for spec in ["audit:enabled,rules=/x.rules", "audit:rules"] {
        let out = secperf(&dir.path().join("r.db"))
            .args(["overhead", "-m", spec, "-w", "getppid"])
            .args(TINY)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{spec}");
    }
}

#[test]
fn a_watch_the_kernel_refuses_exits_2_and_changes_nothing() {
    let test = "a_watch_the_kernel_refuses_exits_2_and_changes_nothing";
    let Some(live) = live(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rules = write_rules(
        dir.path(),
        "watch.rules",
        "-a always,exit -F arch=b64 -S acct -k secperf-test\n\
         -w /nonexistent/secperf/dir/file -p wa -k secperf-test\n",
    );
    let out = overhead(
        &dir.path().join("r.db"),
        &dir.path().join("state"),
        &rules,
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}:2: -w /nonexistent/secperf/dir/file -p wa -k secperf-test: the kernel refused \
             it: ENOENT",
            rules.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("parent directory does not exist"),
        "{stderr}"
    );
    assert_eq!(audit_state(), live.before, "audit left exactly as it was");
    assert!(!dir.path().join("state/journal.json").exists());
}

/// A watch inside a scratch directory secperf deletes after each half
/// would become a phantom rule: refused before anything changes.
#[test]
fn a_watch_inside_a_scratch_directory_is_refused_before_measuring() {
    let test = "a_watch_inside_a_scratch_directory_is_refused_before_measuring";
    let Some(live) = live(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let rules = write_rules(
        dir.path(),
        "scratch.rules",
        &format!(
            "-a always,exit -F arch=b64 -S acct -k secperf-test\n\
             -w {}/secperf-getppid-x/file -p wa -k secperf-test\n",
            scratch.display()
        ),
    );
    let scratch_arg = scratch.display().to_string();
    let out = secperf(&dir.path().join("r.db"))
        .env("SECPERF_STATE_DIR", dir.path().join("state"))
        .args(["overhead", "-m"])
        .arg(format!("audit:rules={}", rules.display()))
        .args(["-w", "getppid", "--scratch", &scratch_arg])
        .args(TINY)
        .output()
        .expect("running secperf");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let words = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(&format!(
            "{}:2: -w {scratch_arg}/secperf-getppid-x/file -p wa -k secperf-test: it watches \
             {scratch_arg}/secperf-getppid-x, inside a scratch directory secperf deletes",
            rules.display()
        )),
        "{stderr}"
    );
    assert!(words.contains("phantom rules"), "{stderr}");
    assert_eq!(audit_state(), live.before, "audit left exactly as it was");
    assert!(!dir.path().join("state/journal.json").exists());
}

#[test]
fn a_good_rules_file_is_measured_and_audit_is_left_as_it_was() {
    let test = "a_good_rules_file_is_measured_and_audit_is_left_as_it_was";
    let Some(live) = live(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rules = write_rules(dir.path(), "good.rules", &harmless_rules());
    let out = overhead(
        &dir.path().join("r.db"),
        &dir.path().join("state"),
        &rules,
        &["--json"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["comparisons"][0];
    assert_eq!(c["mechanism"], "audit");
    assert_eq!(c["variant"], "rules");
    assert_eq!(c["params"]["rules"], rules.display().to_string());
    assert_eq!(c["pairs"], 10);
    assert!(c["treatment_per_op"].as_f64().unwrap() > 0.0);
    // The treatment described itself before measuring.
    assert!(
        stderr.contains(&format!(
            "{}: 5 rules (3 syscall rules, 1 watch, 1 on other lists), 3 control lines not \
             applied",
            rules.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("-D (implied: the measured arm starts with no rules)"),
        "{stderr}"
    );
    assert_eq!(
        audit_state(),
        live.before,
        "rules and enabled flag byte for byte"
    );
    assert!(!dir.path().join("state/journal.json").exists());
}

#[test]
fn a_run_sigkilled_with_the_files_rules_loaded_is_restored() {
    let test = "a_run_sigkilled_with_the_files_rules_loaded_is_restored";
    let Some(live) = live(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let rules = write_rules(dir.path(), "kill.rules", &harmless_rules());
    let state = dir.path().join("state");
    let journal = state.join("journal.json");
    let stderr_path = dir.path().join("overhead.stderr");
    let mut child = Command::new(SECPERF)
        .env("SECPERF_STATE_DIR", &state)
        .arg("--db")
        .arg(dir.path().join("r.db"))
        .args(["overhead", "-m"])
        .arg(format!("audit:rules={}", rules.display()))
        .args(["-w", "getppid", "--pairs", "40", "--sample-ms", "100"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("starting secperf overhead");
    // The run ends on its own long before the guard: it only stops a hang.
    let start = Instant::now();
    let mut loaded = None;
    while start.elapsed() < HANG_GUARD {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "secperf overhead ended ({status}) before it loaded the rules:\n{}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        }
        let now = audit_state();
        if journal.exists() && now.enabled == 1 && now.rules.len() == 5 {
            loaded = Some(now);
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().unwrap();
    let loaded = loaded.unwrap_or_else(|| {
        panic!(
            "secperf overhead never loaded the rules (gave up after {HANG_GUARD:?}):\n{}",
            std::fs::read_to_string(&stderr_path).unwrap_or_default()
        )
    });
    let rules: Vec<RuleData> = loaded
        .rules
        .iter()
        .map(|r| RuleData::decode(r).unwrap())
        .collect();
    assert!(rules.iter().any(RuleData::is_watch), "{rules:?}");
    assert!(journal.exists(), "a SIGKILLed run leaves its journal");

    let out = Command::new(SECPERF)
        .env("SECPERF_STATE_DIR", &state)
        .arg("--db")
        .arg(dir.path().join("r.db"))
        .arg("restore")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(audit_state(), live.before, "restored byte for byte");
    assert!(!journal.exists(), "journal removed");
}

/// `probe --active` leaves a machine with audit rules alone: the answer
/// is null, with the reason, and audit is as it was.
#[test]
fn probe_active_leaves_a_machine_with_rules_alone() {
    let test = "probe_active_leaves_a_machine_with_rules_alone";
    let Some(live) = live(test) else {
        return;
    };
    let own = RuleData::always_exit(secperf::sys::audit::AUDIT_ARCH_X86_64)
        .with_syscall(155)
        .with_key("secperf-own");
    secperf::sys::audit::AuditSocket::open()
        .and_then(|s| s.add_rule(&own.encode()))
        .expect("adding a rule");
    let with_rule = audit_state();
    let dir = tempfile::tempdir().unwrap();
    let out = secperf(&dir.path().join("r.db"))
        .env("SECPERF_STATE_DIR", dir.path().join("state"))
        .args(["probe", "--active", "--rounds", "1", "--json"])
        .output()
        .expect("running secperf probe --active");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v = common::json_of(&out.stdout);
    assert_eq!(v["audit"]["phantom_rules"], serde_json::Value::Null);
    let reason = v["audit"]["phantom_check"]["reason"].as_str().unwrap();
    assert!(reason.contains("1 audit rule is loaded"), "{reason}");
    assert_eq!(audit_state(), with_rule, "nothing changed");
    secperf::sys::audit::AuditSocket::open()
        .and_then(|s| s.del_rule(&own.encode()))
        .expect("removing the rule");
    assert_eq!(audit_state(), live.before);
}
