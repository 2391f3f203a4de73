//! `make bzImage` in a build tree, with progress (the phase, files
//! compiled, the time left), the whole output kept in a log, and no make
//! outliving secperf.
//!
//! make runs in a process group of its own with `PR_SET_PDEATHSIG`
//! SIGTERM: if secperf dies, even by SIGKILL, make gets SIGTERM, passes it
//! to its compilers and deletes the targets it was writing, so no
//! half-written object is taken for a built one later. Ctrl-C does the
//! same through `stop`.

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::error::Interrupted;

/// A build's phase, read off make's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Compile,
    Link,
    Btf,
    Image,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Compile => "compile",
            Phase::Link => "link",
            Phase::Btf => "BTF",
            Phase::Image => "image",
        }
    }

    /// The phase a line of make's output starts, if any.
    pub fn of_line(line: &str) -> Option<Phase> {
        let l = line.trim_start();
        if l.starts_with("BTF") || l.starts_with("BTFIDS") {
            Some(Phase::Btf)
        } else if l.starts_with("LD      vmlinux")
            || l.starts_with("LD      .tmp_vmlinux")
            || l.starts_with("KSYMS")
        {
            Some(Phase::Link)
        } else if l.starts_with("BUILD   arch/x86/boot/bzImage")
            || l.starts_with("LD      arch/x86/boot/")
        {
            Some(Phase::Image)
        } else if is_compile(l) {
            Some(Phase::Compile)
        } else {
            None
        }
    }
}

/// Whether a line is one compiled file ("  CC      kernel/auditsc.o").
pub fn is_compile(line: &str) -> bool {
    let l = line.trim_start();
    l.starts_with("CC ") || l.starts_with("AS ")
}

/// How a build went.
#[derive(Debug, Clone, Copy)]
pub struct Made {
    pub seconds: f64,
    pub compiled: u64,
}

