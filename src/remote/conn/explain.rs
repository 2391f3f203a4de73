//! Why a connection failed, in words, from rust-postgres's and rustls's
//! errors, and how to fix it.

use std::io;
use std::path::Path;

use rustls::CertificateError;

use super::pgpass::pgpass_host;
use super::{PasswordFrom, Settings, Ssl, Target};

/// What went wrong, from rust-postgres's error, and how to fix it.
pub(super) fn explain(
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
