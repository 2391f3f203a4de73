//! Where a policy file's bytes come from: the file named on the command
//! line, or, when `secperf rerun` repeats a stored run whose file has since
//! changed, the content stored with that run. Every policy loader reads
//! through [`read`], so a rerun measures exactly the policy the run
//! measured while every label still names the path the user gave.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::model::PolicyFile;

/// Stored contents that stand in for files, by path (set by `rerun`).
static OVERRIDES: Mutex<BTreeMap<PathBuf, Vec<u8>>> = Mutex::new(BTreeMap::new());

/// The bytes of the policy file at `path`: the stored content registered
/// with [`substitute`] for that path, else the file's.
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let stored = OVERRIDES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(path)
        .cloned();
    match stored {
        Some(bytes) => Ok(bytes),
        None => std::fs::read(path),
    }
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads the policy file `path` named by `treatment`'s parameter `param`,
/// with its digest, as the run stores it.
pub fn policy_file(treatment: &str, param: &str, path: &str) -> anyhow::Result<PolicyFile> {
    use anyhow::Context as _;
    let bytes =
        read(Path::new(path)).with_context(|| format!("{treatment}: reading {param}={path}"))?;
    Ok(PolicyFile {
        treatment: treatment.to_string(),
        param: param.to_string(),
        path: path.to_string(),
        sha256: sha256_hex(&bytes),
        bytes: bytes.len() as u64,
        content: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// From now on, reading `path` gives `content` (a stored run's copy).
pub fn substitute(path: &Path, content: Vec<u8>) {
    OVERRIDES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(path.to_path_buf(), content);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_substitute_stands_in_for_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, b"on disk").unwrap();
        assert_eq!(read(&path).unwrap(), b"on disk");
        substitute(&path, b"stored".to_vec());
        assert_eq!(read(&path).unwrap(), b"stored");
        let missing = dir.path().join("gone.rules");
        assert!(read(&missing).is_err());
        substitute(&missing, b"-a always,exit".to_vec());
        assert_eq!(read(&missing).unwrap(), b"-a always,exit");
    }
}
