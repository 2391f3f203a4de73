//! The password file (PGPASSFILE, else `~/.pgpass`) as libpq reads it:
//! refused when others may read it, and searched line by line for the first
//! that matches a server, a database and a user.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::DEFAULT_SOCKET_DIR;

/// What reading the password file gave.
#[derive(Debug, PartialEq)]
pub(super) enum Passfile {
    /// No file, or one that cannot be read: libpq says nothing.
    Missing,
    Content(String),
    /// Ignored, with libpq's warning.
    Ignored(String),
}

/// Reads the password file, refusing one that others may read (as libpq
/// does: mode & 0o077 must be 0) or that is not a plain file.
pub(super) fn read_passfile(path: &Path) -> Passfile {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Passfile::Missing;
    };
    if !meta.is_file() {
        return Passfile::Ignored(format!(
            "WARNING: password file \"{}\" is not a plain file",
            path.display()
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Passfile::Ignored(format!(
            "WARNING: password file \"{}\" has group or world access; permissions should be \
             u=rw (0600) or less",
            path.display()
        ));
    }
    match std::fs::read(path) {
        Ok(bytes) => Passfile::Content(String::from_utf8_lossy(&bytes).into_owned()),
        Err(_) => Passfile::Missing,
    }
}

/// Reads the password file, printing its warning to stderr once per process
/// and file.
pub(super) fn load_passfile(path: &Path) -> Option<String> {
    static WARNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    match read_passfile(path) {
        Passfile::Content(c) => Some(c),
        Passfile::Missing => None,
        Passfile::Ignored(warning) => {
            let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
            if !warned.iter().any(|p| p == path) {
                warned.push(path.to_path_buf());
                crate::say!("{warning}");
            }
            None
        }
    }
}

/// The host name a password file line must carry for `host`: libpq looks up
/// "localhost" for its default socket directory, and any other host as given.
pub(super) fn pgpass_host(host: &str) -> &str {
    if host.is_empty() || host == DEFAULT_SOCKET_DIR {
        "localhost"
    } else {
        host
    }
}

/// The password of the first line of a password file that matches, as libpq
/// finds it: lines `hostname:port:database:username:password`, where a field
/// that is exactly `*` matches anything, `\:` and `\\` stand for `:` and `\`,
/// and lines starting with `#` are comments. `host` is matched as given (see
/// [`pgpass_host`]).
pub(super) fn pgpass_lookup(
    content: &str,
    host: &str,
    port: u16,
    db: &str,
    user: &str,
) -> Option<String> {
    let port = port.to_string();
    content.lines().find_map(|line| {
        let line = line.strip_suffix('\r').unwrap_or(line).as_bytes();
        if line.is_empty() || line[0] == b'#' {
            return None;
        }
        let rest = [host, port.as_str(), db, user]
            .iter()
            .try_fold(line, |rest, token| pgpass_field(rest, token.as_bytes()))?;
        let mut password = Vec::new();
        let mut i = 0;
        while i < rest.len() && rest[i] != b':' {
            if rest[i] == b'\\' && i + 1 < rest.len() {
                i += 1;
            }
            password.push(rest[i]);
            i += 1;
        }
        Some(String::from_utf8_lossy(&password).into_owned())
    })
}

/// libpq's `pwdfMatchesString`: whether the first field of `line` matches
/// `token`, and if so what follows the field's `:`.
fn pgpass_field<'a>(line: &'a [u8], token: &[u8]) -> Option<&'a [u8]> {
    if line.starts_with(b"*:") {
        return Some(&line[2..]);
    }
    let (mut i, mut t) = (0, 0);
    while i < line.len() {
        let mut escaped = false;
        if line[i] == b'\\' {
            i += 1;
            escaped = true;
            if i == line.len() {
                return None;
            }
        }
        if line[i] == b':' && !escaped && t == token.len() {
            return Some(&line[i + 1..]);
        }
        if t == token.len() || line[i] != token[t] {
            return None;
        }
        i += 1;
        t += 1;
    }
    None
}
