//! Tests of URL parsing, the environment, the password file, redaction,
//! certificate checks and a failing connection. None needs a server.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Instant;

use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, RootCertStore};

use super::pgpass::{Passfile, pgpass_host, pgpass_lookup, read_passfile};
use super::tls::{LibpqVerifier, tls_setup};
use super::x509::{CertInfo, name_matches, unix_time};
use super::*;
use crate::error::exit_code;

// ---------------------------------------------------------------------------
// URL parsing
// ---------------------------------------------------------------------------

fn parse(url: &str) -> UrlParts {
    parse_url(url).unwrap_or_else(|e| panic!("{url}: {e}"))
}

#[test]
fn is_url_knows_both_schemes() {
    assert!(is_url("postgresql://h/db"));
    assert!(is_url("postgres://h/db"));
    assert!(is_url("postgresql://"));
    assert!(!is_url("results.db"));
    assert!(!is_url("/var/lib/secperf/postgresql://x"));
    assert!(!is_url("postgresql:/h"));
    assert!(!is_url("mysql://h/db"));
}

#[test]
fn parses_every_part() {
    let p = parse("postgresql://alice:s3cret@db.example.com:5433/bench?sslmode=require");
    assert_eq!(
        p,
        UrlParts {
            user: Some("alice".into()),
            password: Some("s3cret".into()),
            hosts: Some(vec!["db.example.com".into()]),
            ports: Some(vec!["5433".into()]),
            dbname: Some("bench".into()),
            sslmode: Some("require".into()),
            ..UrlParts::default()
        }
    );
}

#[test]
fn postgres_scheme_is_an_alias() {
    assert_eq!(parse("postgres://u@h:1/d"), parse("postgresql://u@h:1/d"));
}

#[test]
fn percent_decodes_each_part() {
    let p = parse("postgresql://al%40ice:p%3Aw%2F%40x@h%2Dx/my%20db?application_name=a%26b");
    assert_eq!(p.user.as_deref(), Some("al@ice"));
    assert_eq!(p.password.as_deref(), Some("p:w/@x"));
    assert_eq!(p.hosts, Some(vec!["h-x".into()]));
    assert_eq!(p.dbname.as_deref(), Some("my db"));
    assert_eq!(p.application_name.as_deref(), Some("a&b"));
    // A percent-encoded socket directory.
    let p = parse("postgresql://%2Fvar%2Frun%2Fpostgresql/db");
    assert_eq!(p.hosts, Some(vec!["/var/run/postgresql".into()]));
    // UTF-8 once decoded.
    assert_eq!(
        parse("postgresql:///caf%C3%A9").dbname.as_deref(),
        Some("café")
    );
}

#[test]
fn missing_parts_stay_missing() {
    assert_eq!(parse("postgresql://"), UrlParts::default());
    assert_eq!(parse("postgresql:///"), UrlParts::default());
    let p = parse("postgresql://h");
    assert_eq!(p.hosts, Some(vec!["h".into()]));
    assert_eq!(
        (p.user, p.password, p.ports, p.dbname),
        (None, None, None, None)
    );
    let p = parse("postgresql:///db");
    assert_eq!((p.hosts, p.dbname.as_deref()), (None, Some("db")));
    // A user with an empty password, and an empty user.
    let p = parse("postgresql://bob:@h");
    assert_eq!((p.user.as_deref(), p.password), (Some("bob"), None));
    let p = parse("postgresql://:pw@h");
    assert_eq!((p.user, p.password.as_deref()), (None, Some("pw")));
    let p = parse("postgresql://h:/db");
    assert_eq!(p.ports, None);
}

#[test]
fn unencoded_at_sign_in_password() {
    // libpq stops at the first '@'; the last one before the path is meant.
    let p = parse("postgresql://u:p@ss@h/db");
    assert_eq!(p.password.as_deref(), Some("p@ss"));
    assert_eq!(p.hosts, Some(vec!["h".into()]));
}

#[test]
fn several_hosts_ipv6_and_ports() {
    let p = parse("postgresql://a:1,[::1]:2,b/db");
    assert_eq!(p.hosts, Some(vec!["a".into(), "::1".into(), "b".into()]));
    assert_eq!(p.ports, Some(vec!["1".into(), "2".into(), String::new()]));
    let p = parse("postgresql://[fe80::1%25eth0]/db");
    assert_eq!(p.hosts, Some(vec!["fe80::1%eth0".into()]));
    assert!(parse_url("postgresql://[::1/db").unwrap_err().contains("]"));
    assert!(
        parse_url("postgresql://[]/db")
            .unwrap_err()
            .contains("empty")
    );
    assert!(
        parse_url("postgresql://[::1]x/db")
            .unwrap_err()
            .contains("\"x\"")
    );
}

