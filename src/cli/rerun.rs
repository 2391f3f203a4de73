//! `secperf rerun RUN`: repeats a stored run from what was stored: its
//! command line, with the seed it used, and its policy files as they were
//! read (see [`crate::engine::rerun`]). The repeat is a new run in the
//! database given now (`--db`), printed as the command prints.

use std::path::Path;

use anyhow::Result;

use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct RerunArgs {
    /// Run id, label, `latest` or `latest~N` of the run to repeat.
    #[arg(value_name = "RUN")]
    pub run: String,
}

pub fn rerun(args: RerunArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let path = crate::store::resolve_db_path(db)?;
    let doc = {
        let store = Store::open_read_only(&path)?;
        let id = store.resolve_run(&args.run)?;
        crate::read::document::load(&store, id)?
    };
    let rerun = crate::engine::rerun::prepare(&doc)?;
    crate::say!(
        "secperf: repeating run {}: {}",
        doc.run_id,
        shell_words::join(&rerun.argv)
    );
    for note in &rerun.notes {
        crate::say!("secperf: {note}");
    }
    let mut cli = super::parse_args(&rerun.argv).map_err(|e| {
        crate::error::UsageError::new(format!(
            "run {}'s command line no longer parses with this secperf ({}): {}",
            doc.run_id,
            env!("CARGO_PKG_VERSION"),
            e.to_string().lines().next().unwrap_or_default()
        ))
    })?;
    cli.db = Some(path);
    cli.json = json;
    crate::engine::session::set_argv(rerun.argv);
    super::dispatch(cli)
}
