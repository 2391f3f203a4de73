//! secperf's own copy of a source, one per source path
//! (`trees/NAME-HASH/`): `src/` (the copy, or a private checkout of a git
//! revision), `build/` (the `O=` of every build), `config/` (the `O=` the
//! configs are generated in), `logs/`.
//!
//! Its paths never change: a build tree copied elsewhere rebuilds nearly
//! everything (objtool is rebuilt under the new path, and every object
//! depends on it). Arms that differ by a patch share the tree: before a
//! build the copy is brought back to the source (only the files that
//! differ are rewritten, so only what they touch is rebuilt) and the arm's
//! patches are applied in place.
//!
//! A git revision is checked out with a private index (`GIT_INDEX_FILE`)
//! into `src/`: the user's working tree, index, HEAD and worktree list
//! are never touched.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::source::{Identity, walk};

/// One source's tree.
#[derive(Debug, Clone)]
pub struct Tree {
    pub dir: PathBuf,
}

/// What the tree remembers between runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    pub source: PathBuf,
    /// What `src/` holds now (a hash of the source identity, the patches
    /// and the layout change); None while it is being changed.
    pub prepared: Option<String>,
    /// The first full build: seconds and files compiled (for estimates).
    pub first_build: Option<(f64, u64)>,
    /// The last incremental build.
    pub last_build: Option<(f64, u64)>,
}

impl Tree {
    /// The tree of `source` under `root`.
    pub fn of(root: &Path, source: &Path) -> Tree {
        let name: String = source
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let hash = super::sha256_hex(source.as_os_str().as_encoded_bytes());
        Tree {
            dir: root.join("trees").join(format!("{name}-{}", &hash[..8])),
        }
    }

    pub fn src(&self) -> PathBuf {
        self.dir.join("src")
    }
    pub fn build(&self) -> PathBuf {
        self.dir.join("build")
    }
    pub fn scratch(&self) -> PathBuf {
        self.dir.join("config")
    }
    pub fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }
    fn state_file(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    pub fn state(&self) -> State {
        std::fs::read_to_string(self.state_file())
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    pub fn save_state(&self, state: &State) -> Result<()> {
        let tmp = self.dir.join(format!(".state.{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_string_pretty(state)?)?;
        std::fs::rename(&tmp, self.state_file())?;
        Ok(())
    }

    /// Takes the tree's lock (one build at a time per tree), saying so
    /// when another secperf holds it. Held until the file is dropped.
    pub fn lock(&self) -> Result<File> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let path = self.dir.join("lock");
        let f = File::create(&path).with_context(|| format!("opening {}", path.display()))?;
        match f.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                crate::say!(
                    "secperf: another secperf is building in {}; waiting for it",
                    self.dir.display()
                );
                f.lock()
                    .with_context(|| format!("locking {}", path.display()))?;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()));
            }
        }
        Ok(f)
    }

    /// Brings `src/` to the source and applies `change` (patches, the
    /// layout padding), unless it already holds exactly that (`want`).
    pub fn prepare(
        &self,
        source: &Path,
        ident: &Identity,
        want: &str,
        change: &mut dyn FnMut(&Path) -> Result<()>,
    ) -> Result<()> {
        let mut state = self.state();
        if state.prepared.as_deref() == Some(want) && self.src().is_dir() {
            return Ok(());
        }
        state.source = source.to_path_buf();
        state.prepared = None;
        self.save_state(&state)?;
        if ident.kind == "git" {
            checkout_git(source, &ident.id, &self.src(), &self.dir.join("index"))?;
        } else {
            let fresh = !self.src().exists();
            if fresh {
                crate::say!(
                    "secperf: copying {} into secperf's tree {} (once per source)",
                    source.display(),
                    self.src().display()
                );
            }
            let n = sync_dir(source, &self.src())?;
            if n > 0 && !fresh {
                crate::say!(
                    "secperf: {} file(s) of secperf's copy brought back to {}",
                    n,
                    source.display()
                );
            }
        }
        change(&self.src())?;
        state.prepared = Some(want.to_string());
        self.save_state(&state)
    }
}

