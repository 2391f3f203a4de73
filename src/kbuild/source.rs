//! A source's identity, the first part of a build's cache key: for a git
//! checkout the tree id of the revision built (what the build reads, not
//! the commit's metadata); for an unpacked tarball a content hash of every
//! file. Hashing 1.5 GB takes a while, so it is remembered by the tree's
//! stat fingerprint (paths, sizes, mtimes): an untouched tree is
//! identified in about a second.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::Digest;

use super::spec::SourceSpec;
use crate::usage_bail;

/// What a build's source was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// "git" or "dir".
    pub kind: String,
    /// The git tree id, or "sha256:..." of the content.
    pub id: String,
    /// For git: the commit built, and its subject.
    pub commit: Option<String>,
    pub subject: Option<String>,
}

/// A git command on `repo`, its stdout trimmed, or an error with its
/// stderr.
pub fn git(repo: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .context("running git (apt-get install git)")?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("dubious ownership") {
            // Another user's checkout: git's own advice says how to allow it.
            crate::usage_bail!("{} belongs to another user: {}", repo.display(), err.trim());
        }
        anyhow::bail!(
            "git {} in {}: {}",
            args.join(" "),
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether SOURCE is the top of a git checkout.
pub fn is_git(source: &Path) -> bool {
    source.join(".git").exists()
}

/// The files a kernel tree has at its top, checked before anything is
/// copied or built.
const KERNEL_FILES: &[&str] = &["Makefile", "Kconfig", "arch/x86/Kconfig", "kernel/Makefile"];

/// Identifies the source of `spec`, checking that it is a kernel tree,
/// that `rev=` names a commit, and that a checkout built without `rev=`
/// has no uncommitted changes. `memo` is where content hashes are
/// remembered.
pub fn identify(spec: &SourceSpec, memo: &Path) -> Result<Identity> {
    let src = &spec.source;
    if is_git(src) {
        let rev = match &spec.rev {
            Some(r) => r.clone(),
            None => {
                let dirty = git(src, &["status", "--porcelain", "--untracked-files=no"])?;
                if !dirty.is_empty() {
                    usage_bail!(
                        "{} has uncommitted changes, which a build would leave out: commit \
                         them, give them as patch=FILE, or give rev=HEAD to build the last \
                         commit",
                        src.display()
                    );
                }
                "HEAD".to_string()
            }
        };
        let Ok(commit) = git(
            src,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        ) else {
            usage_bail!(
                "rev={rev}: no such commit in {} (see git -C {} log --oneline)",
                src.display(),
                src.display()
            );
        };
        for f in KERNEL_FILES {
            if git(src, &["cat-file", "-e", &format!("{commit}:{f}")]).is_err() {
                usage_bail!(
                    "{} at {rev} is not a kernel source tree (it has no {f})",
                    src.display()
                );
            }
        }
        let tree = git(src, &["rev-parse", &format!("{commit}^{{tree}}")])?;
        let subject = git(src, &["log", "-1", "--format=%s", &commit]).ok();
        return Ok(Identity {
            kind: "git".into(),
            id: tree,
            commit: Some(commit),
            subject,
        });
    }
    if let Some(rev) = &spec.rev {
        usage_bail!(
            "rev={rev}: {} is not a git checkout; leave out rev= to build the tree as it is",
            src.display()
        );
    }
    check_kernel_dir(src)?;
    Ok(Identity {
        kind: "dir".into(),
        id: content_id(src, memo)?,
        commit: None,
        subject: None,
    })
}

/// Checks that `dir` is the top of a clean kernel source tree.
pub fn check_kernel_dir(dir: &Path) -> Result<()> {
    for f in KERNEL_FILES {
        if !dir.join(f).is_file() {
            usage_bail!(
                "{} is not a kernel source tree (it has no {f}): give the top of a tree, \
                 e.g. /usr/src/linux-source-6.1 after tar xf /usr/src/linux-source-6.1.tar.xz",
                dir.display()
            );
        }
    }
    if dir.join(".config").exists() || dir.join("include/config").exists() {
        usage_bail!(
            "{} has been configured or built in place (.config): builds go out of tree, \
             which needs a clean source; run make mrproper there, or unpack a fresh copy",
            dir.display()
        );
    }
    Ok(())
}

/// Every regular file and symlink under `dir` (relative paths, sorted),
/// skipping `.git`.
pub fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let here = dir.join(&rel);
        for e in std::fs::read_dir(&here).with_context(|| format!("reading {}", here.display()))? {
            let e = e?;
            let name = e.file_name();
            if rel.as_os_str().is_empty() && name == ".git" {
                continue;
            }
            let t = e.file_type()?;
            let r = rel.join(&name);
            if t.is_dir() {
                stack.push(r);
            } else if t.is_file() || t.is_symlink() {
                out.push(r);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The stat fingerprint of a tree: paths, sizes, mtimes and modes.
pub fn fingerprint(dir: &Path, files: &[PathBuf]) -> Result<String> {
    use std::os::unix::fs::MetadataExt;
    let mut h = sha2::Sha256::new();
    for f in files {
        let m = std::fs::symlink_metadata(dir.join(f))?;
        h.update(f.as_os_str().as_encoded_bytes());
        h.update(
            format!(
                "\0{} {} {} {}\n",
                m.len(),
                m.mtime(),
                m.mtime_nsec(),
                m.mode()
            )
            .as_bytes(),
        );
    }
    Ok(hex(&h.finalize()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// The content hash of a tree: every file's path, executable bit and
/// content (a symlink's target), remembered in `memo` by the tree's stat
/// fingerprint.
pub fn content_id(dir: &Path, memo: &Path) -> Result<String> {
    let files = walk(dir)?;
    let fp = fingerprint(dir, &files)?;
    let memo_file = memo.join(format!("{}.id", &fp[..32]));
    if let Ok(id) = std::fs::read_to_string(&memo_file) {
        return Ok(id.trim().to_string());
    }
    crate::say!(
        "secperf: hashing the contents of {} ({} files; once, then remembered)",
        dir.display(),
        files.len()
    );
    let id = format!("sha256:{}", content_hash(dir, &files)?);
    std::fs::create_dir_all(memo).with_context(|| format!("creating {}", memo.display()))?;
    let tmp = memo.join(format!(".{}.{}", &fp[..32], std::process::id()));
    std::fs::write(&tmp, &id)?;
    std::fs::rename(&tmp, &memo_file)?;
    Ok(id)
}

/// Hashes the files on every CPU, then the per-file hashes in path order.
fn content_hash(dir: &Path, files: &[PathBuf]) -> Result<String> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = files.len().div_ceil(threads).max(1);
    let parts: Vec<Result<Vec<[u8; 32]>>> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(|f| file_hash(dir, f)).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a hashing thread panicked")))
            })
            .collect()
    });
    let mut h = sha2::Sha256::new();
    let mut it = files.iter();
    for part in parts {
        for fh in part? {
            let f = it.next().expect("one hash per file");
            h.update(f.as_os_str().as_encoded_bytes());
            h.update(b"\0");
            h.update(fh);
        }
    }
    Ok(hex(&h.finalize()))
}

fn file_hash(dir: &Path, rel: &Path) -> Result<[u8; 32]> {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(rel);
    let m = std::fs::symlink_metadata(&p)?;
    let mut h = sha2::Sha256::new();
    if m.file_type().is_symlink() {
        h.update(b"link\0");
        h.update(std::fs::read_link(&p)?.as_os_str().as_encoded_bytes());
    } else {
        h.update(if m.permissions().mode() & 0o111 != 0 {
            b"exec\0"
        } else {
            b"file\0"
        });
        let mut f = std::fs::File::open(&p).with_context(|| format!("reading {}", p.display()))?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
    }
    Ok(h.finalize().into())
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// Whether git is here; otherwise a skip line (a failure under CI).
    pub fn git_or_skip(test: &str) -> bool {
        let here = crate::sys::which("git").is_some();
        if !here {
            crate::testing::skip_missing_tool(test, "git", "revisions and patches go through git");
        }
        here
    }

    /// A tree with the files a kernel tree is recognised by.
    pub fn fake_kernel_tree(dir: &Path) {
        for f in KERNEL_FILES {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("# {f}\n")).unwrap();
        }
        std::fs::create_dir_all(dir.join("kernel")).unwrap();
        std::fs::write(dir.join("kernel/auditsc.c"), "int a;\nint b;\nint c;\n").unwrap();
    }

    #[test]
    fn a_directory_is_identified_by_content_not_by_mtime() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        fake_kernel_tree(&src);
        let memo = t.path().join("memo");
        let spec = SourceSpec::new(&src).unwrap();
        let a = identify(&spec, &memo).unwrap();
        assert_eq!(a.kind, "dir");
        assert!(a.id.starts_with("sha256:"));
        // Remembered: the same answer from the memo.
        assert_eq!(identify(&spec, &memo).unwrap(), a);
        // Touched but not changed: the same content id.
        let f = src.join("kernel/auditsc.c");
        std::fs::write(&f, std::fs::read(&f).unwrap()).unwrap();
        assert_eq!(identify(&spec, &memo).unwrap().id, a.id);
        // Changed: another id.
        std::fs::write(&f, "int a;\n").unwrap();
        assert_ne!(identify(&spec, &memo).unwrap().id, a.id);
    }

    #[test]
    fn not_a_kernel_tree_and_a_built_tree_are_usage_errors() {
        let t = tempfile::tempdir().unwrap();
        let spec = SourceSpec::new(t.path()).unwrap();
        let e = identify(&spec, &t.path().join("memo")).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("not a kernel source tree"), "{e}");
        fake_kernel_tree(t.path());
        std::fs::write(t.path().join(".config"), "").unwrap();
        let e = identify(&spec, &t.path().join("memo")).unwrap_err();
        assert!(e.to_string().contains("make mrproper"), "{e}");
        let mut spec = spec;
        spec.rev = Some("v6.1".into());
        let e = identify(&spec, &t.path().join("memo")).unwrap_err();
        assert!(e.to_string().contains("not a git checkout"), "{e}");
    }

    /// A git repository with a fake kernel tree committed, and a second
    /// commit changing one file.
    pub fn fake_kernel_repo(dir: &Path) -> (String, String) {
        fake_kernel_tree(dir);
        let g = |args: &[&str]| git(dir, args).unwrap();
        let as_tester = |args: &[&str]| {
            let mut all = vec!["-c", "user.name=t", "-c", "user.email=t@t"];
            all.extend_from_slice(args);
            g(&all)
        };
        g(&["init", "-q"]);
        as_tester(&["add", "-A"]);
        as_tester(&["commit", "-qm", "base"]);
        let first = g(&["rev-parse", "HEAD"]);
        std::fs::write(dir.join("kernel/auditsc.c"), "int a;\nint b2;\nint c;\n").unwrap();
        as_tester(&["commit", "-qam", "audit: b2"]);
        (first, g(&["rev-parse", "HEAD"]))
    }

    #[test]
    fn a_git_revision_is_identified_by_its_tree() {
        if !crate::kbuild::source::tests::git_or_skip("a_git_revision_is_identified_by_its_tree") {
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("linux");
        let (first, second) = fake_kernel_repo(&repo);
        let mut spec = SourceSpec::new(&repo).unwrap();
        let head = identify(&spec, t.path()).unwrap();
        assert_eq!(head.commit.as_deref(), Some(second.as_str()));
        assert_eq!(head.subject.as_deref(), Some("audit: b2"));
        spec.rev = Some(first.clone());
        let base = identify(&spec, t.path()).unwrap();
        assert_eq!(base.commit.as_deref(), Some(first.as_str()));
        assert_ne!(base.id, head.id);
        spec.rev = Some("no-such-rev".into());
        let e = identify(&spec, t.path()).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("no such commit"), "{e}");
        // A dirty checkout without rev= is refused; with rev=HEAD it builds HEAD.
        std::fs::write(repo.join("kernel/auditsc.c"), "dirty\n").unwrap();
        spec.rev = None;
        let e = identify(&spec, t.path()).unwrap_err();
        assert!(e.to_string().contains("uncommitted changes"), "{e}");
        spec.rev = Some("HEAD".into());
        assert_eq!(identify(&spec, t.path()).unwrap().id, head.id);
    }
}
