//! A shared PostgreSQL store served: every request opens its own
//! connection and reads in a transaction of its own that is READ ONLY (and
//! REPEATABLE READ, so what it reads is one moment of the store). It reads
//! the store's fingerprint (its schema version, how many runs and the
//! newest, the newest track and bisection, the campaigns); when that
//! changed since the last copy, the request brings the copy up to date, in
//! that same transaction: the first time, and when the store's schema
//! changed or it lost a run, by copying the store whole into a private
//! SQLite file (`remote::pull`, which every command that reads a shared
//! store uses); otherwise in place, reading only the runs pushed since and
//! the small tables not under a run (`remote::pull::update`). Every page
//! is then made from the copy by the same code as a results file's.
//!
//! A store that cannot be reached (stopped, or the network down) is a 503
//! with the store's name and no password; the next request tries again, so
//! the server recovers by itself once the store is back. No request waits
//! on another's connection: copies are made or updated one at a time, and
//! meanwhile the other requests read the copy as it was (a moment old).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, TryLockError};

use anyhow::{Context, Result};

use crate::remote::pull::Pulled;

/// The copy a server reads, and the fingerprint of the store it was made
/// from. Its file goes when the last request holding it is done.
pub struct Copy {
    /// Kept for its file (its connection is not used: each request opens
    /// its own); shared by the copies that [`crate::remote::pull::update`]
    /// brought up to date in place.
    _pulled: Arc<Mutex<Pulled>>,
    path: PathBuf,
    fingerprint: Vec<String>,
}

/// A shared store as a server reads it.
pub struct Mirror {
    /// The URL, password included: never shown (`shown` is).
    url: String,
    pub shown: String,
    /// The latest copy (held only to read or swap it).
    copy: Mutex<Option<Arc<Copy>>>,
    /// Held while a copy is made: one at a time.
    copying: Mutex<()>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("shown", &self.shown)
            .finish()
    }
}

/// Why a request could not be answered from the shared store.
pub enum Unread {
    /// It could not be reached or read: try again later (503).
    Unreachable(String),
    /// Anything else (500).
    Failed(anyhow::Error),
}

impl Mirror {
    /// The shared store at `url`, read once now: a store that cannot be
    /// reached, holds no secperf results, or is newer than this secperf
    /// is a usage error at start.
    pub fn open(url: &str) -> Result<Mirror> {
        let shown = crate::remote::conn::redact(url);
        let m = Mirror {
            url: url.to_string(),
            shown: shown.clone(),
            copy: Mutex::new(None),
            copying: Mutex::new(()),
        };
        m.current().map_err(|e| match e {
            Unread::Unreachable(why) => crate::error::UsageError::new(format!(
                "serve: {why}; start it, check the URL, or serve a results file (--db PATH)"
            ))
            .into(),
            Unread::Failed(e) => e,
        })?;
        Ok(m)
    }

