//! `secperf kernels list|prune`: the kernels built from source for
//! `--kernel NAME=SOURCE` arms, cached under
//! $XDG_CACHE_HOME/secperf/kernels.

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::kbuild::cache;
use crate::usage_bail;

#[derive(Debug, Subcommand)]
pub enum KernelsCommand {
    /// List the cached builds: key, source, patches, when built, how long
    /// the build took (seconds) and the entry's size on disk (MiB).
    List,
    /// Remove cached builds: the keys given (a unique prefix is enough),
    /// those built more than --older-than days ago, or --all (which also
    /// removes secperf's source copies and build trees; the next build of
    /// a source starts from clean).
    Prune(PruneArgs),
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Keys (or unique prefixes) of the builds to remove.
    #[arg(value_name = "KEY")]
    pub keys: Vec<String>,
    /// Remove builds made more than this many days ago.
    #[arg(long, value_name = "DAYS", allow_negative_numbers = true)]
    pub older_than: Option<f64>,
    /// Remove every build, and the source copies and build trees.
    #[arg(long, conflicts_with_all = ["keys", "older_than"])]
    pub all: bool,
}

pub fn kernels(command: KernelsCommand, json: bool) -> Result<()> {
    let root = crate::kbuild::cache_root();
    match command {
        KernelsCommand::List => list(&root, json),
        KernelsCommand::Prune(a) => prune(&root, &a, json),
    }
}

fn list(root: &std::path::Path, json: bool) -> Result<()> {
    cache::remove_stale(root);
    let entries = cache::list(root);
    if json {
        let rows: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "key": e.record.key,
                    "dir": e.dir,
                    "bytes": e.bytes(),
                    "record": e.record,
                })
            })
            .collect();
        return super::print_json(&serde_json::json!({ "root": root, "builds": rows }));
    }
    if entries.is_empty() {
        super::emit_fmt!("No cached kernel builds in {}.", root.display());
        return Ok(());
    }
    let mut t = crate::report::markup::terminal::new_table(&[
        "key", "source", "rev", "patches", "built", "build s", "MiB",
    ]);
    let mut total = 0;
    for e in &entries {
        let r = &e.record;
        let bytes = e.bytes();
        total += bytes;
        let mut patches: Vec<String> = r
            .patches
            .iter()
            .map(|p| {
                p.path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        if let Some(l) = &r.layout {
            patches.push(format!("layout pad in {}", l.file));
        }
        t.add_row([
            r.key.clone(),
            r.source.display().to_string(),
            r.rev.clone().unwrap_or_else(|| "-".into()),
            if patches.is_empty() {
                "-".into()
            } else {
                patches.join(", ")
            },
            r.built_at.clone(),
            format!("{:.0}", r.build_s),
            format!("{:.1}", bytes as f64 / 1048576.0),
        ]);
    }
    super::emit_fmt!("{t}");
    super::emit_fmt!(
        "{} builds, {:.1} MiB, in {}",
        entries.len(),
        total as f64 / 1048576.0,
        root.display()
    );
    Ok(())
}

fn prune(root: &std::path::Path, a: &PruneArgs, json: bool) -> Result<()> {
    let stale = cache::remove_stale(root);
    let keys: Vec<String>;
    if a.all {
        keys = cache::list(root)
            .into_iter()
            .map(|e| e.record.key)
            .collect();
    } else if let Some(days) = a.older_than {
        if days.is_nan() || days < 0.0 {
            usage_bail!("--older-than {days}: give a number of days, 0 or more");
        }
        let cutoff = chrono::Utc::now() - chrono::Duration::seconds((days * 86400.0) as i64);
        keys = cache::list(root)
            .into_iter()
            .filter(|e| {
                chrono::DateTime::parse_from_rfc3339(&e.record.built_at).is_ok_and(|t| t < cutoff)
            })
            .map(|e| e.record.key)
            .collect();
    } else if a.keys.is_empty() {
        usage_bail!(
            "kernels prune: give KEY..., --older-than DAYS or --all (see secperf kernels list)"
        );
    } else {
        keys = a.keys.clone();
    }
    let removed = cache::remove(root, &keys)?;
    let mut trees = false;
    if a.all {
        for d in ["trees", "memo"] {
            let p = root.join(d);
            if p.exists() {
                std::fs::remove_dir_all(&p)
                    .map_err(|e| anyhow::anyhow!("removing {}: {e}", p.display()))?;
                trees = true;
            }
        }
    }
    if json {
        return super::print_json(&serde_json::json!({
            "removed": removed,
            "stale_removed": stale,
            "trees_removed": trees,
        }));
    }
    super::emit_fmt!(
        "Removed {} cached build{}{}{}.",
        removed.len(),
        if removed.len() == 1 { "" } else { "s" },
        if stale > 0 {
            format!(" and {stale} unfinished one(s)")
        } else {
            String::new()
        },
        if trees {
            ", and secperf's source copies and build trees"
        } else {
            ""
        }
    );
    Ok(())
}
