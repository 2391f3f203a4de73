//! The one config of every arm: the architecture's defconfig, virtme-ng's
//! fragment (what `vng --kconfig` adds so that the kernel boots under
//! virtme-ng), what secperf's mechanisms and `--profile` need
//! (`forced.config`: audit, securityfs, seccomp, Landlock, SELinux,
//! AppArmor, the BPF LSM and BTF, kallsyms, perf events, a `CONFIG_LSM`
//! with them all), then the user's fragment, last. `olddefconfig` settles
//! the rest; every option the forced part or the user asked for is
//! checked in the result, and those `olddefconfig` dropped (an unmet
//! dependency) are reported, never silently lost. An option no Kconfig of
//! the tree defines is a usage error.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::usage_bail;

/// What secperf forces on every arm, after virtme-ng's fragment.
pub const FORCED: &str = include_str!("forced.config");

/// One option asked for: its name (without `CONFIG_`) and value (`n` for
/// "is not set").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub name: String,
    pub value: String,
    /// The line of the fragment it came from (from 1).
    pub line: usize,
}

/// An option asked for that the final config does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    pub option: String,
    pub wanted: String,
    /// What the final config has (`n` when absent).
    pub got: String,
    /// "secperf" or "config=FILE".
    pub from: String,
}

impl Dropped {
    pub fn line(&self) -> String {
        format!(
            "CONFIG_{}={} (from {}) became {} after olddefconfig (a dependency is not met)",
            self.option, self.wanted, self.from, self.got
        )
    }
}

/// Parses a fragment: `CONFIG_X=VALUE`, `# CONFIG_X is not set`, comments
/// and blank lines. Anything else is a usage error naming the line.
pub fn parse(text: &str, what: &str) -> Result<Vec<Item>> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# CONFIG_") {
            if let Some(name) = rest.strip_suffix(" is not set") {
                out.push(Item {
                    name: name.to_string(),
                    value: "n".into(),
                    line: i + 1,
                });
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = line
            .strip_prefix("CONFIG_")
            .and_then(|r| r.split_once('='))
            .filter(|(n, _)| {
                !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
        else {
            usage_bail!(
                "{what}, line {}: '{line}' is not CONFIG_NAME=VALUE or '# CONFIG_NAME is not \
                 set'",
                i + 1
            );
        };
        out.push(Item {
            name: name.to_string(),
            value: value.trim().to_string(),
            line: i + 1,
        });
    }
    Ok(out)
}

/// The value of every option in a final `.config` (`n` for "is not set").
pub fn values(config: &str) -> std::collections::BTreeMap<String, String> {
    let mut items = std::collections::BTreeMap::new();
    if let Ok(parsed) = parse(config, ".config") {
        for it in parsed {
            items.insert(it.name, it.value);
        }
    }
    items
}

/// The options asked for that the final config does not have.
pub fn dropped(final_config: &str, asked: &[(Vec<Item>, String)]) -> Vec<Dropped> {
    let have = values(final_config);
    let mut out: Vec<Dropped> = Vec::new();
    // A later fragment's value of an option replaces an earlier one's.
    let mut last: std::collections::BTreeMap<&str, (&Item, &str)> = Default::default();
    for (items, from) in asked {
        for it in items {
            last.insert(&it.name, (it, from));
        }
    }
    for (name, (it, from)) in last {
        let got = have.get(name).cloned().unwrap_or_else(|| "n".into());
        if got != it.value {
            out.push(Dropped {
                option: name.to_string(),
                wanted: it.value.clone(),
                got,
                from: from.to_string(),
            });
        }
    }
    out
}

/// Every symbol a Kconfig file under `dir` defines (`config X`,
/// `menuconfig X`).
pub fn known_symbols(dir: &Path) -> Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for rel in super::source::walk(dir)? {
        let name = rel.file_name().unwrap_or_default().to_string_lossy();
        if !name.starts_with("Kconfig") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(dir.join(&rel)) else {
            continue;
        };
        out.extend(symbols_in(&text));
    }
    Ok(out)
}

