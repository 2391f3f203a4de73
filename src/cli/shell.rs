//! `secperf completions SHELL` and `secperf man`: shell completions and
//! manual pages generated from the same clap definitions that parse the
//! command line, so they never disagree with it (clap_complete,
//! clap_mangen).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for. Install, e.g. for bash: `secperf
    /// completions bash > /etc/bash_completion.d/secperf`; for zsh, into a
    /// directory of `$fpath` as `_secperf`; for fish, as
    /// `~/.config/fish/completions/secperf.fish`.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write every page into this directory: secperf.1 and one page per
    /// command (secperf-overhead.1, ...), instead of printing secperf.1 on
    /// stdout.
    /// Install, e.g.: `secperf man --dir /usr/local/share/man/man1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Prints the completion script for one shell.
pub fn completions(args: CompletionsArgs) -> Result<()> {
    let mut cmd = super::help::shortened(Cli::command());
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "secperf", &mut out);
    super::emit::emit(&String::from_utf8(out).context("completion script is not UTF-8")?);
    Ok(())
}

/// Prints secperf(1), or writes every page into `--dir`.
pub fn man(args: ManArgs, json: bool) -> Result<()> {
    let cmd = super::help::shortened(Cli::command());
    match args.dir {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .context("rendering the manual page")?;
            super::emit::emit(&String::from_utf8(out).context("manual page is not UTF-8")?);
        }
        Some(dir) => {
            let written = write_pages(cmd, &dir)?;
            if json {
                super::emit::print_json(&serde_json::json!({ "dir": dir, "pages": written }))?;
            } else {
                for p in &written {
                    println!("{}", p.display());
                }
            }
        }
    }
    Ok(())
}

/// secperf.1 and secperf-COMMAND.1 for every command (nested ones too,
/// secperf-results-show.1), each titled and named as its file, as git's
/// pages are (`.TH secperf-overhead 1`, NAME `secperf-overhead`, SYNOPSIS
/// `secperf overhead ...`).
fn write_pages(mut cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        crate::usage_bail!(
            "--dir {}: not a directory (create it first, e.g. mkdir -p {})",
            dir.display(),
            dir.display()
        );
    }
    // Building names every command after its parents: display name
    // "secperf-overhead", binary name "secperf overhead".
    cmd.build();
    let source = format!("secperf {}", env!("CARGO_PKG_VERSION"));
    let mut written = Vec::new();
    let mut stack = vec![cmd];
    while let Some(cmd) = stack.pop() {
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" && !sub.is_hide_set() {
                stack.push(sub.clone());
            }
        }
        let man = clap_mangen::Man::new(cmd).source(source.as_str());
        let name = man.get_filename();
        let path = dir.join(&name);
        let mut out = Vec::new();
        man.render(&mut out)
            .with_context(|| format!("rendering {name}"))?;
        std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    written.sort();
    Ok(written)
}
