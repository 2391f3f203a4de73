//! One arm's kernel, from its spec to a bootable image: identify the
//! source, check the patches and the fragment against it (before anything
//! is copied), find the final config (remembered by its inputs), and
//! either take the cached image of that key or bring secperf's tree to
//! the arm and build it.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::cache::{self, BuildRecord, Entry};
use super::config::{self, Dropped, Item};
use super::layout::{self, LayoutChange};
use super::patches::{self, PatchRecord};
use super::source::{self, Identity};
use super::spec::SourceSpec;
use super::tree::Tree;

/// A built (or cached) arm.
#[derive(Debug, Clone)]
pub struct Built {
    pub entry: Entry,
    /// The entry's record with the final config, and whether it was
    /// cached.
    pub record: BuildRecord,
    /// Seconds spent on this arm in this run (0-ish for a cache hit).
    pub seconds: f64,
}

/// What a spec resolves to before anything is built.
struct Inputs {
    identity: Identity,
    patches: Vec<PatchRecord>,
    fragment: Option<(std::path::PathBuf, String, Vec<Item>)>,
    toolchain: String,
    virtme: String,
    memo_key: String,
}

/// The config a set of inputs gave, remembered.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ConfigMemo {
    config: String,
    dropped: Vec<Dropped>,
    layout: Option<LayoutChange>,
}

/// Files a first build compiles when nothing better is known: Debian's
/// 6.1 tree with secperf's config compiled 2049 here.
pub const FIRST_BUILD_FILES: u64 = 2000;

fn memo_dir(root: &Path) -> std::path::PathBuf {
    root.join("memo")
}

/// Identifies the source and checks the patches and the fragment against
/// it, writing nothing but the source memo.
fn inputs(spec: &SourceSpec, root: &Path) -> Result<Inputs> {
    let identity = source::identify(spec, &memo_dir(root).join("sources"))?;
    let patches = patches::read(&spec.patches)?;
    match &identity.commit {
        Some(commit) => patches::check_git(&spec.source, commit, &patches)?,
        None => patches::check_dir(&spec.source, &patches)?,
    }
    let fragment = match &spec.config {
        None => None,
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let what = format!("config={}", p.display());
            let items = config::parse(&text, &what)?;
            let mut known = match &identity.commit {
                Some(commit) => git_symbols(&spec.source, commit)?,
                None => config::known_symbols(&spec.source)?,
            };
            // Options the arm's patches add.
            for p in &patches {
                known.extend(config::symbols_in(
                    &p.content
                        .lines()
                        .filter_map(|l| l.strip_prefix('+'))
                        .collect::<Vec<_>>()
                        .join("\n"),
                ));
            }
            config::check_known(&items, &known, &what)?;
            Some((p.clone(), text, items))
        }
    };
    let toolchain = cache::toolchain()?;
    let virtme = config::virtme_fragment()?;
    let mut m = format!(
        "secperf-config-v1\narch {}\nsource {}\ntoolchain {toolchain}\nlayout {}\n",
        super::ARCH,
        identity.id,
        spec.layout
    );
    for p in &patches {
        m.push_str(&format!("patch {}\n", p.sha256));
    }
    m.push_str(&config::appended(
        &virtme,
        fragment.as_ref().map(|f| f.1.as_str()),
    ));
    Ok(Inputs {
        identity,
        patches,
        fragment,
        toolchain,
        virtme,
        memo_key: super::sha256_hex(m.as_bytes())[..32].to_string(),
    })
}

fn git_symbols(repo: &Path, commit: &str) -> Result<std::collections::BTreeSet<String>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "grep",
            "-h",
            "-E",
            "^[[:space:]]*(menu)?config [A-Za-z0-9_]+",
            commit,
            "--",
            "*Kconfig*",
        ])
        .output()
        .context("running git grep")?;
    Ok(config::symbols_in(&String::from_utf8_lossy(&out.stdout)).collect())
}

fn read_memo(root: &Path, key: &str) -> Option<ConfigMemo> {
    let t =
        std::fs::read_to_string(memo_dir(root).join("configs").join(format!("{key}.json"))).ok()?;
    serde_json::from_str(&t).ok()
}