#[test]
fn several_query_parameters() {
    let p = parse(
        "postgresql://h/db?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&connect_timeout=3\
         &application_name=bench&options=-c%20search_path%3Dx",
    );
    assert_eq!(p.sslmode.as_deref(), Some("verify-full"));
    assert_eq!(p.sslrootcert.as_deref(), Some("/etc/ca.pem"));
    assert_eq!(p.connect_timeout.as_deref(), Some("3"));
    assert_eq!(p.application_name.as_deref(), Some("bench"));
    assert_eq!(p.options.as_deref(), Some("-c search_path=x"));
    // Parameters for the parts, as libpq allows; the later one wins.
    let p = parse("postgresql:///?host=/tmp/pg,h2&port=5433&dbname=d&user=u&password=pw&dbname=d2");
    assert_eq!(p.hosts, Some(vec!["/tmp/pg".into(), "h2".into()]));
    assert_eq!(p.ports, Some(vec!["5433".into()]));
    assert_eq!(p.dbname.as_deref(), Some("d2"));
    assert_eq!(
        (p.user.as_deref(), p.password.as_deref()),
        (Some("u"), Some("pw"))
    );
    // An empty parameter is skipped; an empty value is no value.
    let p = parse("postgresql://h/db?&sslmode=&");
    assert_eq!(p.sslmode, None);
}

#[test]
fn unknown_parameter_is_named() {
    let e = parse_url("postgresql://h/db?sslmode=disable&target_session_attrs=any").unwrap_err();
    assert!(
        e.contains("unknown parameter \"target_session_attrs\""),
        "{e}"
    );
    assert!(e.contains("sslrootcert"), "{e}");
    let e = parse_url("postgresql://h/db?sslmode").unwrap_err();
    assert!(e.contains("has no \"=\""), "{e}");
}

#[test]
fn bad_percent_encoding_is_refused_without_quoting() {
    let e = parse_url("postgresql://u:pa%zzword@h/db").unwrap_err();
    assert!(e.contains("the password"), "{e}");
    assert!(!e.contains("pa%zz"), "{e}");
    assert!(
        parse_url("postgresql://u@h/d%00b")
            .unwrap_err()
            .contains("%00")
    );
    assert!(
        parse_url("postgresql://u@h/%ff")
            .unwrap_err()
            .contains("UTF-8")
    );
    assert!(parse_url("mysql://h").is_err());
}

// ---------------------------------------------------------------------------
// The environment and the defaults
// ---------------------------------------------------------------------------

fn resolve_with(url: &str, vars: &[(&str, &str)]) -> Result<Settings, String> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    resolve(
        parse(url),
        &|name| vars.get(name).cloned(),
        &|| Some("osuser".to_string()),
        Some(Path::new("/home/osuser")),
    )
}

fn target(host: &str, port: u16) -> Target {
    Target {
        host: host.into(),
        port,
    }
}

#[test]
fn defaults_are_libpqs() {
    let s = resolve_with("postgresql://", &[]).unwrap();
    assert_eq!(
        s,
        Settings {
            user: "osuser".into(),
            password: None,
            targets: vec![target("/var/run/postgresql", 5432)],
            dbname: "osuser".into(),
            sslmode: Ssl::Prefer,
            sslrootcert: None,
            default_rootcert: Some("/home/osuser/.postgresql/root.crt".into()),
            passfile: Some("/home/osuser/.pgpass".into()),
            connect_timeout: Some(Duration::from_secs(10)),
            application_name: "secperf".into(),
            options: None,
        }
    );
    assert_eq!(
        s.describe(&s.targets),
        "postgresql://osuser@%2Fvar%2Frun%2Fpostgresql:5432/osuser"
    );
}

#[test]
fn environment_fills_what_the_url_lacks() {
    let env = [
        ("PGHOST", "envhost"),
        ("PGPORT", "6000"),
        ("PGDATABASE", "envdb"),
        ("PGUSER", "envuser"),
        ("PGPASSWORD", "envpw"),
        ("PGSSLMODE", "verify-ca"),
        ("PGSSLROOTCERT", "/etc/envca.pem"),
        ("PGCONNECT_TIMEOUT", "7"),
        ("PGAPPNAME", "envapp"),
        ("PGOPTIONS", "-c x=1"),
        ("PGPASSFILE", "/etc/envpass"),
    ];
    let s = resolve_with("postgresql://", &env).unwrap();
    assert_eq!(s.targets, vec![target("envhost", 6000)]);
    assert_eq!((s.user.as_str(), s.dbname.as_str()), ("envuser", "envdb"));
    assert_eq!(s.password, Some(("envpw".into(), PasswordFrom::Env)));
    assert_eq!(s.sslmode, Ssl::VerifyCa);
    assert_eq!(s.sslrootcert, Some("/etc/envca.pem".into()));
    assert_eq!(s.connect_timeout, Some(Duration::from_secs(7)));
    assert_eq!(s.application_name, "envapp");
    assert_eq!(s.options.as_deref(), Some("-c x=1"));
    assert_eq!(s.passfile, Some("/etc/envpass".into()));

    // The URL wins over every variable.
    let s = resolve_with(
        "postgresql://u:pw@h:1/d?sslmode=disable&sslrootcert=/r&connect_timeout=0\
         &application_name=a&options=o",
        &env,
    )
    .unwrap();
    assert_eq!(s.targets, vec![target("h", 1)]);
    assert_eq!((s.user.as_str(), s.dbname.as_str()), ("u", "d"));
    assert_eq!(s.password, Some(("pw".into(), PasswordFrom::Url)));
    assert_eq!(s.sslmode, Ssl::Disable);
    assert_eq!(s.sslrootcert, Some("/r".into()));
    assert_eq!(s.connect_timeout, None);
    assert_eq!(
        (s.application_name.as_str(), s.options.as_deref()),
        ("a", Some("o"))
    );

    // An empty variable counts as unset; the database defaults to the user.
    let s = resolve_with("postgresql://u@/", &[("PGHOST", ""), ("PGDATABASE", "")]).unwrap();
    assert_eq!(s.targets, vec![target("/var/run/postgresql", 5432)]);
    assert_eq!(s.dbname, "u");
}

