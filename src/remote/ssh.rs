//! Running commands on other hosts through the system's OpenSSH client.
//!
//! Nothing home-made: `ssh` is run as the user runs it, so their
//! `~/.ssh/config`, agent, keys and known_hosts apply, plus `-F FILE` and
//! `-o OPTION` when given. Every connection is made with `BatchMode=yes`
//! (a campaign runs unattended and in parallel: a host that would prompt
//! for a password or an unknown host key fails at once, saying so) and
//! with server keep-alives, so a host that goes away mid-run is noticed in
//! about a minute rather than never.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use anyhow::{Context, Result};

/// How to reach hosts: the client and the options for every connection.
#[derive(Debug, Clone, Default)]
pub struct Ssh {
    /// `-F FILE`: a configuration file instead of ~/.ssh/config.
    pub config: Option<PathBuf>,
    /// `-o OPTION` each.
    pub options: Vec<String>,
}

/// The options every connection gets, before the user's (the first value
/// of an option wins in OpenSSH, so the user's come first).
const ALWAYS: &[&str] = &[
    "BatchMode=yes",
    "ServerAliveInterval=15",
    "ServerAliveCountMax=4",
];

impl Ssh {
    /// `ssh [-F FILE] [-o OPT]... HOST -- REMOTE_COMMAND`.
    pub fn command(&self, host: &str, remote: &str) -> Command {
        let mut cmd = Command::new("ssh");
        if let Some(config) = &self.config {
            cmd.arg("-F").arg(config);
        }
        for o in self
            .options
            .iter()
            .map(String::as_str)
            .chain(ALWAYS.iter().copied())
        {
            cmd.arg("-o").arg(o);
        }
        cmd.arg(host).arg("--").arg(remote);
        cmd
    }

    /// Runs `remote` on `host` with `stdin` fed to it, and waits.
    pub fn output(&self, host: &str, remote: &str, stdin: Option<&[u8]>) -> Result<Output> {
        let mut cmd = self.command(host, remote);
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| spawn_error(&e))?;
        if let Some(bytes) = stdin {
            let mut pipe = child.stdin.take().context("ssh's stdin")?;
            // A host that fails at once closes the pipe: its stderr says why.
            let _ = pipe.write_all(bytes);
        }
        child.wait_with_output().context("waiting for ssh")
    }

    /// Runs `remote` on `host`, calling `line` with each line it writes to
    /// stderr as it comes (progress), and returns its stdout and exit
    /// status. Lines ending in a carriage return (progress redrawn in
    /// place) count as lines.
    pub fn stream(
        &self,
        host: &str,
        remote: &str,
        line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(Vec<u8>, std::process::ExitStatus)> {
        let mut child = self
            .command(host, remote)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| spawn_error(&e))?;
        let mut stdout = child.stdout.take().context("ssh's stdout")?;
        let stderr = child.stderr.take().context("ssh's stderr")?;
        let out = std::thread::scope(|s| {
            let reader = s.spawn(move || {
                let mut buf = Vec::new();
                stdout.read_to_end(&mut buf).map(|_| buf)
            });
            let mut err = BufReader::new(stderr);
            let mut chunk = Vec::new();
            loop {
                chunk.clear();
                match err.read_until(b'\n', &mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&chunk);
                        for part in text.split(['\r', '\n']).filter(|p| !p.trim().is_empty()) {
                            line(part.trim_end());
                        }
                    }
                }
            }
            reader.join().expect("the stdout reader does not panic")
        })
        .context("reading the remote command's output")?;
        let status = child.wait().context("waiting for ssh")?;
        Ok((out, status))
    }
}

fn spawn_error(e: &std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        crate::error::UsageError::new(
            "the OpenSSH client `ssh` is not installed: install it (Debian: apt-get install \
             openssh-client)",
        )
        .into()
    } else {
        anyhow::anyhow!("cannot start ssh: {e}")
    }
}

/// What an ssh exit status 255 means: OpenSSH itself failed (the host is
/// unreachable, refused the key, or is unknown), not the remote command.
pub fn is_connection_failure(status: &std::process::ExitStatus) -> bool {
    status.code() == Some(255)
}

/// Quotes words for the remote shell (POSIX sh quoting).
pub fn quote(words: &[String]) -> String {
    shell_words::join(words)
}
