//! `secperf kernels list|prune`: the kernels built from source for
//! `--kernel NAME=SOURCE` arms, cached under
//! $XDG_CACHE_HOME/secperf/kernels.

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::engine::boots::kernels::{cache_list, tree_list};
use crate::usage_bail;

#[derive(Debug, Subcommand)]
pub enum KernelsCommand {
    /// List the cached builds (key, source, patches, when built, how long
    /// the build took in seconds, the entry's size in MiB) and the source
    /// copies and build trees the next build of a source reuses, with
    /// their size on disk (MiB) and when a build last used them.
    List,
    /// Remove cached builds: the keys given (a unique prefix is enough),
    /// those built more than --older-than days ago (and trees last used
    /// then), or --all; --trees removes the source copies and build trees
    /// (the next build of a source starts from clean). Says what is left.
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
    /// Remove the source copies and build trees (with KEY or
    /// --older-than: those too; alone: only the trees).
    #[arg(long)]
    pub trees: bool,
}

/// MiB, one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1048576.0)
}

/// What the cache holds, in one line: "2 builds (17.7 MiB) and 1 source
/// tree (3641.2 MiB), in ROOT".
fn holds(root: &std::path::Path) -> String {
    let builds = cache_list(root);
    let trees = tree_list(root);
    format!(
        "{} ({} MiB) and {} ({} MiB), in {}",
        crate::report::number::count(builds.len(), "build"),
        mib(builds.iter().map(|e| e.bytes()).sum()),
        crate::report::number::count(trees.len(), "source tree"),
        mib(trees.iter().map(|t| t.bytes).sum()),
        root.display()
    )
}

pub fn kernels(command: KernelsCommand, json: bool) -> Result<()> {
    let root = crate::engine::boots::kernels::cache_root();
    match command {
        KernelsCommand::List => list(&root, json),
        KernelsCommand::Prune(a) => prune(&root, &a, json),
    }
}

fn list(root: &std::path::Path, json: bool) -> Result<()> {
    crate::engine::boots::kernels::remove_stale(root);
    let entries = cache_list(root);
    let trees = tree_list(root);
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
        return super::emit::print_json(&serde_json::json!({
            "root": root,
            "builds": rows,
            "trees": trees,
            "trees_bytes": trees.iter().map(|t| t.bytes).sum::<u64>(),
        }));
    }
    if entries.is_empty() && trees.is_empty() {
        super::emit::emit_fmt!("No cached kernel builds in {}.", root.display());
        return Ok(());
    }
    if !entries.is_empty() {
        list_builds(&entries);
    }
    if !trees.is_empty() {
        let mut t = crate::report::markup::terminal::new_table(&["source tree", "MiB", "used"]);
        for tree in &trees {
            t.add_row([
                tree.dir.display().to_string(),
                mib(tree.bytes),
                tree.used_at
                    .map_or("-".into(), |u| u.format("%Y-%m-%d %H:%M").to_string()),
            ]);
        }
        super::emit::emit_fmt!(
            "Source copies and build trees (the next build of the same source reuses one; \
             `secperf kernels prune --trees` removes them):\n{t}"
        );
    }
    super::emit::emit_fmt!("{}", holds(root));
    Ok(())
}

/// The table of cached builds.
fn list_builds(entries: &[crate::engine::boots::kernels::CacheEntry]) {
    let mut t = crate::report::markup::terminal::new_table(&[
        "key", "source", "rev", "patches", "built", "build s", "MiB",
    ]);
    for e in entries {
        let r = &e.record;
        let bytes = e.bytes();
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
            mib(bytes),
        ]);
    }
    super::emit::emit_fmt!("{t}");
}

fn prune(root: &std::path::Path, a: &PruneArgs, json: bool) -> Result<()> {
    use crate::engine::boots::kernels::Prune;
    let what = if a.all || (a.trees && a.keys.is_empty() && a.older_than.is_none()) {
        match a.all {
            true => Prune::All,
            false => Prune::Trees,
        }
    } else if let Some(days) = a.older_than {
        if days.is_nan() || days < 0.0 {
            usage_bail!("--older-than {days}: give a number of days, 0 or more");
        }
        Prune::OlderThan {
            days,
            trees: a.trees,
        }
    } else if a.keys.is_empty() {
        usage_bail!(
            "kernels prune: give KEY..., --older-than DAYS, --trees or --all (see secperf \
             kernels list)"
        );
    } else {
        Prune::Keys {
            keys: a.keys.clone(),
            trees: a.trees,
        }
    };
    let crate::engine::boots::kernels::Pruned {
        removed,
        stale,
        trees_removed,
    } = crate::engine::boots::kernels::prune(root, &what)?;
    if json {
        return super::emit::print_json(&serde_json::json!({
            "removed": removed,
            "stale_removed": stale,
            "trees_removed": trees_removed,
            "left": holds(root),
        }));
    }
    super::emit::emit_fmt!(
        "Removed {}{}{}. Left: {}{}.",
        crate::report::number::count(removed.len(), "cached build"),
        if stale > 0 {
            format!(" and {stale} unfinished one(s)")
        } else {
            String::new()
        },
        if trees_removed.is_empty() {
            String::new()
        } else {
            format!(
                ", and {}",
                crate::report::number::count(trees_removed.len(), "source tree")
            )
        },
        holds(root),
        if tree_list(root).is_empty() {
            ""
        } else {
            " (`secperf kernels prune --trees` removes the source trees)"
        }
    );
    Ok(())
}
