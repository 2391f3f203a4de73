//! The tools a kernel build and its boot need, checked before anything
//! starts: a build that stops after ten minutes for a missing `bc` wastes
//! the ten minutes.

use std::path::Path;

use anyhow::Result;

use crate::usage_bail;

/// One tool: how it is found, what it is for, and its Debian package.
struct Tool {
    what: &'static str,
    found: fn() -> bool,
    package: &'static str,
}

fn on_path(name: &str) -> bool {
    crate::sys::which(name).is_some()
}

const TOOLS: &[Tool] = &[
    Tool {
        what: "make",
        found: || on_path("make"),
        package: "make",
    },
    Tool {
        what: "gcc",
        found: || on_path("gcc"),
        package: "gcc",
    },
    Tool {
        what: "flex",
        found: || on_path("flex"),
        package: "flex",
    },
    Tool {
        what: "bison",
        found: || on_path("bison"),
        package: "bison",
    },
    Tool {
        what: "bc",
        found: || on_path("bc"),
        package: "bc",
    },
    Tool {
        what: "libelf's headers (objtool, BTF)",
        found: || {
            Path::new("/usr/include/libelf.h").exists() || Path::new("/usr/include/gelf.h").exists()
        },
        package: "libelf-dev",
    },
    Tool {
        what: "OpenSSL's headers (certs, sign-file)",
        found: || Path::new("/usr/include/openssl/opensslv.h").exists(),
        package: "libssl-dev",
    },
    Tool {
        what: "pahole (BTF, which the BPF LSM needs)",
        found: || on_path("pahole"),
        package: "dwarves",
    },
    Tool {
        what: "cpio",
        found: || on_path("cpio"),
        package: "cpio",
    },
    Tool {
        what: "git (revisions and patches)",
        found: || on_path("git"),
        package: "git",
    },
    Tool {
        what: "busybox (virtme-ng's initramfs)",
        found: || on_path("busybox") || Path::new("/bin/busybox").exists(),
        package: "busybox-static",
    },
];

/// The missing tools (what, package), in the table's order.
pub fn missing() -> Vec<(&'static str, &'static str)> {
    TOOLS
        .iter()
        .filter(|t| !(t.found)())
        .map(|t| (t.what, t.package))
        .collect()
}

/// A usage error naming every missing tool and the one `apt-get install`
/// line that brings them, or Ok.
pub fn check() -> Result<()> {
    check_list(&missing())
}

fn check_list(missing: &[(&str, &str)]) -> Result<()> {
    if missing.is_empty() {
        return Ok(());
    }
    let what: Vec<&str> = missing.iter().map(|m| m.0).collect();
    let mut packages: Vec<&str> = missing.iter().map(|m| m.1).collect();
    packages.dedup();
    usage_bail!(
        "building a kernel needs {}, which {} missing: apt-get install {} (nothing was built)",
        what.join(", "),
        if what.len() == 1 { "is" } else { "are" },
        packages.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tools_are_named_with_their_packages() {
        assert!(check_list(&[]).is_ok());
        let e = check_list(&[("bc", "bc"), ("pahole (BTF)", "dwarves")]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(
            e.to_string()
                .contains("needs bc, pahole (BTF), which are missing: apt-get install bc dwarves"),
            "{e}"
        );
    }
}