#[test]
fn hosts_and_ports_pair_up() {
    let s = resolve_with("postgresql://a,b:2,/db", &[]).unwrap();
    assert_eq!(
        s.targets,
        vec![
            target("a", 5432),
            target("b", 2),
            target("/var/run/postgresql", 5432)
        ]
    );
    let s = resolve_with("postgresql:///db", &[("PGHOST", "a,b"), ("PGPORT", "7")]).unwrap();
    assert_eq!(s.targets, vec![target("a", 7), target("b", 7)]);
    assert_eq!(s.describe(&s.targets), "postgresql://osuser@a:7,b:7/db");
    let s = resolve_with("postgresql://[::1]:5/db", &[]).unwrap();
    assert_eq!(s.describe(&s.targets), "postgresql://osuser@[::1]:5/db");
    let e = resolve_with("postgresql:///db?host=a,b,c&port=1,2", &[]).unwrap_err();
    assert!(e.contains("2 ports for 3 hosts"), "{e}");
    let e = resolve_with("postgresql://h:99999/db", &[]).unwrap_err();
    assert!(e.contains("1 to 65535"), "{e}");
    let e = resolve_with("postgresql://h:0/db", &[]).unwrap_err();
    assert!(e.contains("1 to 65535"), "{e}");
}

#[test]
fn bad_settings_are_explained() {
    let e = resolve_with("postgresql://h/db?sslmode=strict", &[]).unwrap_err();
    assert!(
        e.contains("invalid sslmode \"strict\"") && e.contains("verify-full"),
        "{e}"
    );
    let e = resolve_with("postgresql://h/db", &[("PGSSLMODE", "on")]).unwrap_err();
    assert!(e.contains("invalid sslmode \"on\""), "{e}");
    let e = resolve_with("postgresql://h/db?connect_timeout=soon", &[]).unwrap_err();
    assert!(e.contains("connect_timeout"), "{e}");
    let no_user = resolve(parse("postgresql://h/db"), &|_| None, &|| None, None).unwrap_err();
    assert!(no_user.contains("PGUSER"), "{no_user}");
}

#[test]
fn connect_timeout_as_libpq_reads_it() {
    assert_eq!(parse_timeout("0").unwrap(), None);
    assert_eq!(parse_timeout("-3").unwrap(), None);
    assert_eq!(parse_timeout("1").unwrap(), Some(Duration::from_secs(2)));
    assert_eq!(
        parse_timeout(" 30 ").unwrap(),
        Some(Duration::from_secs(30))
    );
    assert!(parse_timeout("1.5").is_err());
}

#[test]
fn sslmodes_map_onto_rust_postgres() {
    assert_eq!(Ssl::Disable.postgres_mode(), SslMode::Disable);
    assert_eq!(Ssl::Allow.postgres_mode(), SslMode::Prefer);
    assert_eq!(Ssl::Prefer.postgres_mode(), SslMode::Prefer);
    for m in [Ssl::Require, Ssl::VerifyCa, Ssl::VerifyFull] {
        assert_eq!(m.postgres_mode(), SslMode::Require);
    }
}

#[test]
fn os_user_is_known() {
    let name = os_user_name().expect("the effective user has a name");
    assert!(!name.is_empty());
}

// ---------------------------------------------------------------------------
// The password file
// ---------------------------------------------------------------------------

#[test]
fn pgpass_first_match_wins() {
    let content = "\
# comment:*:*:*:commented
db.example.com:5432:bench:alice:first
*:*:*:alice:second
*:*:*:*:fallback
";
    assert_eq!(
        pgpass_lookup(content, "db.example.com", 5432, "bench", "alice").as_deref(),
        Some("first")
    );
    assert_eq!(
        pgpass_lookup(content, "db.example.com", 5433, "bench", "alice").as_deref(),
        Some("second")
    );
    assert_eq!(
        pgpass_lookup(content, "other", 1, "x", "bob").as_deref(),
        Some("fallback")
    );
    assert_eq!(
        pgpass_lookup("# only:*:*:*:comments\n\n", "h", 1, "d", "u"),
        None
    );
}

#[test]
fn pgpass_wildcards_are_whole_fields() {
    let content = "*:5432:*:bob:pw1\nh*:*:*:*:pw2\n";
    assert_eq!(
        pgpass_lookup(content, "anyhost", 5432, "anydb", "bob").as_deref(),
        Some("pw1")
    );
    assert_eq!(
        pgpass_lookup(content, "anyhost", 5433, "anydb", "bob"),
        None
    );
    // "h*" is literal, not a pattern.
    assert_eq!(pgpass_lookup(content, "hx", 5433, "d", "u"), None);
    assert_eq!(
        pgpass_lookup(content, "h*", 5433, "d", "u").as_deref(),
        Some("pw2")
    );
}

