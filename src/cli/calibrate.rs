//! `secperf calibrate`: checks the A/B method on this machine (A/A false
//! positives, known injected slowdowns, the smallest detectable effect; see
//! [`crate::calibrate`]) and stores the result for later commands.
//!
//! Duration: `--quick` makes 20 A/A comparisons and, for one injected size
//! (`seccomp:allow` on getppid, about 10%), 3 truth comparisons of 3x the
//! budget's pairs plus 10 short ones, all with the quick design (30 ms
//! slices): about a minute here. Otherwise A/A gets one `--budget` and each
//! of the two injected sizes (about 10% and 2.5%) one budget including its
//! truth, so the whole run takes about 3x `--budget` (more when the minimum
//! counts, 10 A/A and 5 short comparisons per size, do not fit). Sizes are
//! planned for comparisons that use their whole budget; sequential ones
//! that settle early finish sooner. The estimate is printed first.

use crate::engine::ab::counting::Counting;
use std::path::Path;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::args::PairArgs;
use crate::calibrate::{self, CalibrationReport, Plan, Request};
use crate::engine::session::open_store;
use crate::usage_bail;
use crate::workloads::select::{parse_list, resolve_params};

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Time one comparison may take: 60s, 2m, 1h, or plain seconds (90).
    /// It sizes the calibration (about 3x this in all) and the smallest
    /// effect detectable in it.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub budget: String,

    /// Fast pass: quick design, 20 A/A comparisons, one injected size
    /// (about 30 s here, under 2 minutes).
    #[arg(long)]
    pub quick: bool,

    /// The sequential test to check (as `overhead --test`): sign, t (the
    /// safe t-test, whose normality assumption the A/A false-positive rate
    /// and the coverage check here) or both (the default, as in `overhead`).
    #[arg(long = "test", value_enum, default_value_t = super::args::TestArg::Both, value_name = "TEST")]
    pub test: super::args::TestArg,

    /// Compare the sign test and the t-test on the same pairs. Measure every
    /// A/A and injected comparison to the budget of a survey-sized table
    /// (32 pairs), then replay the sign test and the t-test on the same
    /// pairs, as measured and with outlier halves injected, alone and in tables of 29 (FWER and FDR). 203 A/A and 40
    /// short comparisons per injected size (58 and 10 with --quick);
    /// --aa-comparisons and --injected-comparisons override. Not with
    /// --pairs.
    #[arg(long)]
    pub side_by_side: bool,

    /// Replay a stored calibration's pairs, measuring nothing. Every
    /// sequential test (sign, t, both) is replayed on the pairs of the
    /// calibration stored as run RUN (`secperf results list`), as --side-by-side does, with today's stopping rules. The
    /// calibration must have measured every comparison to one budget
    /// (--side-by-side or --pairs).
    #[arg(long, value_name = "RUN", conflicts_with_all = [
        "side_by_side", "quick", "aa_comparisons", "injected_comparisons", "seed", "label",
    ])]
    pub replay: Option<i64>,

    /// Workload to calibrate on.
    #[arg(short, long, value_name = "NAME", default_value = "getppid",
          value_parser = super::args::Candidates::workload(), hide_possible_values = true)]
    pub workload: String,

    #[command(flatten)]
    pub design: PairArgs,

    /// A/A comparisons [default: from --budget, 20 with --quick].
    #[arg(long, value_name = "K")]
    pub aa_comparisons: Option<u32>,

    /// Short comparisons per injected slowdown [default: by --budget]. 10
    /// with --quick; 0 leaves the injected slowdowns out (the A/A control
    /// only: the noise that `overhead --equivalence auto` sizes its margin
    /// from).
    #[arg(long, value_name = "M")]
    pub injected_comparisons: Option<u32>,

    /// Seed for the AB/BA coin and the bootstrap [default: the clock].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// A label to find this run by later.
    #[arg(short, long, value_name = "TEXT")]
    pub label: Option<String>,

    #[command(flatten)]
    pub wait: super::args::WaitArgs,

    #[command(flatten)]
    pub metric: super::args::MetricArgs,

    #[command(flatten)]
    pub vm: super::vm::VmArgs,
}

/// Parses `--budget`: `60s`, `2m`, `1h`, `1.5m` or plain seconds `90`;
/// between 1 second and 24 hours. Anything else is a usage error.
pub fn parse_budget(s: &str) -> Result<f64> {
    let t = s.trim();
    let (num, unit) = match t.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let factor = match unit.trim() {
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => usage_bail!(
            "--budget '{s}': unknown unit '{}' (give e.g. 60s, 2m, 1h or plain seconds 90)",
            unit.trim()
        ),
    };
    let Ok(v) = num.parse::<f64>() else {
        usage_bail!("--budget '{s}': not a duration (give e.g. 60s, 2m, 1h or plain seconds 90)");
    };
    let secs = v * factor;
    if !(1.0..=86_400.0).contains(&secs) {
        usage_bail!("--budget '{s}': must be between 1 second and 24 hours (e.g. 60s)");
    }
    Ok(secs)
}

