//! The store a command that only reads works on: a results file, or a
//! shared PostgreSQL store (`--db postgresql://...` or `SECPERF_DB`), read
//! through a temporary copy (`remote::pull`).

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::remote::conn::is_url;
use crate::store::Store;

/// A store open for reading.
pub(crate) enum Reading {
    File(Store),
    Shared(crate::remote::pull::Pulled),
}

impl Deref for Reading {
    type Target = Store;
    fn deref(&self) -> &Store {
        match self {
            Reading::File(s) => s,
            Reading::Shared(p) => &p.store,
        }
    }
}

impl DerefMut for Reading {
    fn deref_mut(&mut self) -> &mut Store {
        match self {
            Reading::File(s) => s,
            Reading::Shared(p) => &mut p.store,
        }
    }
}

/// The URL `--db` names, when it names a shared store.
pub(crate) fn shared_url(db: Option<&Path>) -> Option<String> {
    let s = db?.to_str()?;
    is_url(s).then(|| s.to_string())
}

/// Opens what `--db` names for reading. Returns the store and how to name
/// it in output (the file, or the URL without its password).
pub(crate) fn open(db: Option<&Path>) -> Result<(Reading, PathBuf)> {
    if let Some(url) = shared_url(db) {
        let pulled = crate::remote::pull::pull(&url)?;
        let shown = PathBuf::from(crate::remote::conn::redact(&url));
        return Ok((Reading::Shared(pulled), shown));
    }
    let path = crate::store::resolve_db_path(db)?;
    Ok((Reading::File(Store::open_read_only(&path)?), path))
}
