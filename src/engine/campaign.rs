//! `secperf campaign`: one measuring command on many hosts, each measuring
//! itself, the finished runs pulled into one store.
//!
//! Per host, through the system's OpenSSH client (`remote::ssh`):
//! 1. check the host's architecture and whether this very secperf binary
//!    (same sha256) is already in `~/.cache/secperf/`; copy it if not;
//! 2. take any finished run a previous attempt left in the host's campaign
//!    database (`~/.cache/secperf/campaign-ID.db`) that is not stored here
//!    yet: then the host is done without measuring again;
//! 3. run the command with `--db` that database, streaming its stderr;
//! 4. copy the database back and import its finished runs that are new
//!    here (by uuid), tagged with the campaign and the host, then push them
//!    to the shared store when there is one.
//!
//! Hosts are worked on by `parallel` threads; each host's runs are stored
//! as soon as it finishes, so a host that fails, is unreachable, or a
//! Ctrl-C loses nothing another host finished. A host is done when this
//! store holds a finished run of the campaign from it: `--resume` works on
//! the others. On one machine, two measurements never overlap: the
//! measurement lock of the host (each host's own) ensures it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::remote::ssh::{Ssh, is_connection_failure, quote};
use crate::store::Store;
use crate::store::campaigns::CampaignRecord;

/// The subcommands a campaign may run: those that measure and store a run.
pub const MEASURING: &[&str] = &["run", "overhead", "suite", "calibrate"];

/// Where a host keeps secperf's binaries and campaign databases.
const REMOTE_DIR: &str = "$HOME/.cache/secperf";

/// The hosts of `--hosts`: a file (one per line, `#` comments) or a comma
/// separated list.
pub fn parse_hosts(arg: &str) -> Result<Vec<String>> {
    let path = Path::new(arg);
    let text;
    let words: Vec<&str> = if path.is_file() {
        text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the hosts file {arg}"))?;
        text.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect()
    } else if arg.contains('/') {
        crate::usage_bail!(
            "--hosts {arg}: no such file (give a file with one host per line, or a,b,c)"
        );
    } else {
        arg.split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .collect()
    };
    let mut hosts: Vec<String> = Vec::new();
    for h in words {
        if h.starts_with('-') || h.chars().any(char::is_whitespace) {
            crate::usage_bail!(
                "host '{h}' is not an ssh destination: give names as `ssh` takes them \
                 (host, user@host or an alias of ~/.ssh/config), one per line or separated by \
                 commas"
            );
        }
        if hosts.iter().any(|x| x == h) {
            crate::usage_bail!("host '{h}' is listed twice: give each host once");
        }
        hosts.push(h.to_string());
    }
    if hosts.is_empty() {
        crate::usage_bail!(
            "--hosts {arg} names no host: give a file with one host per line, or a,b,c"
        );
    }
    Ok(hosts)
}

/// Checks the measuring command: a subcommand that measures, and no
/// `--db` (the campaign gives each host its own).
pub fn check_command(words: &[String]) -> Result<()> {
    let Some(first) = words.first() else {
        crate::usage_bail!(
            "no command to run on the hosts: give one after `--`, e.g. `secperf campaign \
             --hosts a,b -- run -w getppid`"
        );
    };
    if !MEASURING.contains(&first.as_str()) {
        crate::usage_bail!(
            "`{first}` does not measure: a campaign runs one of {} on every host",
            MEASURING.join(", ")
        );
    }
    if words.iter().any(|w| w == "--db" || w.starts_with("--db=")) {
        crate::usage_bail!(
            "the command has --db: a campaign gives each host a database of its own and pulls \
             the runs into this one (`secperf --db ... campaign`)"
        );
    }
    Ok(())
}

/// A new campaign id: 8 hex digits.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

/// What happened on one host.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostOutcome {
    pub host: String,
    /// "done", "already done", or "failed".
    pub status: &'static str,
    /// Ids of the host's runs in this store.
    pub runs: Vec<i64>,
    /// Whether the binary was copied (false: the same one was there).
    pub copied_binary: bool,
    /// The step that failed and why.
    pub error: Option<String>,
    /// Where the runs went besides this store: the push's outcome.
    pub push: Option<String>,
    pub seconds: f64,
}