#[test]
fn pgpass_escapes() {
    let content = "h:5432:my\\:db:u\\\\ser:pa\\:ss\\\\w:ignored\n";
    assert_eq!(
        pgpass_lookup(content, "h", 5432, "my:db", "u\\ser").as_deref(),
        Some("pa:ss\\w")
    );
    assert_eq!(pgpass_lookup(content, "h", 5432, "my", "u\\ser"), None);
    // An IPv6 host needs its colons escaped.
    let content = "\\:\\:1:5432:*:*:six\n";
    assert_eq!(
        pgpass_lookup(content, "::1", 5432, "d", "u").as_deref(),
        Some("six")
    );
    // Windows line ends, and a line with too few fields.
    assert_eq!(
        pgpass_lookup("h:1:d:u:pw\r\n", "h", 1, "d", "u").as_deref(),
        Some("pw")
    );
    assert_eq!(pgpass_lookup("h:1:d:u\n", "h", 1, "d", "u"), None);
    // An empty password is a password.
    assert_eq!(
        pgpass_lookup("h:1:d:u:\n", "h", 1, "d", "u").as_deref(),
        Some("")
    );
}

#[test]
fn pgpass_localhost_for_the_default_socket() {
    let content = "localhost:5432:*:u:local\n/tmp/pg:5432:*:u:tmp\n";
    let lookup = |host: &str| pgpass_lookup(content, pgpass_host(host), 5432, "d", "u");
    assert_eq!(lookup("/var/run/postgresql").as_deref(), Some("local"));
    assert_eq!(lookup("localhost").as_deref(), Some("local"));
    assert_eq!(lookup("").as_deref(), Some("local"));
    // As in libpq, another socket directory is looked up as itself.
    assert_eq!(lookup("/tmp/pg").as_deref(), Some("tmp"));
    assert_eq!(lookup("127.0.0.1"), None);
}