fn write_memo(root: &Path, key: &str, memo: &ConfigMemo) -> Result<()> {
    let dir = memo_dir(root).join("configs");
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(".{key}.{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_string(memo)?)?;
    std::fs::rename(&tmp, dir.join(format!("{key}.json")))?;
    Ok(())
}

fn key_of(inputs: &Inputs, memo: &ConfigMemo) -> String {
    cache::key(
        &inputs.identity,
        &inputs.patches,
        memo.layout.as_ref(),
        &super::sha256_hex(memo.config.as_bytes()),
        &inputs.toolchain,
    )
}

/// Checks an arm before anything is built: the source is a kernel tree
/// (at `rev=`), the patches apply to it, the fragment sets only options
/// its Kconfig defines. Writes nothing but the source's memo.
pub fn check(spec: &SourceSpec, root: &Path) -> Result<()> {
    inputs(spec, root).map(|_| ())
}

/// What `--dry-run` says of an arm.
#[derive(Debug, Clone, Serialize)]
pub struct Planned {
    pub source: String,
    pub identity: Identity,
    /// The cache key, when the config is known (it was computed before).
    pub key: Option<String>,
    pub cached: bool,
    /// Estimated seconds to build (0 when cached).
    pub estimate_s: f64,
    pub note: String,
}

/// The plan of an arm: cached, or to build and about how long. Reads
/// only.
pub fn plan(spec: &SourceSpec, root: &Path) -> Result<Planned> {
    plan_after(spec, root, None).map(|p| p.0)
}

/// The plans of a run's arms, in the order they are built (None for an
/// arm that boots an image). An arm whose tree an earlier arm of the run
/// builds is estimated as the rebuild it will be: of the files that
/// differ between the two, then the link, rather than as a first build.
pub fn plan_all(arms: &[(&str, Option<&SourceSpec>)], root: &Path) -> Result<Vec<Option<Planned>>> {
    let mut built: Vec<(&str, &SourceSpec, Inputs)> = Vec::new();
    let mut out = Vec::new();
    for (name, spec) in arms {
        let Some(spec) = spec else {
            out.push(None);
            continue;
        };
        let earlier = built
            .iter()
            .rev()
            .find(|(_, s, _)| s.source == spec.source)
            .map(|(n, _, i)| (*n, i));
        let (planned, inputs) = plan_after(spec, root, earlier)?;
        if !planned.cached {
            built.push((name, spec, inputs));
        }
        out.push(Some(planned));
    }
    Ok(out)
}

/// Seconds to compile one file and to link, where the tree has no first
/// build to learn them from (a 2-CPU VM's figures: a one-file change took
/// 51 s in all).
const FILE_S: f64 = 3.0;
const LINK_S: f64 = 45.0;

/// The files a tree changes in going from one arm's inputs to another's,
/// or None where that is not known (two revisions outside git) or is
/// most of the tree (a different config).
fn files_between(a: &Inputs, b: &Inputs, b_spec: &SourceSpec) -> Option<Vec<String>> {
    if a.fragment.as_ref().map(|f| &f.1) != b.fragment.as_ref().map(|f| &f.1) {
        return None;
    }
    let mut files: Vec<String> = a
        .patches
        .iter()
        .chain(&b.patches)
        .flat_map(|p| patches::files(&p.content))
        .collect();
    if a.identity.id != b.identity.id {
        let (Some(x), Some(y)) = (&a.identity.commit, &b.identity.commit) else {
            return None;
        };
        let diff = source::git(&b_spec.source, &["diff", "--name-only", x, y]).ok()?;
        files.extend(diff.lines().map(str::to_string));
    }
    files.sort();
    files.dedup();
    Some(files)
}

/// An arm's plan, given the earlier arm of the same run (its name, spec
/// and inputs) that builds the same tree first, if any.
fn plan_after(
    spec: &SourceSpec,
    root: &Path,
    earlier: Option<(&str, &Inputs)>,
) -> Result<(Planned, Inputs)> {
    let inputs = inputs(spec, root)?;
    let key = read_memo(root, &inputs.memo_key).map(|m| key_of(&inputs, &m));
    let cached = key
        .as_deref()
        .is_some_and(|k| cache::find(root, k).is_some());
    let tree = Tree::of(root, &spec.source);
    let state = tree.state();
    let built_before = tree.build().join("vmlinux").exists();
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get()) as f64;
    let shared = earlier.map(|(name, e)| (name, files_between(e, &inputs, spec)));
    let (estimate_s, note) = if cached {
        (0.0, "cached: nothing to build".to_string())
    } else if let Some((name, Some(files))) = &shared
        && files.is_empty()
    {
        (
            LINK_S,
            format!(
                "shares secperf's tree with arm {name}, built before it, and no source file \
                 differs: at most a relink"
            ),
        )
    } else if let Some((name, Some(files))) = &shared {
        // One file compiles in a first build's seconds x CPUs / files.
        let file_s = state
            .first_build
            .filter(|b| b.1 > 0)
            .map_or(FILE_S, |b| b.0 * cpus / b.1 as f64);
        let shown: Vec<&str> = files.iter().take(3).map(String::as_str).collect();
        (
            LINK_S + files.len() as f64 * file_s,
            format!(
                "shares secperf's tree with arm {name}, built before it: rebuilds only what \
                 differs, {}{}, then links{}",
                match files.len() {
                    1 => "1 file".to_string(),
                    n => format!("{n} files"),
                },
                if shown.is_empty() {
                    String::new()
                } else {
                    format!(
                        " ({}{})",
                        shown.join(", "),
                        if files.len() > 3 { ", ..." } else { "" }
                    )
                },
                if files.iter().any(|f| f.ends_with(".h")) {
                    "; a header changes, so each file that includes it is rebuilt too"
                } else {
                    ""
                }
            ),
        )
    } else if let Some((name, None)) = &shared {
        let s = state.first_build.map_or(3000.0 / cpus, |b| b.0);
        (
            s,
            format!(
                "shares secperf's tree with arm {name}, built before it, but differs from it in \
                 config or in a revision outside git: counted as a first build"
            ),
        )
    } else if built_before {
        let s = state.last_build.map_or(180.0, |b| b.0.max(60.0));
        (
            s,
            "secperf's tree of this source is built: only the files that differ are \
             rebuilt, then the link"
                .to_string(),
        )
    } else {
        let s = state.first_build.map_or(3000.0 / cpus, |b| b.0);
        (s, format!("a first build of this source on {cpus} CPUs"))
    };
    Ok((
        Planned {
            source: spec.describe(),
            identity: inputs.identity.clone(),
            key,
            cached,
            estimate_s,
            note,
        },
        inputs,
    ))
}