    /// A copy as current as the store, made now when the store changed
    /// since the last (hold it while its file is opened).
    pub fn current(&self) -> std::result::Result<Arc<Copy>, Unread> {
        let unreachable = |e: anyhow::Error| {
            // A usage error (no secperf tables, a newer schema) is the
            // store's state, not a failure to reach it.
            if crate::error::exit_code(&e) == 2 && !crate::error::is_unreachable(&e) {
                Unread::Failed(e)
            } else {
                Unread::Unreachable(format!(
                    "the shared store {} cannot be read: {}",
                    self.shown,
                    first_line(&format!("{e:#}"))
                ))
            }
        };
        let mut client = crate::remote::conn::connect(&self.url).map_err(unreachable)?;
        client
            .batch_execute("START TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .map_err(|e| unreachable(e.into()))?;
        let fingerprint = fingerprint(&mut client).map_err(unreachable)?;
        let made = self.copy_for(&mut client, fingerprint, &unreachable)?;
        // Read only: nothing to keep, and a COMMIT that fails changes
        // nothing either.
        let _ = client.batch_execute("COMMIT");
        Ok(made)
    }
}

impl Copy {
    /// The copy's file.
    pub fn path(&self) -> PathBuf {
        self.path.clone()
    }
}

impl Mirror {
    fn latest(&self) -> Option<Arc<Copy>> {
        self.copy
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The copy of the store whose fingerprint is `fingerprint`. One
    /// request copies at a time; while it does, the others read the copy
    /// before (a moment old), or wait where there is none yet.
    fn copy_for(
        &self,
        client: &mut postgres::Client,
        fingerprint: Vec<String>,
        unreachable: &dyn Fn(anyhow::Error) -> Unread,
    ) -> std::result::Result<Arc<Copy>, Unread> {
        let stale = match self.latest() {
            Some(c) if c.fingerprint == fingerprint => return Ok(c),
            other => other,
        };
        let _copying = match self.copying.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => match stale {
                Some(stale) => return Ok(stale),
                None => self
                    .copying
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            },
        };
        // Made by the request that held the lock before.
        if let Some(c) = self.latest().filter(|c| c.fingerprint == fingerprint) {
            return Ok(c);
        }
        let c = Arc::new(match self.updated(client, &fingerprint) {
            Some((pulled, path)) => Copy {
                path,
                _pulled: pulled,
                fingerprint,
            },
            None => {
                let pulled =
                    crate::remote::pull::pull_from(client, &self.shown).map_err(unreachable)?;
                Copy {
                    path: pulled.path(),
                    _pulled: Arc::new(Mutex::new(pulled)),
                    fingerprint,
                }
            }
        });
        *self
            .copy
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(c.clone());
        Ok(c)
    }
}

impl Mirror {
    /// The latest copy's file brought up to date in place, when there is
    /// one of the same schema and it can be (see
    /// [`crate::remote::pull::update`]); None when only a new copy will
    /// do (and then after any error: a new copy says what is wrong, if
    /// anything still is).
    fn updated(
        &self,
        client: &mut postgres::Client,
        fingerprint: &[String],
    ) -> Option<(Arc<Mutex<Pulled>>, PathBuf)> {
        let latest = self.latest()?;
        if latest.fingerprint.first() != fingerprint.first() {
            return None;
        }
        match crate::remote::pull::update(client, &latest.path, &self.shown) {
            Ok(crate::remote::pull::Updated::Runs(_)) => {
                Some((latest._pulled.clone(), latest.path.clone()))
            }
            Ok(crate::remote::pull::Updated::NeedsNewCopy) => None,
            Err(e) => {
                crate::say!(
                    "secperf: serve: bringing the copy of {} up to date failed ({}); copying it \
                     anew",
                    self.shown,
                    first_line(&format!("{e:#}"))
                );
                None
            }
        }
    }
}

/// What changes when anything is pushed: the schema version, the runs
/// (count and newest id), the newest track and bisection, the campaigns.
fn fingerprint(client: &mut postgres::Client) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let version = crate::remote::schema::remote_version(client)?;
    out.push(format!("{version:?}"));
    for (table, sql) in [
        (
            "runs",
            "SELECT COUNT(*)::text || ' ' || COALESCE(MAX(id), 0)::text FROM runs",
        ),
        (
            "tracks",
            "SELECT COUNT(*)::text || ' ' || COALESCE(MAX(updated_at), '') FROM tracks",
        ),
        (
            "bisections",
            "SELECT COUNT(*)::text || ' ' || COALESCE(MAX(updated_at), '') FROM bisections",
        ),
        ("campaigns", "SELECT COUNT(*)::text FROM campaigns"),
    ] {
        let exists: bool = client
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])?
            .get(0);
        out.push(if exists {
            client
                .query_one(sql, &[])
                .with_context(|| format!("reading {table}"))?
                .get::<_, String>(0)
        } else {
            String::new()
        });
    }
    Ok(out)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
