//! The lock a track holds while it runs (one file per track in secperf's
//! cache): a second invocation of the same track refuses, naming the one
//! that holds it.

use std::io::Write;

use anyhow::{Context, Result};

use crate::usage_bail;

/// Held while a track runs: a second invocation of the same track refuses,
/// naming this one.
pub struct TrackLock {
    _file: std::fs::File,
}

impl TrackLock {
    /// Takes the lock of track `id`, writing who holds it (`command_line`,
    /// the process, since when) into its file.
    pub fn take(id: &str, command_line: &[String]) -> Result<TrackLock> {
        let dir = crate::kbuild::writable_cache_root()?.join("track");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(format!("{id}.lock"));
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        match f.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                usage_bail!(
                    "track {id} is already running: {} (one track at a time; stop it, or let \
                     it test what is new)",
                    holder.trim()
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()));
            }
        }
        f.set_len(0)?;
        writeln!(
            f,
            "pid {} (`secperf {}`), since {}",
            std::process::id(),
            command_line.join(" "),
            chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
        )?;
        Ok(TrackLock { _file: f })
    }
}