/// The arm's image: from the cache, or built now. `label` names the arm
/// in progress; `stop` is set by Ctrl-C.
pub fn ensure(spec: &SourceSpec, root: &Path, label: &str, stop: &AtomicBool) -> Result<Built> {
    let begun = std::time::Instant::now();
    cache::remove_stale(root);
    let inputs = inputs(spec, root)?;
    if let Some(memo) = read_memo(root, &inputs.memo_key) {
        let key = key_of(&inputs, &memo);
        if let Some(entry) = cache::find(root, &key) {
            return done(entry, &memo, true, begun);
        }
    }
    let tree = Tree::of(root, &spec.source);
    let _lock = tree.lock()?;
    std::fs::create_dir_all(tree.logs())?;
    let want = super::sha256_hex(
        format!(
            "{}\n{}\n{}",
            inputs.identity.id,
            inputs
                .patches
                .iter()
                .map(|p| p.sha256.as_str())
                .collect::<Vec<_>>()
                .join(","),
            spec.layout
        )
        .as_bytes(),
    );
    crate::say!(
        "secperf: build {label}: preparing secperf's tree {}",
        tree.dir.display()
    );
    let mut layout_change = None;
    let touched: Vec<String> = inputs
        .patches
        .iter()
        .flat_map(|p| patches::files(&p.content))
        .collect();
    tree.prepare(&spec.source, &inputs.identity, &want, &mut |src| {
        patches::apply(src, &inputs.patches)?;
        if spec.layout {
            layout_change = Some(layout::apply(src, &touched)?);
        }
        Ok(())
    })?;
    if spec.layout && layout_change.is_none() {
        // The tree was already prepared for this arm: the change is the
        // one the padding's file choice gives.
        let file = layout::choose(&tree.src(), &touched)?;
        layout_change = Some(LayoutChange {
            file: file.to_string(),
            pad_bytes: layout::PAD_BYTES,
        });
    }
    crate::say!(
        "secperf: build {label}: config (defconfig, virtme-ng's fragment, secperf's, olddefconfig)"
    );
    let final_config = config::generate(
        &tree.src(),
        &tree.scratch(),
        &config::appended(
            &inputs.virtme,
            inputs.fragment.as_ref().map(|f| f.1.as_str()),
        ),
        &tree.logs().join("config.log"),
    )?;
    let mut asked = vec![(
        config::parse(config::FORCED, "forced.config")?,
        "secperf".to_string(),
    )];
    if let Some((p, _, items)) = &inputs.fragment {
        asked.push((items.clone(), format!("config={}", p.display())));
    }
    let memo = ConfigMemo {
        dropped: config::dropped(&final_config, &asked),
        config: final_config,
        layout: layout_change,
    };
    write_memo(root, &inputs.memo_key, &memo)?;
    for d in &memo.dropped {
        crate::say!("secperf: warning: build {label}: {}", d.line());
    }
    let key = key_of(&inputs, &memo);
    if let Some(entry) = cache::find(root, &key) {
        return done(entry, &memo, true, begun);
    }
    let build_dir = tree.build();
    std::fs::create_dir_all(&build_dir)?;
    let first = !build_dir.join("vmlinux").exists();
    let dot_config = build_dir.join(".config");
    if std::fs::read_to_string(&dot_config).ok().as_deref() != Some(memo.config.as_str()) {
        std::fs::write(&dot_config, &memo.config)?;
    }
    let mut state = tree.state();
    // A first build's file count: this tree's last, else the last first
    // build of any tree, else about what x86-64 6.x compiles with this
    // config (for the time left; said as "about").
    let expected = if first {
        Some(
            state
                .first_build
                .map(|b| b.1)
                .or_else(|| {
                    std::fs::read_to_string(memo_dir(root).join("first_build_files"))
                        .ok()
                        .and_then(|t| t.trim().parse().ok())
                })
                .unwrap_or(FIRST_BUILD_FILES),
        )
    } else {
        None
    };
    crate::say!(
        "secperf: build {label}: compiling ({}; log {})",
        if first {
            "a first build of this source: every file, the time left follows"
        } else {
            "only what differs from the tree's last build"
        },
        tree.logs().join(format!("{key}.log")).display()
    );
    let log = tree.logs().join(format!("{key}.log"));
    let made = super::make::bzimage(&tree.src(), &build_dir, &log, label, expected, stop)?;
    if first {
        state.first_build = Some((made.seconds, made.compiled));
        let _ = std::fs::create_dir_all(memo_dir(root));
        let _ = std::fs::write(
            memo_dir(root).join("first_build_files"),
            made.compiled.to_string(),
        );
    } else {
        state.last_build = Some((made.seconds, made.compiled));
    }
    tree.save_state(&state)?;
    let image = build_dir.join("arch/x86/boot/bzImage");
    let bytes = std::fs::read(&image).with_context(|| format!("reading {}", image.display()))?;
    let record = BuildRecord {
        key: key.clone(),
        source: spec.source.clone(),
        identity: inputs.identity.clone(),
        rev: spec.rev.clone(),
        patches: inputs.patches.clone(),
        fragment: inputs.fragment.as_ref().map(|f| (f.0.clone(), f.1.clone())),
        layout: memo.layout.clone(),
        config_sha256: super::sha256_hex(memo.config.as_bytes()),
        dropped: memo.dropped.clone(),
        toolchain: inputs.toolchain.clone(),
        built_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        build_s: made.seconds,
        compiled_files: made.compiled,
        image_sha256: super::sha256_hex(&bytes),
        image_bytes: bytes.len() as u64,
        config: None,
        cached: false,
    };
    let entry = cache::publish(root, &record, &image, &memo.config, &log)?;
    crate::say!(
        "secperf: build {label}: built in {:.0} s ({} files compiled), cached as {key}",
        made.seconds,
        made.compiled
    );
    done(entry, &memo, false, begun)
}

fn done(entry: Entry, memo: &ConfigMemo, cached: bool, begun: std::time::Instant) -> Result<Built> {
    let mut record = entry.record.clone();
    record.config = Some(memo.config.clone());
    record.cached = cached;
    Ok(Built {
        entry,
        record,
        seconds: begun.elapsed().as_secs_f64(),
    })
}
