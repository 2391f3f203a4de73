//! The arguments the measuring commands share (task placement, the report
//! format, the pair design, the decision thresholds) and their checks:
//! each group resolves into the engine's validated type before anything
//! runs.

use std::ffi::OsStr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};

use crate::engine::plan::{HalfDesign, Placement};
use crate::model::Mode;
use crate::profile::ProfileOpts;
use crate::stats::decision::DecisionOpts;
use crate::usage_bail;

/// Parses any UTF-8 value, as a plain `String` argument does (the command
/// checks it later, with its own message), and lists candidates for shell
/// completion: clap_complete's static scripts (bash, zsh, fish, ...) offer
/// an argument's possible values, and this keeps free-form values such as
/// `seccomp:args,filters=4` or `getppid,open` accepted. Arguments using it
/// set `hide_possible_values` so that --help stays short.
#[derive(Clone, Copy)]
pub struct Candidates(fn() -> Vec<PossibleValue>);

impl Candidates {
    /// `-m`: every mechanism as NAME and NAME:VARIANT (`secperf list`).
    pub fn mechanism_specs() -> Candidates {
        Candidates(|| {
            crate::mechanisms::MECHANISMS
                .iter()
                .flat_map(|m| {
                    std::iter::once(PossibleValue::new(m.name()).help(m.description())).chain(
                        m.variants().iter().map(|v| {
                            PossibleValue::new(format!("{}:{}", m.name(), v.name))
                                .help(v.description)
                        }),
                    )
                })
                .collect()
        })
    }

    /// `-w` of `overhead` and `run`: the workload names and `all`.
    pub fn workloads() -> Candidates {
        Candidates(|| {
            let mut v = workload_names();
            v.push(PossibleValue::new("all").help("every workload of the catalog"));
            v
        })
    }

    /// `-w` of `calibrate`: one workload name.
    pub fn workload() -> Candidates {
        Candidates(workload_names)
    }
}

/// The catalog's workloads but `command` (chosen by `-- CMD` instead).
fn workload_names() -> Vec<PossibleValue> {
    crate::workloads::WORKLOADS
        .iter()
        .filter(|w| w.name != crate::workloads::command::NAME)
        .map(|w| PossibleValue::new(w.name).help(w.description))
        .collect()
}

impl TypedValueParser for Candidates {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter()))
    }
}

/// Where and how tasks run, and what the run is called.
#[derive(Debug, Args)]
pub struct TaskArgs {
    /// Task counts, comma-separated ("1,2,4"), or "auto". "auto" is 1, 2,
    /// 4, ... up to the online CPU count, which is always included
    /// [default: auto for `run`, 1 for `overhead`].
    #[arg(short, long, value_name = "N,...|auto")]
    pub tasks: Option<String>,

    /// Tasks as processes or as threads: forked processes, or threads of
    /// one process.
    #[arg(long, value_enum, default_value_t = Mode::Process)]
    pub mode: Mode,

    /// Do not pin task i to the i-th allowed CPU (allows more tasks than CPUs).
    #[arg(long)]
    pub no_pin: bool,

    /// Workload parameter, repeatable (e.g. open.depth=8). WORKLOAD.KEY=VALUE,
    /// or KEY=VALUE for every selected workload that has KEY.
    #[arg(short, long = "param", value_name = "[WORKLOAD.]KEY=V")]
    pub params: Vec<String>,

    /// A label to find this run by later (`secperf results show LABEL`).
    #[arg(short, long, value_name = "TEXT")]
    pub label: Option<String>,

    /// Directory for the files workloads create: choose the filesystem
    /// under test [default: the system temporary directory].
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
}

/// `--no-wait` of the commands that measure (`run`, `overhead`, `suite`,
/// `calibrate`): one measurement at a time on a machine.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Fail at once if another secperf is measuring: when another secperf
    /// is measuring on this machine, exit with code 2, naming it, instead
    /// of waiting for it to finish.
    #[arg(long)]
    pub no_wait: bool,
}

/// `--format` and `-o` of the commands that measure (`run`, `overhead`,
/// `suite`).
#[derive(Debug, Args)]
pub struct ReportFormatArgs {
    /// Output format instead of the default (a table, which `table` also
    /// prints; for a suite, fixed-width text shaped like the post's
    /// tables): email (72-column ASCII for a mailing list, with intervals
    /// and pair counts), markdown, json (the run document, as --json and
    /// `results export`), csv (raw numbers, one block per table),
    /// benchstat (one block per configuration).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<crate::report::formats::Format>,

