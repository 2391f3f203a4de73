//! Connecting to a PostgreSQL server from a `postgresql://` URL the way libpq
//! (psql, pg_dump) would.
//!
//! rust-postgres reads no PG* environment variable and no password file, and
//! knows only sslmode disable, prefer and require. This module fills the gap.
//! It parses the URL itself, with libpq's grammar (several `host:port` pairs
//! separated by commas, IPv6 addresses in brackets, a percent-encoded socket
//! directory as host, parameters in the query), fills what the URL lacks from
//! the environment (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD,
//! PGSSLMODE, PGSSLROOTCERT, PGCONNECT_TIMEOUT, PGAPPNAME, PGOPTIONS) and
//! libpq's defaults (the socket directory `/var/run/postgresql`, port 5432,
//! the OS user, a database named after the user), finds a missing password in
//! the password file (PGPASSFILE or `~/.pgpass`), and gives every sslmode
//! libpq's meaning with rustls:
//!
//! | sslmode       | TLS                       | server certificate checked            |
//! |---------------|---------------------------|---------------------------------------|
//! | disable       | never                     | -                                     |
//! | allow, prefer | when the server offers it | no                                    |
//! | require       | always                    | no; the chain when a root file exists |
//! | verify-ca     | always                    | the chain, against sslrootcert        |
//! | verify-full   | always                    | the chain and the host name           |
//!
//! The root file is sslrootcert, else `~/.postgresql/root.crt`; for
//! `require` it is used only where it exists, as libpq does. Certificates are
//! checked as OpenSSL checks them for libpq, not as a browser would: a host
//! name is matched against the subjectAltName entries of its kind and, where
//! there are none, against the Common Name (with libpq's `*.` wildcard rule),
//! and a self-signed certificate that is itself in the root file is accepted
//! while it is within its validity period. Unix sockets never use TLS: libpq
//! ignores sslmode there.
//!
//! Not supported (an unknown query parameter is an error that names it):
//! client certificates (sslcert, sslkey), `sslrootcert=system`, service files,
//! hostaddr, target_session_attrs. `allow` behaves as `prefer`.
//!
//! Passwords never reach a message: [`redact`] and [`redact_in`] take them
//! out of URLs, and every error of [`connect`] names the server by the
//! redacted URL of what it tried.
//!
//! The parts: `url` reads URLs and takes passwords out of them, `pgpass`
//! looks passwords up in the password file, `attempt` tries the servers in
//! turn and `explain` says why one failed; `tls` turns sslmode into a rustls
//! configuration with libpq's certificate checks, which read certificates
//! through `x509` (the `x509-cert` crate).

mod attempt;
mod explain;
mod pgpass;
mod tls;
mod url;
mod x509;

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use postgres::config::SslMode;

use crate::error::UsageError;
use attempt::connect_settings;
use url::{UrlParts, parse_url, percent_encode, redaction_span, scrub, split_list, url_tail};

pub use url::{is_url, redact, redact_in};

/// libpq's default host on Debian and its derivatives: a socket directory.
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";
const DEFAULT_PORT: u16 = 5432;
const DEFAULT_APPLICATION_NAME: &str = "secperf";
/// libpq waits forever by default; a benchmark tool should not.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens a connection; errors name the server (redacted) and say how to fix
/// it. A malformed URL or setting is a [`UsageError`], a server that
/// cannot be reached or refuses a [`crate::error::Unreachable`]: exit code
/// 2 both, each being what was given, as a results file that cannot be
/// opened is.
pub fn connect(url: &str) -> anyhow::Result<postgres::Client> {
    let shown = redact(url);
    // What a message may show, and what it must not (unless shown anyway,
    // as a password that is also the user's name).
    let mut safe = vec![shown.clone()];
    let mut secrets: Vec<String> = Vec::new();
    secrets.extend(redaction_span(url_tail(url)).map(|(c, at)| url_tail(url)[c + 1..at].into()));
    let result = parse_url(url)
        .map_err(|why| Failure::Usage(format!("invalid PostgreSQL URL {shown}: {why}")))
        .and_then(|parts| {
            secrets.extend(parts.password.clone());
            secrets.extend(std::env::var("PGPASSWORD").ok());
            let home = dirs::home_dir();
            resolve(
                parts,
                &|name| std::env::var(name).ok(),
                &os_user_name,
                home.as_deref(),
            )
            .map_err(|why| Failure::Usage(format!("connecting to {shown}: {why}")))
        })
        .and_then(|settings| {
            safe.push(settings.describe(&settings.targets));
            connect_settings(&settings, &mut secrets)
        });
    result.map_err(|failure| match failure {
        Failure::Usage(msg) => UsageError::new(scrub(&msg, &secrets, &safe)).into(),
        Failure::Connect(msg) => crate::error::Unreachable(scrub(&msg, &secrets, &safe)).into(),
    })
}

