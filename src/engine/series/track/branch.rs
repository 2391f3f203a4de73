//! The branch a track follows, asked of git: the remote a
//! remote-tracking ref follows, what a checkout holds uncommitted, a
//! revision's commit.

use std::path::Path;

use anyhow::Result;

/// The remote a remote-tracking ref follows (`origin` of
/// `origin/master`), if `branch` is one.
pub fn remote_of(source: &Path, branch: &str) -> Option<String> {
    let full =
        crate::kbuild::source::git(source, &["rev-parse", "--symbolic-full-name", branch]).ok()?;
    let rest = full.strip_prefix("refs/remotes/")?;
    Some(rest.split('/').next()?.to_string())
}

/// What a checkout holds uncommitted, staged or not (files git does not
/// track are not a change): the files' names. Nothing for a directory
/// that is not a git checkout (listing its commits says so).
pub fn uncommitted(source: &Path) -> Result<Vec<String>> {
    if !crate::kbuild::source::is_git(source) {
        return Ok(Vec::new());
    }
    let changed = crate::kbuild::source::git(source, &["diff", "--name-only", "HEAD"])?;
    Ok(changed.lines().map(str::to_string).collect())
}

/// The commit `rev` names in `source`, or "" when it names none.
pub fn commit_of(source: &Path, rev: &str) -> String {
    crate::kbuild::source::git(source, &["rev-parse", &format!("{rev}^{{commit}}")])
        .unwrap_or_default()
}

/// Fetches `remote` quietly.
pub fn fetch(source: &Path, remote: &str) -> Result<()> {
    crate::kbuild::source::git(source, &["fetch", "--quiet", remote]).map(|_| ())
}
