//! Finished images, keyed by what determines the binary: the source's
//! identity, the patches (and the layout control's change), the final
//! `.config` and the toolchain (`entries/KEY/`: `bzImage`, `config`,
//! `build.log`, `entry.json`). An entry is written in a temporary
//! directory and renamed into place once complete, so a build stopped at
//! any point (Ctrl-C, SIGKILL, a failure) leaves no entry a later run
//! could boot.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::config::Dropped;
use super::layout::LayoutChange;
use super::patches::PatchRecord;
use super::source::Identity;

/// What a build was made of, stored with the entry and in every run that
/// boots it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuildRecord {
    pub key: String,
    pub source: PathBuf,
    pub identity: Identity,
    pub rev: Option<String>,
    pub patches: Vec<PatchRecord>,
    /// The user's fragment: its path and content.
    pub fragment: Option<(PathBuf, String)>,
    pub layout: Option<LayoutChange>,
    pub config_sha256: String,
    /// Options asked for that `olddefconfig` dropped.
    pub dropped: Vec<Dropped>,
    /// gcc's, ld's and pahole's versions.
    pub toolchain: String,
    pub built_at: String,
    /// Seconds the build took when it was made, and files compiled.
    pub build_s: f64,
    pub compiled_files: u64,
    pub image_sha256: String,
    pub image_bytes: u64,
    /// In a run: the final `.config` (an entry keeps it as a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// In a run: whether the image came from the cache.
    #[serde(default)]
    pub cached: bool,
}

/// The toolchain's versions, part of the key (a compiler's version
/// changes the code, and `.config`'s detected features).
pub fn toolchain() -> Result<String> {
    let first = |prog: &str, arg: &str| -> Result<String> {
        let out = Command::new(prog)
            .arg(arg)
            .output()
            .with_context(|| format!("running {prog} {arg}"))?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string())
    };
    Ok(format!(
        "{}; {}; pahole {}",
        first("gcc", "--version")?,
        first("ld", "--version")?,
        first("pahole", "--version").unwrap_or_else(|_| "missing".into())
    ))
}

/// The key of a build (16 hex digits).
pub fn key(
    identity: &Identity,
    patches: &[PatchRecord],
    layout: Option<&LayoutChange>,
    config_sha256: &str,
    toolchain: &str,
) -> String {
    let mut s = format!("secperf-kernel-build-v1\nsource {}\n", identity.id);
    for p in patches {
        s.push_str(&format!("patch {}\n", p.sha256));
    }
    if let Some(l) = layout {
        s.push_str(&format!("layout {} {}\n", l.file, l.pad_bytes));
    }
    s.push_str(&format!("config {config_sha256}\ntoolchain {toolchain}\n"));
    super::sha256_hex(s.as_bytes())[..16].to_string()
}

/// The entries directory.
pub fn entries(root: &Path) -> PathBuf {
    root.join("entries")
}

/// A complete entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub dir: PathBuf,
    pub record: BuildRecord,
}