    /// With --format: write to this file (a directory for benchstat).
    #[arg(short, long, value_name = "PATH", requires = "format")]
    pub output: Option<PathBuf>,
}

impl ReportFormatArgs {
    /// Checks `-o` before anything is measured: a file that can be
    /// written, or for benchstat a directory that can be (or be made).
    pub fn check_output(&self) -> Result<()> {
        match (&self.output, self.format) {
            (Some(p), Some(crate::report::formats::Format::Benchstat)) => {
                super::paths::check_output_dir(p, "-o")
            }
            (Some(p), _) => super::paths::check_output_file(p, "-o"),
            (None, _) => Ok(()),
        }
    }
}

/// The thresholds of the verdicts (`overhead`, `compare`), checked once
/// into [`DecisionOpts`].
#[derive(Debug, Args)]
pub struct DecisionArgs {
    /// Significance level of the whole table: after its correction across
    /// rows, `overhead`'s sequential design (the default) holds its false
    /// discovery rate at P (e-BH); `--error-rate fwer`, `--pairs` and
    /// `compare` hold the chance of any false verdict at P (Holm).
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    pub alpha: f64,

    /// Noise band, percent [default: 1; 0.5 for instructions]. A change is
    /// slower or faster only when its whole 95% interval lies outside
    /// +-noise; the default is 0.5 with --metric instructions.
    #[arg(long, value_name = "PCT")]
    pub noise: Option<f64>,

    /// Equivalence margin, percent (above 0): "negligible" when a two
    /// one-sided test shows the change lies within +-margin. `overhead`
    /// also takes `auto`: the margin a comparison with no difference shows
    /// itself within in 16 pairs, 4 times in 5, from the noise that
    /// `secperf calibrate` measured on this machine for the run's
    /// workloads (the largest of them; stated in the report). [default: 1
    /// for time, 0.5 for --metric instructions]
    #[arg(long, value_name = "PCT|auto")]
    pub equivalence: Option<String>,
}

impl DecisionArgs {
    /// The thresholds; `--equivalence auto` is refused here (only
    /// `overhead` can size it, [`DecisionArgs::resolve_auto`]).
    pub fn resolve(&self) -> Result<DecisionOpts> {
        self.resolve_for(crate::model::Metric::Time)
    }

    /// As [`DecisionArgs::resolve`], for figures of `metric`.
    pub fn resolve_for(&self, metric: crate::model::Metric) -> Result<DecisionOpts> {
        let (opts, auto) = self.resolve_auto(metric)?;
        if auto {
            crate::usage_bail!(
                "--equivalence auto: only `overhead` sizes the margin from this machine's \
                 calibrations; give a margin in percent here (e.g. --equivalence 1)"
            );
        }
        Ok(opts)
    }

    /// The thresholds for figures of `metric` (its noise band and margin
    /// where none is given), and whether the margin is to come from the
    /// calibrations (`auto`; the margin is then the metric's default until
    /// it is sized).
    pub fn resolve_auto(&self, metric: crate::model::Metric) -> Result<(DecisionOpts, bool)> {
        let noise = self.noise.unwrap_or(metric.default_noise_pct());
        let fallback = metric.default_equivalence_pct().to_string();
        let e = self.equivalence.as_deref().unwrap_or(&fallback).trim();
        if e.eq_ignore_ascii_case("auto") {
            return Ok((
                DecisionOpts::validated(self.alpha, noise, metric.default_equivalence_pct())?,
                true,
            ));
        }
        let Ok(pct) = e.trim_end_matches('%').parse::<f64>() else {
            crate::usage_bail!(
                "--equivalence '{e}': give a margin in percent (e.g. 1) or auto (from this \
                 machine's calibrations)"
            );
        };
        Ok((DecisionOpts::validated(self.alpha, noise, pct)?, false))
    }
}

pub use crate::engine::plan::{DEFAULT_ERROR_RATE, DEFAULT_TEST};

/// `overhead`'s choice of sequential test and error rate.
#[derive(Debug, Args)]
pub struct SequentialArgs {
    /// The sequential test of each comparison's log ratios: sign (only the
    /// coin ordering each pair is assumed; at least 6 pairs), t (the safe
    /// t-test, which also uses their size, assuming them normal; a clear
    /// effect settles in 3 or 4 pairs, but outlier halves cost it power) or
    /// both (their e-values averaged: about t's pairs on clear effects, the
    /// sign test's power under outliers). Default: both; the fixed design
    /// (--pairs) has its own test.
    #[arg(long = "test", value_enum, value_name = "TEST")]
    pub test: Option<TestArg>,

