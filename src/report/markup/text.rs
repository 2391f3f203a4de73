//! Plain text the fixed-width formats share: ASCII transliteration,
//! word wrapping, blank-line folding, and the "Reproduce:" command wrapped
//! at shell words with `\` continuations (mailing lists want 72 columns).

/// The widest line of the narrow (email) style.
pub const WIDTH: usize = 72;

/// Text with every character made printable ASCII: common typographic
/// characters transliterated ("±" -> "+-"), control characters (newlines,
/// tabs) turned into spaces, anything else into '?'.
pub fn ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            ' '..='~' => out.push(c),
            c if c.is_control() => out.push(' '),
            '\u{b1}' => out.push_str("+-"),
            '\u{d7}' => out.push('x'),
            '\u{b5}' | '\u{3bc}' => out.push('u'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
            '\u{2018}' | '\u{2019}' => out.push('\''),
            '\u{201c}' | '\u{201d}' => out.push('"'),
            '\u{2026}' => out.push_str("..."),
            '\u{2192}' => out.push_str("->"),
            '\u{2190}' => out.push_str("<-"),
            '\u{2264}' => out.push_str("<="),
            '\u{2265}' => out.push_str(">="),
            '\u{2248}' => out.push('~'),
            '\u{a0}' | '\u{2009}' | '\u{202f}' => out.push(' '),
            _ => out.push('?'),
        }
    }
    out
}

/// Word-wrap `text` to `width` columns: the first line starts with
/// `first`, the others with `rest`. Words longer than a line are cut.
/// Counts chars, so give it ASCII when the width matters.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let mut word = word;
        loop {
            let len = line.chars().count();
            let need = word.chars().count() + usize::from(!empty);
            if len + need <= width {
                if !empty {
                    line.push(' ');
                }
                line.push_str(word);
                empty = false;
                break;
            }
            if !empty {
                lines.push(std::mem::replace(&mut line, rest.to_string()));
                empty = true;
                continue;
            }
            // An empty line and a word that does not fit: cut the word.
            let room = width.saturating_sub(len).max(1);
            let cut = word.char_indices().nth(room).map_or(word.len(), |(i, _)| i);
            line.push_str(&word[..cut]);
            word = &word[cut..];
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            if word.is_empty() {
                break;
            }
        }
    }
    if !empty || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Lines as text: trailing spaces dropped, no runs of blank lines and
/// none at the ends, each line ending in a newline.
pub fn join_lines(lines: &[String]) -> String {
    let mut out = String::new();
    let mut blank = true;
    for l in lines {
        let l = l.trim_end();
        if l.is_empty() && blank {
            continue;
        }
        blank = l.is_empty();
        out.push_str(l);
        out.push('\n');
    }
    if blank && !out.is_empty() {
        out.pop();
    }
    out
}

