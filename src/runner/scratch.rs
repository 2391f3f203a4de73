//! Scratch directories a killed measurement left behind.
//!
//! (The records live in the safety state directory, which `cli` names
//! once at start with [`set_records_dir`]; the runner sits below `safety`
//! and does not look it up.)
//!
//! Each measurement works in a scratch directory of its own
//! (`secperf-<workload>-XXXXXX`, [`super::scratch_dir`]), removed
//! when it ends. A measurement killed with SIGKILL cannot remove it, and
//! it must not be removed while audit rules that may watch it are loaded
//! (the kernel would drop such a rule without uncounting it: phantom
//! rules, docs/findings.md). So each scratch directory is recorded in the
//! state directory (`scratch/*.rec`, naming the directory), under an
//! exclusive `flock` its process holds while it (and the workers it
//! forked) live. At start, once the journal is empty (every change a
//! killed run made is undone), secperf removes the directories whose
//! record's lock can be taken: their process is gone.
//!
//! A record appears already locked (written under another name, locked,
//! then renamed), so a record whose lock can be taken is an orphan.

use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The state directory's folder of records.
pub const RECORDS: &str = "scratch";

/// Where this process records its scratch directories (the state
/// directory's [`RECORDS`]); unset, they are not recorded.
static RECORDS_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Names the folder of records for this process (once, at start).
pub fn set_records_dir(dir: PathBuf) {
    let _ = RECORDS_DIR.set(dir);
}

/// The record of `scratch` in this process's folder of records, when one
/// was named.
pub fn record_here(scratch: &Path) -> Option<Record> {
    record(RECORDS_DIR.get()?, scratch)
}
/// What a record's name ends with once it is locked.
const RECORD_EXT: &str = "rec";

/// A scratch directory's record, locked while this process lives; removed
/// when dropped.
#[derive(Debug)]
pub struct Record {
    path: PathBuf,
    _lock: File,
}

impl Drop for Record {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Records `scratch` in the folder of records `dir`. None when it cannot
/// be (a state directory that cannot be written): the scratch directory
/// works as well, and is only not removed after a SIGKILL.
pub fn record(dir: &Path, scratch: &Path) -> Option<Record> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .create(dir)
        .ok()?;
    let mut new = tempfile::Builder::new()
        .prefix("scratch-")
        .suffix(".new")
        .tempfile_in(dir)
        .ok()?;
    new.write_all(scratch.as_os_str().as_encoded_bytes()).ok()?;
    new.as_file().lock().ok()?;
    let path = new.path().with_extension(RECORD_EXT);
    // Renamed while locked: a `.rec` is never seen unlocked while its
    // process lives.
    let file = new.persist(&path).ok()?;
    Some(Record { path, _lock: file })
}

/// Removes the scratch directories named in the folder of records `dir`
/// whose process is gone, and their records. Call only with the journal
/// empty. Returns
/// the directories removed. A record names a directory whose name starts
/// with `secperf-`; anything else it names is left.
pub fn sweep(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let rec = e.path();
        if rec.extension().is_none_or(|x| x != RECORD_EXT) {
            continue;
        }
        let Ok(file) = File::open(&rec) else {
            continue;
        };
        if file.try_lock().is_err() {
            continue;
        }
        let Ok(named) = std::fs::read(&rec) else {
            continue;
        };
        let scratch = PathBuf::from(std::ffi::OsStr::from_bytes(&named));
        let ours = scratch
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(super::SCRATCH_PREFIX));
        if !ours {
            continue;
        }
        if std::fs::symlink_metadata(&scratch).is_ok_and(|m| m.is_dir()) {
            if std::fs::remove_dir_all(&scratch).is_err() {
                continue;
            }
            removed.push(scratch);
        }
        let _ = std::fs::remove_file(&rec);
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_measurements_scratch_is_removed_and_a_live_ones_is_not() {
        let state = tempfile::tempdir().unwrap();
        let records = state.path().join(RECORDS);
        let root = tempfile::tempdir().unwrap();
        let scratch = |name: &str| {
            let d = root.path().join(name);
            std::fs::create_dir_all(d.join("sub")).unwrap();
            std::fs::write(d.join("sub/f"), "x").unwrap();
            d
        };
        let live = scratch("secperf-open-live01");
        let held = record(&records, &live).unwrap();
        assert!(held.path.extension().is_some_and(|x| x == RECORD_EXT));
        // What a SIGKILL leaves: the record, its lock gone with the
        // process.
        let killed = scratch("secperf-open-dead01");
        let dead_rec = records.join("scratch-dead01.rec");
        std::fs::write(&dead_rec, killed.as_os_str().as_encoded_bytes()).unwrap();
        // A record naming what is not a scratch directory.
        let other = root.path().join("not-ours");
        std::fs::create_dir(&other).unwrap();
        let foreign_rec = records.join("scratch-other1.rec");
        std::fs::write(&foreign_rec, other.as_os_str().as_encoded_bytes()).unwrap();

        assert_eq!(sweep(&records), vec![killed.clone()]);
        assert!(!killed.exists() && !dead_rec.exists());
        assert!(live.exists() && held.path.exists(), "a live scratch stays");
        assert!(other.exists(), "only secperf- directories are removed");
        // The live one ends: its record goes with it.
        let held_path = held.path.clone();
        drop(held);
        assert!(!held_path.exists());
        assert!(sweep(&records).is_empty());
    }
}