/// Validates the arguments into a plan; nothing runs yet.
pub fn plan_from_args(a: &CalibrateArgs, counting: Counting) -> Result<Plan> {
    let budget_s = parse_budget(&a.budget)?;
    let workloads = parse_list(&a.workload)?;
    if workloads.len() != 1 {
        usage_bail!("-w: calibrate one workload at a time (e.g. -w getppid)");
    }
    let workload = workloads[0];
    let params = resolve_params(&workloads, &[])?;
    let half = a.design.resolve(a.quick)?;
    if a.side_by_side && half.pairs.is_some() {
        usage_bail!(
            "--side-by-side replays the sequential tests on comparisons it measures to their \
             budget: leave out --pairs (set the budget with --max-pairs)"
        );
    }
    if a.aa_comparisons == Some(0) {
        usage_bail!("--aa-comparisons must be at least 1");
    }
    Plan::new(&Request {
        workload,
        workload_params: params[workload.name].clone(),
        half,
        budget_s,
        quick: a.quick,
        aa_comparisons: a.aa_comparisons,
        injected_comparisons: a.injected_comparisons,
        seed: a.seed,
        test: a.test.seq_test(),
        side_by_side: a.side_by_side,
        counting,
    })
}

#[derive(Serialize)]
struct CalibrateOutput<'a> {
    run_id: i64,
    calibration_id: i64,
    label: &'a str,
    db: &'a Path,
    #[serde(flatten)]
    report: &'a CalibrationReport,
}

pub fn calibrate(args: CalibrateArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let counting = args.metric.counting(args.vm.vm.is_some())?;
    if args.vm.vm.is_some() {
        let show = super::vm::Show::GuestStdout {
            stores_run: true,
            json,
        };
        let relay = super::vm::Relay {
            mechanisms: &[],
            counting,
            tasks: None,
        };
        return super::vm::relay_counted(&args.vm, &relay, db, args.wait.no_wait, show);
    }
    args.vm.resolve(false)?;
    if let Some(run) = args.replay {
        return replay(run, db, json);
    }
    let plan = plan_from_args(&args, counting)?;
    let label = args.label.clone().unwrap_or_default();
    let (session, calibration_id, report) =
        calibrate::measure_stored(&plan, &label, db, args.wait.no_wait)?;

    if json {
        return super::emit::print_json(&CalibrateOutput {
            run_id: session.run_id,
            calibration_id,
            label: &label,
            db: &session.db_path,
            report: &report,
        });
    }
    super::emit::emit_fmt!("{}", crate::report::sections::calibration::text(&report));
    super::emit::emit_fmt!("\n{}", session.stored_line(&label));
    Ok(())
}

#[derive(Serialize)]
struct ReplayOutput<'a> {
    run_id: i64,
    calibration_id: i64,
    workload: &'a str,
    side_by_side: &'a calibrate::replay::SideBySide,
}

/// `calibrate --replay RUN`: today's sequential tests on a stored
/// calibration's pairs.
fn replay(run: i64, db: Option<&Path>, json: bool) -> Result<()> {
    let (_, store) = open_store(db)?;
    let Some(cal) = crate::store::calibrations::calibration_of_run(&store, run)? else {
        usage_bail!(
            "--replay {run}: run {run} stored no calibration; `secperf results list` shows the \
             calibrate runs (kind calibrate)"
        );
    };
    let stored = match calibrate::replay::stored_pairs(&cal.json) {
        Ok(s) => s,
        Err(e) => usage_bail!("--replay {run}: cannot replay calibration {}: {e}", cal.id),
    };
    let sbs = calibrate::replay::side_by_side_stored(
        &stored,
        &calibrate::replay::TESTS,
        &crate::stats::decision::DecisionOpts::default(),
    );
    if json {
        return super::emit::print_json(&ReplayOutput {
            run_id: run,
            calibration_id: cal.id,
            workload: &cal.workload,
            side_by_side: &sbs,
        });
    }
    super::emit::emit_fmt!(
        "Replay of calibration {} (run {run}, {}: {} A/A comparisons, {} injected slowdown(s), \
         each measured to {} pairs)\n\n{}\n",
        cal.id,
        cal.workload,
        stored.aa.len(),
        stored.injected.len(),
        stored.budget_pairs,
        crate::report::sections::calibration::side_by_side(&sbs)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;

    #[test]
    fn budgets_in_seconds_minutes_hours() {
        assert_eq!(parse_budget("60s").unwrap(), 60.0);
        assert_eq!(parse_budget("2m").unwrap(), 120.0);
        assert_eq!(parse_budget("90").unwrap(), 90.0);
        assert_eq!(parse_budget(" 1.5m ").unwrap(), 90.0);
        assert_eq!(parse_budget("1h").unwrap(), 3600.0);
        assert_eq!(parse_budget("45 s").unwrap(), 45.0);
    }

    #[test]
    fn bad_budgets_are_usage_errors() {
        for bad in [
            "", "s", "abc", "60x", "-5s", "0", "0.5s", "25h", "1..2m", "1e3",
        ] {
            let e = parse_budget(bad).unwrap_err();
            assert_eq!(exit_code(&e), 2, "{bad}: {e:#}");
            assert!(e.to_string().contains("--budget"), "{bad}: {e}");
        }
    }
}