/// Why [`connect`] failed, before it becomes an `anyhow::Error`.
#[derive(Debug)]
enum Failure {
    /// The URL or a setting is wrong: exit code 2.
    Usage(String),
    /// The server could not be reached, or refused.
    Connect(String),
}

// ---------------------------------------------------------------------------
// Settings: the URL, then the environment, then libpq's defaults
// ---------------------------------------------------------------------------

/// libpq's sslmode values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ssl {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Ssl {
    fn parse(s: &str) -> Result<Ssl, String> {
        Ok(match s {
            "disable" => Ssl::Disable,
            "allow" => Ssl::Allow,
            "prefer" => Ssl::Prefer,
            "require" => Ssl::Require,
            "verify-ca" => Ssl::VerifyCa,
            "verify-full" => Ssl::VerifyFull,
            _ => {
                return Err(format!(
                    "invalid sslmode \"{s}\" (disable, allow, prefer, require, verify-ca or verify-full)"
                ));
            }
        })
    }

    /// What rust-postgres is told: whether TLS is attempted, and whether it
    /// is mandatory. The certificate checks are the verifier's.
    fn postgres_mode(self) -> SslMode {
        match self {
            Ssl::Disable => SslMode::Disable,
            Ssl::Allow | Ssl::Prefer => SslMode::Prefer,
            Ssl::Require | Ssl::VerifyCa | Ssl::VerifyFull => SslMode::Require,
        }
    }
}

/// Where the password sent to a server came from (said in hints).
#[derive(Debug, Clone, PartialEq, Eq)]
enum PasswordFrom {
    Url,
    Env,
    Passfile(PathBuf),
    Nowhere,
}

/// One server to try.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    /// A host name or address, or a socket directory (starting with '/').
    host: String,
    port: u16,
}

impl Target {
    fn is_socket(&self) -> bool {
        self.host.starts_with('/')
    }

    /// `host:port` as a URL writes it.
    fn netloc(&self) -> String {
        let host = if self.is_socket() {
            percent_encode(&self.host)
        } else if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            percent_encode(&self.host)
        };
        format!("{host}:{}", self.port)
    }
}

/// Everything a connection needs, resolved.
#[derive(Debug, PartialEq)]
struct Settings {
    user: String,
    /// From the URL or PGPASSWORD; the password file is read later, per host.
    password: Option<(String, PasswordFrom)>,
    targets: Vec<Target>,
    dbname: String,
    sslmode: Ssl,
    /// sslrootcert as given.
    sslrootcert: Option<PathBuf>,
    /// `~/.postgresql/root.crt`, where there is a home directory.
    default_rootcert: Option<PathBuf>,
    /// PGPASSFILE, else `~/.pgpass`.
    passfile: Option<PathBuf>,
    /// `None`: wait as long as it takes.
    connect_timeout: Option<Duration>,
    application_name: String,
    options: Option<String>,
}

impl Settings {
    /// The redacted URL of what is tried: `postgresql://user@host:port/db`.
    fn describe(&self, targets: &[Target]) -> String {
        let netlocs: Vec<String> = targets.iter().map(Target::netloc).collect();
        format!(
            "postgresql://{}@{}/{}",
            percent_encode(&self.user),
            netlocs.join(","),
            percent_encode(&self.dbname)
        )
    }
}

