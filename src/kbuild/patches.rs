//! Patches, checked against the source before anything is copied or built
//! (a patch that does not apply is a usage error naming the file and the
//! hunk), then applied to secperf's own copy, never to SOURCE. `git
//! apply` does the work: it applies a series in order, files a patch
//! touches twice included, and works outside a repository too.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::usage_bail;

/// A patch as a run records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatchRecord {
    pub path: PathBuf,
    pub sha256: String,
    pub content: String,
}

/// Reads the patches of an arm.
pub fn read(paths: &[PathBuf]) -> Result<Vec<PatchRecord>> {
    paths
        .iter()
        .map(|p| {
            let bytes =
                std::fs::read(p).with_context(|| format!("reading patch {}", p.display()))?;
            Ok(PatchRecord {
                path: p.clone(),
                sha256: super::sha256_hex(&bytes),
                content: String::from_utf8_lossy(&bytes).into_owned(),
            })
        })
        .collect()
}

/// The files a patch changes (its `+++ b/PATH` lines; `--- a/PATH` for a
/// deletion).
pub fn files(patch: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut minus = None;
    for line in patch.lines() {
        if let Some(p) = line.strip_prefix("--- ") {
            minus = strip_side(p);
        } else if let Some(p) = line.strip_prefix("+++ ")
            && let Some(f) = strip_side(p).or(minus.take())
            && !out.contains(&f)
        {
            out.push(f);
        }
    }
    out
}

fn strip_side(p: &str) -> Option<String> {
    let p = p.split('\t').next()?.trim();
    if p == "/dev/null" {
        return None;
    }
    Some(p.split_once('/').map_or(p, |(_, rest)| rest).to_string())
}

/// The hunk of `file` in `patch` whose old side starts at `line`: its
/// number within that file (from 1).
pub fn hunk_number(patch: &str, file: &str, line: u64) -> Option<usize> {
    let mut current: Option<String> = None;
    let mut minus = None;
    let mut n = 0;
    for l in patch.lines() {
        if let Some(p) = l.strip_prefix("--- ") {
            minus = strip_side(p);
        } else if let Some(p) = l.strip_prefix("+++ ") {
            current = strip_side(p).or(minus.take());
            n = 0;
        } else if let Some(h) = l.strip_prefix("@@ -") {
            n += 1;
            let start: Option<u64> = h.split([',', ' ']).next().and_then(|s| s.parse().ok());
            if current.as_deref() == Some(file) && start == Some(line) {
                return Some(n);
            }
        }
    }
    None
}

/// What `git apply` said when a series did not apply, turned into what to
/// tell the user.
fn explain(stderr: &str, patches: &[PatchRecord], target: &str) -> String {
    // "error: patch failed: kernel/auditsc.c:2042"
    let failed = stderr.lines().find_map(|l| {
        let rest = l.strip_prefix("error: patch failed: ")?;
        let (file, line) = rest.rsplit_once(':')?;
        Some((file.to_string(), line.trim().parse::<u64>().ok()?))
    });
    if let Some((file, line)) = failed {
        let owner = patches
            .iter()
            .find_map(|p| hunk_number(&p.content, &file, line).map(|h| (p, h)));
        return match owner {
            Some((p, h)) => format!(
                "patch {} does not apply to {target}: hunk #{h} of {file} (at line {line}) \
                 does not match; rebase the patch on this tree (or give rev= of the tree it \
                 was made for)",
                p.path.display()
            ),
            None => format!(
                "the patches do not apply to {target}: {file} at line {line} does not match"
            ),
        };
    }
    let first = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or(stderr.trim());
    format!(
        "the patches ({}) do not apply to {target}: {}",
        patches
            .iter()
            .map(|p| p.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        first.trim_start_matches("error: ")
    )
}

/// `git apply ARGS PATCHES` in `dir`, never looking for a repository
/// above it.
fn git_apply(
    dir: &Path,
    args: &[&str],
    patches: &[PatchRecord],
    env: &[(&str, &Path)],
) -> Result<std::process::Output> {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .arg("apply")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    for p in patches {
        c.arg(&p.path);
    }
    c.output()
        .context("running git apply (apt-get install git)")
}

/// Checks that the series applies to a directory tree, writing nothing.
pub fn check_dir(dir: &Path, patches: &[PatchRecord]) -> Result<()> {
    if patches.is_empty() {
        return Ok(());
    }
    let out = git_apply(dir, &["--check"], patches, &[])?;
    if !out.status.success() {
        usage_bail!(
            "{}",
            explain(
                &String::from_utf8_lossy(&out.stderr),
                patches,
                &dir.display().to_string()
            )
        );
    }
    Ok(())
}

/// Checks that the series applies to `commit` of the git repository
/// `repo`, through a temporary index: neither the repository's index nor
/// its working tree is touched.
pub fn check_git(repo: &Path, commit: &str, patches: &[PatchRecord]) -> Result<()> {
    if patches.is_empty() {
        return Ok(());
    }
    let tmp = tempfile::tempdir().context("creating a temporary index")?;
    let index = tmp.path().join("index");
    let st = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["read-tree", commit])
        .env("GIT_INDEX_FILE", &index)
        .output()?;
    if !st.status.success() {
        anyhow::bail!(
            "git read-tree {commit} in {}: {}",
            repo.display(),
            String::from_utf8_lossy(&st.stderr).trim()
        );
    }
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(repo)
        .args(["apply", "--cached", "--check"])
        .env("GIT_INDEX_FILE", &index);
    for p in patches {
        c.arg(&p.path);
    }
    let out = c.output().context("running git apply")?;
    if !out.status.success() {
        usage_bail!(
            "{}",
            explain(
                &String::from_utf8_lossy(&out.stderr),
                patches,
                &format!("{} at {}", repo.display(), &commit[..commit.len().min(12)])
            )
        );
    }
    Ok(())
}

