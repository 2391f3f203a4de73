//! Short help (`-h`) that fits a terminal: one line per option and per
//! command. Each option's doc comment stays its `--help` (long help), and
//! its first sentence becomes its `-h` line; a command's first sentence is
//! its line in its parent's list. The test below renders every command's
//! `-h` at 100 columns and fails on an option whose line would wrap, so a
//! new option with a long first sentence is caught at `cargo test`.

use clap::{Arg, Command};

/// `cmd` and every command under it, with short help cut to first
/// sentences and the whole text kept as long help.
pub fn shortened(cmd: Command) -> Command {
    let cmd = cmd.mut_args(short_arg);
    let cmd = match cmd.get_about().cloned() {
        Some(about) => {
            let full = cmd.get_long_about().cloned().unwrap_or(about.clone());
            let short = summary(&about.to_string(), None, COMMAND_WIDTH);
            cmd.about(short).long_about(full)
        }
        None => cmd,
    };
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names
        .into_iter()
        .fold(cmd, |cmd, name| cmd.mut_subcommand(name, shortened))
}

/// `cmd` with every command's usage line fixed to the one its help shows:
/// clap's usage in an error lists the options given, and an option given
/// by its environment variable (`SECPERF_DB`) read as if it were required
/// (`Usage: secperf results delete --db <PATH|URL> <RUNS>...`).
pub fn with_usages(mut cmd: Command) -> Command {
    cmd.build();
    fixed(cmd)
}

fn fixed(cmd: Command) -> Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names.into_iter().fold(cmd, |cmd, name| {
        cmd.mut_subcommand(name, |sub| {
            let usage = sub.clone().render_usage().to_string();
            let usage = usage
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("Usage:")
                .trim()
                .to_string();
            fixed(sub).override_usage(usage)
        })
    })
}

/// One option: `-h` shows the [`summary`] of its help and its default; `--help` all of it, then its default,
/// its environment variable and its possible values (clap's own lists of
/// these, which it would append to the short line too, are hidden and
/// written here instead).
fn short_arg(arg: Arg) -> Arg {
    let Some(full) = arg.get_long_help().or(arg.get_help()).cloned() else {
        return arg;
    };
    let text = full.to_string();
    let takes_value = arg.get_action().takes_values();
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    let shown_default = defaults.iter().any(|d| !d.is_empty());
    let default = (takes_value && !arg.is_hide_default_value_set() && shown_default)
        .then(|| format!("[default: {}]", defaults.join(", ")));
    let env = (!arg.is_hide_env_set())
        .then(|| arg.get_env())
        .flatten()
        .map(|e| format!("[env: {}]", e.to_string_lossy()));
    let values: Vec<String> = if takes_value && !arg.is_hide_possible_values_set() {
        arg.get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| match v.get_help() {
                Some(h) => format!("- {}: {h}", v.get_name()),
                None => format!("- {}", v.get_name()),
            })
            .collect()
    } else {
        Vec::new()
    };
    let short = summary(&text, default.as_deref(), OPTION_WIDTH);
    let mut long = text;
    let tags: Vec<&str> = default.iter().chain(&env).map(String::as_str).collect();
    if !tags.is_empty() {
        long = format!("{long}\n\n{}", tags.join(" "));
    }
    if !values.is_empty() {
        long = format!("{long}\n\nPossible values:\n{}", values.join("\n"));
    }
    let arg = if takes_value {
        arg.hide_default_value(true).hide_possible_values(true)
    } else {
        arg
    };
    arg.hide_env(true).long_help(long).help(short)
}

/// The widest an option's `-h` line may be, default included: 100
/// columns less the 40 that clap gives the option's name before it
/// switches every option to two lines.
const OPTION_WIDTH: usize = 60;
/// The widest a command's line in its parent's list may be.
const COMMAND_WIDTH: usize = 80;

/// An option's or a command's `-h` line: the first of its first
/// sentence, that sentence without its asides in parentheses, its first
/// clause (to a `:` or `;`), and that clause without its asides, which
/// fits in `width` columns with `tag` after it; the last if none does.
fn summary(text: &str, tag: Option<&str>, width: usize) -> String {
    let sentence = first_sentence(text);
    let clause = first_clause(sentence);
    let extra = tag.map_or(0, |t| t.chars().count() + 1);
    let candidates = [
        sentence.to_string(),
        without_asides(sentence),
        clause.to_string(),
        without_asides(clause),
    ];
    let fits = |c: &String| c.chars().count() + extra <= width;
    // A clause of a few words ("With --pid", "Side by side") says too
    // little to stand for the option.
    let says_enough = |c: &String| c == sentence || c.split_whitespace().count() >= 4;
    let chosen = candidates
        .iter()
        .filter(|c| says_enough(c))
        .find(|c| fits(c))
        .or_else(|| {
            candidates
                .iter()
                .filter(|c| says_enough(c))
                .min_by_key(|c| c.chars().count())
        })
        .unwrap_or(&candidates[0])
        .clone();
    match tag {
        Some(t) => format!("{chosen} {t}"),
        None => chosen,
    }
}

