//! A run session: what every measuring command (`run`, `overhead`, `suite`,
//! `calibrate`) does around its measurements, in one place. It holds the
//! measurement lock the command took first ([`measurement_lock`]: one
//! measurement at a time on a machine; a second one waits, or fails with
//! `--no-wait`), opens the store, installs the interrupt handlers (Ctrl-C stops cleanly: tasks
//! stopped, results so far kept, system changes undone), takes the state
//! lock when a system-wide mechanism is in play, records the run (probe
//! snapshot, host, version, command line, parameters) and counts progress.
//! `probe --active`'s check for phantom audit rules gets the same
//! interrupt handlers and state lock ([`check_phantom_now`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::phantom::{CheckOpts, check_reporting};
use super::progress::Progress;
use crate::model::RunMeta;
use crate::probe::audit_phantom::PhantomCheck;
use crate::safety::{MeasureLock, StateLock};
use crate::store::Store;

/// How long a run waits for another secperf holding the state lock.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(60);

/// What a run is, before it starts.
pub struct RunSpec<'a, P: serde::Serialize> {
    /// "run", "overhead", "suite", "calibrate".
    pub kind: &'a str,
    pub label: &'a str,
    /// Stored as the run's parameters.
    pub params: &'a P,
    /// Whether any measurement switches a system-wide mechanism (then the
    /// state lock is held for the whole run).
    pub system_wide: bool,
    /// Slices the run will measure, for the progress bar.
    pub slices: u64,
    /// Whether the run switches audit: then it checks for phantom audit
    /// rules once it holds the state lock, and records the answer in its
    /// probe snapshot (`system.audit.phantom_rules`).
    pub audit_check: bool,
    /// The seed the run uses, for the commands that take `--seed`
    /// (`overhead`, `suite`, `calibrate`); None for those that do not.
    /// When the user gave no `--seed`, the stored command line gets
    /// `--seed N` so that it replays the run in the same order.
    pub seed: Option<u64>,
    /// What the halves measure per operation (stored in the run's
    /// parameters as `metric`).
    pub metric: crate::model::Metric,
}

/// The phantom-rules check of this invocation: made by its first audit
/// run, reused by the ones after it (predict measures its probes in
/// several runs; the kernel's phantom state does not change in between,
/// and each check moved the machine's audit state for nothing).
static PHANTOM_CHECKED: std::sync::Mutex<Option<(Option<bool>, PhantomCheck)>> =
    std::sync::Mutex::new(None);

/// The check an audit run makes before it measures, once per invocation;
/// warns where phantom rules are found.
fn phantom_check_once(lock: &StateLock, seed: u64) -> Result<(Option<bool>, PhantomCheck)> {
    let (answer, fresh) = once(&PHANTOM_CHECKED, || {
        // The arms set the machine's rules aside anyway.
        let opts = CheckOpts::in_run(seed, cache_dir());
        let (phantom, check) = check_reporting(lock, &opts)?;
        if phantom == Some(true) {
            crate::say!("secperf: warning: {}", check.consequence());
        }
        Ok((phantom, check))
    })?;
    if !fresh {
        crate::say!("secperf: phantom audit rules: as checked before in this invocation");
    }
    Ok(answer)
}

/// `make`'s answer, made the first time and kept in `memo` for the calls
/// after it; true where it was made now. An error is not kept.
fn once<T: Clone>(
    memo: &std::sync::Mutex<Option<T>>,
    make: impl FnOnce() -> Result<T>,
) -> Result<(T, bool)> {
    let mut memo = memo.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(done) = memo.as_ref() {
        return Ok((done.clone(), false));
    }
    let made = make()?;
    *memo = Some(made.clone());
    Ok((made, true))
}

/// An open run: its store, its id, the lock if held, its progress.
pub struct Session {
    pub db_path: PathBuf,
    pub store: Store,
    pub run_id: i64,
    /// The command line stored with the run, which reproduces it (with
    /// `--seed` when the run used one the user did not give).
    pub command: String,
    /// The probe snapshot taken at the start.
    pub system: serde_json::Value,
    pub lock: Option<StateLock>,
    /// The measurement lock, held until [`Session::finish`].
    pub measuring: Option<MeasureLock>,
    pub progress: Progress,
}

/// Takes the measurement lock for this command: waits for another
/// measurement on this machine (saying whom it waits for on stderr), or,
/// with `no_wait`, fails at once with a usage error (exit code 2) naming
/// it. Measuring commands call this once their arguments are checked and
/// before anything runs, and hand the lock to [`Session::begin_measuring`].
pub fn measurement_lock(no_wait: bool) -> Result<MeasureLock> {
    MeasureLock::acquire(&command_line(), no_wait)
}

