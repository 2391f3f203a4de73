//! What one arm builds: a kernel source tree, optionally a git revision of
//! it, patches applied in order, and a config fragment applied last. The
//! keys (`rev=`, `patch=`, `config=`) are taken one by one, each checked;
//! an error names the key, and the command line adds the flag it came
//! from.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::usage_bail;

/// One arm's build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceSpec {
    /// The source tree, canonical (a git checkout or an unpacked tarball).
    pub source: PathBuf,
    /// A git revision to build (SOURCE must be a git checkout).
    pub rev: Option<String>,
    /// Patches, applied in this order to secperf's copy.
    pub patches: Vec<PathBuf>,
    /// The user's config fragment, applied after what secperf forces.
    pub config: Option<PathBuf>,
    /// The layout control: the tree with an inert change that moves code.
    #[serde(default)]
    pub layout: bool,
}

impl SourceSpec {
    /// A spec for SOURCE (a directory), nothing else given yet.
    pub fn new(source: &Path) -> Result<SourceSpec> {
        if !source.is_dir() {
            usage_bail!(
                "{} is neither a kernel image file nor a source directory",
                source.display()
            );
        }
        let source = std::fs::canonicalize(source).map_err(|e| {
            crate::error::UsageError::new(format!("cannot resolve {}: {e}", source.display()))
        })?;
        Ok(SourceSpec {
            source,
            rev: None,
            patches: Vec::new(),
            config: None,
            layout: false,
        })
    }

    /// Takes one of the source keys (`rev`, `patch`, `config`); false for
    /// any other key.
    pub fn take_key(&mut self, key: &str, value: &str) -> Result<bool> {
        match key {
            "rev" => {
                if value.is_empty() || value.starts_with('-') || value.contains(char::is_whitespace)
                {
                    usage_bail!("rev={value}: give a git revision (a commit id, tag or branch)");
                }
                self.rev = Some(value.to_string());
            }
            "patch" => self.patches.push(readable(value, "patch")?),
            "config" => {
                if self.config.is_some() {
                    usage_bail!("config= given twice: put both fragments in one file");
                }
                self.config = Some(readable(value, "config fragment")?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// One line for progress and plans: "SOURCE@REV + 2 patches + config F".
    pub fn describe(&self) -> String {
        let mut s = self.source.display().to_string();
        if let Some(r) = &self.rev {
            s.push_str(&format!("@{r}"));
        }
        for p in &self.patches {
            s.push_str(&format!(
                " + {}",
                p.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
        if let Some(c) = &self.config {
            s.push_str(&format!(
                " + config {}",
                c.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
        if self.layout {
            s.push_str(" + layout padding");
        }
        s
    }
}

/// A file the user named, checked readable, made absolute.
fn readable(value: &str, what: &str) -> Result<PathBuf> {
    let p = PathBuf::from(value);
    if !p.is_file() {
        usage_bail!("{what} {value} is not a file");
    }
    if let Err(e) = std::fs::read(&p) {
        usage_bail!("cannot read {what} {value}: {e}");
    }
    Ok(std::fs::canonicalize(&p).unwrap_or(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_taken_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let patch = dir.path().join("a.patch");
        std::fs::write(&patch, "x").unwrap();
        let mut s = SourceSpec::new(dir.path()).unwrap();
        assert!(s.take_key("rev", "v6.1").unwrap());
        assert!(s.take_key("patch", patch.to_str().unwrap()).unwrap());
        assert!(s.take_key("patch", patch.to_str().unwrap()).unwrap());
        assert!(!s.take_key("cpus", "2").unwrap());
        assert_eq!(s.patches.len(), 2);
        assert!(
            s.describe().contains("@v6.1 + a.patch + a.patch"),
            "{}",
            s.describe()
        );
        for (k, v, says) in [
            ("rev", "", "git revision"),
            ("rev", "--all", "git revision"),
            ("patch", "/nonexistent.patch", "is not a file"),
        ] {
            let e = s.take_key(k, v).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2);
            assert!(e.to_string().contains(says), "{e}");
        }
        let e = SourceSpec::new(&dir.path().join("nope")).unwrap_err();
        assert!(e.to_string().contains("neither"), "{e}");
    }
}