/// Fills what the URL lacks from the environment (`env` looks a variable
/// up; an empty value counts as unset) and then from libpq's defaults.
/// `os_user` is called only when neither the URL nor PGUSER names a user.
fn resolve(
    parts: UrlParts,
    env: &dyn Fn(&str) -> Option<String>,
    os_user: &dyn Fn() -> Option<String>,
    home: Option<&Path>,
) -> Result<Settings, String> {
    let env = |name: &str| env(name).filter(|v| !v.is_empty());

    let hosts: Vec<String> = parts
        .hosts
        .or_else(|| env("PGHOST").map(|h| split_list(&h)))
        .unwrap_or_default()
        .into_iter()
        .map(|h| {
            if h.is_empty() {
                DEFAULT_SOCKET_DIR.to_string()
            } else {
                h
            }
        })
        .collect();
    let hosts = if hosts.is_empty() {
        vec![DEFAULT_SOCKET_DIR.to_string()]
    } else {
        hosts
    };
    let ports: Vec<u16> = parts
        .ports
        .or_else(|| env("PGPORT").map(|p| split_list(&p)))
        .unwrap_or_else(|| vec![String::new()])
        .iter()
        .map(|p| parse_port(p))
        .collect::<Result<_, _>>()?;
    let ports = match ports.len() {
        1 => vec![ports[0]; hosts.len()],
        n if n == hosts.len() => ports,
        n => {
            return Err(format!(
                "{n} ports for {} hosts: give one port for all, or one per host",
                hosts.len()
            ));
        }
    };
    let targets = hosts
        .into_iter()
        .zip(ports)
        .map(|(host, port)| Target { host, port })
        .collect();

    let user = parts
        .user
        .or_else(|| env("PGUSER"))
        .or_else(os_user)
        .ok_or(
            "cannot tell which user to connect as: put one in the URL (postgresql://USER@host/db) \
         or set PGUSER",
        )?;
    let dbname = parts
        .dbname
        .or_else(|| env("PGDATABASE"))
        .unwrap_or_else(|| user.clone());
    let password = match (parts.password, env("PGPASSWORD")) {
        (Some(p), _) => Some((p, PasswordFrom::Url)),
        (None, Some(p)) => Some((p, PasswordFrom::Env)),
        (None, None) => None,
    };
    let sslmode = match parts.sslmode.or_else(|| env("PGSSLMODE")) {
        Some(s) => Ssl::parse(&s)?,
        None => Ssl::Prefer,
    };
    let sslrootcert = parts
        .sslrootcert
        .or_else(|| env("PGSSLROOTCERT"))
        .map(PathBuf::from);
    let connect_timeout = match parts.connect_timeout.or_else(|| env("PGCONNECT_TIMEOUT")) {
        Some(t) => parse_timeout(&t)?,
        None => Some(DEFAULT_CONNECT_TIMEOUT),
    };
    let application_name = parts
        .application_name
        .or_else(|| env("PGAPPNAME"))
        .unwrap_or_else(|| DEFAULT_APPLICATION_NAME.to_string());
    let options = parts.options.or_else(|| env("PGOPTIONS"));
    let passfile = env("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".pgpass")));
    let default_rootcert = home.map(|h| h.join(".postgresql").join("root.crt"));

    Ok(Settings {
        user,
        password,
        targets,
        dbname,
        sslmode,
        sslrootcert,
        default_rootcert,
        passfile,
        connect_timeout,
        application_name,
        options,
    })
}

/// A port as libpq reads it; empty means the default. The value is not
/// quoted in the error: a stray password fragment could land here.
fn parse_port(p: &str) -> Result<u16, String> {
    if p.is_empty() {
        return Ok(DEFAULT_PORT);
    }
    p.trim()
        .parse::<u16>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| "a port is not a number from 1 to 65535".to_string())
}

/// connect_timeout as libpq reads it: whole seconds, zero or less for no
/// limit, and at least two seconds.
fn parse_timeout(t: &str) -> Result<Option<Duration>, String> {
    let secs: i64 = t
        .trim()
        .parse()
        .map_err(|_| format!("invalid connect_timeout \"{t}\" (whole seconds; 0 waits forever)"))?;
    Ok((secs > 0).then(|| Duration::from_secs(secs.max(2) as u64)))
}

/// The name of the effective user, as libpq finds it.
fn os_user_name() -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: passwd is plain data; getpwuid_r fills it with pointers into
    // `buf`, which outlives every use of them below.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            libc::geteuid(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        CStr::from_ptr(pwd.pw_name)
            .to_str()
            .ok()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }
}

#[cfg(test)]
mod tests;
