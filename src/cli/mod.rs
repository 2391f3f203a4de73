//! The command line: clap definitions, then one module per command. Raw
//! arguments are validated into plans before anything touches the system;
//! `main` prints one error chain and picks the exit code (2 for bad input).

mod args;
mod bisect;
mod calibrate;
mod campaign;
mod compare;
mod emit;
mod help;
mod kernel_arms;
mod kernels;
mod list;
mod output;
mod overhead;
mod paths;
mod predict;
mod probe;
mod reading;
mod report;
mod rerun;
mod results;
mod run;
mod series;
mod serve;
mod shell;
mod suite;
mod track;
mod vm;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::error::exit_code;

/// measure what Linux kernel security mechanisms (LSM hooks, seccomp,
/// audit, credentials) cost, with syscall workloads run on a ladder of
/// processes or threads.
///
/// Units: rates are operations per second (ops/s) summed over all tasks;
/// latencies are nanoseconds per operation of one task (ns/op); an
/// overhead is % of the baseline's ns/op (positive: slower), with the 95%
/// interval of its paired ratio (anytime-valid when sequential); a result
/// of `run` has the 95% interval of its median over samples.
#[derive(Debug, Parser)]
#[command(
    name = "secperf",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// Results database (SQLite), in a directory that exists. Default:
    /// $XDG_DATA_HOME/secperf/secperf.db (its directory created when missing).
    /// A shared store, postgresql://USER@HOST:PORT/DB, for results,
    /// compare, report and campaign.
    #[arg(
        long,
        global = true,
        env = "SECPERF_DB",
        hide_env_values = true,
        value_name = "PATH|URL"
    )]
    pub db: Option<PathBuf>,

    /// Print one JSON document on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure what each security mechanism costs: randomised A/B pairs with
    /// and without it, in one run, with 95% confidence intervals.
    Overhead(Box<overhead::OverheadArgs>),
    /// Measure workloads under the current security configuration and store the results.
    Run(run::RunArgs),
    /// Predict what a policy would cost a program, without switching it.
    /// A seccomp, audit or Landlock policy: its syscalls are counted (read-only,
    /// a running --pid or one run of -- CMD), each priced by a per-syscall
    /// cost model measured here by A/B pairs (stored and reused), summed
    /// against its CPU time: % with a 95% interval, and which calls pay.
    Predict(predict::PredictArgs),
    /// List the workloads and the mechanisms: what each workload does and
    /// which security hooks it reaches, and whether each mechanism can be
    /// measured here (or, with --vm, in a guest of that kernel).
    List(list::ListArgs),
    /// Show the machine's security configuration (recorded with every run);
    /// --active also checks for phantom audit rules (a few seconds, root).
    Probe(probe::ProbeArgs),
    /// Compare stored runs (different boots, kernels, machines): each later run
    /// against the first, with unpaired statistics, in any output format.
    Compare(compare::CompareArgs),
    /// Undo system-wide changes a killed secperf left behind (also done at every start).
    Restore,
    /// Check the A/B method on this machine: the A/A false-positive rate,
    /// detection and interval coverage of known injected slowdowns, and the
    /// smallest slowdown detectable in a time budget.
    Calibrate(calibrate::CalibrateArgs),
    /// Reproduce a published measurement: one of five kernel mailing-list
    /// posts, with one command, printed in the shape of the post's table;
    /// `secperf suite list` shows them, each with its citation.
    ///
    /// A suite measures the current configuration (stored as results) and
    /// switches what the post compared that a live kernel can switch (audit,
    /// credential override, Landlock, the BPF LSM, SELinux mode) as
    /// randomised A/B pairs (stored as comparisons). Units are in each table
    /// header: ops/s and K ops/s of all tasks together, MB/s = 10^6 bytes/s,
    /// KB/s = 1024 bytes/s (as ApacheBench), ns or ms per operation of one
    /// task; percentages are against the table's first column, with 95%
    /// intervals. Configurations that need a reboot or another kernel: run
    /// the suite with a --label on each side, then print both with
    /// `--report SIDE-B --baseline SIDE-A`.
    Suite(suite::SuiteArgs),
    /// Write one self-contained HTML page with plots of stored runs:
    /// overhead forest plots, pairs in measurement order, scaling curves
    /// (runs overlaid), sweeps, attributions and flame graphs.
    Report(report::ReportArgs),
    /// Repeat a stored run from what was stored: its command line with the
    /// seed it used, and its policy files as they were read (a copy stands
    /// in for a file that changed since). Stored as a new run.
    Rerun(rerun::RerunArgs),
    /// Run one measuring command on many hosts over OpenSSH: your ssh
    /// config, agent and known_hosts, each host measuring itself, and every
    /// host's finished run pulled into this store, tagged with the campaign
    /// and the host (and pushed on when --db is a postgresql:// URL).
    /// `--resume ID` reruns only the hosts without a finished run.
    Campaign(campaign::CampaignArgs),
    /// Stored results: list, show, export, push, delete. `--db` may be a
    /// shared store (postgresql://...) for list, show and export.
    Results {
        #[command(subcommand)]
        command: results::ResultsCommand,
    },
    /// Find the commit that made a workload slower: each step builds a
    /// revision of a kernel git checkout and compares it with --good by
    /// paired boots (the sequential test), with the whole bisection's
    /// error rate stated (--alpha) and a `git bisect log` to replay.
    Bisect(Box<bisect::BisectArgs>),
    /// Follow a branch of a kernel git checkout: every new revision (or
    /// every --batch-th) built and compared with the one tested before it
    /// by paired boots, alarms (slower or faster) raised with the false
    /// discovery rate of the whole stream bounded by --alpha (e-LOND), the
    /// track stored after every test and resumed by the same command.
    /// `--once` tests what is new and exits 0, 3 (a slowdown) or 4
    /// (speed-ups only).
    Track(Box<track::TrackArgs>),
    /// Serve the results store to a browser, read-only: the runs (newest
    /// first, filtered and paged), each run's report, the tracks and the
    /// bisections; every page's JSON document at its path with `.json`.
    /// Listens on 127.0.0.1:8457 unless --bind says otherwise.
    Serve(serve::ServeArgs),
    /// Kernels built from source for `--kernel NAME=SOURCE` arms: cached
    /// under $XDG_CACHE_HOME/secperf/kernels, list them (size in MiB,
    /// build time in seconds) or prune them.
    Kernels {
        #[command(subcommand)]
        command: kernels::KernelsCommand,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(shell::CompletionsArgs),
    /// Print the manual page, or write one page per command into a directory.
    Man(shell::ManArgs),
    /// (internal) Runs a VM guest's virtme-ng in its own process group and
    /// kills that group when its stdin closes (`--vm`).
    #[command(hide = true)]
    VmGuard {
        #[arg(last = true, required = true)]
        argv: Vec<String>,
    },
    /// (internal) In a VM guest of a kernel A/B: measures what the host's
    /// request in the shared directory asks for.
    #[command(hide = true)]
    Guest,
}