/// Opens the results database the user chose (or the default one).
pub fn open_store(db: Option<&Path>) -> Result<(PathBuf, Store)> {
    let db_path = crate::store::resolve_db_path(db)?;
    let store = Store::open(&db_path)?;
    Ok((db_path, store))
}

impl Session {
    /// Starts a run in `store` holding `measuring` (from
    /// [`measurement_lock`]): interrupt handlers, the state lock when
    /// needed, the run record, the progress bar.
    pub fn begin_measuring<P: serde::Serialize>(
        measuring: MeasureLock,
        db_path: PathBuf,
        store: Store,
        spec: &RunSpec<P>,
    ) -> Result<Session> {
        Self::start(Some(measuring), db_path, store, spec)
    }

    /// [`Session::begin_measuring`] without the measurement lock, for the
    /// engine's tests (which measure nothing real).
    pub fn begin<P: serde::Serialize>(
        db_path: PathBuf,
        store: Store,
        spec: &RunSpec<P>,
    ) -> Result<Session> {
        Self::start(None, db_path, store, spec)
    }

    fn start<P: serde::Serialize>(
        measuring: Option<MeasureLock>,
        db_path: PathBuf,
        mut store: Store,
        spec: &RunSpec<P>,
    ) -> Result<Session> {
        install_interrupt_handlers()?;
        let lock = spec
            .system_wide
            .then(|| StateLock::acquire(LOCK_WAIT))
            .transpose()?;
        let mut meta = run_meta(spec.kind, spec.label, spec.params, spec.seed, spec.metric)?;
        if let (Some(lock), true) = (&lock, spec.audit_check) {
            let (phantom, check) = phantom_check_once(lock, spec.seed.unwrap_or(0))?;
            crate::probe::audit_phantom::record(&mut meta.system, phantom, &check);
        }
        let system = meta.system.clone();
        let run_id = store.begin_run(&meta)?;
        Ok(Session {
            db_path,
            store,
            run_id,
            command: meta.command,
            system,
            lock,
            measuring,
            progress: Progress::new(spec.slices),
        })
    }

    /// Ends the run: the bar goes, the run is marked finished and the locks
    /// released (the next measurement may start while this one reports).
    pub fn finish(&mut self) -> Result<()> {
        self.progress.finish();
        self.lock = None;
        let finished = self.store.finish_run(self.run_id);
        self.measuring = None;
        finished
    }

    /// What a failed run says besides its error: what is kept. A run that
    /// measured nothing (a rule the kernel refused before the first pair)
    /// is removed rather than left as an empty run claiming data.
    pub fn stopped(&mut self, e: anyhow::Error) -> anyhow::Error {
        self.progress.finish();
        match self.store.run_has_data(self.run_id) {
            Ok(false) => {
                let _ = self.store.delete_run(self.run_id);
                e.context("nothing was measured, so no run was stored")
            }
            _ => e.context(format!(
                "run {}: what was measured so far is stored (`secperf results show {}`)",
                self.run_id, self.run_id
            )),
        }
    }

    /// Removes a run that only means something complete (a calibration);
    /// `what` names it in the error.
    pub fn abandon(&mut self, what: &str, e: anyhow::Error) -> anyhow::Error {
        self.progress.finish();
        let _ = self.store.delete_run(self.run_id);
        e.context(format!("{what} stopped; nothing was stored"))
    }

    /// "label 'x'" for the closing line, or nothing.
    pub fn stored_line(&self, label: &str) -> String {
        if crate::vm::guest::shared_dir().is_some() {
            let label = if label.is_empty() {
                String::new()
            } else {
                format!(" (label '{label}')")
            };
            return format!("Measured in the guest{label}; the host stores the run.");
        }
        let label = if label.is_empty() {
            String::new()
        } else {
            format!(" label '{label}'")
        };
        format!(
            "Stored as run {}{label} in {}.",
            self.run_id,
            self.db_path.display()
        )
    }
}

/// `results delete`: removes the runs `specs` name (ids, labels,
/// `latest~N`; every one found before any is removed, their rows
/// cascading) from the results file at `path`; their ids.
pub fn delete_runs(path: &Path, specs: &[String]) -> Result<Vec<i64>> {
    let mut store = Store::open(path)?;
    let ids: Vec<i64> = specs
        .iter()
        .map(|r| store.resolve_run(r))
        .collect::<Result<_>>()?;
    for id in &ids {
        store.delete_run(*id)?;
    }
    Ok(ids)
}

