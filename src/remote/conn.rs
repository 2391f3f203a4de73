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

use std::ffi::CStr;
use std::fmt::Write as _;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use postgres::config::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::verify_server_cert_signed_by_trust_anchor;
use rustls::crypto::{
    WebPkiSupportedAlgorithms, ring, verify_tls12_signature, verify_tls13_signature,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, SignatureVerificationAlgorithm, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::UsageError;

/// The URL schemes libpq accepts.
const SCHEMES: [&str; 2] = ["postgresql://", "postgres://"];

/// libpq's default host on Debian and its derivatives: a socket directory.
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";
const DEFAULT_PORT: u16 = 5432;
const DEFAULT_APPLICATION_NAME: &str = "secperf";
/// libpq waits forever by default; a benchmark tool should not.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The query parameters [`connect`] understands.
const KNOWN_PARAMS: &[&str] = &[
    "sslmode",
    "sslrootcert",
    "connect_timeout",
    "application_name",
    "options",
    "host",
    "port",
    "dbname",
    "user",
    "password",
];

/// Whether `s` names a PostgreSQL database rather than a SQLite file.
pub fn is_url(s: &str) -> bool {
    scheme_len(s).is_some()
}

/// The URL with any password removed (for messages, stored command lines,
/// output): `postgresql://user:secret@host/db?password=x&sslmode=require`
/// becomes `postgresql://user@host/db?sslmode=require`. The scheme and
/// everything else stay as written. A string that is not a URL comes back
/// as [`redact_in`] leaves it.
///
/// Where the user information ends is judged generously (a password may hold
/// an unencoded `@`, `/` or `?`): when in doubt, more is taken out.
pub fn redact(url: &str) -> String {
    match scheme_len(url) {
        Some(n) => format!("{}{}", &url[..n], redact_tail(&url[n..])),
        None => redact_in(url),
    }
}

/// `text` with every `postgresql://user:PASSWORD@` or `postgres://…` in it
/// (a command line, a log line) turned into `postgresql://user@`, and every
/// `password=` query parameter of those URLs dropped; the rest is kept.
///
/// A URL ends at white space or a quote, or, when a quote opens it, at the
/// matching quote. A password holding white space or quotes can only be
/// found when the URL is quoted as a whole, so redact the arguments of a
/// command line one by one with [`redact`] before joining them where that
/// matters.
pub fn redact_in(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    while let Some(found) = lower[pos..].find("postgres") {
        let start = pos + found;
        let after = start + "postgres".len();
        let scheme_end = if lower[after..].starts_with("ql://") {
            after + "ql://".len()
        } else if lower[after..].starts_with("://") {
            after + "://".len()
        } else {
            out.push_str(&text[pos..after]);
            pos = after;
            continue;
        };
        out.push_str(&text[pos..scheme_end]);
        let tail = &text[scheme_end..];
        let end = match text[..start].chars().next_back() {
            Some(q @ ('\'' | '"')) => tail.find([q, '\n']),
            _ => tail.find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`')),
        }
        .unwrap_or(tail.len());
        out.push_str(&redact_tail(&tail[..end]));
        pos = scheme_end + end;
    }
    out.push_str(&text[pos..]);
    out
}

/// Opens a connection; errors name the server (redacted) and say how to fix
/// it. A malformed URL or setting is a [`UsageError`]; a server that cannot
/// be reached or refuses is a plain error.
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
        Failure::Connect(msg) => anyhow!(scrub(&msg, &secrets, &safe)),
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
// Redaction
// ---------------------------------------------------------------------------

fn scheme_len(s: &str) -> Option<usize> {
    SCHEMES.iter().find(|p| s.starts_with(*p)).map(|p| p.len())
}

/// What follows the scheme (the whole string when there is none).
fn url_tail(url: &str) -> &str {
    &url[scheme_len(url).unwrap_or(0)..]
}

/// Where the password lies in what follows a URL's scheme: the byte offsets
/// of the `:` before it and the `@` after it. The user information ends at
/// the last `@` before the first `?`, else at the last `@` of all.
fn redaction_span(tail: &str) -> Option<(usize, usize)> {
    let query = tail.find('?').unwrap_or(tail.len());
    let at = tail[..query].rfind('@').or_else(|| tail.rfind('@'))?;
    let colon = tail[..at].find(':')?;
    Some((colon, at))
}

/// What follows a URL's scheme, without the password.
fn redact_tail(tail: &str) -> String {
    match redaction_span(tail) {
        Some((colon, at)) => format!(
            "{}@{}",
            &tail[..colon],
            strip_password_param(&tail[at + 1..])
        ),
        None => strip_password_param(tail),
    }
}

/// `rest` without any `password=` parameter in its query.
fn strip_password_param(rest: &str) -> String {
    let Some(q) = rest.find('?') else {
        return rest.to_string();
    };
    let kept: Vec<&str> = rest[q + 1..]
        .split('&')
        .filter(|param| {
            let key = param.split('=').next().unwrap_or("");
            decode(key, "").unwrap_or_else(|_| key.to_string()) != "password"
        })
        .collect();
    if kept.iter().all(|p| p.is_empty()) {
        rest[..q].to_string()
    } else {
        format!("{}?{}", &rest[..q], kept.join("&"))
    }
}

/// `msg` with every secret of at least three characters replaced by `****`:
/// the last guard, for a password that turned up where it was not expected.
/// A secret that `safe` texts hold (a password that is also the user's name)
/// is left alone.
fn scrub(msg: &str, secrets: &[String], safe: &[String]) -> String {
    let mut out = msg.to_string();
    for s in secrets {
        if s.len() >= 3 && !safe.iter().any(|t| t.contains(s.as_str())) {
            out = out.replace(s.as_str(), "****");
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The URL
// ---------------------------------------------------------------------------

/// What a URL says, percent-decoded; `None` where it says nothing.
#[derive(Debug, Default, PartialEq)]
struct UrlParts {
    user: Option<String>,
    password: Option<String>,
    /// One entry per host; an empty entry means the default host.
    hosts: Option<Vec<String>>,
    /// One entry, or one per host; an empty entry means the default port.
    ports: Option<Vec<String>>,
    dbname: Option<String>,
    sslmode: Option<String>,
    sslrootcert: Option<String>,
    connect_timeout: Option<String>,
    application_name: Option<String>,
    options: Option<String>,
}

/// Parses a `postgresql://` URL as libpq does:
/// `postgresql://[user[:password]@][host][:port][,...][/dbname][?param=value&...]`.
/// Errors never quote the password.
fn parse_url(url: &str) -> Result<UrlParts, String> {
    let n = scheme_len(url).ok_or("it does not start with postgresql:// or postgres://")?;
    let mut parts = UrlParts::default();
    let mut s = &url[n..];

    // The user information ends at the last '@' before the first '/'
    // (libpq takes the first, which fails on an unencoded '@' in a password).
    let slash = s.find('/').unwrap_or(s.len());
    if let Some(at) = s[..slash].rfind('@') {
        let info = &s[..at];
        let (user, password) = match info.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (info, None),
        };
        parts.user = non_empty(decode(user, "the user name")?);
        if let Some(p) = password {
            parts.password = non_empty(decode(p, "the password")?);
        }
        s = &s[at + 1..];
    }

    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    loop {
        let host;
        if let Some(r) = s.strip_prefix('[') {
            let close = r.find(']').ok_or("no \"]\" closes the IPv6 address")?;
            if close == 0 {
                return Err("an IPv6 host address is empty".into());
            }
            host = &r[..close];
            s = &r[close + 1..];
            if let Some(c) = s
                .chars()
                .next()
                .filter(|c| !matches!(c, ':' | '/' | '?' | ','))
            {
                return Err(format!(
                    "\"{c}\" follows an IPv6 address (expected \":\" or \"/\")"
                ));
            }
        } else {
            let end = s.find([':', '/', '?', ',']).unwrap_or(s.len());
            host = &s[..end];
            s = &s[end..];
        }
        hosts.push(decode(host, "a host name")?);
        let mut port = "";
        if let Some(r) = s.strip_prefix(':') {
            let end = r.find(['/', '?', ',']).unwrap_or(r.len());
            port = &r[..end];
            s = &r[end..];
        }
        ports.push(decode(port, "a port")?);
        match s.strip_prefix(',') {
            Some(r) => s = r,
            None => break,
        }
    }
    if hosts.iter().any(|h| !h.is_empty()) || hosts.len() > 1 {
        parts.hosts = Some(hosts);
    }
    if ports.iter().any(|p| !p.is_empty()) {
        parts.ports = Some(ports);
    }

    if let Some(r) = s.strip_prefix('/') {
        let end = r.find('?').unwrap_or(r.len());
        parts.dbname = non_empty(decode(&r[..end], "the database name")?);
        s = &r[end..];
    }
    if let Some(query) = s.strip_prefix('?') {
        for (i, param) in query.split('&').enumerate() {
            if param.is_empty() {
                continue;
            }
            let Some((key, value)) = param.split_once('=') else {
                return Err(format!("query parameter {} has no \"=\"", i + 1));
            };
            let key = decode(key, "a parameter name")?;
            let value = if key == "password" {
                decode(value, "the password")?
            } else {
                decode(value, &format!("the value of {key}"))?
            };
            let value = non_empty(value);
            match key.as_str() {
                "sslmode" => parts.sslmode = value,
                "sslrootcert" => parts.sslrootcert = value,
                "connect_timeout" => parts.connect_timeout = value,
                "application_name" => parts.application_name = value,
                "options" => parts.options = value,
                "host" => parts.hosts = value.map(|v| split_list(&v)),
                "port" => parts.ports = value.map(|v| split_list(&v)),
                "dbname" => parts.dbname = value,
                "user" => parts.user = value,
                "password" => parts.password = value,
                _ => {
                    return Err(format!(
                        "unknown parameter \"{key}\" (secperf understands {})",
                        KNOWN_PARAMS.join(", ")
                    ));
                }
            }
        }
    }
    Ok(parts)
}

/// Percent-decodes `s` (`what` names it in errors, which never quote it).
fn decode(s: &str, what: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
            match hex {
                Some(0) => return Err(format!("{what} holds %00, which is not allowed")),
                Some(b) => out.push(b),
                None => {
                    return Err(format!(
                        "{what} holds a \"%\" not followed by two hex digits"
                    ));
                }
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{what} is not UTF-8 once percent-decoded"))
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
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

/// `s` percent-encoded for a URL: everything but RFC 3986's unreserved
/// characters.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The password file
// ---------------------------------------------------------------------------

/// What reading the password file gave.
#[derive(Debug, PartialEq)]
enum Passfile {
    /// No file, or one that cannot be read: libpq says nothing.
    Missing,
    Content(String),
    /// Ignored, with libpq's warning.
    Ignored(String),
}

/// Reads the password file, refusing one that others may read (as libpq
/// does: mode & 0o077 must be 0) or that is not a plain file.
fn read_passfile(path: &Path) -> Passfile {
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
fn load_passfile(path: &Path) -> Option<String> {
    static WARNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    match read_passfile(path) {
        Passfile::Content(c) => Some(c),
        Passfile::Missing => None,
        Passfile::Ignored(warning) => {
            let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
            if !warned.iter().any(|p| p == path) {
                warned.push(path.to_path_buf());
                eprintln!("{warning}");
            }
            None
        }
    }
}

/// The host name a password file line must carry for `host`: libpq looks up
/// "localhost" for its default socket directory, and any other host as given.
fn pgpass_host(host: &str) -> &str {
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
fn pgpass_lookup(content: &str, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
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

// ---------------------------------------------------------------------------
// Connecting
// ---------------------------------------------------------------------------

/// Tries each target in turn, as libpq does, and returns the first
/// connection; else one error that says what each target answered.
fn connect_settings(s: &Settings, secrets: &mut Vec<String>) -> Result<postgres::Client, Failure> {
    let tls = if s.sslmode != Ssl::Disable && s.targets.iter().any(|t| !t.is_socket()) {
        let setup = tls_setup(s).map_err(|why| {
            Failure::Usage(format!("connecting to {}: {why}", s.describe(&s.targets)))
        });
        Some(setup?)
    } else {
        None
    };
    let passfile = match (&s.password, &s.passfile) {
        (None, Some(path)) => load_passfile(path).map(|c| (c, path)),
        _ => None,
    };

    let mut failures = Vec::new();
    for target in &s.targets {
        let (password, from) = match (&s.password, &passfile) {
            (Some((p, from)), _) => (Some(p.clone()), from.clone()),
            (None, Some((content, path))) => {
                match pgpass_lookup(
                    content,
                    pgpass_host(&target.host),
                    target.port,
                    &s.dbname,
                    &s.user,
                ) {
                    Some(p) => {
                        secrets.push(p.clone());
                        (Some(p), PasswordFrom::Passfile(path.to_path_buf()))
                    }
                    None => (None, PasswordFrom::Nowhere),
                }
            }
            (None, None) => (None, PasswordFrom::Nowhere),
        };

        let mut config = postgres::Config::new();
        config
            .user(&s.user)
            .dbname(&s.dbname)
            .application_name(&s.application_name);
        if let Some(options) = &s.options {
            config.options(options);
        }
        if let Some(timeout) = s.connect_timeout {
            config.connect_timeout(timeout);
        }
        if let Some(p) = &password {
            config.password(p);
        }
        if target.is_socket() {
            config.host_path(&target.host);
        } else {
            config.host(&target.host);
        }
        config.port(target.port);
        let result = match &tls {
            Some((connector, _)) if !target.is_socket() => {
                config.ssl_mode(s.sslmode.postgres_mode());
                config.connect(connector.clone())
            }
            _ => {
                config.ssl_mode(SslMode::Disable);
                config.connect(postgres::NoTls)
            }
        };
        match result {
            Ok(client) => return Ok(client),
            Err(e) => {
                let rootcert = tls.as_ref().and_then(|(_, root)| root.as_deref());
                failures.push((target, explain(s, target, &e, &from, rootcert)));
            }
        }
    }

    let msg = if let [(target, why)] = failures.as_slice() {
        format!(
            "connecting to {}: {why}",
            s.describe(std::slice::from_ref(*target))
        )
    } else {
        let each: Vec<String> = failures
            .iter()
            .map(|(t, why)| format!("{}: {why}", t.netloc()))
            .collect();
        format!(
            "connecting to {}: {}",
            s.describe(&s.targets),
            each.join(" | ")
        )
    };
    Err(Failure::Connect(msg))
}

/// What went wrong, from rust-postgres's error, and how to fix it.
fn explain(
    s: &Settings,
    target: &Target,
    e: &postgres::Error,
    from: &PasswordFrom,
    rootcert: Option<&Path>,
) -> String {
    let cause = match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{}: {} ({detail})", db.severity(), db.message()),
            None => format!("{}: {}", db.severity(), db.message()),
        },
        None => match io_and_tls(e).1 {
            Some(rustls::Error::InvalidCertificate(ce)) => {
                format!(
                    "{e}: the server's certificate is refused: {}",
                    cert_error_text(&ce)
                )
            }
            _ => error_chain(e),
        },
    };
    let hint = hint(s, target, e, &cause, from, rootcert);
    match hint {
        Some(h) => format!("{cause}; {h}"),
        None => cause,
    }
}

/// Why a certificate was refused, in words (rustls shows most reasons as
/// their Rust names).
fn cert_error_text(ce: &CertificateError) -> String {
    match ce {
        CertificateError::Other(other) => other.to_string(),
        CertificateError::UnknownIssuer => "no certificate of the root file issued it".into(),
        CertificateError::BadSignature => "its signature does not verify".into(),
        CertificateError::Expired => "it has expired".into(),
        CertificateError::NotValidYet => "it is not valid yet".into(),
        CertificateError::BadEncoding => "it is not a well-formed certificate".into(),
        other => other.to_string(),
    }
}

/// `e` and its sources, joined by ": ".
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(err) = cur {
        let text = err.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = err.source();
    }
    out
}

/// The innermost I/O error kind in `e`, and the rustls error if any.
fn io_and_tls(e: &postgres::Error) -> (Option<io::ErrorKind>, Option<rustls::Error>) {
    let (mut kind, mut tls) = (None, None);
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            kind = Some(io.kind());
            if let Some(r) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                tls = Some(r.clone());
            }
        }
        if let Some(r) = err.downcast_ref::<rustls::Error>() {
            tls = Some(r.clone());
        }
        cur = err.source();
    }
    (kind, tls)
}

fn hint(
    s: &Settings,
    target: &Target,
    e: &postgres::Error,
    cause: &str,
    from: &PasswordFrom,
    rootcert: Option<&Path>,
) -> Option<String> {
    use postgres::error::SqlState;
    let passfile = s
        .passfile
        .as_ref()
        .map_or_else(|| "~/.pgpass".to_string(), |p| p.display().to_string());
    let add_password = format!(
        "set PGPASSWORD or add a line to {passfile} \
         (hostname:port:database:username:password, mode 0600)"
    );
    if let Some(code) = e.code() {
        return if *code == SqlState::INVALID_PASSWORD {
            Some(match from {
                PasswordFrom::Nowhere => add_password,
                PasswordFrom::Url => {
                    format!("check the password in the URL, or leave it out and {add_password}")
                }
                PasswordFrom::Env => "check PGPASSWORD".to_string(),
                PasswordFrom::Passfile(p) => format!(
                    "the password came from {}: check the first line there that matches \
                     {}:{}:{}:{}",
                    p.display(),
                    pgpass_host(&target.host),
                    target.port,
                    s.dbname,
                    s.user
                ),
            })
        } else if *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION {
            if cause.contains("pg_hba.conf") && cause.contains("no encryption") {
                Some(
                    "the server's pg_hba.conf allows no unencrypted connection for this user \
                     and database from here: try sslmode=require"
                        .into(),
                )
            } else if cause.contains("pg_hba.conf") {
                Some(
                    "the server's pg_hba.conf has no line letting this user reach this \
                     database from here"
                        .into(),
                )
            } else {
                Some("check the user name (user@ in the URL, or PGUSER)".into())
            }
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            Some(format!(
                "create it (createdb {}) or name an existing database in the URL \
                 (postgresql://host/DBNAME)",
                s.dbname
            ))
        } else {
            None
        };
    }
    if cause.contains("password missing") {
        return Some(format!(
            "the server asks for a password and none was found: {add_password}"
        ));
    }
    if cause.contains("server does not support TLS") {
        return Some(format!(
            "the server does not offer SSL: use sslmode=prefer (or disable) instead of {}, or \
             turn ssl on in its postgresql.conf",
            sslmode_name(s.sslmode)
        ));
    }
    let (kind, tls) = io_and_tls(e);
    if let Some(rustls::Error::InvalidCertificate(ce)) = &tls {
        return match ce {
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                Some(format!(
                    "the server's certificate does not name host \"{}\": connect by a name it \
                     lists, or use sslmode=verify-ca to check only who signed it",
                    target.host
                ))
            }
            CertificateError::UnknownIssuer
            | CertificateError::BadSignature
            | CertificateError::Other(_) => rootcert.map(|root| {
                format!(
                    "the root file is {}: point sslrootcert at the CA certificate that signed \
                     the server's",
                    root.display()
                )
            }),
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. } => Some(
                "the server's certificate is outside its validity period (check the clocks)".into(),
            ),
            _ => None,
        };
    }
    match kind {
        Some(io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound) => {
            Some(if target.is_socket() {
                format!(
                    "is the server running and listening on socket {}/.s.PGSQL.{}?",
                    target.host.trim_end_matches('/'),
                    target.port
                )
            } else {
                "is the server running and listening on that address?".to_string()
            })
        }
        Some(io::ErrorKind::TimedOut) => Some(format!(
            "no answer within connect_timeout ({}s): is the host reachable, and the port right?",
            s.connect_timeout.map_or(0, |d| d.as_secs())
        )),
        _ if cause.contains("failed to lookup address") => {
            Some(format!("check the host name \"{}\"", target.host))
        }
        _ => None,
    }
}