/// Runs `make -C SRC O=BUILD ARCH=x86_64 -jN bzImage`, the output in
/// `log`. `expected` is the number of files a full build compiles, when
/// known (for the time left). A failed build is a usage error with the
/// log's tail.
pub fn bzimage(
    src: &Path,
    build: &Path,
    log: &Path,
    label: &str,
    expected: Option<u64>,
    stop: &AtomicBool,
) -> Result<Made> {
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut cmd = Command::new("make");
    cmd.arg("-C")
        .arg(src)
        .arg(format!("O={}", build.display()))
        .arg(format!("ARCH={}", super::ARCH))
        .arg(format!("-j{jobs}"))
        .arg("bzImage")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the closure runs in the child between fork and exec and only
    // calls prctl(2), which is async-signal-safe; it touches no memory of
    // the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let begun = Instant::now();
    let mut child = cmd.spawn().context("running make (apt-get install make)")?;
    let group = child.id() as i32;
    let file = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let log_w = Arc::new(Mutex::new(std::io::BufWriter::new(file)));
    let compiled = Arc::new(AtomicU64::new(0));
    let phase = Arc::new(Mutex::new(Phase::Compile));
    let readers: Vec<_> = [
        Box::new(child.stdout.take().expect("piped")) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().expect("piped")),
    ]
    .into_iter()
    .map(|out| {
        let (log_w, compiled, phase) = (log_w.clone(), compiled.clone(), phase.clone());
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if is_compile(&line) {
                    compiled.fetch_add(1, Ordering::Relaxed);
                }
                if let Some(p) = Phase::of_line(&line)
                    && let Ok(mut cur) = phase.lock()
                    && p != Phase::Compile
                {
                    *cur = p;
                }
                if let Ok(mut w) = log_w.lock() {
                    let _ = writeln!(w, "{line}");
                }
            }
        })
    })
    .collect();
    let mut last_shown = Instant::now();
    let mut last_phase = Phase::Compile;
    let status = loop {
        if let Some(s) = child.try_wait().context("waiting for make")? {
            break s;
        }
        if stop.load(Ordering::Relaxed) {
            // SAFETY: kill(2) on make's own process group (make and its
            // compilers); no memory is involved.
            unsafe { libc::kill(-group, libc::SIGTERM) };
            let _ = child.wait();
            for r in readers {
                let _ = r.join();
            }
            return Err(anyhow::Error::new(Interrupted).context(format!(
                "the build of {label} was stopped; nothing of it is used (the next run goes on \
                 from the files it finished)"
            )));
        }
        let now_phase = phase.lock().map(|p| *p).unwrap_or(Phase::Compile);
        if now_phase != last_phase || last_shown.elapsed() > Duration::from_secs(20) {
            last_phase = now_phase;
            last_shown = Instant::now();
            crate::say!(
                "secperf: build {label}: {}",
                progress_line(
                    now_phase,
                    compiled.load(Ordering::Relaxed),
                    expected,
                    begun.elapsed()
                )
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    for r in readers {
        let _ = r.join();
    }
    if let Ok(mut w) = log_w.lock() {
        let _ = w.flush();
    }
    let made = Made {
        seconds: begun.elapsed().as_secs_f64(),
        compiled: compiled.load(Ordering::Relaxed),
    };
    if !status.success() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        crate::usage_bail!(
            "the build of {label} failed (make exited with {}); the last lines of its log {}:\n{}",
            status.code().map_or("a signal".into(), |c| c.to_string()),
            log.display(),
            tail(&text, 20)
        );
    }
    Ok(made)
}

/// The progress line: "compile, 812 of about 2418 files, 6 min 12 s;
/// about 11 min left".
pub fn progress_line(
    phase: Phase,
    compiled: u64,
    expected: Option<u64>,
    elapsed: Duration,
) -> String {
    let secs = elapsed.as_secs();
    let took = format!("{} min {:02} s", secs / 60, secs % 60);
    match (phase, expected) {
        (Phase::Compile, Some(total)) if compiled > 0 && compiled < total => {
            let left = elapsed.as_secs_f64() / compiled as f64 * (total - compiled) as f64;
            format!(
                "compile, {compiled} of about {total} files, {took}; about {:.0} min left, then \
                 the link",
                (left / 60.0).ceil()
            )
        }
        (Phase::Compile, _) => format!("compile, {compiled} files so far, {took}"),
        (p, _) => format!("{} ({compiled} files compiled), {took}", p.name()),
    }
}

/// The last `n` lines of a log, its error lines first if they are older.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let last = &lines[lines.len().saturating_sub(n)..];
    let errors: Vec<&str> = lines[..lines.len().saturating_sub(n)]
        .iter()
        .filter(|l| l.contains("error:") || l.contains("Error "))
        .rev()
        .take(5)
        .copied()
        .collect();
    errors
        .into_iter()
        .rev()
        .chain(last.iter().copied())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_and_compiled_files_are_read_off_makes_output() {
        assert_eq!(
            Phase::of_line("  CC      kernel/auditsc.o"),
            Some(Phase::Compile)
        );
        assert!(is_compile("  AS      arch/x86/entry/entry_64.o"));
        assert!(!is_compile("  LD      vmlinux.o"));
        assert_eq!(Phase::of_line("  LD      vmlinux.o"), Some(Phase::Link));
        assert_eq!(
            Phase::of_line("  BTF     .btf.vmlinux.bin.o"),
            Some(Phase::Btf)
        );
        assert_eq!(Phase::of_line("  BTFIDS  vmlinux"), Some(Phase::Btf));
        assert_eq!(
            Phase::of_line("  BUILD   arch/x86/boot/bzImage"),
            Some(Phase::Image)
        );
        assert_eq!(Phase::of_line("make[1]: Entering directory"), None);
    }

    #[test]
    fn progress_says_files_and_time_left() {
        let l = progress_line(Phase::Compile, 500, Some(2000), Duration::from_secs(300));
        assert_eq!(
            l,
            "compile, 500 of about 2000 files, 5 min 00 s; about 15 min left, then the link"
        );
        let l = progress_line(Phase::Btf, 2000, Some(2000), Duration::from_secs(1500));
        assert_eq!(l, "BTF (2000 files compiled), 25 min 00 s");
        assert!(
            progress_line(Phase::Compile, 3, None, Duration::from_secs(5))
                .contains("3 files so far")
        );
    }

    #[test]
    fn a_failed_builds_tail_keeps_its_error() {
        let mut log = String::from("kernel/x.c:3:1: error: expected ';'\n");
        for i in 0..30 {
            log.push_str(&format!("line {i}\n"));
        }
        let t = tail(&log, 5);
        assert!(t.starts_with("kernel/x.c:3:1: error"), "{t}");
        assert!(t.ends_with("line 29"));
        assert_eq!(t.lines().count(), 6);
    }
}