/// `secperf probe --active`: the phantom-rule check on its own
/// ([`super::phantom`]), with the measurement lock (it measures: waiting
/// for another secperf measuring), the interrupt handlers, the state lock
/// and a line on stderr per half. The machine's rules are not set aside.
pub fn check_phantom_now(rounds: u32) -> Result<(Option<bool>, PhantomCheck)> {
    let _measuring = measurement_lock(false)?;
    install_interrupt_handlers()?;
    let lock = StateLock::acquire(LOCK_WAIT)?;
    let opts = CheckOpts {
        rounds,
        ..CheckOpts::standard(seed_or_clock(None), false, cache_dir())
    };
    check_reporting(&lock, &opts)
}

/// The seed the user gave, or one from the clock (stored with the run, so
/// a run can be replayed in the same order).
pub fn seed_or_clock(seed: Option<u64>) -> u64 {
    seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    })
}

/// The command line as typed, for reproduction: see [`command_line_of`].
pub fn command_line() -> String {
    command_line_of(argv())
}

/// The arguments this run was asked with: the process's own, or those
/// `rerun` rebuilt from a stored run (see [`set_argv`]).
pub(crate) fn argv() -> Vec<String> {
    match ARGV.get() {
        Some(argv) => argv.clone(),
        None => std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
    }
}

/// Arguments that stand in for the process's own (`secperf rerun` runs
/// the stored command in this process, and the new run must record that
/// command, not `secperf rerun N`). Set once.
static ARGV: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Records `argv` as the arguments this process runs with (see [`ARGV`]).
pub fn set_argv(argv: Vec<String>) {
    let _ = ARGV.set(argv);
}

/// The command line that reproduces this run: [`command_line`] with
/// `--seed SEED` added when the run used `seed` and the user gave none.
pub fn reproducible_command_line(seed: Option<u64>) -> String {
    reproducible_command_line_of(argv(), seed)
}

/// The commands that take `--seed`.
const TAKES_SEED: [&str; 3] = ["overhead", "suite", "calibrate"];

/// [`reproducible_command_line`] of a given `argv`: `--seed SEED` goes
/// before the `--` that starts a measured command, else at the end. An
/// argv that already has `--seed N` or `--seed=N` (before any `--`), or
/// names no command that takes `--seed` (a run started some other way),
/// is kept as it is.
pub fn reproducible_command_line_of(
    argv: impl IntoIterator<Item = String>,
    seed: Option<u64>,
) -> String {
    let mut words: Vec<String> = argv.into_iter().collect();
    if let Some(seed) = seed {
        let options_end = words.iter().position(|w| w == "--").unwrap_or(words.len());
        let options = &words[1.min(options_end)..options_end];
        let given = options
            .iter()
            .any(|w| w == "--seed" || w.starts_with("--seed="));
        let takes_seed = options.iter().any(|w| TAKES_SEED.contains(&w.as_str()));
        if takes_seed && !given {
            words.splice(
                options_end..options_end,
                ["--seed".to_string(), seed.to_string()],
            );
        }
    }
    command_line_of(words)
}

/// `argv` as one line a shell turns back into the same words (quoted as
/// needed, `shell_words::join`), with argv[0] shown as `secperf`: it may be
/// a build path (./target/release/secperf).
pub fn command_line_of(argv: impl IntoIterator<Item = String>) -> String {
    let words: Vec<String> = std::iter::once("secperf".to_string())
        .chain(argv.into_iter().skip(1))
        .collect();
    // A shared store's password never goes into a stored command line.
    crate::remote::conn::redact_in(&shell_words::join(words))
}

/// The metadata of a run starting now on this machine: the probe
/// snapshot, host, version and the command line that reproduces it.
pub(crate) fn run_meta(
    kind: &str,
    label: &str,
    params: &impl serde::Serialize,
    seed: Option<u64>,
    metric: crate::model::Metric,
) -> Result<RunMeta> {
    let mut params = serde_json::to_value(params)?;
    // What the figures are: every view of the run labels them by it.
    if let Some(o) = params.as_object_mut() {
        o.insert("metric".into(), serde_json::to_value(metric)?);
    }
    Ok(RunMeta {
        label: label.to_string(),
        kind: kind.to_string(),
        started_at: chrono::Utc::now(),
        host: crate::sys::hostname(),
        secperf_version: env!("CARGO_PKG_VERSION").into(),
        command: reproducible_command_line(seed),
        params,
        system: serde_json::to_value(crate::probe::probe())?,
    })
}

/// SIGINT/SIGTERM stop the measurement cleanly (tasks stopped, scratch
/// removed, results so far kept); a second SIGINT exits at once.
fn install_interrupt_handlers() -> Result<()> {
    crate::runner::set_interrupt_source(interrupt_flag()?);
    Ok(())
}

/// A flag that SIGINT and SIGTERM set; a second SIGINT exits at once with
/// code 130.
pub(crate) fn interrupt_flag() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::flag;
    let f = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        flag::register_conditional_shutdown(sig, 130, f.clone())
            .context("installing signal handlers")?;
        flag::register(sig, f.clone()).context("installing signal handlers")?;
    }
    Ok(f)
}

