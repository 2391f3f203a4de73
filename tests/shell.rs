//! Shell completions and manual pages are generated from the command-line
//! definitions: every shell gets a script naming the commands, bash's
//! parses, and the manual pages render for every command.

mod common;

use common::{secperf, skip_missing_tool};

#[test]
fn completions_for_every_shell_name_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = secperf(&db)
            .args(["completions", shell])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        for word in ["overhead", "calibrate", "profile-hz", "sweep"] {
            assert!(text.contains(word), "{shell}: no {word}");
        }
        if shell == "bash" {
            let script = dir.path().join("secperf.bash");
            std::fs::write(&script, &text).unwrap();
            let ok = std::process::Command::new("bash")
                .arg("-n")
                .arg(&script)
                .status()
                .map(|s| s.success());
            match ok {
                Ok(ok) => assert!(ok, "bash -n rejects the completion script"),
                Err(e) => skip_missing_tool(
                    "completions_for_every_shell_name_the_commands",
                    "bash",
                    &format!("the bash -n check of the completion script: {e}"),
                ),
            }
        }
    }
    secperf(&db).args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn completions_offer_mechanism_specs_and_workload_names() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let script = |shell: &str| {
        let out = secperf(&db)
            .args(["completions", shell])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    // bash: the words offered after -m/--mechanism and -w/--workloads of
    // `overhead`, `run` and `calibrate`.
    let bash = script("bash");
    let offered = |command: &str, option: &str| -> Vec<String> {
        let section = format!("secperf__subcmd__{command})");
        let case = format!("{option})");
        let at = bash
            .find(&section)
            .and_then(|s| bash[s..].find(&case).map(|c| s + c))
            .unwrap_or_else(|| panic!("no {case} case for {command}:\n{bash}"));
        let line = bash[at..].lines().nth(1).unwrap_or_default();
        assert!(line.contains("compgen -W"), "{option} offers files: {line}");
        line.split('"')
            .nth(1)
            .unwrap_or_default()
            .split(' ')
            .map(str::to_string)
            .collect()
    };
    for option in ["--mechanism", "-m"] {
        let words = offered("overhead", option);
        for spec in [
            "seccomp",
            "seccomp:args",
            "landlock:fs",
            "audit:matching-rule",
            "none",
        ] {
            assert!(
                words.iter().any(|w| w == spec),
                "{option}: no {spec} in {words:?}"
            );
        }
    }
    for (command, option) in [
        ("overhead", "--workloads"),
        ("overhead", "-w"),
        ("run", "-w"),
        ("calibrate", "-w"),
    ] {
        let words = offered(command, option);
        for name in ["getppid", "open", "stream"] {
            assert!(
                words.iter().any(|w| w == name),
                "{command} {option}: no {name} in {words:?}"
            );
        }
        // `all` where a list is taken; never `command` (that is `-- CMD`).
        assert_eq!(
            words.iter().any(|w| w == "all"),
            command != "calibrate",
            "{command} {option}: {words:?}"
        );
        assert!(!words.iter().any(|w| w == "command"), "{words:?}");
    }
    assert!(bash.contains("seccomp:args") && bash.contains("getppid"));
    // zsh and fish list them too (zsh escapes the colon), with descriptions.
    let zsh = script("zsh");
    assert!(zsh.contains(r"seccomp\:args\:"), "zsh");
    assert!(zsh.contains(r"getppid\:"), "zsh");
    let fish = script("fish");
    assert!(fish.contains(r"seccomp:args\t"), "fish");
    assert!(fish.contains(r"getppid\t"), "fish");

    // The listed values do not restrict what parses: a full spec and a
    // workload list get past parsing (refused later only for --pairs 5,
    // before anything is measured).
    let out = secperf(&db)
        .args([
            "overhead",
            "-m",
            "seccomp:args,filters=4",
            "-w",
            "getppid,open",
        ])
        .args(["--pairs", "5"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8_lossy(&out);
    assert!(stderr.contains("--pairs 5: at least 10 pairs"), "{stderr}");
}

#[test]
fn manual_pages_render_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = secperf(&db)
        .arg("man")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let page = String::from_utf8(out).unwrap();
    assert!(page.contains(".TH secperf 1"), "{page}");
    assert!(page.contains("overhead"), "{page}");

    let pages = dir.path().join("man1");
    std::fs::create_dir(&pages).unwrap();
    secperf(&db)
        .args(["man", "--dir"])
        .arg(&pages)
        .assert()
        .success();
    for name in [
        "secperf",
        "secperf-overhead",
        "secperf-results-show",
        "secperf-suite",
    ] {
        let p = pages.join(format!("{name}.1"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(text.contains(".TH"), "{name}");
    }
    let overhead = std::fs::read_to_string(pages.join("secperf-overhead.1")).unwrap();
    assert!(overhead.contains("mechanism"), "{overhead}");
    // Each page is titled and named as its file, as git's are, and its
    // synopsis shows the command as typed.
    for (page, title, synopsis) in [
        (
            "secperf-overhead",
            r"secperf\-overhead",
            r"\fBsecperf overhead\fR",
        ),
        (
            "secperf-results-show",
            r"secperf\-results\-show",
            r"\fBsecperf results show\fR",
        ),
    ] {
        let text = std::fs::read_to_string(pages.join(format!("{page}.1"))).unwrap();
        assert!(text.contains(&format!(".TH {page} 1 ")), "{text}");
        assert!(text.contains(&format!(".SH NAME\n{title} \\- ")), "{text}");
        assert!(
            text.contains(&format!(".SH SYNOPSIS\n{synopsis} ")),
            "{text}"
        );
        assert!(!text.contains("\"overhead "), "{text}");
    }
    let results = std::fs::read_to_string(pages.join("secperf-results.1")).unwrap();
    assert!(results.contains(r"secperf\-results\-show(1)"), "{results}");
    // Every page is secperf.1 or secperf-COMMAND.1; none for `help`.
    let mut names: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(
        names
            .iter()
            .all(|n| n == "secperf.1" || n.starts_with("secperf-")),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");

    secperf(&db)
        .args(["man", "--dir"])
        .arg(dir.path().join("missing"))
        .assert()
        .code(2);
}
