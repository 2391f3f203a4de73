//! The layout control's inert change: a function nothing calls, appended
//! to a file linked early and unrelated to the comparison, so that the
//! code linked after it moves by a fraction of a cache line. Comparing the
//! baseline with itself so rebuilt says how much a difference of that
//! size could come from code layout alone (alignment of hot loops and
//! functions against cache lines, the branch predictor's and the uop
//! cache's sets), not from what a patch changed.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The files the padding may go into, the first not touched by the arm's
/// patches: each is linked early in vmlinux (init/ comes first), so
/// nearly all of the kernel's text moves.
pub const CANDIDATES: &[&str] = &["init/main.c", "init/calibrate.c", "init/version.c"];

/// Bytes of no-ops in the padding function. With the function's entry,
/// return and x86-64's 16-byte function alignment it takes 32 bytes: half
/// a cache line, so what was aligned to a line no longer is.
pub const PAD_BYTES: u32 = 20;

/// What the layout arm changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutChange {
    pub file: String,
    pub pad_bytes: u32,
}

/// The text appended.
pub fn padding() -> String {
    format!(
        "\n/* secperf's layout control: an inert function, never called, that moves the \
         code linked after this file. */\nstatic void __used noinline secperf_layout_pad(void)\n\
         {{\n\tasm volatile(\".skip {PAD_BYTES}, 0x90\");\n}}\n"
    )
}

/// Which file gets the padding: the first candidate that exists and that
/// no patch of the arm touches.
pub fn choose(src: &Path, touched: &[String]) -> Result<&'static str> {
    CANDIDATES
        .iter()
        .copied()
        .find(|f| src.join(f).is_file() && !touched.iter().any(|t| t == f))
        .with_context(|| {
            format!(
                "no file for the layout control's padding: each of {} is missing or patched",
                CANDIDATES.join(", ")
            )
        })
}

/// Appends the padding to the chosen file of `src` (secperf's copy).
pub fn apply(src: &Path, touched: &[String]) -> Result<LayoutChange> {
    let file = choose(src, touched)?;
    let path = src.join(file);
    let mut text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    text.push_str(&padding());
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(LayoutChange {
        file: file.to_string(),
        pad_bytes: PAD_BYTES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_padding_goes_into_an_unpatched_early_file() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("init")).unwrap();
        for f in CANDIDATES {
            std::fs::write(t.path().join(f), "int x;\n").unwrap();
        }
        assert_eq!(choose(t.path(), &[]).unwrap(), "init/main.c");
        assert_eq!(
            choose(t.path(), &["init/main.c".into()]).unwrap(),
            "init/calibrate.c"
        );
        let c = apply(t.path(), &["init/main.c".into()]).unwrap();
        assert_eq!(c.file, "init/calibrate.c");
        let text = std::fs::read_to_string(t.path().join("init/calibrate.c")).unwrap();
        assert!(text.starts_with("int x;\n"));
        assert!(text.contains("secperf_layout_pad") && text.contains(".skip 20, 0x90"));
        let all: Vec<String> = CANDIDATES.iter().map(|s| s.to_string()).collect();
        assert!(choose(t.path(), &all).is_err());
    }
}
