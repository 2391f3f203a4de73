//! The journal: `journal.json` in the state directory, a JSON list of the
//! system changes in progress, each with the snapshot that undoes it.
//!
//! An entry is written, and made durable, before the change it describes
//! is made; it is removed once the change is undone. So after a crash, a
//! SIGKILL or a power cut, whatever the journal lists may still be in
//! effect, and its snapshot puts the machine back. Every write is atomic:
//! a temporary file is written and fsynced, renamed over the journal, and
//! the directory fsynced, so a reader sees the old list or the new one,
//! never half of either. An empty list is a removed file, which is what
//! makes the check at every start cheap (one `stat`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One change in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The mechanism's registry name ("audit").
    pub mechanism: String,
    /// What [`crate::mechanisms::Mechanism::snapshot`] returned.
    pub snapshot: serde_json::Value,
    /// The secperf process that made the change.
    pub pid: u32,
    /// When the entry was written (also what tells two entries apart).
    pub started_at: DateTime<Utc>,
}

impl JournalEntry {
    /// Whether `other` is the same entry (read back from the file).
    pub fn same(&self, other: &JournalEntry) -> bool {
        self.mechanism == other.mechanism
            && self.pid == other.pid
            && self.started_at == other.started_at
    }

    /// "audit (changed by pid 123 at 2025-05-01 10:00:00 UTC)".
    pub fn describe(&self) -> String {
        format!(
            "{} (changed by pid {} at {})",
            self.mechanism,
            self.pid,
            self.started_at.format("%Y-%m-%d %H:%M:%S UTC")
        )
    }
}

/// The journal's path in `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join("journal.json")
}

/// The entries; none when there is no journal.
pub fn read(dir: &Path) -> Result<Vec<JournalEntry>> {
    let path = path(dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading the journal {}", path.display())),
    };
    serde_json::from_str(&text).with_context(|| {
        format!(
            "the journal {} is not a valid secperf journal; check the machine's state \
             by hand (e.g. `auditctl -s`, `auditctl -l`), then remove the file",
            path.display()
        )
    })
}

/// Replaces the journal with `entries` atomically and durably; an empty
/// list removes it.
pub fn write(dir: &Path, entries: &[JournalEntry]) -> Result<()> {
    let path = path(dir);
    if entries.is_empty() {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(e).with_context(|| format!("removing the journal {}", path.display()));
            }
        }
        return sync_dir(dir);
    }
    let tmp = dir.join(format!("journal.json.tmp-{}", std::process::id()));
    let text = serde_json::to_string_pretty(entries).context("encoding the journal")?;
    let result = (|| -> std::io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("writing the journal {}", path.display()));
    }
    sync_dir(dir)
}

/// fsyncs a directory, making a rename or removal in it durable.
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("fsync of the state directory {}", dir.display()))
}
