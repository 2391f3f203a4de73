//! The revisions a bisection walks: those after `--good` up to `--bad`
//! on the ancestry path, oldest first, each with its subject; and the
//! checks that make bad input a usage error before anything is built (a
//! dirty checkout, revisions that do not exist, are the wrong way round,
//! or are not ancestors).

use std::path::Path;

use anyhow::Result;

use super::source::{git, is_git};
use crate::usage_bail;

/// A commit id and its subject.
pub type Commit = (String, String);

fn resolve(repo: &Path, rev: &str, flag: &str) -> Result<String> {
    match git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    ) {
        Ok(c) if !c.is_empty() => Ok(c),
        _ => usage_bail!(
            "{flag} {rev}: no such commit in {} (see git -C {} log --oneline)",
            repo.display(),
            repo.display()
        ),
    }
}

fn is_ancestor(repo: &Path, a: &str, b: &str) -> bool {
    git(repo, &["merge-base", "--is-ancestor", a, b]).is_ok()
}

/// The good commit and the series after it up to bad (bad last).
pub fn series(repo: &Path, good: &str, bad: &str) -> Result<(Commit, Vec<Commit>)> {
    if !is_git(repo) {
        usage_bail!(
            "bisect: {} is not a git checkout: bisect walks git revisions (commit an unpacked \
             tree into a repository first)",
            repo.display()
        );
    }
    let dirty = git(repo, &["status", "--porcelain", "--untracked-files=no"])?;
    if !dirty.is_empty() {
        usage_bail!(
            "bisect: {} has uncommitted changes: commit or stash them first (secperf never \
             touches your working tree, but a bisection of a tree that differs from its commits \
             would not be replayable)",
            repo.display()
        );
    }
    let g = resolve(repo, good, "--good")?;
    let b = resolve(repo, bad, "--bad")?;
    if g == b {
        usage_bail!("bisect: --good and --bad are the same commit {}", &g[..12]);
    }
    if !is_ancestor(repo, &g, &b) {
        if is_ancestor(repo, &b, &g) {
            usage_bail!(
                "bisect: --good {good} comes after --bad {bad}: they are the wrong way round \
                 (swap them: --good is the older, faster revision)"
            );
        }
        usage_bail!(
            "bisect: --good {good} is not an ancestor of --bad {bad}: give two revisions on one \
             line of history"
        );
    }
    let subject = |c: &str| git(repo, &["log", "-1", "--format=%s", c]).unwrap_or_default();
    let list = git(
        repo,
        &[
            "log",
            "--reverse",
            "--ancestry-path",
            "--format=%H%x09%s",
            &format!("{g}..{b}"),
        ],
    )?;
    let commits: Vec<Commit> = list
        .lines()
        .filter_map(|l| {
            let (c, s) = l.split_once('\t')?;
            Some((c.to_string(), s.to_string()))
        })
        .collect();
    if commits.last().map(|c| c.0.as_str()) != Some(b.as_str()) {
        anyhow::bail!("bisect: the series from {g} to {b} does not end at --bad");
    }
    Ok(((g.clone(), subject(&g)), commits))
}

/// The commits a track follows: `from` (resolved) and the first-parent
/// commits of `branch` after it, oldest first, each with its subject. A
/// track follows a branch as its maintainer merges into it: a merge is one
/// commit, the commits it brings in are not listed. Usage errors for a
/// revision that does not exist or a `from` that is not an ancestor of the
/// branch.
pub fn first_parents(repo: &Path, from: &str, branch: &str) -> Result<(Commit, Vec<Commit>)> {
    if !is_git(repo) {
        usage_bail!(
            "track: {} is not a git checkout: a track follows a git branch",
            repo.display()
        );
    }
    let f = resolve(repo, from, "--from")?;
    let b = resolve(repo, branch, "--branch")?;
    if !is_ancestor(repo, &f, &b) {
        usage_bail!(
            "track: --from {from} is not an ancestor of --branch {branch}: give a revision the \
             branch holds (e.g. the last release tag it builds on)"
        );
    }
    let subject = git(repo, &["log", "-1", "--format=%s", &f]).unwrap_or_default();
    let list = git(
        repo,
        &[
            "log",
            "--reverse",
            "--first-parent",
            "--format=%H%x09%s",
            &format!("{f}..{b}"),
        ],
    )?;
    let commits = list
        .lines()
        .filter_map(|l| {
            let (c, s) = l.split_once('\t')?;
            Some((c.to_string(), s.to_string()))
        })
        .collect();
    Ok(((f, subject), commits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_revisions_are_usage_errors_and_a_series_is_listed_oldest_first() {
        if !crate::kbuild::source::tests::git_or_skip(
            "bad_revisions_are_usage_errors_and_a_series_is_listed_oldest_first",
        ) {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("linux");
        let (first, second) = crate::kbuild::source::tests::fake_kernel_repo(&repo);
        let ((g, _), list) = series(&repo, &first, &second).unwrap();
        assert_eq!(g, first);
        assert_eq!(list, [(second.clone(), "audit: b2".to_string())]);
        for (good, bad, says) in [
            (second.as_str(), first.as_str(), "wrong way round"),
            ("nope", second.as_str(), "--good nope: no such commit"),
            (first.as_str(), "HEAD~9", "--bad HEAD~9: no such commit"),
            (first.as_str(), first.as_str(), "the same commit"),
        ] {
            let e = series(&repo, good, bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{e}");
            assert!(e.to_string().contains(says), "{says}: {e}");
        }
        // A track's listing: the same commit after the first.
        let ((f, _), after) = first_parents(&repo, &first, "HEAD").unwrap();
        assert_eq!(f, first);
        assert_eq!(after, [(second.clone(), "audit: b2".to_string())]);
        assert!(first_parents(&repo, &second, "HEAD").unwrap().1.is_empty());
        let e = first_parents(&repo, &second, &first).unwrap_err();
        assert!(e.to_string().contains("not an ancestor"), "{e}");
        std::fs::write(repo.join("Makefile"), "dirty\n").unwrap();
        let e = series(&repo, &first, &second).unwrap_err();
        assert!(e.to_string().contains("uncommitted changes"), "{e}");
    }
}