/// What a campaign did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CampaignOutcome {
    pub campaign: CampaignRecord,
    pub db: PathBuf,
    /// The shared store the runs were pushed to, without password.
    pub pushed_to: Option<String>,
    pub hosts: Vec<HostOutcome>,
}

impl CampaignOutcome {
    pub fn failed(&self) -> usize {
        self.hosts.iter().filter(|h| h.status == "failed").count()
            + self
                .hosts
                .iter()
                .filter(|h| h.push.as_deref().is_some_and(|p| p.starts_with("failed")))
                .count()
    }
}

/// How a campaign reaches its hosts and where its runs go.
pub struct Plan<'a> {
    pub record: CampaignRecord,
    pub ssh: Ssh,
    /// The shared store to push each host's runs to.
    pub push_to: Option<&'a str>,
}

/// The binary being run, and its sha256 in hex.
fn this_binary() -> Result<(Vec<u8>, String)> {
    let exe = std::env::current_exe().context("finding this secperf's binary")?;
    let bytes =
        std::fs::read(&exe).with_context(|| format!("reading this binary {}", exe.display()))?;
    let sha = crate::policy::source::sha256_hex(&bytes);
    Ok((bytes, sha))
}

/// `uname -m`'s name for the architecture this binary was built for.
fn our_arch() -> &'static str {
    std::env::consts::ARCH
}

/// How a campaign starts: again, from its stored record (the hosts
/// without a finished run), or new.
pub enum Start {
    /// `--resume ID`, at this parallelism.
    Resume { id: String, parallel: u32 },
    /// A new campaign, its hosts checked.
    New(CampaignRecord),
}

/// Opens the local results file at `local` and the campaign's record: a
/// resumed one (its hosts checked again at this run's parallelism), or a
/// new one, stored before any host is touched.
pub fn start(local: &std::path::Path, start: Start, ssh: &Ssh) -> Result<(Store, CampaignRecord)> {
    let mut store = Store::open(local)?;
    let record = match start {
        Start::Resume { id, parallel } => {
            let mut record = store.campaign(&id)?;
            record.parallel = parallel;
            refuse_same_machine(ssh, &record.hosts, record.parallel)?;
            record
        }
        Start::New(record) => {
            store.add_campaign(&record)?;
            record
        }
    };
    Ok((store, record))
}

/// Runs the campaign. `say` gets progress lines (already prefixed with the
/// host); `store` is where runs are imported.
pub fn run(plan: &Plan, store: &mut Store, say: &(dyn Fn(&str) + Sync)) -> Result<CampaignOutcome> {
    let (binary, sha) = this_binary()?;
    let db_path = store.path().to_path_buf();
    let done_before: Vec<(String, i64)> = store
        .campaign_runs(&plan.record.id)?
        .into_iter()
        .map(|r| (r.host, r.run_id))
        .collect();
    let store = Mutex::new(store);
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let hosts = &plan.record.hosts;
    let outcomes: Mutex<Vec<Option<HostOutcome>>> = Mutex::new(vec![None; hosts.len()]);
    let workers = (plan.record.parallel as usize).clamp(1, hosts.len());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(host) = hosts.get(i) else { break };
                    let start = Instant::now();
                    let earlier: Vec<i64> = done_before
                        .iter()
                        .filter(|(h, _)| h == host)
                        .map(|(_, id)| *id)
                        .collect();
                    let outcome = if !earlier.is_empty() {
                        HostOutcome {
                            host: host.clone(),
                            status: "already done",
                            runs: earlier,
                            copied_binary: false,
                            error: None,
                            push: None,
                            seconds: 0.0,
                        }
                    } else {
                        one_host(plan, host, &binary, &sha, &store, say, start)
                    };
                    let n = finished.fetch_add(1, Ordering::SeqCst) + 1;
                    match &outcome.error {
                        None => say(&format!(
                            "[{host}] {}: run {} ({:.1} s) · {n}/{} hosts",
                            outcome.status,
                            outcome
                                .runs
                                .iter()
                                .map(i64::to_string)
                                .collect::<Vec<_>>()
                                .join(", "),
                            outcome.seconds,
                            hosts.len()
                        )),
                        Some(e) => {
                            say(&format!("[{host}] FAILED: {e} · {n}/{} hosts", hosts.len()))
                        }
                    }
                    outcomes.lock().expect("outcomes")[i] = Some(outcome);
                }
            });
        }
    });
    let mut hosts_out: Vec<HostOutcome> = outcomes
        .into_inner()
        .expect("outcomes")
        .into_iter()
        .map(|o| o.expect("every host has an outcome"))
        .collect();
    let store = store.into_inner().expect("store");
    // Runs a host finished earlier, which an earlier push may have missed.
    if let Some(url) = plan.push_to {
        let ids: Vec<i64> = hosts_out
            .iter()
            .filter(|h| h.status == "already done")
            .flat_map(|h| h.runs.clone())
            .collect();
        if !ids.is_empty() {
            let pushed = crate::remote::push::push(store, url, Some(&ids), &mut |_, _| {});
            for h in hosts_out.iter_mut().filter(|h| h.status == "already done") {
                h.push = Some(match &pushed {
                    Ok(_) => "pushed (or already there)".to_string(),
                    Err(e) => format!("failed: {e:#}"),
                });
            }
        }
    }
    Ok(CampaignOutcome {
        campaign: plan.record.clone(),
        db: db_path,
        pushed_to: plan.push_to.map(crate::remote::conn::redact),
        hosts: hosts_out,
    })
}