fn sslmode_name(m: Ssl) -> &'static str {
    match m {
        Ssl::Disable => "disable",
        Ssl::Allow => "allow",
        Ssl::Prefer => "prefer",
        Ssl::Require => "require",
        Ssl::VerifyCa => "verify-ca",
        Ssl::VerifyFull => "verify-full",
    }
}

// ---------------------------------------------------------------------------
// TLS
// ---------------------------------------------------------------------------

/// The TLS connector for `s.sslmode`, and the root file it checks against.
fn tls_setup(s: &Settings) -> Result<(MakeRustlsConnect, Option<PathBuf>), String> {
    let provider = Arc::new(ring::default_provider());
    let algs = provider.signature_verification_algorithms;
    let root =
        match s.sslmode {
            Ssl::Disable | Ssl::Allow | Ssl::Prefer => None,
            // libpq checks the chain in require mode whenever a root file exists.
            Ssl::Require => s
                .sslrootcert
                .clone()
                .or_else(|| s.default_rootcert.clone())
                .filter(|p| p.exists()),
            Ssl::VerifyCa | Ssl::VerifyFull => {
                let path = s.sslrootcert.clone().or_else(|| s.default_rootcert.clone()).ok_or(
                "cannot find the home directory to locate the root certificate file; either \
                 provide the file, use the sslrootcert parameter, or change sslmode to disable \
                 server certificate verification",
            )?;
                if path.as_os_str() == "system" {
                    return Err(
                        "sslrootcert=system (the operating system's CA certificates) is \
                            not supported: name a file of CA certificates"
                            .into(),
                    );
                }
                if !path.exists() {
                    return Err(format!(
                        "root certificate file \"{}\" does not exist; either provide the file, use \
                     the sslrootcert parameter, or change sslmode to disable server \
                     certificate verification",
                        path.display()
                    ));
                }
                Some(path)
            }
        };
    let verifier: Arc<dyn ServerCertVerifier> = match &root {
        None => Arc::new(NoVerify { algs }),
        Some(path) => {
            let pinned = load_certs(path)?;
            let mut roots = RootCertStore::empty();
            let (added, _) = roots.add_parsable_certificates(pinned.iter().cloned());
            if added == 0 {
                return Err(format!(
                    "none of the certificates in {} can serve as a root certificate",
                    path.display()
                ));
            }
            Arc::new(LibpqVerifier {
                roots: Arc::new(roots),
                pinned,
                check_name: s.sslmode == Ssl::VerifyFull,
                algs,
            })
        }
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("setting TLS up: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok((MakeRustlsConnect::new(config), root))
}

/// The PEM certificates in `path`.
fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("reading root certificates from {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// Checks the server's signature of the handshake with its certificate's
/// key, as rustls does; where webpki cannot read the certificate (a version
/// 1 one, which OpenSSL reads), with the key as [`CertInfo`] reads it.
fn handshake_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
    tls13: bool,
) -> Result<HandshakeSignatureValid, rustls::Error> {
    let standard = if tls13 {
        verify_tls13_signature(message, cert, dss, algs)
    } else {
        verify_tls12_signature(message, cert, dss, algs)
    };
    let err = match standard {
        Err(
            e @ rustls::Error::InvalidCertificate(
                CertificateError::Other(_) | CertificateError::BadEncoding,
            ),
        ) => e,
        other => return other,
    };
    let Some(info) = CertInfo::parse(cert) else {
        return Err(err);
    };
    // (rustls has checked that a TLS 1.3 scheme suits TLS 1.3.)
    let candidates = algs
        .mapping
        .iter()
        .find(|(scheme, _)| *scheme == dss.scheme);
    let verified = candidates.is_some_and(|(_, candidates)| {
        candidates.iter().any(|alg| {
            alg.public_key_alg_id().as_ref() == info.key_alg.as_slice()
                && alg
                    .verify_signature(&info.key, message, dss.signature())
                    .is_ok()
        })
    });
    if verified {
        Ok(HandshakeSignatureValid::assertion())
    } else {
        Err(err)
    }
}

/// Encryption without authentication: sslmode allow, prefer, and require
/// without a root file. The handshake's signatures are still checked.
#[derive(Debug)]
struct NoVerify {
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signature(message, cert, dss, &self.algs, false)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signature(message, cert, dss, &self.algs, true)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// verify-ca (the chain) and verify-full (the chain and the host name), as
/// libpq checks them with OpenSSL.
#[derive(Debug)]
struct LibpqVerifier {
    roots: Arc<RootCertStore>,
    /// The root file's certificates as they are, for what webpki refuses.
    pinned: Vec<CertificateDer<'static>>,
    check_name: bool,
    algs: WebPkiSupportedAlgorithms,
}

impl LibpqVerifier {
    /// The chain up to a root, by webpki; else, as OpenSSL would accept it,
    /// a server certificate issued directly by a certificate of the root
    /// file, or that is itself one of them.
    ///
    /// webpki refuses what the PostgreSQL manual's recipes make and libpq
    /// accepts: a self-signed CA certificate as the server's, and a version 1
    /// server certificate (what `openssl x509 -req` makes without
    /// extensions). Certificates through intermediates are webpki's alone.
    fn verify_chain(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<(), rustls::Error> {
        let err = match ParsedCertificate::try_from(end_entity) {
            Ok(parsed) => match verify_server_cert_signed_by_trust_anchor(
                &parsed,
                &self.roots,
                intermediates,
                now,
                self.algs.all,
            ) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            },
            Err(e) => e,
        };
        match self.issued_by_root(end_entity, now) {
            Some(result) => result,
            None => Err(match err {
                rustls::Error::InvalidCertificate(CertificateError::Other(other)) => {
                    CertificateError::Other(rustls::OtherError(Arc::new(io::Error::other(
                        format!("no certificate of the root file issued it ({other})"),
                    ))))
                    .into()
                }
                e => e,
            }),
        }
    }

    /// Whether a certificate of the root file issued `end_entity` (or is
    /// it), and if so whether both are within their validity periods.
    fn issued_by_root(
        &self,
        end_entity: &CertificateDer<'_>,
        now: UnixTime,
    ) -> Option<Result<(), rustls::Error>> {
        let cert = CertInfo::parse(end_entity)?;
        let t = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        for root_der in &self.pinned {
            let Some(root) = CertInfo::parse(root_der) else {
                continue;
            };
            let itself = root_der.as_ref() == end_entity.as_ref();
            if root.subject != cert.issuer
                || !(itself || root.can_issue())
                || !cert.signed_by(&root, self.algs.all)
            {
                continue;
            }
            for c in [&cert, &root] {
                if t < c.not_before {
                    return Some(Err(CertificateError::NotValidYet.into()));
                }
                if t > c.not_after {
                    return Some(Err(CertificateError::Expired.into()));
                }
            }
            return Some(Ok(()));
        }
        None
    }
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verify_chain(end_entity, intermediates, now)?;
        if self.check_name {
            let info = CertInfo::parse(end_entity).ok_or(CertificateError::BadEncoding)?;
            if !info.matches_host(&server_name.to_str()) {
                return Err(CertificateError::NotValidForNameContext {
                    expected: server_name.to_owned(),
                    presented: info.names(),
                }
                .into());
            }
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signature(message, cert, dss, &self.algs, false)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        handshake_signature(message, cert, dss, &self.algs, true)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// The parts of an X.509 certificate that libpq's checks read.
#[derive(Debug, Default, PartialEq)]
struct CertInfo {
    /// 1 or 3.
    version: u8,
    /// The whole tbsCertificate element: what the issuer signed.
    tbs: Vec<u8>,
    /// The contents of signatureAlgorithm, and the signature.
    sig_alg: Vec<u8>,
    signature: Vec<u8>,
    /// The issuer's and the subject's Names, as encoded.
    issuer: Vec<u8>,
    subject: Vec<u8>,
    /// The contents of the public key's AlgorithmIdentifier, and the key.
    key_alg: Vec<u8>,
    key: Vec<u8>,
    /// The subject's first Common Name, as stored.
    cn: Option<Vec<u8>>,
    /// subjectAltName dNSName entries.
    dns: Vec<Vec<u8>>,
    /// subjectAltName iPAddress entries (4 or 16 bytes).
    ips: Vec<Vec<u8>>,
    /// Validity, in seconds since the epoch.
    not_before: i64,
    not_after: i64,
    /// basicConstraints cA.
    is_ca: bool,
    /// keyUsage keyCertSign, where there is a keyUsage.
    cert_sign: Option<bool>,
    /// Whether there are nameConstraints.
    name_constraints: bool,
}

impl CertInfo {
    /// Reads a DER certificate; `None` if it is not one.
    fn parse(der: &[u8]) -> Option<CertInfo> {
        let mut cert = Der(Der(der).expect(0x30)?);
        let (tag, tbs_value, tbs_whole) = cert.read_whole()?;
        if tag != 0x30 {
            return None;
        }
        let sig_alg = cert.expect(0x30)?;
        let signature = bit_string(cert.expect(0x03)?)?;
        let mut tbs = Der(tbs_value);
        let mut item = tbs.read()?;
        let mut version = 1;
        if item.0 == 0xa0 {
            version = Der(item.1).expect(0x02)?.last()?.checked_add(1)?;
            item = tbs.read()?;
        }
        if item.0 != 0x02 {
            return None; // serial number
        }
        tbs.expect(0x30)?; // signature algorithm, again
        let issuer = tbs.expect(0x30)?;
        let mut validity = Der(tbs.expect(0x30)?);
        let subject = tbs.expect(0x30)?;
        let mut spki = Der(tbs.expect(0x30)?);
        let key_alg = spki.expect(0x30)?;
        let key = bit_string(spki.expect(0x03)?)?;
        let mut info = CertInfo {
            version,
            tbs: tbs_whole.to_vec(),
            sig_alg: sig_alg.to_vec(),
            signature: signature.to_vec(),
            issuer: issuer.to_vec(),
            subject: subject.to_vec(),
            key_alg: key_alg.to_vec(),
            key: key.to_vec(),
            not_before: der_time(validity.read()?)?,
            not_after: der_time(validity.read()?)?,
            cn: common_name(subject),
            ..CertInfo::default()
        };
        while let Some((tag, value)) = tbs.read() {
            if tag == 0xa3 {
                info.read_extensions(Der(value).expect(0x30)?)?;
            }
        }
        Some(info)
    }

    fn read_extensions(&mut self, extensions: &[u8]) -> Option<()> {
        const SUBJECT_ALT_NAME: &[u8] = &[0x55, 0x1d, 0x11];
        const BASIC_CONSTRAINTS: &[u8] = &[0x55, 0x1d, 0x13];
        const KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x0f];
        const NAME_CONSTRAINTS: &[u8] = &[0x55, 0x1d, 0x1e];
        let mut exts = Der(extensions);
        while let Some((_, ext)) = exts.read() {
            let mut ext = Der(ext);
            let oid = ext.expect(0x06)?;
            let mut value = ext.read()?;
            if value.0 == 0x01 {
                value = ext.read()?; // critical
            }
            if value.0 != 0x04 {
                return None;
            }
            match oid {
                SUBJECT_ALT_NAME => {
                    let mut names = Der(Der(value.1).expect(0x30)?);
                    while let Some((tag, name)) = names.read() {
                        match tag {
                            0x82 => self.dns.push(name.to_vec()),
                            0x87 => self.ips.push(name.to_vec()),
                            _ => {}
                        }
                    }
                }
                BASIC_CONSTRAINTS => {
                    let mut bc = Der(Der(value.1).expect(0x30)?);
                    self.is_ca = bc.read().is_some_and(|(t, v)| t == 0x01 && v != [0]);
                }
                KEY_USAGE => {
                    // keyCertSign is bit 5 of the first byte.
                    let bits = Der(value.1).expect(0x03)?;
                    self.cert_sign = Some(bits.get(1).is_some_and(|b| b & 0x04 != 0));
                }
                NAME_CONSTRAINTS => self.name_constraints = true,
                _ => {}
            }
        }
        Some(())
    }

    /// Whether OpenSSL would take this trusted certificate as the issuer of
    /// another: a CA allowed to sign certificates, unconstrained here; or a
    /// self-signed version 1 certificate.
    fn can_issue(&self) -> bool {
        if self.version == 1 {
            return self.issuer == self.subject;
        }
        self.is_ca && self.cert_sign != Some(false) && !self.name_constraints
    }

    /// Whether `issuer`'s key made this certificate's signature.
    fn signed_by(&self, issuer: &CertInfo, algs: &[&dyn SignatureVerificationAlgorithm]) -> bool {
        algs.iter().any(|alg| {
            alg.public_key_alg_id().as_ref() == issuer.key_alg.as_slice()
                && alg.signature_alg_id().as_ref() == self.sig_alg.as_slice()
                && alg
                    .verify_signature(&issuer.key, &self.tbs, &self.signature)
                    .is_ok()
        })
    }

    /// libpq's host name check: the subjectAltName entries of the host's
    /// kind (a DNS name, or an IP address), else the Common Name.
    fn matches_host(&self, host: &str) -> bool {
        let ip: Option<IpAddr> = host.parse().ok();
        let mut check_cn = true;
        match ip {
            Some(ip) => {
                check_cn = self.ips.is_empty();
                let want: Vec<u8> = match ip {
                    IpAddr::V4(v4) => v4.octets().to_vec(),
                    IpAddr::V6(v6) => v6.octets().to_vec(),
                };
                if self.ips.contains(&want) {
                    return true;
                }
            }
            None => {
                if !self.dns.is_empty() {
                    check_cn = false;
                }
                if self.dns.iter().any(|name| name_matches(name, host)) {
                    return true;
                }
            }
        }
        check_cn && self.cn.as_deref().is_some_and(|cn| name_matches(cn, host))
    }

    /// The names the certificate is valid for, for messages.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .dns
            .iter()
            .map(|n| format!("DNS name \"{}\"", String::from_utf8_lossy(n)))
            .collect();
        for ip in &self.ips {
            let addr = match ip.len() {
                4 => <[u8; 4]>::try_from(ip.as_slice()).ok().map(IpAddr::from),
                16 => <[u8; 16]>::try_from(ip.as_slice()).ok().map(IpAddr::from),
                _ => None,
            };
            if let Some(addr) = addr {
                names.push(format!("IP address {addr}"));
            }
        }
        if names.is_empty()
            && let Some(cn) = &self.cn
        {
            names.push(format!("common name \"{}\"", String::from_utf8_lossy(cn)));
        }
        names
    }
}

/// libpq's name match: equal ignoring ASCII case, or a `*.` wildcard that
/// stands for exactly the first label. A name holding a NUL never matches.
fn name_matches(name: &[u8], host: &str) -> bool {
    let host = host.as_bytes();
    if name.contains(&0) {
        return false;
    }
    if name.eq_ignore_ascii_case(host) {
        return true;
    }
    let (lenpat, lenstr) = (name.len(), host.len());
    if lenpat < 3 || !name.starts_with(b"*.") || lenpat > lenstr {
        return false;
    }
    if !name[1..].eq_ignore_ascii_case(&host[lenstr - lenpat + 1..]) {
        return false;
    }
    host.iter()
        .position(|&b| b == b'.')
        .is_none_or(|dot| dot >= lenstr - lenpat)
}

/// The bits of a BIT STRING that has no unused bits.
fn bit_string(value: &[u8]) -> Option<&[u8]> {
    let (&unused, bits) = value.split_first()?;
    (unused == 0).then_some(bits)
}

/// The first Common Name of a Name (an RDNSequence), as stored.
fn common_name(name: &[u8]) -> Option<Vec<u8>> {
    const CN: &[u8] = &[0x55, 0x04, 0x03];
    let mut rdns = Der(name);
    while let Some((_, set)) = rdns.read() {
        let mut set = Der(set);
        while let Some((_, atv)) = set.read() {
            let mut atv = Der(atv);
            if atv.expect(0x06)? == CN {
                let (tag, value) = atv.read()?;
                // UTF8String, PrintableString, T61String, IA5String, VisibleString.
                return matches!(tag, 0x0c | 0x13 | 0x14 | 0x16 | 0x1a).then(|| value.to_vec());
            }
        }
    }
    None
}

/// An ASN.1 UTCTime or GeneralizedTime (`...Z`), in seconds since the epoch.
fn der_time((tag, value): (u8, &[u8])) -> Option<i64> {
    let s = std::str::from_utf8(value).ok()?;
    let digits = s.strip_suffix('Z')?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| digits.get(r)?.parse::<i64>().ok();
    let (year, rest) = match (tag, digits.len()) {
        (0x17, 12) => {
            let yy = num(0..2)?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, 2)
        }
        (0x18, 14) => (num(0..4)?, 4),
        _ => return None,
    };
    let (month, day) = (num(rest..rest + 2)?, num(rest + 2..rest + 4)?);
    let (h, m, sec) = (
        num(rest + 4..rest + 6)?,
        num(rest + 6..rest + 8)?,
        num(rest + 8..rest + 10)?,
    );
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A reader of DER: tag, then contents; single-byte tags and definite
/// lengths only, which is all a certificate uses.
struct Der<'a>(&'a [u8]);

impl<'a> Der<'a> {
    fn read(&mut self) -> Option<(u8, &'a [u8])> {
        let (&tag, rest) = self.0.split_first()?;
        if tag & 0x1f == 0x1f {
            return None;
        }
        let (&first, mut rest) = rest.split_first()?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return None;
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
            rest = &rest[n..];
            len
        };
        if rest.len() < len {
            return None;
        }
        let (value, rest) = rest.split_at(len);
        self.0 = rest;
        Some((tag, value))
    }

    /// The next element: its tag, its contents, and all of it.
    fn read_whole(&mut self) -> Option<(u8, &'a [u8], &'a [u8])> {
        let start = self.0;
        let (tag, value) = self.read()?;
        Some((tag, value, &start[..start.len() - self.0.len()]))
    }

    /// The next element's contents, if its tag is `tag`.
    fn expect(&mut self, tag: u8) -> Option<&'a [u8]> {
        self.read().filter(|(t, _)| *t == tag).map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests;
