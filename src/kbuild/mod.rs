//! Kernels built from source for a kernel A/B across boots
//! (`--kernel NAME=SOURCE[,rev=REV][,patch=FILE]...[,config=FRAGMENT]`):
//! a kernel developer has a tree and a patch, not two images.
//!
//! - [`spec`]: what one arm builds (source, revision, patches, fragment).
//! - [`tools`]: the build tools, named with their `apt-get install` line
//!   before anything starts.
//! - [`source`]: the source's identity (a git tree id, or a content hash)
//!   and the checks that it is a kernel tree.
//! - [`patches`]: patches checked and applied, never to the source.
//! - [`config`]: the one config of every arm (virtme-ng's fragment, what
//!   the mechanisms need, the user's fragment, `olddefconfig`), with the
//!   options that `olddefconfig` dropped.
//! - [`tree`]: secperf's own copy of a source, one per source path, its
//!   paths stable so that arms that differ by a file rebuild only that
//!   file (patches are applied and reverted in place).
//! - [`layout`]: the layout control's inert change.
//! - [`make`]: `make bzImage` with progress, a log, and no make outliving
//!   secperf.
//! - [`cache`]: finished images keyed by what determines the binary,
//!   published only once complete.
//! - [`build`]: the steps put together for one arm.

pub mod build;
pub mod cache;
pub mod config;
pub mod layout;
pub mod make;
pub mod patches;
pub mod series;
pub mod source;
pub mod spec;
pub mod tools;
pub mod tree;

use std::path::PathBuf;

use sha2::Digest;

pub use build::{Built, ensure, plan};
pub use cache::BuildRecord;
pub use spec::SourceSpec;

/// The kernel architecture every build is for (the host's, x86-64).
pub const ARCH: &str = "x86_64";

/// Where builds live: `$XDG_CACHE_HOME/secperf/kernels` (or
/// `~/.cache/secperf/kernels`).
pub fn cache_root() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("secperf")
        .join("kernels")
}

/// [`cache_root`], created if missing: where it cannot be (a user whose
/// home is not writable, as `nobody`'s) a usage error saying how to give
/// another place, before anything is built.
pub fn writable_cache_root() -> anyhow::Result<PathBuf> {
    let root = cache_root();
    std::fs::create_dir_all(&root).map_err(|e| {
        crate::error::UsageError::new(format!(
            "secperf keeps kernel builds and tracks in {} and cannot create it ({e}): set \
             XDG_CACHE_HOME to a directory this user can write (e.g. XDG_CACHE_HOME=/var/tmp/$USER)",
            root.display()
        ))
    })?;
    Ok(root)
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
