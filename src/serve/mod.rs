//! `secperf serve`: a results store in a browser, read-only. The pages are
//! the report module's (a run is what `secperf report RUN` draws, a
//! bisection and a track their `report --bisection/--track` pages), with a
//! list of runs in front, and every page has a JSON twin (the same path
//! with `.json`, or `Accept: application/json`) that is the document
//! `--json` prints.
//!
//! Files: [`http`] (axum: the routes, the answers, the listener),
//! [`pages`] (what a page is made of, with no HTTP in it: a path and its
//! query in, a page or a refusal out).
//!
//! Why axum: it is the best kept of Rust's HTTP servers, and tokio is
//! already in the crate (under the PostgreSQL client). Each request reads
//! the store on tokio's blocking pool with its own read-only connection,
//! so the synchronous store code stays as it is, and a slow client holds
//! one task, never the server.

pub mod http;
pub mod pages;
pub mod shared;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::error::UsageError;
use crate::usage_bail;

/// The port `secperf serve` listens on unless told (documented in
/// docs/guide.md).
pub const DEFAULT_PORT: u16 = 8457;

/// What a server reads, and how it names it on its pages.
#[derive(Debug, Clone)]
pub struct Served {
    pub source: Source,
    /// How the pages name it (a URL without its password).
    pub shown: String,
}

#[derive(Debug, Clone)]
pub enum Source {
    /// A results file, opened read-only for every request.
    File(PathBuf),
    /// A shared PostgreSQL store, read in a read-only transaction by every
    /// request ([`shared`]).
    Shared(std::sync::Arc<shared::Mirror>),
}

impl Served {
    /// A results file to serve: it must exist and be readable, and its
    /// schema one this secperf knows (checked once here, so that a bad
    /// store is a usage error at start, not a page of errors).
    pub fn file(db: &Path) -> Result<Served> {
        if !db.is_file() {
            usage_bail!(
                "serve: {} is not a results file: give the file with --db PATH (the one `secperf \
                 results list` reads is the default)",
                db.display()
            );
        }
        let known = crate::store::migrations::MIGRATIONS.len();
        if let Some(v) = crate::store::Store::file_schema_version(db).filter(|&v| v < known) {
            // Every secperf that reads a results file upgrades an older
            // one; said here, since the server is otherwise read-only.
            crate::say!(
                "secperf: serve: {} has schema {v}, older than this secperf's {known}: upgrading \
                 it once now (as any secperf command would), then serving it read-only",
                db.display()
            );
        }
        let store = crate::store::Store::open_read_only(db)?;
        drop(store);
        Ok(Served {
            source: Source::File(db.to_path_buf()),
            shown: db.display().to_string(),
        })
    }

    /// A shared store to serve, read once now (a store that cannot be
    /// reached is a usage error at start; later, a 503 until it is back).
    pub fn shared(url: &str) -> Result<Served> {
        let mirror = shared::Mirror::open(url)?;
        Ok(Served {
            shown: mirror.shown.clone(),
            source: Source::Shared(std::sync::Arc::new(mirror)),
        })
    }

    /// A read-only connection for one request.
    pub fn open(&self) -> std::result::Result<crate::store::Store, pages::Refusal> {
        match &self.source {
            Source::File(db) => {
                crate::store::Store::open_read_only(db).map_err(|e| pages::Refusal::failed(&e))
            }
            Source::Shared(mirror) => {
                let copy = mirror.current().map_err(|e| match e {
                    shared::Unread::Unreachable(why) => pages::Refusal::unavailable(format!(
                        "{why}; this page is served again once it is back"
                    )),
                    shared::Unread::Failed(e) => pages::Refusal::failed(&e),
                })?;
                // Opened while the copy is held: a newer one may replace
                // it, and the file, once open, stays readable.
                let mut store = crate::store::Store::open_read_only(&copy.path())
                    .map_err(|e| pages::Refusal::failed(&e))?;
                drop(copy);
                store.show_as(&self.shown);
                Ok(store)
            }
        }
    }
}

/// Binds `addr`; a port in use or a privileged one is a usage error that
/// says what to do.
pub fn listen(addr: SocketAddr) -> Result<std::net::TcpListener> {
    match std::net::TcpListener::bind(addr) {
        Ok(l) => {
            l.set_nonblocking(true)?;
            Ok(l)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(UsageError::new(format!(
            "serve: {addr} is in use (another secperf serve, or another server): give another \
             port with --bind {}:PORT",
            addr.ip()
        ))
        .into()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Err(UsageError::new(format!(
                "serve: binding {addr} was refused ({e}): ports below 1024 need privileges; give \
                 one above with --bind {}:{DEFAULT_PORT}",
                addr.ip()
            ))
            .into())
        }
        Err(e) => Err(UsageError::new(format!(
            "serve: cannot listen on {addr}: {e}; give an address of this machine with --bind \
             ADDR:PORT"
        ))
        .into()),
    }
}

/// Reads `--token FILE`: one line of at least 16 characters, in a file
/// that other users cannot read (a token anyone can read protects
/// nothing).
pub fn read_token(file: &Path) -> Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(file).map_err(|e| {
        UsageError::new(format!(
            "--token {}: cannot read it ({e}): give a file holding the token, e.g. `head -c 24 \
             /dev/urandom | base64 > token && chmod 600 token`",
            file.display()
        ))
    })?;
    if meta.permissions().mode() & 0o004 != 0 {
        usage_bail!(
            "--token {}: every user of this machine can read it: `chmod 600 {}` first",
            file.display(),
            file.display()
        );
    }
    let text = std::fs::read_to_string(file).map_err(|e| {
        UsageError::new(format!("--token {}: cannot read it ({e})", file.display()))
    })?;
    let token = text.trim().to_string();
    if token.len() < 16 || token.contains(char::is_whitespace) || !token.is_ascii() {
        usage_bail!(
            "--token {}: give one line of at least 16 printable characters, no spaces (e.g. \
             `head -c 24 /dev/urandom | base64`)",
            file.display()
        );
    }
    Ok(token)
}

/// Whether only this machine can reach `addr`.
pub fn is_local(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}