/// The machine a host name reaches: its machine id and boot id (the
/// same for two names of one machine); None when it cannot be read (the
/// host is then reported by its own step).
fn machine_of(ssh: &Ssh, host: &str) -> Option<String> {
    let out = ssh
        .output(
            host,
            // One per line, whether or not the files end in a newline.
            "cat /etc/machine-id && echo && cat /proc/sys/kernel/random/boot_id",
            None,
        )
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let ids: Vec<&str> = text.split_whitespace().collect();
    (out.status.success() && ids.len() == 2).then(|| ids.join(" "))
}

/// Two host names that reach one machine would measure it twice, at
/// once, into one campaign database there: a usage error naming them,
/// before anything is recorded, copied or measured.
/// `parallel` hosts are asked at a time, as the campaign itself goes.
pub fn refuse_same_machine(ssh: &Ssh, hosts: &[String], parallel: u32) -> Result<()> {
    if hosts.len() < 2 {
        return Ok(());
    }
    let mut ids: Vec<Option<String>> = Vec::with_capacity(hosts.len());
    for batch in hosts.chunks(parallel.max(1) as usize) {
        std::thread::scope(|s| {
            let handles: Vec<_> = batch
                .iter()
                .map(|h| s.spawn(move || machine_of(ssh, h)))
                .collect();
            ids.extend(handles.into_iter().map(|h| h.join().ok().flatten()));
        });
    }
    same_machine(hosts, &ids)
}

/// The check of [`refuse_same_machine`] on the ids read.
fn same_machine(hosts: &[String], ids: &[Option<String>]) -> Result<()> {
    for (i, a) in ids.iter().enumerate() {
        let Some(a) = a else { continue };
        if let Some(j) = ids[..i].iter().position(|b| b.as_ref() == Some(a)) {
            crate::usage_bail!(
                "hosts {} and {} reach the same machine (machine id and boot id {a}): each \
                 machine once, or their runs would share one campaign database there",
                hosts[j],
                hosts[i]
            );
        }
    }
    Ok(())
}