#[test]
fn passfile_readable_by_others_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pgpass");
    std::fs::write(&path, "*:*:*:*:pw\n").unwrap();

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let Passfile::Ignored(warning) = read_passfile(&path) else {
        panic!("a 0644 password file is used");
    };
    assert_eq!(
        warning,
        format!(
            "WARNING: password file \"{}\" has group or world access; permissions should be \
             u=rw (0600) or less",
            path.display()
        )
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(matches!(read_passfile(&path), Passfile::Ignored(_)));

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(
        read_passfile(&path),
        Passfile::Content("*:*:*:*:pw\n".into())
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
    assert_eq!(
        read_passfile(&path),
        Passfile::Content("*:*:*:*:pw\n".into())
    );

    assert_eq!(read_passfile(&dir.path().join("absent")), Passfile::Missing);
    let Passfile::Ignored(warning) = read_passfile(dir.path()) else {
        panic!("a directory is read as a password file");
    };
    assert!(warning.contains("not a plain file"), "{warning}");
}

// ---------------------------------------------------------------------------
// Redaction
// ---------------------------------------------------------------------------

#[test]
fn redact_removes_the_password_only() {
    let cases = [
        (
            "postgresql://alice:s3cret@h:5432/db",
            "postgresql://alice@h:5432/db",
        ),
        ("postgres://alice:s3cret@h/db", "postgres://alice@h/db"),
        ("postgresql://alice@h/db", "postgresql://alice@h/db"),
        ("postgresql://h:5432/db", "postgresql://h:5432/db"),
        ("postgresql://:pw@h/db", "postgresql://@h/db"),
        ("postgresql://u:p@ss@h/db", "postgresql://u@h/db"),
        ("postgresql://u:pa/ss@h/db", "postgresql://u@h/db"),
        ("postgresql://u:p?w@h/db", "postgresql://u@h/db"),
        (
            "postgresql://u:pw@h/db?sslmode=require",
            "postgresql://u@h/db?sslmode=require",
        ),
        (
            "postgresql://u@h/db?password=x&sslmode=require&pass%77ord=y",
            "postgresql://u@h/db?sslmode=require",
        ),
        ("postgresql://u@h/db?password=x", "postgresql://u@h/db"),
        ("postgresql://", "postgresql://"),
        ("results.db", "results.db"),
    ];
    for (url, want) in cases {
        assert_eq!(redact(url), want, "{url}");
    }
}

#[test]
fn redact_in_free_text() {
    let cases = [
        (
            "secperf push --to postgresql://bob:hunter2@db:5432/runs --label x",
            "secperf push --to postgresql://bob@db:5432/runs --label x",
        ),
        (
            "a postgres://u:p1@h/d and POSTGRESQL://v:p2@k/e?password=p3&x=1 end",
            "a postgres://u@h/d and POSTGRESQL://v@k/e?x=1 end",
        ),
        (
            "--db 'postgresql://u:my pass@h/db' --x",
            "--db 'postgresql://u@h/db' --x",
        ),
        (
            "{\"url\":\"postgresql://u:pw@h/db\"}",
            "{\"url\":\"postgresql://u@h/db\"}",
        ),
        (
            "postgresql://u:pw@h\npostgresql://v:pw2@k",
            "postgresql://u@h\npostgresql://v@k",
        ),
        (
            "postgres is fine; postgresql:// too",
            "postgres is fine; postgresql:// too",
        ),
        ("no url here", "no url here"),
    ];
    for (text, want) in cases {
        assert_eq!(redact_in(text), want, "{text}");
    }
}

#[test]
fn scrub_hides_secrets_of_three_characters_or_more() {
    let secrets = vec![
        "hunter2".to_string(),
        "ab".to_string(),
        "postgres".to_string(),
    ];
    let safe = vec!["postgresql://postgres@h/db".to_string()];
    assert_eq!(
        scrub("postgresql://postgres@h/db: x hunter2 ab", &secrets, &safe),
        "postgresql://postgres@h/db: x **** ab"
    );
}

// ---------------------------------------------------------------------------
// Certificates
// ---------------------------------------------------------------------------

/// Self-signed, CN=localhost, no subjectAltName, CA:TRUE: what
/// `openssl req -x509 -subj /CN=localhost` makes (the PostgreSQL manual's
/// recipe). Valid from 2026-11-26 to 2126-11-02.
const SELF_SIGNED: &str = "-----BEGIN CERTIFICATE-----
MIIBgDCCASWgAwIBAgIUOy6lzjz7ttJ9IGFlC0eU8TuS8IAwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNjE1NTIzOVoYDzIxMjYxMTAy
MTU1MjM5WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQDoKUx5vcZ8kl7OV04k9bSAOTjtzdSjESxKHHQIJlkABurHXWVMKlY
jn+VYGN+rk/Z/NATmVUrKHcmvQOuSgT5o1MwUTAdBgNVHQ4EFgQU4n37AyYEOPwN
HZtZnDDGerHOaBowHwYDVR0jBBgwFoAU4n37AyYEOPwNHZtZnDDGerHOaBowDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAvPVoRgEMuZ7PUs8/l5a+
P69aMDo9xd3wvRR/PQZbMWgCIQD1d7XvWa4LTjh/fwXO7iE/1WdDvOY7eN3kiakE
nX7A/Q==
-----END CERTIFICATE-----
";

/// A CA, CN=secperf test CA.
const CA: &str = "-----BEGIN CERTIFICATE-----
MIIBizCCATGgAwIBAgIUGvZ+EIwVP4KX/f6o2Eq4edZzd+IwCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPc2VjcGVyZiB0ZXN0IENBMCAXDTI2MTEyNjE1NTIzOVoYDzIx
MjYxMTAyMTU1MjM5WjAaMRgwFgYDVQQDDA9zZWNwZXJmIHRlc3QgQ0EwWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAARmSMiyWaaJkO43CpOjJZqKc51K3fLh/7hRY0E4
z29VuWkeojjLrzEYP7LSA8eyA5YxpnroatHOuKprrQ9xdFNSo1MwUTAdBgNVHQ4E
FgQU3yzFLM/m7qeU8D/q+F9PaWgUNGUwHwYDVR0jBBgwFoAU3yzFLM/m7qeU8D/q
+F9PaWgUNGUwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiA1zjZz
BaqBIG6vX8Wql6Sg4i+RUijBQRIS3aXvq+U5KAIhAMvt8oU5UJ9KuxEt/dkIOJxs
PSV0iQGeIoxBK/rq1wrX
-----END CERTIFICATE-----
";

/// Signed by [`CA`]: CN=db.example.com, subjectAltName DNS:*.example.com and
/// IP:10.1.2.3, CA:FALSE, serverAuth.
const LEAF: &str = "-----BEGIN CERTIFICATE-----
MIIBvDCCAWGgAwIBAgIUMnjpNjhhLmxD87izCa7PVS/NtzkwCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPc2VjcGVyZiB0ZXN0IENBMCAXDTI2MTEyNjE1NTIzOVoYDzIx
MjYxMTAyMTU1MjM5WjAZMRcwFQYDVQQDDA5kYi5leGFtcGxlLmNvbTBZMBMGByqG
SM49AgEGCCqGSM49AwEHA0IABPCOe3ZZmYiguplJ2sErb4faZ6ua7MUUd4yAFh2A
Dx2XQL2Kjv4XmxbU17OBL8wn/qpxTPb1e84hbNz5ywP37z2jgYMwgYAwCQYDVR0T
BAIwADAeBgNVHREEFzAVgg0qLmV4YW1wbGUuY29thwQKAQIDMBMGA1UdJQQMMAoG
CCsGAQUFBwMBMB0GA1UdDgQWBBSwHrGdQKBvIRsnh0WbR0YBQy+/fDAfBgNVHSME
GDAWgBTfLMUsz+bup5TwP+r4X09paBQ0ZTAKBggqhkjOPQQDAgNJADBGAiEAys49
mEGH/15NnMfDG5PFQ2RDIT/9DAxrApFJlxv0O8oCIQCKIiA8iagjwA5txR2C7P1e
rx4yJ/PlDmWJ65FIegzGSQ==
-----END CERTIFICATE-----
";

/// Signed by [`CA`], version 1 (no extensions), CN=localhost: what the
/// PostgreSQL manual's `openssl x509 -req ... -CA root.crt` recipe makes.
const V1_LEAF: &str = "-----BEGIN CERTIFICATE-----
MIIBKjCB0QIUMnjpNjhhLmxD87izCa7PVS/NtzowCgYIKoZIzj0EAwIwGjEYMBYG
A1UEAwwPc2VjcGVyZiB0ZXN0IENBMCAXDTI2MTEyNjE2MDAzMloYDzIxMjYxMTAy
MTYwMDMyWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASNqVKC3hrJQ7lDg1X6VnNWgEP3G+/akppldFF4z99xVZKMr1WZ/uVh
JMwp8lrUQbPXuaVtpRGtv4BstzyLtymbMAoGCCqGSM49BAMCA0gAMEUCIAcb29DJ
zQ2//ADrY37YiFr1QuvCP1t1Q6ZlrhVcGrAqAiEAzRnmQaliNVOoSY7yFEPGFBZ6
XRroygwuxF2lrRZu1Z4=
-----END CERTIFICATE-----
";

/// 2030-01-01, inside every test certificate's validity.
const IN_2030: u64 = 1_893_456_000;

fn der(pem: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
}

fn verifier(root_pem: &str, check_name: bool) -> LibpqVerifier {
    let pinned = vec![der(root_pem)];
    let mut roots = RootCertStore::empty();
    assert_eq!(
        roots.add_parsable_certificates(pinned.iter().cloned()),
        (1, 0)
    );
    LibpqVerifier {
        roots: Arc::new(roots),
        pinned,
        check_name,
        algs: ring::default_provider().signature_verification_algorithms,
    }
}

fn verify(v: &LibpqVerifier, ee: &str, host: &str, at: u64) -> Result<(), rustls::Error> {
    let name = ServerName::try_from(host.to_string()).unwrap();
    let now = UnixTime::since_unix_epoch(Duration::from_secs(at));
    v.verify_server_cert(&der(ee), &[], &name, &[], now)
        .map(|_| ())
}

#[test]
fn reads_certificates() {
    let info = CertInfo::parse(&der(SELF_SIGNED)).unwrap();
    assert_eq!(info.cn.as_deref(), Some(&b"localhost"[..]));
    assert!(info.dns.is_empty() && info.ips.is_empty());
    // 2026-11-26 15:52:39 (UTCTime) and 2126-11-02 15:52:39 (GeneralizedTime).
    assert_eq!(info.not_before, 1_795_708_359);
    assert_eq!(info.not_after, 4_949_308_359);

    let info = CertInfo::parse(&der(LEAF)).unwrap();
    assert_eq!(info.cn.as_deref(), Some(&b"db.example.com"[..]));
    assert_eq!(info.dns, vec![b"*.example.com".to_vec()]);
    assert_eq!(info.ips, vec![vec![10, 1, 2, 3]]);
    assert_eq!(
        info.names(),
        vec!["DNS name \"*.example.com\"", "IP address 10.1.2.3"]
    );

    assert_eq!(CertInfo::parse(b"not a certificate"), None);
    assert_eq!(CertInfo::parse(&[]), None);
    let mut truncated = der(LEAF).to_vec();
    truncated.truncate(100);
    assert_eq!(CertInfo::parse(&truncated), None);
}

/// A validity time encoded as DER (UTCTime is tag 0x17, GeneralizedTime
/// 0x18), read as [`CertInfo`] reads it.
fn der_time((tag, value): (u8, &[u8])) -> Option<i64> {
    let mut der = vec![tag, u8::try_from(value.len()).unwrap()];
    der.extend_from_slice(value);
    unix_time(x509_cert::der::Decode::from_der(&der).ok()?)
}

#[test]
fn der_times() {
    assert_eq!(der_time((0x17, b"700101000000Z")), Some(0));
    assert_eq!(der_time((0x17, b"491231235959Z")), Some(2_524_607_999));
    // 1950: x509-cert, like webpki, reads no time before 1970.
    assert_eq!(der_time((0x17, b"500101000000Z")), None);
    assert_eq!(der_time((0x18, b"20000229120000Z")), Some(951_825_600));
    assert_eq!(der_time((0x18, b"20000229120000")), None);
    assert_eq!(der_time((0x17, b"20000229120000Z")), None);
    assert_eq!(der_time((0x18, b"20001329120000Z")), None);
}

#[test]
fn host_names_match_as_libpq_matches_them() {
    let leaf = CertInfo::parse(&der(LEAF)).unwrap();
    assert!(leaf.matches_host("db.example.com"));
    assert!(leaf.matches_host("DB.Example.COM"));
    assert!(leaf.matches_host("other.example.com"));
    assert!(!leaf.matches_host("example.com"));
    assert!(!leaf.matches_host("a.b.example.com"));
    assert!(leaf.matches_host("10.1.2.3"));
    assert!(!leaf.matches_host("10.1.2.4"));
    // A DNS subjectAltName rules the Common Name out...
    let cn_too = CertInfo {
        cn: Some(b"cn.example.org".to_vec()),
        ..CertInfo::parse(&der(LEAF)).unwrap()
    };
    assert!(!cn_too.matches_host("cn.example.org"));
    // ...and where there is none of the host's kind, the Common Name counts.
    let self_signed = CertInfo::parse(&der(SELF_SIGNED)).unwrap();
    assert!(self_signed.matches_host("localhost"));
    assert!(!self_signed.matches_host("127.0.0.1"));
    let ip_cn = CertInfo {
        cn: Some(b"127.0.0.1".to_vec()),
        ..CertInfo::default()
    };
    assert!(ip_cn.matches_host("127.0.0.1"));
    let v6 = CertInfo {
        ips: vec![std::net::Ipv6Addr::LOCALHOST.octets().to_vec()],
        ..CertInfo::default()
    };
    assert!(v6.matches_host("::1"));
    assert!(!v6.matches_host("127.0.0.1"));

    assert!(name_matches(b"*.a.b", "x.a.b"));
    assert!(!name_matches(b"*.a.b", ".a.b"));
    assert!(!name_matches(b"*.a.b", "a.b"));
    assert!(!name_matches(b"*", "x"));
    assert!(!name_matches(b"x*.a.b", "xy.a.b"));
    assert!(!name_matches(b"local\0host", "local"));
}

#[test]
fn verify_ca_accepts_a_self_signed_root_for_any_name() {
    let v = verifier(SELF_SIGNED, false);
    verify(&v, SELF_SIGNED, "localhost", IN_2030).unwrap();
    verify(&v, SELF_SIGNED, "127.0.0.1", IN_2030).unwrap();
    // Still within its validity period only.
    let early = verify(&v, SELF_SIGNED, "localhost", 1_700_000_000).unwrap_err();
    assert_eq!(
        early,
        rustls::Error::InvalidCertificate(CertificateError::NotValidYet)
    );
    let late = verify(&v, SELF_SIGNED, "localhost", 5_000_000_000).unwrap_err();
    assert_eq!(
        late,
        rustls::Error::InvalidCertificate(CertificateError::Expired)
    );
    // A certificate the root did not sign.
    let e = verify(&v, LEAF, "db.example.com", IN_2030).unwrap_err();
    assert_eq!(
        e,
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)
    );
}

