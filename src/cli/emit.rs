//! stdout: a line or block ([`emit`], [`emit_fmt!`]) and one JSON
//! document ([`print_json`]), with a reader that went away (`| head`)
//! ending secperf quietly.

use anyhow::Result;

/// `println!` through [`emit`].
macro_rules! emit_fmt {
    ($($arg:tt)*) => {
        $crate::cli::emit::emit(&format!($($arg)*))
    };
}
pub(crate) use emit_fmt;

/// Prints a value as pretty JSON on stdout.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    emit(&serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Writes one line (or block) to stdout. A reader that went away (`| head`)
/// ends secperf quietly, as it would a C tool; by then every result is
/// stored and every system change undone.
pub(crate) fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{text}").and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            crate::say!("secperf: error: writing to stdout: {e}");
        }
        std::process::exit(if e.kind() == std::io::ErrorKind::BrokenPipe {
            0
        } else {
            1
        });
    }
}