/// Makes `dst` hold what `src` holds, rewriting only the files whose
/// content differs (their mtime becomes now, so make rebuilds what uses
/// them) and removing files `src` lacks. A file new to `dst` keeps its
/// source's mtime, so that a later sync needs no read of it. Returns the
/// number of files written or removed.
pub fn sync_dir(src: &Path, dst: &Path) -> Result<usize> {
    std::fs::create_dir_all(dst).with_context(|| format!("creating {}", dst.display()))?;
    let files = walk(src)?;
    let mut changed = 0;
    let wanted: std::collections::HashSet<&PathBuf> = files.iter().collect();
    for rel in &files {
        let from = src.join(rel);
        let to = dst.join(rel);
        let fm = std::fs::symlink_metadata(&from)?;
        let tm = std::fs::symlink_metadata(&to).ok();
        if fm.file_type().is_symlink() {
            let target = std::fs::read_link(&from)?;
            if std::fs::read_link(&to).ok().as_ref() == Some(&target) {
                continue;
            }
            if tm.is_some() {
                std::fs::remove_file(&to)?;
            }
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::os::unix::fs::symlink(&target, &to)?;
            changed += 1;
            continue;
        }
        match tm {
            Some(tm)
                if tm.is_file()
                    && tm.len() == fm.len()
                    && tm.mtime() == fm.mtime()
                    && tm.mtime_nsec() == fm.mtime_nsec() => {}
            Some(tm) if tm.is_file() && tm.len() == fm.len() && same_content(&from, &to)? => {}
            Some(tm) => {
                if !tm.is_file() {
                    let _ = std::fs::remove_file(&to);
                }
                std::fs::copy(&from, &to)
                    .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
                changed += 1;
            }
            None => {
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::copy(&from, &to)
                    .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
                let mtime = std::time::SystemTime::UNIX_EPOCH
                    + std::time::Duration::new(fm.mtime() as u64, fm.mtime_nsec() as u32);
                File::options().write(true).open(&to)?.set_modified(mtime)?;
                changed += 1;
            }
        }
    }
    for rel in walk(dst)? {
        if !wanted.contains(&rel) {
            std::fs::remove_file(dst.join(&rel))?;
            changed += 1;
        }
    }
    Ok(changed)
}

fn same_content(a: &Path, b: &Path) -> Result<bool> {
    Ok(std::fs::read(a)? == std::fs::read(b)?)
}

