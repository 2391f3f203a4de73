//! The sides of a kernel A/B across boots, typed: an image with its
//! command line, or a kernel source to build (parsed from the command
//! line by `cli`, made by a series for each revision); whether two arms
//! differ; and what a run records of each.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{VmFacts, VmSpec};
/// A source arm's build (a kernel tree, its rev, patches and config),
/// part of the typed arm.
pub use crate::kbuild::SourceSpec;

/// One side of a kernel A/B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelArm {
    pub name: String,
    pub spec: VmSpec,
    /// For an arm built from source: what it was built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<crate::kbuild::BuildRecord>,
}

/// One `--kernel` as given: an image, or a source to build (whose
/// `vm.image` is the source directory until it is built).
#[derive(Debug, Clone, PartialEq)]
pub struct ArmRequest {
    pub name: String,
    pub vm: VmSpec,
    pub source: Option<crate::kbuild::SourceSpec>,
}

/// Checks that the two arms (the layout control's may come third) differ:
/// in their kernels or their command lines. A refusal names the arms and
/// the fields ([`crate::error::FieldError`]).
pub fn check_arms(arms: &[KernelArm]) -> Result<()> {
    let refused = |why: String| -> Result<()> { Err(crate::error::FieldError(why).into()) };
    let (a, b) = (&arms[0], &arms[1]);
    let same_build = matches!((&a.build, &b.build), (Some(x), Some(y)) if x.key == y.key);
    if a.spec.append == b.spec.append && same_build {
        return refused(format!(
            "arms '{}' and '{}' build the same kernel (cache key {}) with the same command line: \
             give one a patch=, rev=, config= or append=",
            a.name,
            b.name,
            a.build.as_ref().map_or("", |r| r.key.as_str())
        ));
    }
    if a.spec == b.spec {
        return refused(format!(
            "arms '{}' and '{}' boot the same image with the same command line: give another \
             image or append=",
            a.name, b.name
        ));
    }
    Ok(())
}

/// The run note that holds a kernel A/B's [`ArmRecord`]s.
pub const NOTE: &str = "boot_arms";

/// What a boot-arm run records of each arm (a run note and the report's
/// "Boot arms" section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmRecord {
    pub name: String,
    pub role: String,
    pub spec: VmSpec,
    /// The VM's facts of each boot of this arm, in order.
    pub boots: Vec<VmFacts>,
    /// The guest's probe (`secperf probe --json`) in the arm's first boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<serde_json::Value>,
    /// For an arm built from source: its source, patches, `.config` and
    /// toolchain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<crate::kbuild::BuildRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_that_boot_the_same_kernel_the_same_way_are_refused_naming_them() {
        let f = crate::vm::spec::tests::image();
        let arm = |name: &str, append: &str| KernelArm {
            name: name.into(),
            spec: VmSpec {
                image: f.path().to_path_buf(),
                append: append.into(),
                cpus: None,
                memory: None,
            },
            build: None,
        };
        assert!(check_arms(&[arm("audit0", "audit=0"), arm("audit1", "audit=1")]).is_ok());
        let e = check_arms(&[arm("a", "audit=1"), arm("b", "audit=1")]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(
            e.to_string(),
            "arms 'a' and 'b' boot the same image with the same command line: give another \
             image or append="
        );
        assert!(e.downcast_ref::<crate::error::FieldError>().is_some());
        // The command line words it with its flag.
        assert!(format!("{:#}", e.context("FLAG")).starts_with("FLAG: arms 'a' and 'b'"));
    }
}