/// "Reproduce: <command>" wrapped to [`WIDTH`] with " \" continuations, at
/// shell word boundaries (quotes respected); a word longer than a line is
/// broken with a bare "\" and continues at column 0, which the shell joins.
pub fn reproduce(command: &str) -> Vec<String> {
    const FIRST: &str = "Reproduce: ";
    const REST: &str = "    ";
    // Every line but the last ends in " \".
    let room = WIDTH - 2;
    let mut lines = Vec::new();
    let mut line = FIRST.to_string();
    let mut fresh = true;
    for word in command_words(command) {
        let sep = usize::from(!fresh);
        if !fresh && line.len() + sep + word.len() > room {
            lines.push(format!("{line} \\"));
            line = REST.to_string();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        let mut word = word.as_str();
        while line.len() + word.len() > room {
            let cut = (room + 1).saturating_sub(line.len()).max(1).min(word.len());
            line.push_str(&word[..cut]);
            lines.push(format!("{line}\\"));
            line = String::new();
            word = &word[cut..];
        }
        line.push_str(word);
        fresh = false;
    }
    lines.push(line);
    lines
}

/// The words of a stored command line, each quoted again as the shell
/// needs (`shell_words::split`, then `shell_words::quote`), so a wrap never
/// falls inside a quoted argument. A line that does not parse (unbalanced
/// quotes, e.g. one stored unquoted by an older secperf) splits at
/// whitespace instead.
fn command_words(s: &str) -> Vec<String> {
    match shell_words::split(s) {
        Ok(words) => words
            .iter()
            .map(|w| shell_words::quote(w).into_owned())
            .collect(),
        Err(_) => s.split_whitespace().map(str::to_string).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduce_wraps_at_shell_words() {
        let cmd = "secperf overhead --mechanisms 'landlock:fs-ro seccomp:allow' --workloads a,b --tasks 1,2,4,8,16 --pairs 30 --format email --output /tmp/x";
        let lines = reproduce(cmd);
        assert!(lines.len() >= 2);
        for l in &lines[..lines.len() - 1] {
            assert!(l.ends_with(" \\"), "{l:?}");
        }
        for l in &lines {
            assert!(l.len() <= WIDTH, "{l:?}");
        }
        // Joining the continuations gives the command back, quotes intact.
        let joined: Vec<String> = lines
            .iter()
            .map(|l| l.trim_end_matches(" \\").trim().to_string())
            .collect();
        assert_eq!(joined.join(" "), format!("Reproduce: {cmd}"));
        assert!(
            lines
                .iter()
                .any(|l| l.contains("'landlock:fs-ro seccomp:allow'"))
        );

        // A word longer than a line breaks with a bare backslash, and the
        // rest starts at column 0 so that the shell joins it.
        let long = format!("secperf run --output /{}", "d/".repeat(60));
        let lines = reproduce(&long);
        let mut rebuilt = String::new();
        let mut soft = false;
        for l in &lines {
            assert!(l.len() <= WIDTH, "{l:?}");
            let l = if soft { l.trim_start() } else { l.as_str() };
            soft = l.ends_with(" \\");
            if let Some(x) = l.strip_suffix(" \\") {
                rebuilt.push_str(x);
                rebuilt.push(' ');
            } else if let Some(x) = l.strip_suffix('\\') {
                rebuilt.push_str(x);
            } else {
                rebuilt.push_str(l);
            }
        }
        assert_eq!(rebuilt, format!("Reproduce: {long}"));
    }

    #[test]
    fn shell_words_keep_quoted_words_whole() {
        // Each word comes back quoted so that the shell reads the same word.
        let words = command_words(r#"a 'b c' "d \" e" f\ g"#);
        assert_eq!(words, ["a", "'b c'", r#"'d " e'"#, "'f g'"]);
        assert_eq!(
            shell_words::split(&words.join(" ")).unwrap(),
            ["a", "b c", "d \" e", "f g"]
        );
        // A line that does not parse (an old run's unquoted command)
        // splits at whitespace, as stored.
        assert_eq!(
            command_words("secperf run -l it's -- sh -c a b"),
            ["secperf", "run", "-l", "it's", "--", "sh", "-c", "a", "b"]
        );
    }

    #[test]
    fn reproduce_keeps_a_quoted_command_argument_whole() {
        // As engine::session::command_line_of stores it (shell_words::join).
        let cmd = shell_words::join([
            "secperf",
            "overhead",
            "-m",
            "seccomp:args,filters=4",
            "--tasks",
            "1,2,4,8,16",
            "--label",
            "seccomp cost",
            "--",
            "sh",
            "-c",
            "for i in 1 2 3; do true; done",
        ]);
        let lines = reproduce(&cmd);
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("'for i in 1 2 3; do true; done'")),
            "{lines:?}"
        );
        let joined: Vec<&str> = lines
            .iter()
            .map(|l| l.trim_end_matches(" \\").trim())
            .collect();
        assert_eq!(joined.join(" "), format!("Reproduce: {cmd}"));
    }

    #[test]
    fn ascii_transliterates() {
        assert_eq!(
            ascii("\u{b1}1 \u{2192} \u{201c}x\u{201d}\n\u{4e2d}"),
            "+-1 -> \"x\" ?"
        );
        assert!(ascii("\u{2014}\u{2026}\u{b5}").is_ascii());
    }

    #[test]
    fn wrap_words() {
        assert_eq!(wrap("a bb ccc", 6, "", "  "), ["a bb", "  ccc"]);
        assert_eq!(wrap("", 6, "x: ", ""), ["x: "]);
        let long = wrap("abcdefghij", 4, "", "");
        assert_eq!(long, ["abcd", "efgh", "ij"]);
        for l in wrap(&"word ".repeat(50), 20, "first: ", "    ") {
            assert!(l.len() <= 20, "{l:?}");
        }
    }
}