#[test]
fn verify_ca_checks_the_chain_not_the_name() {
    let v = verifier(CA, false);
    verify(&v, LEAF, "db.example.com", IN_2030).unwrap();
    verify(&v, LEAF, "elsewhere.org", IN_2030).unwrap();
    verify(&v, LEAF, "127.0.0.1", IN_2030).unwrap();
    assert!(verify(&v, SELF_SIGNED, "localhost", IN_2030).is_err());
}

#[test]
fn verify_full_checks_the_name_too() {
    let v = verifier(CA, true);
    verify(&v, LEAF, "db.example.com", IN_2030).unwrap();
    verify(&v, LEAF, "10.1.2.3", IN_2030).unwrap();
    let e = verify(&v, LEAF, "elsewhere.org", IN_2030).unwrap_err();
    assert!(matches!(
        e,
        rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. })
    ));
    assert!(e.to_string().contains("*.example.com"), "{e}");

    let v = verifier(SELF_SIGNED, true);
    verify(&v, SELF_SIGNED, "localhost", IN_2030).unwrap();
    let e = verify(&v, SELF_SIGNED, "127.0.0.1", IN_2030).unwrap_err();
    assert!(e.to_string().contains("common name \"localhost\""), "{e}");
}

#[test]
fn accepts_what_openssl_accepts_and_webpki_refuses() {
    // A version 1 server certificate, issued directly by the root.
    let v = verifier(CA, true);
    verify(&v, V1_LEAF, "localhost", IN_2030).unwrap();
    let e = verify(&v, V1_LEAF, "127.0.0.1", IN_2030).unwrap_err();
    assert!(e.to_string().contains("common name \"localhost\""), "{e}");
    let late = verify(&v, V1_LEAF, "localhost", 5_000_000_000).unwrap_err();
    assert_eq!(
        late,
        rustls::Error::InvalidCertificate(CertificateError::Expired)
    );
    // ...but not by another root.
    let e = verify(&verifier(SELF_SIGNED, false), V1_LEAF, "localhost", IN_2030).unwrap_err();
    assert!(
        e.to_string()
            .contains("no certificate of the root file issued it"),
        "{e}"
    );
    // A self-signed CA certificate is accepted only where it is in the root file.
    let e = verify(&verifier(CA, false), SELF_SIGNED, "localhost", IN_2030).unwrap_err();
    assert!(
        e.to_string()
            .contains("no certificate of the root file issued it"),
        "{e}"
    );
}