/// Applies the series to secperf's copy `dir`.
pub fn apply(dir: &Path, patches: &[PatchRecord]) -> Result<()> {
    if patches.is_empty() {
        return Ok(());
    }
    let out = git_apply(dir, &[], patches, &[])?;
    if !out.status.success() {
        usage_bail!(
            "{}",
            explain(
                &String::from_utf8_lossy(&out.stderr),
                patches,
                &format!("secperf's copy {}", dir.display())
            )
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "\
diff --git a/kernel/auditsc.c b/kernel/auditsc.c
--- a/kernel/auditsc.c
+++ b/kernel/auditsc.c
@@ -1,3 +1,3 @@
 int a;
-int b;
+int b2;
 int c;
diff --git a/kernel/new.c b/kernel/new.c
new file mode 100644
--- /dev/null
+++ b/kernel/new.c
@@ -0,0 +1 @@
+int n;
";

    #[test]
    fn files_and_hunks_are_read_from_the_patch() {
        assert_eq!(files(PATCH), ["kernel/auditsc.c", "kernel/new.c"]);
        assert_eq!(hunk_number(PATCH, "kernel/auditsc.c", 1), Some(1));
        assert_eq!(hunk_number(PATCH, "kernel/auditsc.c", 7), None);
    }

    fn series(dir: &Path, text: &str) -> Vec<PatchRecord> {
        let p = dir.join("x.patch");
        std::fs::write(&p, text).unwrap();
        read(&[p]).unwrap()
    }

    #[test]
    fn a_series_is_checked_without_writing_then_applied_to_a_copy() {
        if !crate::kbuild::source::tests::git_or_skip(
            "a_series_is_checked_without_writing_then_applied_to_a_copy",
        ) {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        crate::kbuild::source::tests::fake_kernel_tree(&src);
        let patches = series(t.path(), PATCH);
        let before = std::fs::read_to_string(src.join("kernel/auditsc.c")).unwrap();
        check_dir(&src, &patches).unwrap();
        assert_eq!(
            std::fs::read_to_string(src.join("kernel/auditsc.c")).unwrap(),
            before
        );
        assert!(!src.join("kernel/new.c").exists());
        apply(&src, &patches).unwrap();
        assert!(
            std::fs::read_to_string(src.join("kernel/auditsc.c"))
                .unwrap()
                .contains("b2")
        );
        // Applied once, it no longer applies: the hunk is named.
        let e = check_dir(&src, &patches[..1]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let msg = e.to_string();
        assert!(msg.contains("x.patch"), "{msg}");
        assert!(
            msg.contains("hunk #1 of kernel/auditsc.c (at line 1)")
                || msg.contains("already exists"),
            "{msg}"
        );
    }

    #[test]
    fn a_series_is_checked_against_a_git_revision_through_a_private_index() {
        if !crate::kbuild::source::tests::git_or_skip(
            "a_series_is_checked_against_a_git_revision_through_a_private_index",
        ) {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("linux");
        let (first, second) = crate::kbuild::source::tests::fake_kernel_repo(&repo);
        let patches = series(t.path(), PATCH);
        check_git(&repo, &first, &patches).unwrap();
        let e = check_git(&repo, &second, &patches).unwrap_err();
        assert!(e.to_string().contains("hunk #1 of kernel/auditsc.c"), "{e}");
        // The repository's own state is untouched.
        let status = crate::kbuild::source::git(&repo, &["status", "--porcelain"]).unwrap();
        assert!(status.is_empty(), "{status}");
    }
}
