//! Connecting with resolved [`Settings`]: each server in turn, with TLS as
//! sslmode asks and the password the settings or the password file give.

use postgres::config::SslMode;

use super::explain::explain;
use super::pgpass::{load_passfile, pgpass_host, pgpass_lookup};
use super::tls::tls_setup;
use super::{Failure, PasswordFrom, Settings, Ssl};

/// Tries each target in turn, as libpq does, and returns the first
/// connection; else one error that says what each target answered.
pub(super) fn connect_settings(
    s: &Settings,
    secrets: &mut Vec<String>,
) -> Result<postgres::Client, Failure> {
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