#[test]
fn only_certificate_authorities_issue() {
    let parsed = |pem: &str| CertInfo::parse(&der(pem)).unwrap();
    assert!(parsed(CA).can_issue());
    assert!(parsed(SELF_SIGNED).can_issue());
    assert!(!parsed(LEAF).can_issue());
    // Version 1: only when self-signed.
    assert_eq!(parsed(V1_LEAF).version, 1);
    assert!(!parsed(V1_LEAF).can_issue());
    assert_eq!(parsed(LEAF).version, 3);
    let algs = ring::default_provider()
        .signature_verification_algorithms
        .all;
    assert!(parsed(LEAF).signed_by(&parsed(CA), algs));
    assert!(parsed(V1_LEAF).signed_by(&parsed(CA), algs));
    assert!(parsed(SELF_SIGNED).signed_by(&parsed(SELF_SIGNED), algs));
    assert!(!parsed(LEAF).signed_by(&parsed(SELF_SIGNED), algs));
    let no_signing = CertInfo {
        cert_sign: Some(false),
        ..parsed(CA)
    };
    assert!(!no_signing.can_issue());
    let constrained = CertInfo {
        name_constraints: true,
        ..parsed(CA)
    };
    assert!(!constrained.can_issue());
}

fn settings(sslmode: Ssl, sslrootcert: Option<PathBuf>, home: &Path) -> Settings {
    Settings {
        sslmode,
        sslrootcert,
        default_rootcert: Some(home.join(".postgresql/root.crt")),
        ..resolve_with("postgresql://u@h/db", &[]).unwrap()
    }
}

