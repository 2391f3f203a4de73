//! The preemption model: none, voluntary, full, lazy or realtime.
//!
//! It decides how often a running task can be switched out and so how
//! much a syscall-heavy loop is interrupted. Read, in this order, from
//! debugfs (/sys/kernel/debug/sched/preempt, the live choice of a
//! PREEMPT_DYNAMIC kernel, root only), from `uname -v` ("PREEMPT_RT",
//! "PREEMPT_DYNAMIC", "PREEMPT"), else from /boot/config-<release>.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Probed, files};

const DEBUGFS: &str = "/sys/kernel/debug/sched/preempt";

/// The preemption model and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreemptInfo {
    /// "none", "voluntary", "full", "lazy", "rt" or "dynamic" (selectable
    /// at boot; the live choice was not readable), with `preempt=` from
    /// the command line when given.
    pub model: String,
    /// Where: "debugfs", "uname", or the config file's path.
    pub source: String,
}

/// Reads the model under `root`, given `uname -v`, `uname -r` and the
/// boot command line when known.
pub fn probe(
    root: &Path,
    version: Option<&str>,
    release: Option<&str>,
    cmdline: Option<&str>,
) -> Probed<PreemptInfo> {
    let mut tried = Vec::new();
    match files::read_trimmed(root, DEBUGFS) {
        Ok(text) => match current_choice(&text) {
            Some(model) => return ok(model, "debugfs"),
            None => tried.push(format!("{DEBUGFS}: no (current) choice in '{text}'")),
        },
        Err(reason) => tried.push(reason),
    }
    match version.map(from_uname) {
        Some(Some(model)) => {
            let model = match cmdline.and_then(boot_choice) {
                Some(choice) if model == "dynamic" => format!("dynamic (preempt={choice})"),
                _ => model.to_string(),
            };
            return ok(&model, "uname");
        }
        Some(None) => tried.push("uname -v names no PREEMPT model".into()),
        None => tried.push("uname unavailable".into()),
    }
    if let Some(release) = release {
        let config = format!("/boot/config-{release}");
        match files::read(root, &config) {
            Ok(text) => match from_config(&text) {
                Some(model) => return ok(model, &config),
                None => tried.push(format!("{config} sets no CONFIG_PREEMPT_*")),
            },
            Err(reason) => tried.push(reason),
        }
    }
    Probed::unavailable(tried.join("; "))
}

fn ok(model: &str, source: &str) -> Probed<PreemptInfo> {
    Probed::Ok(PreemptInfo {
        model: model.to_string(),
        source: source.to_string(),
    })
}

/// The parenthesised word of "none voluntary (full) lazy".
fn current_choice(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
}

/// The model `uname -v` names ("#1 SMP PREEMPT_DYNAMIC Tue ...").
fn from_uname(version: &str) -> Option<&'static str> {
    let words: Vec<&str> = version.split_whitespace().collect();
    if words.contains(&"PREEMPT_RT") {
        Some("rt")
    } else if words.contains(&"PREEMPT_DYNAMIC") {
        Some("dynamic")
    } else if words.contains(&"PREEMPT_LAZY") {
        Some("lazy")
    } else if words.contains(&"PREEMPT") {
        Some("full")
    } else {
        None
    }
}

/// `preempt=` from the boot command line.
fn boot_choice(cmdline: &str) -> Option<&str> {
    cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("preempt="))
}

/// The model a kernel config selects.
fn from_config(text: &str) -> Option<&'static str> {
    let set = |name: &str| text.lines().any(|l| l.trim() == format!("{name}=y"));
    [
        ("CONFIG_PREEMPT_RT", "rt"),
        ("CONFIG_PREEMPT_DYNAMIC", "dynamic"),
        ("CONFIG_PREEMPT_LAZY", "lazy"),
        ("CONFIG_PREEMPT", "full"),
        ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
        ("CONFIG_PREEMPT_NONE", "none"),
    ]
    .into_iter()
    .find(|(name, _)| set(name))
    .map(|(_, model)| model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::write_tree;

    #[test]
    fn debugfs_wins_and_its_choice_is_the_parenthesised_one() {
        let root = write_tree(&[(DEBUGFS, "none voluntary (full) lazy\n")]);
        let p = probe(root.path(), Some("#1 SMP PREEMPT_RT"), None, None);
        assert_eq!(p, ok("full", "debugfs"));
    }

    #[test]
    fn uname_words_then_boot_choice() {
        let root = write_tree(&[]);
        let p = |v: &str, cmd: Option<&str>| probe(root.path(), Some(v), Some("6.1"), cmd);
        assert_eq!(p("#1 SMP PREEMPT_RT Mon", None), ok("rt", "uname"));
        assert_eq!(p("#1 SMP PREEMPT Mon", None), ok("full", "uname"));
        assert_eq!(p("#1 SMP PREEMPT_DYNAMIC @0", None), ok("dynamic", "uname"));
        assert_eq!(
            p(
                "#1 SMP PREEMPT_DYNAMIC @0",
                Some("root=/dev/vda preempt=none quiet")
            ),
            ok("dynamic (preempt=none)", "uname")
        );
    }

    #[test]
    fn boot_config_when_uname_says_nothing() {
        let root = write_tree(&[(
            "/boot/config-6.1.0",
            "# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_COUNT=y\n",
        )]);
        let p = probe(root.path(), Some("#1 SMP Debian"), Some("6.1.0"), None);
        assert_eq!(p, ok("voluntary", "/boot/config-6.1.0"));
    }

    #[test]
    fn nothing_readable_says_what_was_tried() {
        let root = write_tree(&[]);
        let p = probe(root.path(), Some("#1 SMP"), Some("6.1.0"), None);
        let reason = p.reason().unwrap();
        for part in [
            "sched/preempt",
            "uname -v names no PREEMPT",
            "/boot/config-6.1.0",
        ] {
            assert!(reason.contains(part), "{reason}");
        }
    }
}
