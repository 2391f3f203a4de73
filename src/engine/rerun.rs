//! `secperf rerun RUN`: what it takes to repeat a stored run from what was
//! stored: its command line (with the seed it used, so the AB/BA order is
//! the same) and its policy files as they were read. A policy file that
//! has since changed or gone away is measured from the stored copy (the
//! labels still name its path), and the user is told.

use anyhow::Result;

use crate::report::doc::RunDoc;
use crate::usage_bail;

/// Commands a run can come from and be repeated with.
const MEASURING: [&str; 4] = ["overhead", "run", "suite", "calibrate"];

/// The repeat of a stored run: the arguments to parse and what the user
/// should know about them.
#[derive(Debug)]
pub struct Rerun {
    /// argv, starting with "secperf".
    pub argv: Vec<String>,
    pub notes: Vec<String>,
}

/// The words of a stored command line: shell-quoted (as secperf stores
/// it), or, for runs stored before commands were quoted, split at spaces.
fn words(command: &str) -> Vec<String> {
    shell_words::split(command)
        .unwrap_or_else(|_| command.split_whitespace().map(String::from).collect())
}

/// Prepares the repeat of `doc`: its command (`--db` left out, so the
/// repeat is stored where the user points now; `--seed` added when the
/// run's seed came from the clock) and its policy files substituted where
/// they changed.
pub fn prepare(doc: &RunDoc) -> Result<Rerun> {
    let mut argv = words(&doc.meta.command);
    let Some(pos) = argv.iter().position(|w| MEASURING.contains(&w.as_str())) else {
        usage_bail!(
            "run {} was made by `{}`, which is not a measuring command ({}); nothing to repeat",
            doc.run_id,
            doc.meta.command,
            MEASURING.join(", ")
        );
    };
    // Global options before the command: drop --db (and its value).
    let mut head: Vec<String> = vec!["secperf".to_string()];
    let mut i = 1;
    while i < pos {
        match argv[i].as_str() {
            "--db" => i += 2,
            w if w.starts_with("--db=") => i += 1,
            w => {
                head.push(w.to_string());
                i += 1;
            }
        }
    }
    let mut rest = argv.split_off(pos);
    let mut notes = Vec::new();
    let before_dashes = rest.iter().position(|w| w == "--").unwrap_or(rest.len());
    let has_seed = rest[..before_dashes]
        .iter()
        .any(|w| w == "--seed" || w.starts_with("--seed="));
    if let (false, Some(seed)) = (has_seed, doc.settings().seed)
        && rest[0] != "run"
    {
        rest.insert(before_dashes, seed.to_string());
        rest.insert(before_dashes, "--seed".to_string());
        notes.push(format!(
            "with the seed run {} used: --seed {seed}",
            doc.run_id
        ));
    }
    for f in &doc.policy_files {
        let now = std::fs::read(&f.path).ok();
        let same = now
            .as_ref()
            .is_some_and(|bytes| crate::policy::source::sha256_hex(bytes) == f.sha256);
        if !same {
            crate::policy::source::substitute(
                std::path::Path::new(&f.path),
                f.content.clone().into_bytes(),
            );
            notes.push(format!(
                "{} {} since run {}: measuring the copy stored with it (sha256 {})",
                f.path,
                if now.is_some() { "changed" } else { "is gone" },
                doc.run_id,
                f.sha256
            ));
        }
    }
    head.extend(rest);
    Ok(Rerun { argv: head, notes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::testing::overhead_doc;

    #[test]
    fn the_command_comes_back_with_its_seed_and_without_its_db() {
        let mut doc = overhead_doc();
        doc.meta.command =
            "secperf --db /old/x.db overhead -m 'seccomp:args,filters=4' -w getppid -- sh -c 'a b'"
                .into();
        doc.policy_files.clear();
        let r = prepare(&doc).unwrap();
        assert_eq!(
            r.argv,
            [
                "secperf",
                "overhead",
                "-m",
                "seccomp:args,filters=4",
                "-w",
                "getppid",
                "--seed",
                "7",
                "--",
                "sh",
                "-c",
                "a b"
            ]
        );
        doc.meta.command = "secperf overhead --seed=3 -w getppid".into();
        assert_eq!(
            prepare(&doc).unwrap().argv,
            ["secperf", "overhead", "--seed=3", "-w", "getppid"]
        );
        doc.meta.command = "secperf results list".into();
        assert!(prepare(&doc).is_err());
    }

    #[test]
    fn a_changed_policy_file_is_measured_from_the_stored_copy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.rules");
        std::fs::write(&path, "-a always,exit -S getppid\n").unwrap();
        let mut doc = overhead_doc();
        doc.policy_files[0] =
            crate::policy::source::policy_file("audit:rules=x", "rules", path.to_str().unwrap())
                .unwrap();
        assert!(
            prepare(&doc)
                .unwrap()
                .notes
                .iter()
                .all(|n| !n.contains("changed"))
        );
        std::fs::write(&path, "-D\n").unwrap();
        let r = prepare(&doc).unwrap();
        assert!(
            r.notes.iter().any(|n| n.contains("changed since run 12")),
            "{:?}",
            r.notes
        );
        assert_eq!(
            crate::policy::source::read(&path).unwrap(),
            b"-a always,exit -S getppid\n"
        );
    }
}