/// The symbols one Kconfig text defines.
pub fn symbols_in(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().filter_map(|l| {
        let l = l.trim_start();
        let rest = l
            .strip_prefix("config ")
            .or_else(|| l.strip_prefix("menuconfig "))?;
        let name = rest.trim();
        (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .then(|| name.to_string())
    })
}

/// Options of the user's fragment that no Kconfig of the tree defines: a
/// usage error naming them.
pub fn check_known(items: &[Item], known: &BTreeSet<String>, what: &str) -> Result<()> {
    let unknown: Vec<String> = items
        .iter()
        .filter(|i| !known.contains(&i.name))
        .map(|i| format!("CONFIG_{} (line {})", i.name, i.line))
        .collect();
    if !unknown.is_empty() {
        usage_bail!(
            "{what} sets {}, which no Kconfig of this tree defines: check the spelling, or \
             drop the line (nothing was built)",
            unknown.join(", ")
        );
    }
    Ok(())
}

/// virtme-ng's fragment for x86-64, as `vng --kconfig` appends it.
pub fn virtme_fragment() -> Result<String> {
    let Some(tool) = crate::sys::which("virtme-configkernel") else {
        usage_bail!(
            "building a kernel for a guest needs virtme-ng's virtme-configkernel, which is not \
             on PATH: pip install virtme-ng"
        );
    };
    let out = Command::new(tool)
        .args(["--dry-run", "--arch", super::ARCH])
        .output()
        .context("running virtme-configkernel --dry-run")?;
    if !out.status.success() {
        anyhow::bail!(
            "virtme-configkernel --dry-run failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The text appended to the defconfig: virtme-ng's fragment, secperf's,
/// the user's.
pub fn appended(virtme: &str, user: Option<&str>) -> String {
    let mut s = String::new();
    s.push_str(virtme);
    s.push('\n');
    s.push_str(FORCED);
    if let Some(u) = user {
        s.push_str("\n##: the user's fragment (config=)\n");
        s.push_str(u);
        s.push('\n');
    }
    s
}

/// Runs the config steps in the scratch directory `scratch` (an `O=` of
/// the tree `src`): defconfig, the appended fragments, olddefconfig.
/// Returns the final `.config`.
pub fn generate(src: &Path, scratch: &Path, appended_text: &str, log: &Path) -> Result<String> {
    std::fs::create_dir_all(scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let make = |target: &str| -> Result<()> {
        let out = Command::new("make")
            .current_dir(src)
            .arg(format!("O={}", scratch.display()))
            .arg(format!("ARCH={}", super::ARCH))
            .arg(target)
            .output()
            .context("running make (apt-get install make)")?;
        let mut text = out.stdout.clone();
        text.extend_from_slice(&out.stderr);
        let _ = std::fs::write(log, &text);
        if !out.status.success() {
            let t = String::from_utf8_lossy(&text);
            let tail: Vec<&str> = t.lines().rev().take(15).collect();
            crate::usage_bail!(
                "make {target} failed in {} (log {}):\n{}",
                src.display(),
                log.display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        Ok(())
    };
    make(&format!("{}_defconfig", super::ARCH))?;
    let cfg = scratch.join(".config");
    let mut text = std::fs::read_to_string(&cfg)?;
    text.push('\n');
    text.push_str(appended_text);
    std::fs::write(&cfg, text)?;
    make("olddefconfig")?;
    Ok(std::fs::read_to_string(&cfg)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_are_parsed_and_bad_lines_named() {
        let items = parse(
            "# a comment\n\nCONFIG_AUDIT=y\n# CONFIG_DRM is not set\nCONFIG_LSM=\"a,b\"\n",
            "f",
        )
        .unwrap();
        let got: Vec<(&str, &str, usize)> = items
            .iter()
            .map(|i| (i.name.as_str(), i.value.as_str(), i.line))
            .collect();
        assert_eq!(
            got,
            [("AUDIT", "y", 3), ("DRM", "n", 4), ("LSM", "\"a,b\"", 5)]
        );
        let e = parse("CONFIG_AUDIT=y\nAUDIT=y\n", "config=f").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("config=f, line 2"), "{e}");
    }

    #[test]
    fn the_forced_fragment_parses_and_asks_for_the_mechanisms() {
        let forced = parse(FORCED, "forced.config").unwrap();
        for name in [
            "AUDIT",
            "AUDITSYSCALL",
            "SECURITY",
            "SECURITYFS",
            "SECCOMP_FILTER",
            "SECURITY_LANDLOCK",
            "SECURITY_SELINUX",
            "SECURITY_APPARMOR",
            "BPF_SYSCALL",
            "BPF_LSM",
            "DEBUG_INFO_BTF",
            "KALLSYMS",
            "PERF_EVENTS",
            "LSM",
        ] {
            assert!(forced.iter().any(|i| i.name == name), "{name}");
        }
    }

    #[test]
    fn options_olddefconfig_dropped_are_reported_and_later_fragments_win() {
        let forced = parse("CONFIG_AUDIT=y\nCONFIG_BPF_LSM=y\nCONFIG_X=y\n", "f").unwrap();
        let user = parse(
            "# CONFIG_X is not set\nCONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B=y\n",
            "u",
        )
        .unwrap();
        let final_config = "CONFIG_AUDIT=y\n# CONFIG_BPF_LSM is not set\n";
        let d = dropped(
            final_config,
            &[(forced, "secperf".into()), (user, "config=u".into())],
        );
        let names: Vec<(&str, &str, &str)> = d
            .iter()
            .map(|d| (d.option.as_str(), d.got.as_str(), d.from.as_str()))
            .collect();
        // X: the user's "not set" wins over secperf's y, and holds.
        assert_eq!(
            names,
            [
                ("BPF_LSM", "n", "secperf"),
                ("DEBUG_FORCE_FUNCTION_ALIGN_64B", "n", "config=u")
            ]
        );
        assert!(
            d[0].line()
                .contains("CONFIG_BPF_LSM=y (from secperf) became n")
        );
    }

    #[test]
    fn unknown_options_are_usage_errors() {
        let known: BTreeSet<String> = symbols_in(
            "config AUDIT\n\tbool \"x\"\nmenuconfig NET\n  config BPF_LSM\n# config NOT\n",
        )
        .collect();
        assert_eq!(known.len(), 3);
        let items = parse("CONFIG_AUDIT=y\nCONFIG_AUIDT=y\n", "config=f").unwrap();
        let e = check_known(&items, &known, "config=f").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("CONFIG_AUIDT (line 2)"), "{e}");
        assert!(check_known(&items[..1], &known, "config=f").is_ok());
    }
}
