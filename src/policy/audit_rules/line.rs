//! One line of a rule file, from its text to what it adds to the
//! [`RuleFile`]: a rule ([`RuleLine`]), the control options it holds
//! ([`ControlLine`]), notes and warnings, every message prefixed
//! `FILE:LINE: TEXT`; or, for a bad line, `FILE:LINE: TEXT: why`.
//!
//! Before its options are read, a line is checked as auditctl's reader
//! would see it: within its line buffer, with no tabs or other control
//! characters (auditctl would keep them inside a value), and `-D`, `-l`
//! and `-s` with only the few words auditctl allows them. Blank lines and
//! comments add nothing.

use std::path::Path;

use super::getopt::{getopt, split_words};
use super::setopt::{LineState, Parsed, Ran, Sent};
use super::{Control, ControlLine, Host, LINE_SIZE, MAX_ERRORS_SHOWN, RuleFile, RuleLine, plural};
use crate::error::UsageError;

/// Adds line `n` of `file` (`raw`, without its `\n`) to it, looking up
/// what auditctl would on `host`. A bad line adds nothing and is returned
/// as `FILE:LINE: TEXT: why`.
pub(super) fn add_line(
    file: &mut RuleFile,
    n: usize,
    raw: &str,
    host: &dyn Host,
) -> Result<(), String> {
    if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
        return Ok(());
    }
    let o = file.path.display().to_string();
    let shown = raw.trim_end_matches('\r');
    let parsed = parse_line(raw, host).map_err(|why| format!("{o}:{n}: {shown}: {why}"))?;
    let at = |msg: &str| format!("{o}:{n}: {shown}: {msg}");
    file.warnings.extend(parsed.warnings.iter().map(|w| at(w)));
    file.notes.extend(parsed.notes.iter().map(|w| at(w)));
    for c in &parsed.controls {
        file.notes
            .push(format!("{o}:{n}: {shown} {}", c.why_not_applied()));
        if *c == Control::Failure(2) {
            file.warnings.push(at(
                "the file sets the failure mode to panic (-f 2); secperf leaves the \
                 machine's failure mode as it is, and refuses to load rules that \
                 record while it is panic",
            ));
        }
    }
    let mut controls = parsed.controls;
    match parsed.rule {
        Some(Sent::Add(rule)) => file.lines.push(RuleLine {
            line: n,
            text: shown.to_string(),
            rule,
        }),
        Some(Sent::Delete(rule)) => {
            file.notes.push(format!(
                "{o}:{n}: {shown} {}",
                Control::Delete(Box::new(rule.clone())).why_not_applied()
            ));
            controls.push(Control::Delete(Box::new(rule)));
        }
        None => {}
    }
    if !controls.is_empty() {
        file.controls.push(ControlLine {
            line: n,
            text: shown.to_string(),
            controls,
        });
    }
    Ok(())
}

/// The one error for a file's bad lines (`errors`, each
/// `FILE:LINE: TEXT: why`), listing the first [`MAX_ERRORS_SHOWN`].
pub(super) fn bad_lines(origin: &Path, errors: &[String]) -> UsageError {
    let count = errors.len();
    let mut msg = format!(
        "{}: {count} bad line{} (each as FILE:LINE: TEXT: why; auditctl(8) and \
         audit.rules(7) describe the syntax):",
        origin.display(),
        plural(count)
    );
    for e in errors.iter().take(MAX_ERRORS_SHOWN) {
        msg.push_str("\n  ");
        msg.push_str(e);
    }
    if count > MAX_ERRORS_SHOWN {
        msg.push_str(&format!("\n  ... and {} more", count - MAX_ERRORS_SHOWN));
    }
    UsageError::new(msg)
}

/// One line parsed, as auditctl's `setopt` and `handle_request` do it.
pub(super) fn parse_line(raw: &str, host: &dyn Host) -> Result<Parsed, String> {
    check_text(raw)?;
    let words = split_words(raw);
    if let Some(first @ ("-D" | "-l" | "-s")) = words.first().map(String::as_str) {
        return Ok(Parsed {
            controls: vec![control_by_word_count(first, &words)?],
            ..Parsed::default()
        });
    }
    let (opts, strays) = getopt(&words)?;
    if opts.is_empty() {
        return Err(format!(
            "'{}' is not an auditctl option (a rule line starts with -a, -A, -w, ...)",
            words.first().map_or("", |w| w.as_str())
        ));
    }
    let mut st = LineState::new(host);
    match st.run(&opts)? {
        Ran::Returned => return Ok(st.returned()),
        Ran::StoppedAt(at) => {
            return Err(format!(
                "auditctl stops reading the line after {at} and fails on what follows: put it \
                 on a line of its own"
            ));
        }
        Ran::All => {}
    }
    if let Some(stray) = strays.first() {
        let hint = if stray.starts_with('#') {
            " (comments must be on a line of their own)"
        } else {
            ""
        };
        return Err(format!(
            "'{stray}' is not an option's value (parameter passed without an option){hint}"
        ));
    }
    st.finish()
}

/// Whether auditctl's reader would take `raw` as it is: shorter than its
/// line buffer, and with no control characters.
fn check_text(raw: &str) -> Result<(), String> {
    if raw.len() >= LINE_SIZE {
        return Err(format!(
            "longer than auditctl's line buffer ({} bytes; auditctl would split it)",
            LINE_SIZE - 1
        ));
    }
    if let Some(c) = raw.chars().find(|c| c.is_control()) {
        let what = match c {
            '\t' => "a tab".to_string(),
            '\r' => "a carriage return (Windows line end)".to_string(),
            c => format!("the control character {:?}", c),
        };
        return Err(format!(
            "contains {what}; auditctl splits lines on spaces only and would keep it inside a \
             value: use spaces and Unix line ends"
        ));
    }
    Ok(())
}

/// `-D`, `-l` or `-s` (`first`) starting a line: auditctl checks these by
/// their word count, `-D [-k KEY]`, `-l [-i | -k KEY]`, `-s [-i]`.
fn control_by_word_count(first: &str, words: &[String]) -> Result<Control, String> {
    let rest: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let control = match (first, rest.as_slice()) {
        ("-D", []) => Control::DeleteAll { key: None },
        ("-D", ["-k", key]) => Control::DeleteAll {
            key: Some(key.to_string()),
        },
        ("-D", _) => return Err("-D takes no other option but -k KEY".into()),
        ("-l", [] | ["-i"] | ["-k", _]) | ("-s", [] | ["-i"]) => Control::Other(words.join(" ")),
        _ => {
            return Err(format!(
                "{first} takes no other option here (see auditctl(8))"
            ));
        }
    };
    Ok(control)
}