/// `text` without what it says in parentheses.
fn without_asides(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    let mut code = false;
    for c in text.chars() {
        match c {
            '`' if depth == 0 => {
                code = !code;
                out.push(c);
            }
            '(' if !code => depth += 1,
            ')' if !code && depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let mut out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for p in [" ,", " ;", " :"] {
        out = out.replace(p, &p[1..]);
    }
    out
}

/// The text up to its first sentence's end (a `.` followed by a space,
/// outside brackets and backticks, and not an abbreviation such as
/// "e.g."), without the `.`; all of it when it is one sentence.
pub fn first_sentence(text: &str) -> &str {
    cut_at(text, &['.'])
}

/// The sentence up to the end of its first clause, a `:` or `;` outside
/// brackets and backticks.
fn first_clause(sentence: &str) -> &str {
    cut_at(sentence, &[':', ';'])
}

fn cut_at<'a>(text: &'a str, marks: &[char]) -> &'a str {
    let mut depth = 0i32;
    let mut code = false;
    for (i, c) in text.char_indices() {
        match c {
            '`' => code = !code,
            '(' | '[' if !code => depth += 1,
            ')' | ']' if !code => depth -= 1,
            _ if marks.contains(&c) && depth <= 0 && !code => {
                let after = &text[i + c.len_utf8()..];
                let ends = after.chars().next().is_none_or(char::is_whitespace);
                let word = text[..i].rsplit(char::is_whitespace).next().unwrap_or("");
                let abbreviation = ["e.g", "i.e", "etc", "vs", "cf"].contains(&word);
                if ends && !abbreviation && !after.trim().is_empty() {
                    return text[..i].trim_end();
                }
            }
            _ => {}
        }
    }
    text.trim_end().trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn a_first_sentence_ends_outside_brackets_and_abbreviations() {
        assert_eq!(
            first_sentence("Results database (SQLite). Default: x"),
            "Results database (SQLite)"
        );
        assert_eq!(
            first_clause("The accelerator: kvm, or emulated (e.g. here. Or not)"),
            "The accelerator"
        );
        assert_eq!(
            first_sentence("Use `a. b` or c, e.g. d. Then"),
            "Use `a. b` or c, e.g. d"
        );
        assert_eq!(first_sentence("One sentence."), "One sentence");
        assert_eq!(
            first_sentence("postgresql://x, 0.5%"),
            "postgresql://x, 0.5%"
        );
    }

    #[test]
    fn a_summary_is_the_fullest_form_that_fits() {
        let text = "Results database (SQLite), here: a file. More";
        assert_eq!(
            summary(text, None, 60),
            "Results database (SQLite), here: a file"
        );
        assert_eq!(summary(text, None, 35), "Results database, here: a file");
        assert_eq!(
            summary(
                "The results database file (SQLite): here and there. More",
                None,
                34
            ),
            "The results database file (SQLite)"
        );
        assert_eq!(
            summary(text, Some("[default: x]"), 45),
            "Results database, here: a file [default: x]"
        );
        // Nothing fits: the shortest that says enough, for the test below
        // to catch.
        assert_eq!(summary(text, None, 10), "Results database, here: a file");
    }

    /// Every command's `-h`, at `width` columns, with its path.
    fn short_helps(width: usize) -> Vec<(String, String)> {
        let mut cmd = shortened(super::super::Cli::command()).term_width(width);
        cmd.build();
        let mut out = Vec::new();
        let mut stack = vec![(String::from("secperf"), cmd)];
        while let Some((path, mut cmd)) = stack.pop() {
            for sub in cmd.get_subcommands() {
                if !sub.is_hide_set() && sub.get_name() != "help" {
                    stack.push((format!("{path} {}", sub.get_name()), sub.clone()));
                }
            }
            out.push((path, cmd.render_help().to_string()));
        }
        out
    }

    #[test]
    fn short_help_is_one_line_per_option_within_100_columns() {
        // Issue 53: `overhead -h` was 1546 lines, one word per line.
        let mut bad = Vec::new();
        for (path, help) in short_helps(100) {
            let mut in_list = false;
            for line in help.lines() {
                if line.chars().count() > 100 {
                    bad.push(format!("{path}: over 100 columns: {line}"));
                }
                if line.ends_with(':') && !line.starts_with(' ') {
                    in_list = matches!(line, "Options:" | "Arguments:" | "Commands:");
                    continue;
                }
                // In a list every line starts an entry: `  -x, --long`,
                // `  --long`, `  <ARG>`, `  [ARG]` or `  name`; a line
                // that starts further in is a wrapped one.
                if in_list && !line.is_empty() && line.starts_with("          ") {
                    bad.push(format!("{path}: wrapped: {line}"));
                }
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn long_help_keeps_every_word() {
        let cmd = shortened(super::super::Cli::command());
        let db = cmd
            .get_arguments()
            .find(|a| a.get_id() == "db")
            .expect("--db");
        assert_eq!(
            db.get_help().map(ToString::to_string).as_deref(),
            Some("Results database (SQLite), in a directory that exists")
        );
        assert!(
            db.get_long_help()
                .is_some_and(|h| h.to_string().contains("postgresql://USER@HOST:PORT/DB")),
            "{db:?}"
        );
    }
}
