//! The two sides of a kernel A/B across boots (`--kernel
//! NAME=IMAGE[,append=ARGS]`), and what a run records of each.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{VmFacts, VmSpec};
use crate::usage_bail;

/// One side of a kernel A/B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelArm {
    pub name: String,
    pub spec: VmSpec,
}

/// Parses `--kernel NAME=IMAGE[,cpus=N][,memory=SIZE][,append=ARGS]`.
pub fn parse_arm(value: &str) -> Result<KernelArm> {
    let Some((name, rest)) = value.split_once('=') else {
        usage_bail!(
            "--kernel {value}: give NAME=IMAGE[,append=ARGS], e.g. --kernel \
             audit0=/boot/vmlinuz-6.1.0-56-amd64,append=audit=0"
        );
    };
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        usage_bail!(
            "--kernel {value}: the arm's name '{name}' must be letters, digits, '.', '_' or '-' \
             (e.g. base, patched, audit1)"
        );
    }
    Ok(KernelArm {
        name: name.to_string(),
        spec: crate::vm::spec::parse(rest, "--kernel")?,
    })
}

/// The `--kernel` values parsed and checked ([`parse_arm`], [`check_arms`]).
pub fn parse_arms(values: &[String]) -> Result<[KernelArm; 2]> {
    check_arms(
        &values
            .iter()
            .map(|v| parse_arm(v))
            .collect::<Result<Vec<_>>>()?,
    )
}

/// Checks the arms: exactly two, with different names, and different
/// kernels or command lines.
pub fn check_arms(arms: &[KernelArm]) -> Result<[KernelArm; 2]> {
    let [a, b] = arms else {
        usage_bail!(
            "--kernel: give exactly two arms (the baseline first), e.g. --kernel base=IMAGE \
             --kernel patched=IMAGE2; {} given",
            arms.len()
        );
    };
    if a.name == b.name {
        usage_bail!(
            "--kernel: both arms are named '{}': name them apart",
            a.name
        );
    }
    if a.spec == b.spec {
        usage_bail!(
            "--kernel: arms '{}' and '{}' boot the same image with the same command line: \
             give another image or append=",
            a.name,
            b.name
        );
    }
    Ok([a.clone(), b.clone()])
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_are_checked() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let p = f.path().display().to_string();
        let a = parse_arm(&format!("audit0={p},append=audit=0")).unwrap();
        assert_eq!(a.name, "audit0");
        assert_eq!(a.spec.append, "audit=0");
        let b = parse_arm(&format!("audit1={p},append=audit=1")).unwrap();
        assert!(check_arms(&[a.clone(), b.clone()]).is_ok());
        for (bad, says) in [
            (vec![a.clone()], "exactly two"),
            (vec![a.clone(), a.clone()], "both arms are named"),
        ] {
            let e = check_arms(&bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2);
            assert!(e.to_string().contains(says), "{e}");
        }
        let same = KernelArm {
            name: "other".into(),
            ..a.clone()
        };
        assert!(
            check_arms(&[a, same])
                .unwrap_err()
                .to_string()
                .contains("same image")
        );
        for bad in [p.clone(), format!("bad name={p}"), format!("={p}")] {
            let e = parse_arm(&bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}");
        }
    }
}
