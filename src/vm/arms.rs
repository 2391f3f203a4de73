//! The sides of a kernel A/B across boots (`--kernel
//! NAME=IMAGE[,append=ARGS]`, or `--kernel NAME=SOURCE[,rev=REV]
//! [,patch=FILE]...[,config=FRAGMENT][,append=ARGS]` for a kernel built
//! from source), and what a run records of each.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{VmFacts, VmSpec};
use crate::usage_bail;

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

/// Parses `--kernel NAME=IMAGE...` or `--kernel NAME=SOURCE...`: a
/// directory is a kernel source to build.
pub fn parse_request(value: &str) -> Result<ArmRequest> {
    let Some((name, rest)) = value.split_once('=') else {
        usage_bail!(
            "--kernel {value}: give NAME=IMAGE[,append=ARGS] or NAME=SOURCE[,patch=FILE], e.g. \
             --kernel audit0=/boot/vmlinuz-6.1.0-56-amd64,append=audit=0"
        );
    };
    let first = rest.split(',').next().unwrap_or("").trim();
    if !std::path::Path::new(first).is_dir() {
        let arm = parse_arm(value)?;
        return Ok(ArmRequest {
            name: arm.name,
            vm: arm.spec,
            source: None,
        });
    }
    let name = arm_name(value, name)?;
    let mut source = crate::kbuild::SourceSpec::new(std::path::Path::new(first), "--kernel")?;
    let vm = crate::vm::spec::parse_with(rest, "--kernel", &mut |k, v| {
        source.take_key(k, v, "--kernel")
    })?;
    Ok(ArmRequest {
        name,
        vm,
        source: Some(source),
    })
}

/// Parses the `--kernel` values: exactly two, named apart.
pub fn parse_requests(values: &[String]) -> Result<Vec<ArmRequest>> {
    let arms = values
        .iter()
        .map(|v| parse_request(v))
        .collect::<Result<Vec<_>>>()?;
    two_named_apart(&arms.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), 2)?;
    Ok(arms)
}

/// Checks that the user gave exactly two arms (`allowed` counts the
/// layout control's too), and that their names differ.
fn two_named_apart(names: &[&str], allowed: usize) -> Result<()> {
    if names.len() < 2 || names.len() > allowed {
        usage_bail!(
            "--kernel: give exactly two arms (the baseline first), e.g. --kernel base=IMAGE \
             --kernel patched=IMAGE2; {} given",
            names.len()
        );
    }
    if let Some(dup) = names
        .iter()
        .enumerate()
        .find_map(|(i, n)| names[..i].contains(n).then_some(n))
    {
        usage_bail!("--kernel: both arms are named '{dup}': name them apart");
    }
    Ok(())
}

/// Checks an arm's name: letters, digits, '.', '_', '-'.
fn arm_name(value: &str, name: &str) -> Result<String> {
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
    Ok(name.to_string())
}

/// Parses `--kernel NAME=IMAGE[,cpus=N][,memory=SIZE][,append=ARGS]`.
pub fn parse_arm(value: &str) -> Result<KernelArm> {
    let Some((name, rest)) = value.split_once('=') else {
        usage_bail!(
            "--kernel {value}: give NAME=IMAGE[,append=ARGS], e.g. --kernel \
             audit0=/boot/vmlinuz-6.1.0-56-amd64,append=audit=0"
        );
    };
    Ok(KernelArm {
        name: arm_name(value, name)?,
        spec: crate::vm::spec::parse(rest, "--kernel")?,
        build: None,
    })
}

/// Checks the arms: exactly two, with different names, and different
/// kernels or command lines.
pub fn check_arms(arms: &[KernelArm]) -> Result<()> {
    // The layout control's arm, built from source, may come third.
    let allowed = if arms.get(2).is_some_and(|a| a.build.is_some()) {
        3
    } else {
        2
    };
    two_named_apart(
        &arms.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        allowed,
    )?;
    let (a, b) = (&arms[0], &arms[1]);
    let same_build = matches!((&a.build, &b.build), (Some(x), Some(y)) if x.key == y.key);
    if a.spec.append == b.spec.append && same_build {
        usage_bail!(
            "--kernel: arms '{}' and '{}' build the same kernel (cache key {}) with the same \
             command line: give one a patch=, rev=, config= or append=",
            a.name,
            b.name,
            a.build.as_ref().map_or("", |r| r.key.as_str())
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
    fn arms_are_checked() {
        let f = crate::vm::spec::tests::image();
        let p = f.path().display().to_string();
        let a = parse_arm(&format!("audit0={p},append=audit=0")).unwrap();
        assert_eq!(a.name, "audit0");
        assert_eq!(a.spec.append, "audit=0");
        let b = parse_arm(&format!("audit1={p},append=audit=1")).unwrap();
        assert!(check_arms(&[a.clone(), b.clone()]).is_ok());
        for (bad, says) in [
            (vec![a.clone()], "exactly two"),
            (vec![a.clone(), a.clone()], "both arms are named"),
            (vec![a.clone(), b.clone(), b.clone()], "exactly two"),
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

    #[test]
    fn a_directory_is_a_source_to_build_with_its_keys() {
        let t = tempfile::tempdir().unwrap();
        let patch = t.path().join("fix.patch");
        std::fs::write(&patch, "x").unwrap();
        let src = t.path().display().to_string();
        let r = parse_request(&format!(
            "patched={src},patch={},cpus=2,append=audit=1 lsm=a,b",
            patch.display()
        ))
        .unwrap();
        assert_eq!(r.name, "patched");
        let s = r.source.expect("a source");
        assert_eq!(s.patches.len(), 1);
        assert_eq!(r.vm.cpus, Some(2));
        assert_eq!(r.vm.append, "audit=1 lsm=a,b");
        let f = crate::vm::spec::tests::image();
        let image = parse_request(&format!("base={}", f.path().display())).unwrap();
        assert!(image.source.is_none());
        let e = parse_request(&format!("x={src},colour=red")).unwrap_err();
        assert!(
            e.to_string()
                .contains("rev, patch and config for a source tree"),
            "{e}"
        );
        let e = parse_requests(&[format!("a={src}"), format!("a={src}")]).unwrap_err();
        assert!(e.to_string().contains("both arms are named"), "{e}");
    }
}
