//! `secperf report RUN... [-o PATH]`: one self-contained HTML page with
//! plots of stored runs (see `report::html`). Runs are named as
//! `results show` names them; each is loaded as its run document
//! (`read::document`), then the page is written to a file (default
//! `secperf-report.html`) or stdout (`-o -`).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::report::html;
use crate::usage_bail;

/// Where the page goes when `-o` is not given.
pub const DEFAULT_OUTPUT: &str = "secperf-report.html";

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Run ids, labels, `latest` or `latest~N` (several runs: one page,
    /// scaling curves overlaid).
    #[arg(required_unless_present_any = ["campaign", "bisection", "track"], value_name = "RUN")]
    pub runs: Vec<String>,
    /// A campaign's id (or a unique prefix, or `latest`) instead of runs:
    /// one page with its hosts side by side, a forest plot per comparison
    /// with one row per host, and what differs between the hosts.
    #[arg(long, value_name = "ID", conflicts_with_all = ["runs", "bisection", "track"])]
    pub campaign: Option<String>,
    /// A bisection's id (or a unique prefix, or `latest`) instead of runs:
    /// one page with a plot of each tested revision's slowdown against
    /// --good (%, with its interval) in commit order, the steps and the
    /// `git bisect log`.
    #[arg(long, value_name = "ID", conflicts_with_all = ["runs", "track"])]
    pub bisection: Option<String>,
    /// A track's id (or a unique prefix, or `latest`) instead of runs: one
    /// page with the timeline of each tested revision's change against the
    /// one before it (%, with its interval at its e-LOND level), alarms and
    /// their commits marked, and the table.
    #[arg(long, value_name = "ID", conflicts_with = "runs")]
    pub track: Option<String>,
    /// Write the page here; `-` for stdout.
    #[arg(short, long, value_name = "PATH", default_value = DEFAULT_OUTPUT)]
    pub output: PathBuf,
}

pub fn report(args: ReportArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let to_stdout = args.output.as_os_str() == "-";
    if to_stdout && json {
        usage_bail!(
            "--json prints a summary on stdout, and -o - writes the page there too: \
             give a file with -o"
        );
    }
    let (store, _) = super::reading::open(db)?;
    if let Some(spec) = &args.bisection {
        let b = store.bisection(spec)?;
        let page = crate::report::html::bisect::page(&b, chrono::Utc::now())?;
        let summary = serde_json::json!({ "bisection": b.id, "plots": 1 });
        let what = format!(
            "bisection {}, {} step(s), 1 plot",
            b.id,
            b.outcome.steps.len()
        );
        return write_page(&args.output, &page, json, summary, &what);
    }
    if let Some(spec) = &args.track {
        let t = store.track(spec)?;
        let page = crate::report::html::track::page(&t, chrono::Utc::now())?;
        let summary = serde_json::json!({ "track": t.id, "plots": 1 });
        let what = format!(
            "track {}, {} tested revision(s), 1 plot",
            t.id,
            t.points.len()
        );
        return write_page(&args.output, &page, json, summary, &what);
    }
    if let Some(spec) = &args.campaign {
        let (view, docs) = crate::read::campaign::view(&store, spec)?;
        let page = crate::report::html::campaign::page(&view, &docs, chrono::Utc::now())?;
        let summary = serde_json::json!({
            "campaign": view.campaign,
            "runs": docs.iter().map(|d| d.run_id).collect::<Vec<_>>(),
        });
        let what = format!("campaign {}, {} host(s)", view.campaign, docs.len());
        return write_page(&args.output, &page, json, summary, &what);
    }
    let mut ids: Vec<i64> = Vec::new();
    for spec in &args.runs {
        let id = store.resolve_run(spec)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let runs = ids
        .iter()
        .map(|&id| crate::read::document::load(&store, id))
        .collect::<Result<Vec<_>>>()?;
    let page = html::render(&runs, chrono::Utc::now())?;
    let summary = serde_json::json!({ "runs": ids, "plots": page.plots });
    let what = plots_of_runs(page.plots, &ids);
    write_page(&args.output, &page.html, json, summary, &what)
}

/// What a page of runs holds, in words: "run 7: 12 plots", "runs 7 and 8:
/// 1 plot".
fn plots_of_runs(plots: usize, ids: &[i64]) -> String {
    let names: Vec<String> = ids.iter().map(ToString::to_string).collect();
    let runs = match names.as_slice() {
        [one] => format!("run {one}"),
        [init @ .., last] => format!("runs {} and {last}", init.join(", ")),
        [] => "no run".to_string(),
    };
    format!("{runs}: {}", crate::report::number::count(plots, "plot"))
}

/// Writes `page` to `output` (`-`: stdout) and says what was written:
/// `summary` with the page's path under `--json`, else "Wrote PATH
/// (what)."
fn write_page(
    output: &Path,
    page: &str,
    json: bool,
    mut summary: serde_json::Value,
    what: &str,
) -> Result<()> {
    if output.as_os_str() == "-" {
        super::emit::emit(page.trim_end());
        return Ok(());
    }
    super::output::write_file(output, page)?;
    let written = std::fs::canonicalize(output).unwrap_or(output.to_path_buf());
    if json {
        summary["path"] = serde_json::json!(written);
        return super::emit::print_json(&summary);
    }
    super::emit::emit_fmt!("Wrote {} ({what}).", written.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_page_says_which_runs_it_holds_and_how_many_plots() {
        // Issue 44: "(12 plots; runs 7)".
        assert_eq!(super::plots_of_runs(12, &[7]), "run 7: 12 plots");
        assert_eq!(
            super::plots_of_runs(1, &[7, 8, 9]),
            "runs 7, 8 and 9: 1 plot"
        );
    }
}