#[test]
fn tls_setup_finds_the_root_file_as_libpq_does() {
    let home = tempfile::tempdir().unwrap();
    let ca = home.path().join("ca.pem");
    std::fs::write(&ca, CA).unwrap();

    // No root file: require does not check; verify-* say what is missing.
    assert_eq!(
        tls_setup(&settings(Ssl::Prefer, Some(ca.clone()), home.path()))
            .unwrap()
            .1,
        None
    );
    assert_eq!(
        tls_setup(&settings(Ssl::Require, None, home.path()))
            .unwrap()
            .1,
        None
    );
    let absent = home.path().join("absent.pem");
    assert_eq!(
        tls_setup(&settings(Ssl::Require, Some(absent.clone()), home.path()))
            .unwrap()
            .1,
        None
    );
    let e = tls_setup(&settings(Ssl::VerifyCa, None, home.path()))
        .err()
        .unwrap();
    assert!(e.contains(".postgresql/root.crt\" does not exist"), "{e}");
    assert!(e.contains("sslrootcert"), "{e}");
    let e = tls_setup(&settings(Ssl::VerifyFull, Some(absent), home.path()))
        .err()
        .unwrap();
    assert!(e.contains("absent.pem\" does not exist"), "{e}");

    // A root file: require checks the chain, as verify-ca does.
    assert_eq!(
        tls_setup(&settings(Ssl::Require, Some(ca.clone()), home.path()))
            .unwrap()
            .1,
        Some(ca.clone())
    );
    assert_eq!(
        tls_setup(&settings(Ssl::VerifyCa, Some(ca.clone()), home.path()))
            .unwrap()
            .1,
        Some(ca.clone())
    );
    std::fs::create_dir(home.path().join(".postgresql")).unwrap();
    let default = home.path().join(".postgresql/root.crt");
    std::fs::write(&default, CA).unwrap();
    assert_eq!(
        tls_setup(&settings(Ssl::Require, None, home.path()))
            .unwrap()
            .1,
        Some(default.clone())
    );
    assert_eq!(
        tls_setup(&settings(Ssl::VerifyFull, None, home.path()))
            .unwrap()
            .1,
        Some(default)
    );

    // Not a certificate.
    let junk = home.path().join("junk.pem");
    std::fs::write(&junk, "hello\n").unwrap();
    let e = tls_setup(&settings(Ssl::VerifyCa, Some(junk), home.path()))
        .err()
        .unwrap();
    assert!(e.contains("no PEM certificate"), "{e}");
    let e = tls_setup(&settings(Ssl::VerifyCa, Some("system".into()), home.path()))
        .err()
        .unwrap();
    assert!(e.contains("not supported"), "{e}");
}

// ---------------------------------------------------------------------------
// Connecting
// ---------------------------------------------------------------------------

/// A local port nobody listens on (bound, then released).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn refused_connection_names_the_server_not_the_password() {
    let port = closed_port();
    for sslmode in ["disable", "prefer", "require"] {
        let url = format!(
            "postgresql://bench:Sup3rS3cret@127.0.0.1:{port}/runs?sslmode={sslmode}&connect_timeout=5"
        );
        let started = Instant::now();
        let err = connect(&url).err().expect("nothing listens there");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let msg = format!("{err:#}");
        assert!(
            msg.contains(&format!(
                "connecting to postgresql://bench@127.0.0.1:{port}/runs: "
            )),
            "{msg}"
        );
        assert!(
            msg.contains("is the server running and listening on that address?"),
            "{msg}"
        );
        assert!(!msg.contains("Sup3rS3cret"), "{msg}");
        // Issue 53: an unreachable store exited 1, where every other bad
        // input exits 2; it stays a kind of its own (serve's 503).
        assert_eq!(exit_code(&err), 2);
        assert!(crate::error::is_unreachable(&err), "{msg}");
    }
}

#[test]
fn refused_socket_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "postgresql://u:pw-in-url@{}:5999/db",
        percent_encode(dir.path().to_str().unwrap())
    );
    let msg = format!("{:#}", connect(&url).err().unwrap());
    assert!(
        msg.contains(&format!("{}/.s.PGSQL.5999?", dir.path().display())),
        "{msg}"
    );
    assert!(!msg.contains("pw-in-url"), "{msg}");
}

#[test]
fn every_host_is_tried_and_reported() {
    let (a, b) = (closed_port(), closed_port());
    let url = format!("postgresql://u:pw-in-url@127.0.0.1:{a},127.0.0.1:{b}/db?sslmode=disable");
    let msg = format!("{:#}", connect(&url).err().unwrap());
    assert!(
        msg.starts_with(&format!(
            "connecting to postgresql://u@127.0.0.1:{a},127.0.0.1:{b}/db: 127.0.0.1:{a}: "
        )),
        "{msg}"
    );
    assert!(msg.contains(&format!(" | 127.0.0.1:{b}: ")), "{msg}");
    assert!(!msg.contains("pw-in-url"), "{msg}");
}

#[test]
fn usage_errors_never_show_the_password() {
    let cases = [
        "postgresql://u:Sup3rS3cret@h/db?bogus=1",
        "postgresql://u:Sup3rS3cret@h:notaport/db",
        "postgresql://u:Sup3r/S3cret@h/db",
        "postgresql://u:Sup3rS3cret@h/db?sslmode=maybe",
        "postgresql://u:Sup3rS3cret%zz@h/db",
        "postgresql://u@h/db?password=Sup3rS3cret&sslmode=verify-full&sslrootcert=/nonexistent",
    ];
    for url in cases {
        let err = connect(url)
            .err()
            .unwrap_or_else(|| panic!("{url} connected"));
        let msg = format!("{err:#}");
        assert!(!msg.contains("Sup3r"), "{url}: {msg}");
        assert!(!msg.contains("S3cret"), "{url}: {msg}");
        assert_eq!(exit_code(&err), 2, "{url}: {msg}");
    }
}