fn one_host(
    plan: &Plan,
    host: &str,
    binary: &[u8],
    sha: &str,
    store: &Mutex<&mut Store>,
    say: &(dyn Fn(&str) + Sync),
    start: Instant,
) -> HostOutcome {
    let mut outcome = HostOutcome {
        host: host.to_string(),
        status: "done",
        runs: Vec::new(),
        copied_binary: false,
        error: None,
        push: None,
        seconds: 0.0,
    };
    let result = (|| -> Result<()> {
        outcome.copied_binary = install(plan, host, binary, sha, say)?;
        // A previous attempt's finished runs, not pulled yet.
        let mut runs = pull_runs(plan, host, store)?;
        if runs.is_empty() {
            measure(plan, host, sha, say)?;
            runs = pull_runs(plan, host, store)?;
            if runs.is_empty() {
                bail!(
                    "the command finished but stored no finished run in the host's campaign \
                     database"
                );
            }
        } else {
            say(&format!(
                "[{host}] found {} finished run(s) of this campaign from an earlier attempt",
                runs.len()
            ));
        }
        outcome.runs = runs;
        Ok(())
    })();
    if let Err(e) = result {
        outcome.status = "failed";
        outcome.error = Some(format!("{e:#}"));
    } else if let Some(url) = plan.push_to {
        let mut guard = store.lock().expect("store");
        outcome.push = Some(
            match crate::remote::push::push(&mut guard, url, Some(&outcome.runs), &mut |_, _| {}) {
                Ok(r) if r.pushed.is_empty() => "already in the shared store".to_string(),
                Ok(r) => format!(
                    "pushed as run {}",
                    r.pushed
                        .iter()
                        .map(|p| p.remote_id.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Err(e) => format!(
                    "failed: {e:#} (the runs are stored here; push them again with `secperf results push`)"
                ),
            },
        );
    }
    outcome.seconds = start.elapsed().as_secs_f64();
    outcome
}

/// Makes sure the host has this binary; true when it was copied.
fn install(
    plan: &Plan,
    host: &str,
    binary: &[u8],
    sha: &str,
    say: &(dyn Fn(&str) + Sync),
) -> Result<bool> {
    let name = format!("secperf-{}", &sha[..16]);
    let probe = format!(
        "d=\"{REMOTE_DIR}\"; mkdir -p \"$d\" && uname -m && if [ -x \"$d/{name}\" ]; then \
         sha256sum \"$d/{name}\"; else echo none; fi"
    );
    let out = plan.ssh.output(host, &probe, None)?;
    if !out.status.success() {
        bail!(
            "{}",
            ssh_failure("reaching the host", &out.status, &out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let arch = lines.next().unwrap_or("").trim().to_string();
    if arch != our_arch() {
        bail!(
            "the host is {arch} and this secperf is built for {}: build secperf for {arch} \
             (cargo build --release --target ...) and run the campaign from there",
            our_arch()
        );
    }
    let there = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next()
        .unwrap_or("");
    if there == sha {
        say(&format!("[{host}] this secperf is already there ({name})"));
        return Ok(false);
    }
    say(&format!(
        "[{host}] copying this secperf ({:.1} MB, sha256 {})",
        binary.len() as f64 / 1e6,
        &sha[..16]
    ));
    let copy = format!(
        "set -e; d=\"{REMOTE_DIR}\"; t=\"$d/.{name}.$$\"; cat > \"$t\"; chmod 755 \"$t\"; \
         s=$(sha256sum \"$t\" | cut -d' ' -f1); if [ \"$s\" != {sha} ]; then rm -f \"$t\"; \
         echo \"the copy's sha256 is $s\" >&2; exit 1; fi; mv -f \"$t\" \"$d/{name}\""
    );
    let out = plan.ssh.output(host, &copy, Some(binary))?;
    if !out.status.success() {
        bail!(
            "{}",
            ssh_failure("copying secperf", &out.status, &out.stderr)
        );
    }
    Ok(true)
}

/// The host's campaign database, as its shell names it.
fn remote_db(plan: &Plan) -> String {
    format!("{REMOTE_DIR}/campaign-{}.db", plan.record.id)
}

/// Runs the command on the host, streaming its stderr.
fn measure(plan: &Plan, host: &str, sha: &str, say: &(dyn Fn(&str) + Sync)) -> Result<()> {
    say(&format!(
        "[{host}] running: secperf {}",
        quote(&plan.record.command)
    ));
    let cmd = format!(
        "cd \"$HOME\" && exec \"{REMOTE_DIR}/secperf-{}\" --db \"{}\" {}",
        &sha[..16],
        remote_db(plan),
        quote(&plan.record.command)
    );
    let mut last: Vec<String> = Vec::new();
    let (_stdout, status) = plan.ssh.stream(host, &cmd, &mut |line: &str| {
        say(&format!("[{host}] | {line}"));
        last.push(line.to_string());
        if last.len() > 5 {
            last.remove(0);
        }
    })?;
    if !status.success() {
        if is_connection_failure(&status) {
            bail!(
                "the connection failed or was lost while measuring: {}",
                last.join(" / ")
            );
        }
        bail!(
            "the command failed on the host (exit {}): {}",
            status
                .code()
                .map_or("by a signal".into(), |c| c.to_string()),
            last.join(" / ")
        );
    }
    Ok(())
}

/// Copies the host's campaign database back and imports its finished runs
/// that are not here yet. Returns the ids here of all its finished runs.
fn pull_runs(plan: &Plan, host: &str, store: &Mutex<&mut Store>) -> Result<Vec<i64>> {
    let cat = format!(
        "f=\"{}\"; if [ -f \"$f\" ]; then cat \"$f\"; fi",
        remote_db(plan)
    );
    let out = plan.ssh.output(host, &cat, None)?;
    if !out.status.success() {
        bail!(
            "{}",
            ssh_failure("copying the host's runs back", &out.status, &out.stderr)
        );
    }
    if out.stdout.is_empty() {
        return Ok(Vec::new());
    }
    let dir = tempfile::tempdir().context("a temporary directory for the host's runs")?;
    let file = dir.path().join("host.db");
    std::fs::write(&file, &out.stdout).context("writing the host's runs")?;
    let runs = Store::finished_runs_in(&file)
        .with_context(|| format!("reading the runs copied from {host}"))?;
    let mut guard = store.lock().expect("store");
    let mut ids = Vec::new();
    for (id, uuid) in runs {
        if guard.has_run_uuid(&uuid)? {
            continue;
        }
        let new = guard.import_run(&file, id, None, None, None)?;
        guard.tag_campaign_run(new, &plan.record.id, host)?;
        ids.push(new);
    }
    Ok(ids)
}

/// A failed ssh step, said plainly.
fn ssh_failure(step: &str, status: &std::process::ExitStatus, stderr: &[u8]) -> String {
    let err = String::from_utf8_lossy(stderr);
    let err = err.trim();
    if is_connection_failure(status) {
        format!("{step}: ssh could not connect ({err})")
    } else {
        format!("{step}: exit {} ({err})", status.code().unwrap_or(-1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_come_from_a_list_or_a_file() {
        assert_eq!(parse_hosts("a, b,c").unwrap(), ["a", "b", "c"]);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("hosts");
        std::fs::write(&f, "# lab\nh1\n\nroot@h2  # the EPYC\n").unwrap();
        assert_eq!(parse_hosts(f.to_str().unwrap()).unwrap(), ["h1", "root@h2"]);
        for bad in ["", ",", "a,a", "-oProxyCommand=x", "a b", "/no/such/hosts"] {
            let e = parse_hosts(bad).unwrap_err();
            assert!(
                e.downcast_ref::<crate::error::UsageError>().is_some(),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn only_measuring_commands_without_db_are_run() {
        let w = |s: &str| shell_words::split(s).unwrap();
        check_command(&w("run -w getppid")).unwrap();
        check_command(&w("overhead -m seccomp:allow --quick")).unwrap();
        for bad in ["", "results list", "run --db x.db", "run --db=x.db"] {
            assert!(check_command(&w(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn two_names_of_one_machine_are_refused() {
        let hosts: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let id = |s: &str| Some(s.to_string());
        assert!(same_machine(&hosts, &[id("m1 b1"), id("m2 b2"), None]).is_ok());
        let e = same_machine(&hosts, &[id("m1 b1"), None, id("m1 b1")]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(
            e.to_string()
                .contains("hosts a and c reach the same machine"),
            "{e}"
        );
        // One machine id with two boot ids: clones of one image, two
        // machines.
        assert!(same_machine(&hosts, &[id("m1 b1"), id("m1 b2"), None]).is_ok());
    }

    #[test]
    fn campaign_ids_are_short_and_distinct() {
        let (a, b) = (new_id(), new_id());
        assert_eq!(a.len(), 8);
        assert_ne!(a, b);
    }
}