    /// The error rate the table's verdicts control: fwer (Holm: the chance
    /// of any false "slower"/"faster" in the table) or fdr (e-BH: the
    /// expected share of false ones among them, which lets each settle
    /// sooner in a table with many real effects). Default: fdr; fwer with
    /// --pairs, the only one the fixed design offers.
    #[arg(long, value_enum, value_name = "RATE")]
    pub error_rate: Option<ErrorRateArg>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestArg {
    Sign,
    T,
    Both,
}

impl TestArg {
    pub fn seq_test(self) -> crate::stats::decision::SeqTest {
        use crate::stats::decision::SeqTest;
        match self {
            TestArg::Sign => SeqTest::Sign,
            TestArg::T => SeqTest::T,
            TestArg::Both => SeqTest::Both,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ErrorRateArg {
    Fwer,
    Fdr,
}

impl SequentialArgs {
    /// `decision` with the test and error rate: both tests and the FDR by
    /// default in the sequential design; the fixed design (`fixed`: --pairs
    /// was given) has the sign test's order statistics and Holm only.
    pub fn resolve(&self, decision: DecisionOpts, fixed: bool) -> Result<DecisionOpts> {
        use crate::stats::decision::{ErrorRate, SeqTest};
        let test = match self.test {
            Some(t) => t.seq_test(),
            None if fixed => SeqTest::Sign,
            None => DEFAULT_TEST,
        };
        let error_rate = match self.error_rate {
            Some(ErrorRateArg::Fwer) => ErrorRate::Fwer,
            Some(ErrorRateArg::Fdr) => ErrorRate::Fdr,
            None if fixed => ErrorRate::Fwer,
            None => DEFAULT_ERROR_RATE,
        };
        if fixed && test != SeqTest::Sign {
            usage_bail!(
                "--test {test} applies to the sequential design; drop --pairs (use --max-pairs to \
                 bound it)"
            );
        }
        if fixed && error_rate != ErrorRate::Fwer {
            usage_bail!(
                "--error-rate fdr needs the sequential design's e-values; drop --pairs (use \
                 --max-pairs to bound it)"
            );
        }
        Ok(DecisionOpts {
            test,
            error_rate,
            ..decision
        })
    }
}

/// `--profile` and its settings (`overhead`, `suite`, `run`).
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Say where the added time goes, by kernel function: after the timed
    /// pairs, measure extra profiled pairs whose tasks are sampled
    /// (cpu-clock, kernel call chains) and attribute each difference to
    /// kernel functions in ns/op. Headline figures come only from the timed
    /// pairs.
    #[arg(long)]
    pub profile: bool,

    /// Samples per second per task while profiling, Hz (1 to 50000).
    #[arg(long, value_name = "HZ", default_value_t = crate::profile::DEFAULT_HZ, requires = "profile")]
    pub profile_hz: u64,

    /// Profiled pairs per comparison (`run`: profiled measurements per
    /// workload and task count); at least 2 for an interval.
    #[arg(long, value_name = "N", default_value_t = crate::profile::DEFAULT_PAIRS, requires = "profile")]
    pub profile_pairs: u32,
}

impl ProfileArgs {
    /// The profile asked for, checked; None without `--profile`.
    pub fn resolve(&self) -> Result<Option<ProfileOpts>> {
        if !self.profile {
            return Ok(None);
        }
        if !(1..=crate::profile::MAX_HZ).contains(&self.profile_hz) {
            usage_bail!(
                "--profile-hz {}: give a frequency from 1 to {} (e.g. 4000)",
                self.profile_hz,
                crate::profile::MAX_HZ
            );
        }
        if self.profile_pairs == 0 {
            usage_bail!("--profile-pairs 0: give at least 1 (2 or more for an interval)");
        }
        Ok(Some(ProfileOpts {
            hz: self.profile_hz,
            pairs: self.profile_pairs,
        }))
    }
}

/// Your own program as the workload (`-- CMD ARGS...`) on `run` and
/// `overhead`.
#[derive(Debug, Args)]
pub struct CommandArgs {
    /// Pass the command's stdout and stderr through (default: stdout to
    /// /dev/null, stderr kept for the report when a run fails).
    #[arg(long, requires = "command")]
    pub show_output: bool,

    /// Measure this command instead of a built-in workload: everything
    /// after `--`. One operation is one complete run (wall time per run,
    /// plus user and system CPU time per run); it must exit with status 0.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,

    /// Start this server (one string, split as a shell would) fresh in
    /// each half, under the mechanism; the command after `--` is then its
    /// client, run outside the mechanism, and one operation is one client
    /// run (wall time per run; the server's user and system CPU time per
    /// run; requests/s and latency in ms for redis-benchmark, ab, wrk and
    /// pgbench, each with its own paired interval). E.g. --server
    /// 'redis-server --port 6390 --save ""' --ready tcp:6390 --
    /// redis-benchmark -p 6390 -n 100000 -q
    #[arg(long, value_name = "'CMD ARGS'", requires = "command")]
    pub server: Option<String>,

    /// When the server is ready for its client: tcp:PORT (it accepts
    /// connections on 127.0.0.1:PORT, which must be free before it
    /// starts), unix:PATH, or delay:MS (a fixed wait) [default: delay:1000]
    #[arg(long, value_name = "WHEN", requires = "server")]
    pub ready: Option<String>,

    /// How long the server may take to be ready, ms [default: 10000]. In
    /// milliseconds.
    #[arg(long, value_name = "MS", requires = "server")]
    pub ready_timeout: Option<u64>,

    /// Whether the arguments end in a bare `--`, which clap drops: set by
    /// [`super::parse_args`], so that `--` with no command after it is an
    /// error rather than the built-in workloads.
    #[arg(skip)]
    pub empty_separator: bool,
}

impl CommandArgs {
    /// The workload list and `--param` values that select the command, or
    /// None without one. `-w` together with a command is a usage error.
    pub fn workload(&self, workloads_given: bool) -> Result<Option<(String, Vec<String>)>> {
        if self.command.is_empty() {
            if self.empty_separator {
                usage_bail!(
                    "no command after `--`: give the command to measure after --, e.g. \
                     `-- sh -c 'make -j2'`, or leave out -- to measure the built-in workloads"
                );
            }
            return Ok(None);
        }
        if workloads_given {
            usage_bail!(
                "-w and a command after `--` exclude each other: the command is the workload"
            );
        }
        if let Some(server) = &self.server {
            let params = crate::workloads::service::params_for(
                server,
                &self.command,
                self.ready.as_deref(),
                self.ready_timeout,
                self.show_output,
            )?;
            return Ok(Some((crate::workloads::service::NAME.to_string(), params)));
        }
        let name = crate::workloads::command::NAME;
        let mut params = vec![format!(
            "{name}.argv={}",
            crate::workloads::command::argv_param(&self.command)
        )];
        if self.show_output {
            params.push(format!("{name}.show_output=1"));
        }
        Ok(Some((name.to_string(), params)))
    }
}

/// How each A/B pair is measured (`overhead` and `calibrate`).
#[derive(Debug, Args)]
pub struct PairArgs {
    /// A fixed number of A/B pairs per comparison (at least 10). Without
    /// it each comparison is sequential: it looks after every pair and
    /// stops as soon as its verdict is settled (slower or faster beyond the
    /// noise band, negligible, or --precision reached), at --max-pairs at
    /// the latest, with anytime-valid intervals and p-values.
    #[arg(long, value_name = "N", conflicts_with = "max_pairs")]
    pub pairs: Option<u32>,

    /// The sequential design's budget: most pairs one comparison may take
    /// [default: 32, or more when a large table needs them to decide].
    #[arg(long, value_name = "N")]
    pub max_pairs: Option<u32>,

    /// Length of one sample, ms [default: 60; 30 --quick]. A sample is one
    /// time slice, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub sample_ms: Option<u64>,

    /// Samples kept in each half of a pair [default: 2; 1 --quick]. A kernel
    /// A/B counting instructions keeps 3 by default, and each half is then
    /// the least of its samples.
    #[arg(long, value_name = "N")]
    pub samples_per_half: Option<u32>,

    /// Slices discarded at the start of each half [default: 0]. Each half
    /// starts fresh tasks; on this tool's workloads the first slice's
    /// ratio agrees with the second's (methodology 4.6), so none is
    /// discarded unless asked for.
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
}

impl PairArgs {
    pub fn resolve(&self, quick: bool) -> Result<HalfDesign> {
        self.resolve_with_min(quick, 10)
    }

    /// [`PairArgs::resolve`] with another least number of pairs: a kernel
    /// A/B across boots (two boots a pair) accepts fewer.
    pub fn resolve_with_min(&self, quick: bool, min_pairs: u32) -> Result<HalfDesign> {
        if let Some(pairs) = self.pairs.filter(|&p| p < min_pairs) {
            usage_bail!(
                "--pairs {pairs}: at least {min_pairs} pairs are needed for a meaningful interval{}; \
                 or leave --pairs out, and the sequential design stops each comparison once it is \
                 settled (--max-pairs caps it)",
                if min_pairs > 3 {
                    " here (a kernel A/B across boots, --kernel, takes 3 or more)"
                } else {
                    ""
                }
            );
        }
        let sample_ms = self.sample_ms.unwrap_or(if quick {
            30
        } else {
            crate::engine::plan::DEFAULT_SAMPLE_MS
        });
        if !(5..=600_000).contains(&sample_ms) {
            usage_bail!("--sample-ms must be between 5 and 600000 milliseconds");
        }
        let samples_per_half = self.samples_per_half.unwrap_or(if quick {
            1
        } else {
            crate::engine::plan::DEFAULT_SAMPLES_PER_HALF
        });
        if samples_per_half == 0 {
            usage_bail!("--samples-per-half must be at least 1");
        }
        if let Some(max) = self.max_pairs.filter(|&p| p < min_pairs) {
            usage_bail!("--max-pairs {max}: give at least {min_pairs} (e.g. --max-pairs 48)");
        }
        Ok(HalfDesign {
            pairs: self.pairs,
            max_pairs: self.max_pairs,
            sample_ms,
            samples_per_half,
            warmup: self.warmup.unwrap_or(0),
        })
    }
}

impl TaskArgs {
    /// The placement, the ladder checked against the CPUs this process
    /// may use ([`Placement::resolve`]).
    pub fn resolve(&self, default_tasks: &str) -> Result<Placement> {
        Placement::resolve(
            self.tasks.as_deref().unwrap_or(default_tasks),
            self.no_pin,
            self.scratch.as_deref(),
            self.label.as_deref(),
        )
    }
}

/// `--metric` of the commands that compare (`overhead`, `suite`,
/// `calibrate`, `bisect`).
#[derive(Debug, Args)]
pub struct MetricArgs {
    /// What each half measures per operation: time (ns, the default) or
    /// instructions. Instructions are counted in a guest (--vm, --kernel,
    /// bisect) by QEMU's icount under emulation: exact and repeatable to
    /// about 0.2% whatever the host is doing, but blind to what an
    /// instruction costs on hardware (cache misses, serialising
    /// instructions, TLB flushes count as one each), so a second view
    /// beside time, not a replacement. Figures, intervals and verdicts are
    /// then in instructions per operation, and the noise band and the
    /// equivalence margin default to 0.5%. On a host, the PMU's retired
    /// instructions (user and kernel) of each task and what it starts,
    /// read at every slice; a host without a PMU (most VMs) is refused.
    #[arg(long, value_name = "MEASURE", value_parser = metric_value)]
    pub metric: Option<crate::model::Metric>,
}

fn metric_value(s: &str) -> std::result::Result<crate::model::Metric, String> {
    crate::model::Metric::parse(s)
}

impl MetricArgs {
    /// The metric asked for (time when none).
    pub fn metric(&self) -> crate::model::Metric {
        self.metric.unwrap_or_default()
    }

    /// How the command counts, decided once by the engine
    /// ([`crate::engine::ab::counting::decide`]): `booting` says whether it
    /// boots guests (--vm, --kernel, bisect, track), where icount counts
    /// instructions; otherwise they are counted on this machine, which
    /// needs a PMU (or this is a guest booted with icount).
    pub fn counting(&self, booting: bool) -> Result<crate::engine::ab::counting::Counting> {
        use crate::engine::{ab::counting::decide, boots::guest_request::machine_of_this_process};
        decide(self.metric(), machine_of_this_process(booting))
    }

    /// `--metric instructions` with what cannot count them: a usage error
    /// saying what is possible instead.
    pub fn refuse_with(&self, profile: bool, server: bool) -> Result<()> {
        if self.metric() != crate::model::Metric::Instructions {
            return Ok(());
        }
        if profile {
            crate::usage_bail!(
                "--metric instructions with --profile: the profile attributes time (perf's \
                 cpu-clock samples) to kernel functions, and secperf does not attribute counted \
                 instructions; profile with --metric time (the default), and count \
                 instructions in a run of its own"
            );
        }
        if server {
            crate::usage_bail!(
                "--metric instructions with --server: a server's figures are its client's \
                 (requests per second, latencies) and its CPU time, taken in time; measure a \
                 server with --metric time, or count a command's instructions (-- CMD) or a \
                 workload's (-w) in a guest"
            );
        }
        Ok(())
    }
}