/// Entry point: parses, runs, prints errors, returns the exit code.
pub fn main() -> i32 {
    let cli = match parse_args(std::env::args_os()) {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors
            // to stderr (exit 2).
            let _ = e.print();
            return e.exit_code();
        }
    };
    // A secperf killed while it had changed system state (audit rules, an
    // SELinux mode) left a journal: put the machine back before anything else.
    // (`secperf restore` does this itself and reports it.)
    if let Command::VmGuard { argv } = &cli.command {
        return match crate::vm::process::guard(argv) {
            Ok(code) => code,
            Err(e) => {
                crate::say!("secperf: error: {e:#}");
                1
            }
        };
    }
    if let Err(e) = crate::engine::startup::at_start(matches!(cli.command, Command::Restore)) {
        return crate::error::exit_code(&e);
    }
    let done = dispatch(cli);
    for notice in crate::store::migrations::take_notices() {
        crate::say!("secperf: note: {notice}");
    }
    match done {
        Ok(()) => 0,
        Err(e) if e.downcast_ref::<crate::error::Exit>().is_some() => exit_code(&e),
        Err(e) => {
            crate::say!("secperf: error: {e:#}");
            exit_code(&e)
        }
    }
}

/// Parses a command line (argv[0] first). clap drops a `--` with nothing
/// after it; for the commands that measure a command given after `--`
/// (`overhead`, `run`) that is recorded, and refused when the arguments
/// are checked.
pub fn parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString>,
{
    use clap::{CommandFactory, FromArgMatches};
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // An empty SECPERF_DB: clap would say "a value is required for
    // '--db'" even with --db given, and never name the variable.
    let empty_db_env = std::env::var_os("SECPERF_DB").is_some_and(|v| v.is_empty());
    let given_db = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--db" || a.to_string_lossy().starts_with("--db="));
    let mut cmd = help::shortened(Cli::command());
    if empty_db_env {
        if !given_db && !asks_for_help(&args) {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                "SECPERF_DB is set but empty: set it to the results database to use (a file, \
                 or postgresql://...), unset it for the default \
                 ($XDG_DATA_HOME/secperf/secperf.db), or give --db\n",
            ));
        }
        cmd = cmd.mut_arg("db", |a| a.env(None));
    }
    // A negative number is a value (then refused by the option's own
    // check), never an unknown option with clap's tip to write `-- -3`,
    // which would start a command.
    let matches = help::with_usages(cmd.mut_subcommands(|s| s.allow_negative_numbers(true)))
        .try_get_matches_from(&args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    // Options end at the first `--`; nothing after it means no command.
    let empty_separator = args
        .iter()
        .position(|a| a == "--")
        .is_some_and(|i| i + 1 == args.len());
    if empty_separator {
        match &mut cli.command {
            Command::Overhead(a) => a.command.empty_separator = true,
            Command::Run(a) => a.command.empty_separator = true,
            _ => {}
        }
    }
    Ok(cli)
}