/// Where fixtures kept across runs live: $XDG_CACHE_HOME/secperf.
pub fn cache_dir() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("secperf")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_phantom_check_is_made_once_per_invocation() {
        // One predict made it before each of its three probe runs.
        let memo = std::sync::Mutex::new(None);
        let mut made = 0;
        for i in 0..3 {
            let (answer, fresh) = once(&memo, || {
                made += 1;
                Ok(Some(true))
            })
            .unwrap();
            assert_eq!((answer, fresh), (Some(true), i == 0));
        }
        assert_eq!(made, 1);
        // A check that failed is made again.
        let memo = std::sync::Mutex::new(None::<u8>);
        assert!(once(&memo, || anyhow::bail!("interrupted")).is_err());
        assert_eq!(once(&memo, || Ok(7)).unwrap(), (7, true));
    }

    #[test]
    fn command_line_quotes_words_and_names_the_tool() {
        let line = command_line_of(argv(&[
            "./target/release/secperf",
            "overhead",
            "-m",
            "seccomp",
            "--",
            "sh",
            "-c",
            "a b",
        ]));
        assert_eq!(line, "secperf overhead -m seccomp -- sh -c 'a b'");
    }

    #[test]
    fn command_line_splits_back_into_the_same_words() {
        for words in [
            argv(&[
                "secperf", "overhead", "-m", "seccomp", "--", "sh", "-c", "a b",
            ]),
            argv(&[
                "secperf",
                "run",
                "-l",
                "it's \"quoted\"",
                "--",
                "echo",
                "",
                "$HOME",
                "*",
            ]),
            argv(&[
                "secperf",
                "overhead",
                "-m",
                "seccomp:args,filters=4",
                "--param",
                "open.depth=8",
            ]),
            argv(&[
                "secperf",
                "run",
                "--scratch",
                "/tmp/a dir/\\x",
                "-l",
                "tab\there\nnewline",
            ]),
            argv(&["secperf"]),
        ] {
            let line = command_line_of(words.clone());
            assert_eq!(shell_words::split(&line).unwrap(), words, "{line}");
        }
    }

    #[test]
    fn the_seed_used_is_added_unless_given() {
        let line = |words: &[&str], seed| reproducible_command_line_of(argv(words), seed);
        // From the clock: added at the end, or before a measured command.
        assert_eq!(
            line(&["secperf", "overhead", "-m", "seccomp"], Some(42)),
            "secperf overhead -m seccomp --seed 42"
        );
        assert_eq!(
            line(
                &[
                    "secperf", "overhead", "-m", "seccomp", "--", "sh", "-c", "a b"
                ],
                Some(7)
            ),
            "secperf overhead -m seccomp --seed 7 -- sh -c 'a b'"
        );
        // Given: kept as typed (a `--seed` of the measured command is not
        // secperf's).
        assert_eq!(
            line(&["secperf", "suite", "avc", "--seed", "3"], Some(3)),
            "secperf suite avc --seed 3"
        );
        assert_eq!(
            line(&["secperf", "calibrate", "--seed=3"], Some(3)),
            // (shell_words quotes every word with `=`)
            "secperf calibrate '--seed=3'"
        );
        assert_eq!(
            line(
                &[
                    "secperf", "overhead", "-m", "seccomp", "--", "prog", "--seed", "1"
                ],
                Some(9)
            ),
            "secperf overhead -m seccomp --seed 9 -- prog --seed 1"
        );
        // Not typed as a command that takes --seed: as typed.
        assert_eq!(line(&["secperf", "rerun", "5"], Some(9)), "secperf rerun 5");
        // No seed (`run`): as typed.
        assert_eq!(
            line(&["secperf", "run", "-w", "getppid"], None),
            "secperf run -w getppid"
        );
    }

    #[test]
    fn the_session_stores_the_reproducible_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let (db_path, store) = open_store(Some(&dir.path().join("t.db"))).unwrap();
        let mut session = Session::begin(
            db_path,
            store,
            &RunSpec {
                kind: "overhead",
                label: "",
                params: &(),
                system_wide: false,
                audit_check: false,
                slices: 0,
                seed: Some(1234),
                metric: crate::model::Metric::Time,
            },
        )
        .unwrap();
        session.finish().unwrap();
        let stored = session.store.load_run(session.run_id).unwrap().meta.command;
        assert_eq!(stored, session.command);
        // This test's own argv names no secperf command, so the seed shows
        // only through the function that adds it (tested above).
        assert_eq!(stored, reproducible_command_line(Some(1234)));
        assert!(stored.starts_with("secperf"), "{stored}");
    }
}
