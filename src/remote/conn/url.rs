//! `postgresql://` URLs: libpq's grammar, percent-decoding and -encoding,
//! and taking passwords out of URLs and messages.

use std::fmt::Write as _;

/// The URL schemes libpq accepts.
const SCHEMES: [&str; 2] = ["postgresql://", "postgres://"];

/// The query parameters [`connect`](super::connect) understands.
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

// ---------------------------------------------------------------------------
// Redaction
// ---------------------------------------------------------------------------

fn scheme_len(s: &str) -> Option<usize> {
    SCHEMES.iter().find(|p| s.starts_with(*p)).map(|p| p.len())
}

/// What follows the scheme (the whole string when there is none).
pub(super) fn url_tail(url: &str) -> &str {
    &url[scheme_len(url).unwrap_or(0)..]
}

/// Where the password lies in what follows a URL's scheme: the byte offsets
/// of the `:` before it and the `@` after it. The user information ends at
/// the last `@` before the first `?`, else at the last `@` of all.
pub(super) fn redaction_span(tail: &str) -> Option<(usize, usize)> {
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
pub(super) fn scrub(msg: &str, secrets: &[String], safe: &[String]) -> String {
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
pub(super) struct UrlParts {
    pub(super) user: Option<String>,
    pub(super) password: Option<String>,
    /// One entry per host; an empty entry means the default host.
    pub(super) hosts: Option<Vec<String>>,
    /// One entry, or one per host; an empty entry means the default port.
    pub(super) ports: Option<Vec<String>>,
    pub(super) dbname: Option<String>,
    pub(super) sslmode: Option<String>,
    pub(super) sslrootcert: Option<String>,
    pub(super) connect_timeout: Option<String>,
    pub(super) application_name: Option<String>,
    pub(super) options: Option<String>,
}

/// Parses a `postgresql://` URL as libpq does:
/// `postgresql://[user[:password]@][host][:port][,...][/dbname][?param=value&...]`.
/// Errors never quote the password.
pub(super) fn parse_url(url: &str) -> Result<UrlParts, String> {
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

pub(super) fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(str::to_string).collect()
}

/// `s` percent-encoded for a URL: everything but RFC 3986's unreserved
/// characters.
pub(super) fn percent_encode(s: &str) -> String {
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
