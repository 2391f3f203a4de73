//! What secperf says on stderr, wrapped at words where stderr is a
//! terminal: a long progress line or error no longer breaks mid-word at
//! the terminal's edge ("negligib/le"), and its continuation lines hang
//! under the text after "secperf: ". Into a pipe or a file every line is
//! written whole, as before.

use std::io::IsTerminal;

/// The columns of the terminal on stderr, or None when stderr is not one.
pub fn stderr_width() -> Option<usize> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own; fd 2
    // is stderr, checked to be a terminal above.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col >= 20).then_some(usize::from(size.ws_col))
}

/// `text` wrapped at words to `width`: each of its lines on its own, a
/// continuation indented under the line's text (after its own indent and
/// a leading "secperf: "), no word broken.
pub fn wrap(text: &str, width: usize) -> String {
    text.split('\n')
        .map(|line| {
            if line.chars().count() <= width {
                return line.to_string();
            }
            let lead = line.len() - line.trim_start().len();
            let prefix = if line[lead..].starts_with("secperf: ") {
                lead + "secperf: ".len()
            } else {
                lead
            };
            let indent = " ".repeat(prefix);
            let opts = textwrap::Options::new(width)
                .subsequent_indent(&indent)
                .break_words(false)
                .word_splitter(textwrap::WordSplitter::NoHyphenation);
            textwrap::wrap(line, opts)
                .iter()
                .map(|l| l.trim_end())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line for stderr, wrapped to its terminal when it is one.
pub fn for_stderr(text: &str) -> String {
    match stderr_width() {
        Some(w) => wrap(text, w),
        None => text.to_string(),
    }
}

/// Writes `text` and a newline to stderr, as `eprintln!` does, wrapped at
/// words to the terminal when stderr is one.
pub fn say(text: &str) {
    eprintln!("{}", for_stderr(text));
}

/// `eprintln!` wrapped at words to the terminal ([`say`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::sys::terminal::say(&format!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_at_words_under_their_text() {
        let line = "secperf: seccomp:allow on getppid tasks=1: +14.8% [5.8, 24.2], its own 95% \
                    interval; the table's, after correction, is wider";
        let w = wrap(line, 40);
        let lines: Vec<&str> = w.lines().collect();
        assert!(lines.len() > 2, "{w}");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{w}");
        assert!(lines[1..].iter().all(|l| l.starts_with("         ")), "{w}");
        assert_eq!(
            w.split_whitespace().collect::<Vec<_>>(),
            line.split_whitespace().collect::<Vec<_>>(),
            "no word broken or lost"
        );
        assert_eq!(wrap("short", 40), "short");
        // Each line of a message on its own, its indent kept.
        let tail = "error: the console ended with:\n  | a line that goes on and on and on";
        let w = wrap(tail, 24);
        assert!(
            w.contains("\n  | a line that goes on\n  and on and on"),
            "{w}"
        );
    }
}
