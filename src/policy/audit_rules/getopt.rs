//! A line's words and options, as `auditctl -R` reads them: the line is
//! split on spaces only (`\ ` is a space and `\\` a backslash inside a
//! value), then getopt_long hands out its options in order (`-kKEY`,
//! `-k KEY`, clustered flags such as `-il`, `--backlog_wait_time=N`,
//! `--backlog_wait_time N`, a unique prefix of a long option standing for
//! it). What each option then does is decided afterwards, as in auditctl's
//! `setopt`.

/// The options auditctl takes an argument for, and those it does not.
const SHORT_WITH_ARG: &str = "CefrbaAdSFmRwWkpq";
const SHORT_NO_ARG: &str = "hicslDvt";
/// Long options: name, takes an argument.
const LONG_OPTS: &[(&str, bool)] = &[
    ("loginuid-immutable", false),
    ("backlog_wait_time", true),
    ("reset-lost", false),
    ("reset_backlog_wait_time_actual", false),
    ("signal", true),
];

/// One option of a line, as getopt_long hands it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Opt {
    Short(char, Option<String>),
    Long(&'static str, Option<String>),
}

/// An option as written, for messages.
pub(super) fn describe(opt: &Opt) -> String {
    match opt {
        Opt::Short(c, _) => format!("-{c}"),
        Opt::Long(n, _) => format!("--{n}"),
    }
}

/// Splits a line into words the way `auditctl -R` does: on spaces only;
/// `\ ` is a space and `\\` a backslash inside a word (auditctl leaves the
/// first word's escapes as written: it is an option, not a value).
pub(super) fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let (mut word, mut raw) = (String::new(), String::new());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some(' ') | Some('\\')) => {
                let next = chars.next().unwrap_or(' ');
                word.push(next);
                raw.push('\\');
                raw.push(next);
            }
            ' ' => {
                if !raw.is_empty() {
                    let first = words.is_empty();
                    let w = std::mem::take(&mut word);
                    let r = std::mem::take(&mut raw);
                    words.push(if first { r } else { w });
                }
            }
            c => {
                word.push(c);
                raw.push(c);
            }
        }
    }
    if !raw.is_empty() {
        words.push(if words.is_empty() { raw } else { word });
    }
    words
}

/// getopt_long over a line's words: the options in order, the words that
/// are no option's argument, or the first malformed option.
pub(super) fn getopt(words: &[String]) -> Result<(Vec<Opt>, Vec<String>), String> {
    let mut opts = Vec::new();
    let mut strays = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if w == "--" {
            strays.extend(words[i..].iter().cloned());
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            opts.push(long_option(w, long, words, &mut i)?);
        } else if w.len() < 2 || !w.starts_with('-') {
            strays.push(w.clone());
        } else {
            short_options(w, words, &mut i, &mut opts)?;
        }
    }
    Ok((opts, strays))
}

/// The long option `w` (`--NAME`, `--NAME=VALUE` or `--NAME VALUE`; `long`
/// is `w` without its dashes, and a unique prefix of a name stands for
/// it). A value from the next word moves `next` past it.
fn long_option(w: &str, long: &str, words: &[String], next: &mut usize) -> Result<Opt, String> {
    let (name, inline) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (long, None),
    };
    let exact = LONG_OPTS.iter().find(|(n, _)| *n == name);
    let prefixed: Vec<_> = LONG_OPTS
        .iter()
        .filter(|(n, _)| n.starts_with(name))
        .collect();
    let (opt, takes) = match (exact, prefixed.as_slice()) {
        (Some(o), _) => *o,
        (None, [o]) => **o,
        (None, []) => return Err(format!("unknown option '{w}'")),
        (None, _) => return Err(format!("ambiguous option '{w}'")),
    };
    let arg = if takes {
        match inline {
            Some(v) => Some(v),
            None if *next < words.len() => {
                *next += 1;
                Some(words[*next - 1].clone())
            }
            None => return Err(format!("option '--{opt}' needs a value")),
        }
    } else if inline.is_some() {
        return Err(format!("option '--{opt}' takes no value"));
    } else {
        None
    };
    Ok(Opt::Long(opt, arg))
}

/// The short options of `w` (`-il`, `-kKEY`, `-k KEY`): flags until one
/// that takes a value, which is the rest of the word or else the next word
/// (then `next` moves past it).
fn short_options(
    w: &str,
    words: &[String],
    next: &mut usize,
    opts: &mut Vec<Opt>,
) -> Result<(), String> {
    let cluster: Vec<char> = w[1..].chars().collect();
    for (j, &c) in cluster.iter().enumerate() {
        if SHORT_NO_ARG.contains(c) {
            opts.push(Opt::Short(c, None));
        } else if SHORT_WITH_ARG.contains(c) {
            let rest: String = cluster[j + 1..].iter().collect();
            let arg = if !rest.is_empty() {
                rest
            } else if *next < words.len() {
                *next += 1;
                words[*next - 1].clone()
            } else {
                return Err(format!("option -{c} needs a value"));
            };
            opts.push(Opt::Short(c, Some(arg)));
            break;
        } else {
            return Err(format!(
                "unknown option '-{c}' (rule lines use -a/-A LIST,ACTION, -S, -F, -C, -k, \
                 -w PATH -p PERMS; see auditctl(8))"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        split_words(line)
    }

    #[test]
    fn words_split_on_spaces_with_escapes_in_values_only() {
        assert_eq!(
            words("  -w /a\\ b  -k k\\\\1 "),
            ["-w", "/a b", "-k", "k\\1"]
        );
        assert_eq!(words("-w\\ x /y"), ["-w\\ x", "/y"]);
        assert!(words("   ").is_empty());
    }

    #[test]
    fn options_as_getopt_long_reads_them() {
        let short = |c, v: &str| Opt::Short(c, Some(v.to_string()));
        let (opts, strays) = getopt(&words("-il -kKEY -k K2 stray --back=5 --signal HUP")).unwrap();
        assert_eq!(
            opts,
            [
                Opt::Short('i', None),
                Opt::Short('l', None),
                short('k', "KEY"),
                short('k', "K2"),
                Opt::Long("backlog_wait_time", Some("5".into())),
                Opt::Long("signal", Some("HUP".into())),
            ]
        );
        assert_eq!(strays, ["stray"]);
        let (opts, strays) = getopt(&words("-D -- -k x")).unwrap();
        assert_eq!((opts, strays), (vec![Opt::Short('D', None)], words("-k x")));
    }

    #[test]
    fn malformed_options_are_named() {
        let err = |line| getopt(&words(line)).unwrap_err();
        assert_eq!(err("--reset"), "ambiguous option '--reset'");
        assert_eq!(err("--nope"), "unknown option '--nope'");
        assert_eq!(err("--signal"), "option '--signal' needs a value");
        assert_eq!(
            err("--reset-lost=1"),
            "option '--reset-lost' takes no value"
        );
        assert_eq!(err("-k"), "option -k needs a value");
        assert!(
            err("-x").starts_with("unknown option '-x'"),
            "{}",
            err("-x")
        );
    }
}