impl Entry {
    pub fn image(&self) -> PathBuf {
        self.dir.join("bzImage")
    }
    pub fn config(&self) -> Result<String> {
        let p = self.dir.join("config");
        std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))
    }
    /// Bytes on disk.
    pub fn bytes(&self) -> u64 {
        std::fs::read_dir(&self.dir)
            .map(|d| {
                d.filter_map(|e| e.ok()?.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }
}

/// The complete entry of `key`, if there is one.
pub fn find(root: &Path, key: &str) -> Option<Entry> {
    let dir = entries(root).join(key);
    let text = std::fs::read_to_string(dir.join("entry.json")).ok()?;
    let record: BuildRecord = serde_json::from_str(&text).ok()?;
    (record.key == key && dir.join("bzImage").is_file()).then_some(Entry { dir, record })
}

/// Every complete entry, the newest first.
pub fn list(root: &Path) -> Vec<Entry> {
    let mut out: Vec<Entry> = std::fs::read_dir(entries(root))
        .map(|d| {
            d.filter_map(|e| {
                let name = e.ok()?.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    return None;
                }
                find(root, &name)
            })
            .collect()
        })
        .unwrap_or_default();
    out.sort_by(|a, b| b.record.built_at.cmp(&a.record.built_at));
    out
}

/// Publishes an entry: the files are written into a temporary directory,
/// `entry.json` last, then the directory is renamed into place.
pub fn publish(
    root: &Path,
    record: &BuildRecord,
    image: &Path,
    config: &str,
    log: &Path,
) -> Result<Entry> {
    let dir = entries(root);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = dir.join(format!(".tmp-{}-{}", record.key, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    std::fs::copy(image, tmp.join("bzImage"))
        .with_context(|| format!("copying {}", image.display()))?;
    std::fs::write(tmp.join("config"), config)?;
    let _ = std::fs::copy(log, tmp.join("build.log"));
    let mut stored = record.clone();
    stored.config = None;
    stored.cached = false;
    std::fs::write(
        tmp.join("entry.json"),
        serde_json::to_string_pretty(&stored)?,
    )?;
    let final_dir = dir.join(&record.key);
    if final_dir.exists() {
        // Another secperf published the same build first.
        let _ = std::fs::remove_dir_all(&tmp);
    } else {
        std::fs::rename(&tmp, &final_dir)
            .with_context(|| format!("publishing {}", final_dir.display()))?;
    }
    find(root, &record.key).with_context(|| format!("the entry {} is incomplete", record.key))
}

/// Temporary entries whose secperf is gone (a build stopped while
/// publishing): removed. Returns how many.
pub fn remove_stale(root: &Path) -> usize {
    let Ok(d) = std::fs::read_dir(entries(root)) else {
        return 0;
    };
    let mut n = 0;
    for e in d.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(".tmp-")
            .and_then(|r| r.rsplit_once('-'))
            .and_then(|(_, p)| p.parse::<u32>().ok())
        else {
            continue;
        };
        let gone = !Path::new(&format!("/proc/{pid}")).exists() || pid == std::process::id();
        if gone && std::fs::remove_dir_all(e.path()).is_ok() {
            n += 1;
        }
    }
    n
}

/// Removes the entries whose key starts with one of `keys`. Returns the
/// keys removed; a prefix matching nothing, or more than one entry, is a
/// usage error.
pub fn remove(root: &Path, keys: &[String]) -> Result<Vec<String>> {
    let all = list(root);
    let mut chosen = Vec::new();
    for k in keys {
        let m: Vec<&Entry> = all
            .iter()
            .filter(|e| e.record.key.starts_with(k.as_str()))
            .collect();
        match m.as_slice() {
            [] => crate::usage_bail!(
                "kernels prune {k}: no cached build has that key (see secperf kernels list)"
            ),
            [one] => chosen.push(one.record.key.clone()),
            _ => crate::usage_bail!(
                "kernels prune {k}: {} cached builds start with it: give more of the key",
                m.len()
            ),
        }
    }
    for k in &chosen {
        let dir = entries(root).join(k);
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &str) -> BuildRecord {
        BuildRecord {
            key: key.into(),
            source: "/usr/src/linux".into(),
            identity: Identity {
                kind: "dir".into(),
                id: "sha256:ab".into(),
                commit: None,
                subject: None,
            },
            rev: None,
            patches: Vec::new(),
            fragment: None,
            layout: None,
            config_sha256: "cc".into(),
            dropped: Vec::new(),
            toolchain: "gcc 12".into(),
            built_at: "2026-11-28T10:00:00Z".into(),
            build_s: 1500.0,
            compiled_files: 2418,
            image_sha256: "ii".into(),
            image_bytes: 3,
            config: Some("CONFIG_AUDIT=y\n".into()),
            cached: false,
        }
    }

    #[test]
    fn the_key_follows_every_input_that_determines_the_binary() {
        let id = record("k").identity;
        let p = PatchRecord {
            path: "a.patch".into(),
            sha256: "p1".into(),
            content: String::new(),
        };
        let base = key(&id, &[], None, "c1", "gcc 12");
        assert_eq!(base.len(), 16);
        assert_eq!(base, key(&id, &[], None, "c1", "gcc 12"));
        let lay = LayoutChange {
            file: "init/main.c".into(),
            pad_bytes: 20,
        };
        let others = [
            key(&id, std::slice::from_ref(&p), None, "c1", "gcc 12"),
            key(&id, &[], Some(&lay), "c1", "gcc 12"),
            key(&id, &[], None, "c2", "gcc 12"),
            key(&id, &[], None, "c1", "gcc 13"),
            key(
                &Identity {
                    id: "other".into(),
                    ..id.clone()
                },
                &[],
                None,
                "c1",
                "gcc 12",
            ),
        ];
        for o in &others {
            assert_ne!(o, &base);
        }
        // Not the patch's name: its content.
        let renamed = PatchRecord {
            path: "b.patch".into(),
            ..p.clone()
        };
        assert_eq!(others[0], key(&id, &[renamed], None, "c1", "gcc 12"));
    }

    #[test]
    fn only_complete_entries_are_found_and_stale_ones_removed() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let image = root.join("img");
        std::fs::write(&image, "kernel").unwrap();
        let log = root.join("log");
        std::fs::write(&log, "CC x").unwrap();
        assert!(find(root, "aaaa").is_none());
        let e = publish(root, &record("aaaa"), &image, "CONFIG_AUDIT=y\n", &log).unwrap();
        assert_eq!(std::fs::read(e.image()).unwrap(), b"kernel");
        assert_eq!(e.config().unwrap(), "CONFIG_AUDIT=y\n");
        assert!(
            e.record.config.is_none(),
            "the config is a file of the entry"
        );
        assert!(e.bytes() > 0);
        // A half-written entry (no entry.json), as a SIGKILL leaves it.
        let half = entries(root).join(".tmp-bbbb-999999999");
        std::fs::create_dir_all(&half).unwrap();
        std::fs::write(half.join("bzImage"), "x").unwrap();
        let bare = entries(root).join("cccc");
        std::fs::create_dir_all(&bare).unwrap();
        std::fs::write(bare.join("bzImage"), "x").unwrap();
        assert!(find(root, "cccc").is_none());
        let keys: Vec<String> = list(root).into_iter().map(|e| e.record.key).collect();
        assert_eq!(keys, ["aaaa"]);
        assert_eq!(remove_stale(root), 1);
        assert!(!half.exists());
        let e = remove(root, &["zz".into()]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(remove(root, &["aa".into()]).unwrap(), ["aaaa"]);
        assert!(list(root).is_empty());
    }
}