/// Whether the command line asks for help or the version (which need no
/// database).
fn asks_for_help(args: &[std::ffi::OsString]) -> bool {
    args.iter().skip(1).take_while(|a| *a != "--").any(|a| {
        matches!(
            a.to_str(),
            Some("-h" | "--help" | "-V" | "--version" | "help")
        )
    })
}

pub(crate) fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Overhead(args) => overhead::overhead(*args, cli.db.as_deref(), cli.json),
        Command::Run(args) => run::run(args, cli.db.as_deref(), cli.json),
        Command::Predict(args) => predict::predict(args, cli.db.as_deref(), cli.json),
        Command::Calibrate(args) => calibrate::calibrate(args, cli.db.as_deref(), cli.json),
        Command::Compare(args) => compare::compare(args, cli.db.as_deref(), cli.json),
        Command::Restore => crate::engine::startup::restore(cli.json),
        Command::Suite(args) => suite::suite(args, cli.db.as_deref(), cli.json),
        Command::List(args) => list::list(args, cli.db.as_deref(), cli.json),
        Command::Probe(args) => probe::probe(args, cli.db.as_deref(), cli.json),
        Command::Report(args) => report::report(args, cli.db.as_deref(), cli.json),
        Command::Campaign(args) => campaign::campaign(args, cli.db.as_deref(), cli.json),
        Command::Results { command } => results::results(command, cli.db.as_deref(), cli.json),
        Command::Rerun(args) => rerun::rerun(args, cli.db.as_deref(), cli.json),
        Command::Kernels { command } => kernels::kernels(command, cli.json),
        Command::Bisect(args) => bisect::bisect(*args, cli.db.as_deref(), cli.json),
        Command::Track(args) => track::track(*args, cli.db.as_deref(), cli.json),
        Command::Serve(args) => serve::serve(args, cli.db.as_deref(), cli.json),
        Command::Completions(args) => shell::completions(args),
        Command::Man(args) => shell::man(args, cli.json),
        Command::VmGuard { .. } => anyhow::bail!("vm-guard is run by secperf itself, not by hand"),
        Command::Guest => crate::engine::boots::run_guest(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command-line workload `args` ask for (overhead or run).
    fn command_workload(args: &[&str]) -> Result<Option<(String, Vec<String>)>> {
        let cli = parse_args(args).expect("parses");
        match &cli.command {
            Command::Overhead(a) => a.command.workload(false),
            Command::Run(a) => a.command.workload(false),
            other => panic!("not overhead or run: {other:?}"),
        }
    }

    #[test]
    fn completion_candidates_do_not_restrict_values() {
        let cli = parse_args([
            "secperf",
            "overhead",
            "-m",
            "seccomp:args,filters=4",
            "-m",
            "landlock:fs,rules=8",
            "-w",
            "getppid, open",
        ])
        .expect("free-form values parse");
        let Command::Overhead(a) = &cli.command else {
            panic!("not overhead: {cli:?}");
        };
        assert_eq!(
            a.mechanisms,
            ["seccomp:args,filters=4", "landlock:fs,rules=8"]
        );
        assert_eq!(a.workloads.as_deref(), Some("getppid, open"));
        let cli = parse_args(["secperf", "run", "-w", "not-a-workload"]).expect("parses");
        let Command::Run(a) = &cli.command else {
            panic!("not run: {cli:?}");
        };
        assert_eq!(a.workloads, "not-a-workload");
        // ...and are listed for completion.
        let cmd = <Cli as clap::CommandFactory>::command();
        let overhead = cmd.find_subcommand("overhead").expect("overhead");
        let listed = |id: &str| -> Vec<String> {
            overhead
                .get_arguments()
                .find(|a| a.get_id() == id)
                .expect(id)
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect()
        };
        let mechanisms = listed("mechanisms");
        for m in crate::mechanisms::MECHANISMS {
            assert!(mechanisms.iter().any(|v| v == m.name()), "{}", m.name());
            for v in m.variants() {
                let spec = format!("{}:{}", m.name(), v.name);
                assert!(mechanisms.contains(&spec), "{spec}");
            }
        }
        let workloads = listed("workloads");
        assert!(workloads.iter().any(|w| w == "getppid"), "{workloads:?}");
        assert!(workloads.iter().any(|w| w == "all"), "{workloads:?}");
        assert!(!workloads.iter().any(|w| w == "command"), "{workloads:?}");
    }

    #[test]
    fn a_bare_double_dash_with_no_command_is_refused() {
        for args in [
            &["secperf", "overhead", "-m", "seccomp", "--"][..],
            &["secperf", "run", "--"][..],
            &["secperf", "--db", "x.db", "run", "-t", "1", "--"][..],
        ] {
            let err = command_workload(args).expect_err("refused");
            assert_eq!(crate::error::exit_code(&err), 2, "{args:?}");
            assert!(
                err.to_string()
                    .contains("give the command to measure after --"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_command_after_double_dash_or_none_at_all_is_accepted() {
        assert!(
            command_workload(&["secperf", "overhead", "-m", "seccomp"])
                .unwrap()
                .is_none()
        );
        assert!(command_workload(&["secperf", "run"]).unwrap().is_none());
        for args in [
            &[
                "secperf", "overhead", "-m", "seccomp", "--", "sh", "-c", "a b",
            ][..],
            // A command whose own last argument is `--`.
            &["secperf", "run", "--", "prog", "--"][..],
        ] {
            let (name, params) = command_workload(args).unwrap().expect("a command");
            assert_eq!(name, crate::workloads::command::NAME);
            assert!(params[0].contains("argv="), "{params:?}");
        }
    }
}