/// Checks `tree` of the repository at `repo` out into `dst` with the
/// private index `index`: files that already match are left alone, files
/// changed since (patches) are rewritten, files the tree lacks are
/// removed.
pub fn checkout_git(repo: &Path, tree: &str, dst: &Path, index: &Path) -> Result<()> {
    std::fs::create_dir_all(dst).with_context(|| format!("creating {}", dst.display()))?;
    let common = super::source::git(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )?;
    let run = |args: &[&str]| -> Result<()> {
        let out = Command::new("git")
            .arg(format!("--git-dir={common}"))
            .arg(format!("--work-tree={}", dst.display()))
            .args(args)
            .env("GIT_INDEX_FILE", index)
            .current_dir(dst)
            .output()
            .context("running git")?;
        if !out.status.success() {
            anyhow::bail!(
                "git {} into {}: {}",
                args.join(" "),
                dst.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    };
    if !index.exists() {
        crate::say!(
            "secperf: checking {} out into secperf's own tree {} (once per source)",
            &tree[..tree.len().min(12)],
            dst.display()
        );
    }
    run(&["read-tree", "-u", "--reset", tree])?;
    // Files a patch added are not in the index: clean them away.
    run(&["clean", "-f", "-d", "-x", "-q"])
}

/// A source copy and build tree on disk, as `kernels list` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    pub dir: PathBuf,
    /// Bytes allocated on disk (its files' blocks).
    pub bytes: u64,
    /// When a build last used it (its state file's modification time;
    /// the directory's where there is none).
    pub used_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Every tree under `root`, the most recently used first.
pub fn list(root: &Path) -> Vec<Listed> {
    let mut out: Vec<Listed> = std::fs::read_dir(root.join("trees"))
        .map(|d| {
            d.filter_map(|e| {
                let dir = e.ok()?.path();
                dir.is_dir().then(|| {
                    let tree = Tree { dir: dir.clone() };
                    let used = std::fs::metadata(tree.state_file())
                        .or_else(|_| std::fs::metadata(&dir))
                        .and_then(|m| m.modified())
                        .ok()
                        .map(chrono::DateTime::<chrono::Utc>::from);
                    Listed {
                        bytes: disk_bytes(&dir),
                        used_at: used,
                        dir,
                    }
                })
            })
            .collect()
        })
        .unwrap_or_default();
    out.sort_by_key(|t| std::cmp::Reverse(t.used_at));
    out
}

/// Bytes a directory takes on disk, what is under it included (blocks
/// allocated, not lengths: a build tree's objects).
pub fn disk_bytes(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let own = meta.blocks() * 512;
    if !meta.is_dir() {
        return own;
    }
    own + std::fs::read_dir(path)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| disk_bytes(&e.path()))
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_rewrites_only_what_differs() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        let dst = t.path().join("dst");
        crate::kbuild::source::tests::fake_kernel_tree(&src);
        let n = sync_dir(&src, &dst).unwrap();
        assert_eq!(n, walk(&src).unwrap().len());
        assert_eq!(sync_dir(&src, &dst).unwrap(), 0);
        // A patch changed one file and added another: both undone, the
        // rest untouched.
        let f = dst.join("kernel/auditsc.c");
        std::fs::write(&f, "patched\n").unwrap();
        std::fs::write(dst.join("kernel/new.c"), "new\n").unwrap();
        let other = dst.join("Makefile");
        let before = std::fs::metadata(&other).unwrap().modified().unwrap();
        assert_eq!(sync_dir(&src, &dst).unwrap(), 2);
        assert_eq!(
            std::fs::read(&f).unwrap(),
            std::fs::read(src.join("kernel/auditsc.c")).unwrap()
        );
        assert!(!dst.join("kernel/new.c").exists());
        assert_eq!(
            std::fs::metadata(&other).unwrap().modified().unwrap(),
            before
        );
        // The restored file is newer than any object built from the patch.
        assert!(
            std::fs::metadata(&f).unwrap().modified().unwrap()
                > std::fs::metadata(src.join("kernel/auditsc.c"))
                    .unwrap()
                    .modified()
                    .unwrap()
        );
    }

    #[test]
    fn a_git_revision_is_checked_out_privately_and_switched_in_place() {
        if !crate::kbuild::source::tests::git_or_skip(
            "a_git_revision_is_checked_out_privately_and_switched_in_place",
        ) {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("linux");
        let (first, second) = crate::kbuild::source::tests::fake_kernel_repo(&repo);
        let tree_of = |c: &str| {
            crate::kbuild::source::git(&repo, &["rev-parse", &format!("{c}^{{tree}}")]).unwrap()
        };
        let dst = t.path().join("copy");
        let index = t.path().join("index");
        checkout_git(&repo, &tree_of(&first), &dst, &index).unwrap();
        let f = dst.join("kernel/auditsc.c");
        assert!(std::fs::read_to_string(&f).unwrap().contains("int b;"));
        let other = dst.join("Makefile");
        let before = std::fs::metadata(&other).unwrap().modified().unwrap();
        // A patch's leftovers are undone when switching.
        std::fs::write(dst.join("kernel/new.c"), "new\n").unwrap();
        checkout_git(&repo, &tree_of(&second), &dst, &index).unwrap();
        assert!(std::fs::read_to_string(&f).unwrap().contains("int b2;"));
        assert!(!dst.join("kernel/new.c").exists());
        assert_eq!(
            std::fs::metadata(&other).unwrap().modified().unwrap(),
            before
        );
        // The user's repository: HEAD, index and working tree as they were.
        let g = |a: &[&str]| crate::kbuild::source::git(&repo, a).unwrap();
        assert_eq!(g(&["rev-parse", "HEAD"]), second);
        assert!(g(&["status", "--porcelain"]).is_empty());
        assert_eq!(g(&["worktree", "list"]).lines().count(), 1);
    }

    #[test]
    fn trees_are_named_by_source_path() {
        let a = Tree::of(Path::new("/c"), Path::new("/usr/src/linux-source-6.1"));
        let b = Tree::of(Path::new("/c"), Path::new("/home/me/linux-source-6.1"));
        assert!(a.dir.starts_with("/c/trees"));
        assert!(
            a.dir
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("linux-source-6.1-")
        );
        assert_ne!(a.dir, b.dir);
    }
}
