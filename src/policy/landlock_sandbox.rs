//! A Landlock sandbox written the way the kernel's sample sandboxer
//! (`samples/landlock/sandboxer.c`) takes it from its environment:
//! `LL_FS_RO` and `LL_FS_RW` are colon-separated lists of paths granted
//! "roughly read" and "roughly read and write" access beneath them, and
//! `LL_TCP_BIND` / `LL_TCP_CONNECT` colon-separated lists of TCP ports.
//! secperf takes the same lists as `-m landlock:ro=/usr:/etc,rw=/tmp`
//! (and `bind=8080:8443`, `connect=443`).
//!
//! As in the sandboxer: empty list entries are skipped; every path must
//! exist (the sandboxer cannot open it otherwise and stops); a network
//! right is handled only when its list is given, so `bind=none` denies
//! every bind and a missing `bind=` leaves binding alone; a rule on a file
//! (not a directory) grants only the rights that apply to files.
//!
//! This file only parses and checks; `mechanisms::landlock` enforces.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// Rights of `LL_FS_RO` (the sandboxer's `ACCESS_FS_ROUGHLY_READ`):
/// execute, read files, read directories.
pub const ROUGHLY_READ: u64 = (1 << 0) | (1 << 2) | (1 << 3);
/// Rights `LL_FS_RW` adds (`ACCESS_FS_ROUGHLY_WRITE`): write files, remove
/// and make entries of every kind (bits 1, 4-12), refer (13), truncate
/// (14), ioctl on devices (15). Masked by what the running ABI handles.
pub const ROUGHLY_WRITE: u64 = (1 << 1) | (0x1ff << 4) | (1 << 13) | (1 << 14) | (1 << 15);

/// The word that gives a port list with no port: the right is handled and
/// nothing is granted (the sandboxer's "variable set but empty").
pub const NO_PORTS: &str = "none";

/// One parsed sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sandbox {
    pub ro: Vec<PathBuf>,
    pub rw: Vec<PathBuf>,
    /// None: binding is not restricted; Some(ports): only these.
    pub bind: Option<Vec<u16>>,
    pub connect: Option<Vec<u16>>,
}

impl Sandbox {
    /// Whether it restricts anything on the network (needs ABI 4).
    pub fn handles_net(&self) -> bool {
        self.bind.is_some() || self.connect.is_some()
    }

    /// One line for the start of a run: what is granted.
    pub fn summary(&self) -> String {
        let paths = |ps: &[PathBuf]| {
            if ps.is_empty() {
                "nothing".to_string()
            } else {
                ps.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            }
        };
        let ports = |p: &Option<Vec<u16>>| match p {
            None => "not restricted".to_string(),
            Some(v) if v.is_empty() => "denied".to_string(),
            Some(v) => format!(
                "only {}",
                v.iter().map(u16::to_string).collect::<Vec<_>>().join(":")
            ),
        };
        format!(
            "landlock sandbox: read-only {}; read-write {}; TCP bind {}; TCP connect {}",
            paths(&self.ro),
            paths(&self.rw),
            ports(&self.bind),
            ports(&self.connect)
        )
    }
}

/// Parses the four lists (each possibly empty: not given). Errors are
/// usage errors naming the list and the entry.
pub fn parse(ro: &str, rw: &str, bind: &str, connect: &str) -> Result<Sandbox> {
    let s = Sandbox {
        ro: paths("ro", ro)?,
        rw: paths("rw", rw)?,
        bind: ports("bind", bind)?,
        connect: ports("connect", connect)?,
    };
    if s.ro.is_empty() && s.rw.is_empty() && !s.handles_net() {
        crate::usage_bail!(
            "landlock:sandbox needs at least one of ro=PATHS, rw=PATHS, bind=PORTS, \
             connect=PORTS (colon-separated, e.g. landlock:ro=/usr:/etc,rw=/tmp)"
        );
    }
    Ok(s)
}

fn paths(key: &str, list: &str) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in list.split(':').filter(|e| !e.is_empty()) {
        if entry.contains('\0') {
            crate::usage_bail!("landlock {key}=: a path contains a NUL byte");
        }
        let p = Path::new(entry);
        if let Err(e) = std::fs::metadata(p) {
            crate::usage_bail!(
                "landlock {key}=: cannot use {entry} ({e}); every path must exist, as in the \
                 kernel's sandboxer"
            );
        }
        out.push(p.to_path_buf());
    }
    Ok(out)
}

fn ports(key: &str, list: &str) -> Result<Option<Vec<u16>>> {
    if list.trim().is_empty() {
        return Ok(None);
    }
    if list.trim() == NO_PORTS {
        return Ok(Some(Vec::new()));
    }
    let mut out = Vec::new();
    for entry in list.split(':').filter(|e| !e.is_empty()) {
        match entry.trim().parse::<u16>() {
            Ok(p) => out.push(p),
            Err(_) => crate::usage_bail!(
                "landlock {key}=: '{entry}' is not a TCP port (0 to 65535); give ports \
                 colon-separated, or {key}={NO_PORTS} to deny every one"
            ),
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;
    use proptest::prelude::*;

    #[test]
    fn parses_the_sandboxer_lists() {
        let s = parse("/usr:/etc::", "/tmp", "8080:443", "").unwrap();
        assert_eq!(s.ro, vec![PathBuf::from("/usr"), PathBuf::from("/etc")]);
        assert_eq!(s.rw, vec![PathBuf::from("/tmp")]);
        assert_eq!(s.bind, Some(vec![8080, 443]));
        assert_eq!(s.connect, None);
        assert!(s.handles_net());
        assert!(
            s.summary().contains("read-only /usr:/etc"),
            "{}",
            s.summary()
        );
        let none = parse("", "", "none", "").unwrap();
        assert_eq!(none.bind, Some(vec![]));
        assert!(none.summary().contains("TCP bind denied"));
    }

    #[test]
    fn rights_match_the_sandboxer() {
        // EXECUTE | READ_FILE | READ_DIR.
        assert_eq!(ROUGHLY_READ, 0b1101);
        // Everything but those three, up to IOCTL_DEV (bit 15).
        assert_eq!(ROUGHLY_WRITE | ROUGHLY_READ, 0xffff);
        assert_eq!(ROUGHLY_WRITE & ROUGHLY_READ, 0);
    }

    #[test]
    fn mistakes_are_usage_errors_naming_the_list() {
        for (args, needle) in [
            (("", "", "", ""), "at least one"),
            (
                ("/nonexistent/secperf", "", "", ""),
                "ro=: cannot use /nonexistent/secperf",
            ),
            (("", "/tmp:/nope/x", "", ""), "rw=: cannot use /nope/x"),
            (("", "", "80:http", ""), "'http' is not a TCP port"),
            (("", "", "", "70000"), "connect=: '70000'"),
        ] {
            let e = parse(args.0, args.1, args.2, args.3).unwrap_err();
            assert_eq!(exit_code(&e), 2, "{e:#}");
            assert!(format!("{e:#}").contains(needle), "{e:#}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn never_panics(ro in ".{0,40}", rw in "[/a-z:]{0,30}", bind in "[0-9a-z:]{0,20}", connect in ".{0,20}") {
            let _ = parse(&ro, &rw, &bind, &connect);
        }
    }
}
