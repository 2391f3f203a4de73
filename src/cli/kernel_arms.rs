//! `--vm IMAGE[,KEY=V...]` and `--kernel NAME=IMAGE|SOURCE[,KEY=V...]`
//! as typed: each value parsed once into the typed spec or arm
//! ([`VmSpec`], [`ArmRequest`]: an image, or a source with its rev,
//! patches and config, and the VM's cpus, memory and append), and checked
//! once, here. Errors name the flag; the layers below name the arm and the
//! field, and [`worded`] gives theirs the flag the arm came from.
//!
//! `append=` takes the rest of the value when it comes last, so a command
//! line with commas (`lsm=landlock,yama,selinux`) needs no quoting; put
//! the other keys before it.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::usage_bail;
use crate::vm::VmSpec;
use crate::vm::arms::{ArmRequest, SourceSpec};
use crate::vm::spec::ImageProblem;

const VM: &str = "--vm";
const KERNEL: &str = "--kernel";

const FORMAT: &str = "give --vm IMAGE[,cpus=N][,memory=SIZE][,append=ARGS], e.g. \
                      --vm /boot/vmlinuz-6.1.0-56-amd64,cpus=2,append=audit=1";

/// `--kernel`'s form: an image or a source tree, each with its keys.
const KERNEL_FORMAT: &str = "give --kernel NAME=IMAGE|SOURCE[,rev=REV][,patch=FILE]\
                             [,config=FRAGMENT][,cpus=N][,memory=SIZE][,append=ARGS], IMAGE a \
                             bzImage or /boot/vmlinuz-*, SOURCE a kernel source tree (rev=, \
                             patch= and config= are for a tree), e.g. --kernel \
                             base=/boot/vmlinuz-6.1.0-56-amd64 or --kernel \
                             patched=/usr/src/linux-source-6.1,patch=fix.patch";

/// The form of `option`'s value, for its errors.
fn format_of(option: &str) -> &'static str {
    if option == KERNEL {
        KERNEL_FORMAT
    } else {
        FORMAT
    }
}

/// `--vm`'s value: the image must be a kernel image QEMU can boot.
pub fn vm_spec(value: &str) -> Result<VmSpec> {
    let spec = parse_with(value, VM, &mut |_, _| Ok(false))?;
    check_image(&spec, VM)?;
    Ok(spec)
}

/// The `--kernel` values: exactly two, named apart, the shared fragment
/// (`--kernel-config`) given to every source arm without its own
/// `config=`, and with `--layout-control` the baseline's layout control
/// added (the baseline must be a source).
pub fn kernel_arms(
    values: &[String],
    shared_config: Option<&Path>,
    layout_control: bool,
) -> Result<Vec<ArmRequest>> {
    let mut arms = values
        .iter()
        .map(|v| parse_request(v))
        .collect::<Result<Vec<_>>>()?;
    two_named_apart(&arms.iter().map(|a| a.name.as_str()).collect::<Vec<_>>())?;
    if let Some(f) = shared_config {
        if !arms.iter().any(|r| r.source.is_some()) {
            usage_bail!(
                "--kernel-config {}: no arm is built from source (give an arm as NAME=SOURCE)",
                f.display()
            );
        }
        for r in arms.iter_mut() {
            if let Some(s) = r.source.as_mut()
                && s.config.is_none()
            {
                s.take_key("config", &f.display().to_string())
                    .map_err(|e| e.context("--kernel-config"))?;
            }
        }
    }
    if !layout_control {
        return Ok(arms);
    }
    if arms[0].source.is_none() {
        usage_bail!(
            "--layout-control rebuilds the baseline with an inert change: give the baseline \
             arm as a source tree (--kernel {}=SOURCE[,patch=...]), not an image",
            arms[0].name
        );
    }
    crate::engine::boots::kernels::with_layout_control(arms)
}

/// The engine's error about the arms of an `overhead --kernel` or `suite
/// --kernel` A/B, worded with the flag they came from (the engine names
/// the arm and the field only).
pub fn worded(e: anyhow::Error) -> anyhow::Error {
    if e.downcast_ref::<crate::error::FieldError>().is_some() {
        e.context(KERNEL)
    } else {
        e
    }
}

/// Parses `NAME=IMAGE...` or `NAME=SOURCE...`: a directory is a kernel
/// source to build.
fn parse_request(value: &str) -> Result<ArmRequest> {
    let Some((name, rest)) = value.split_once('=') else {
        usage_bail!(
            "--kernel {value}: give NAME=IMAGE[,append=ARGS] or NAME=SOURCE[,patch=FILE], e.g. \
             --kernel audit0=/boot/vmlinuz-6.1.0-56-amd64,append=audit=0"
        );
    };
    let name = arm_name(value, name)?;
    let first = rest.split(',').next().unwrap_or("").trim();
    if !Path::new(first).is_dir() {
        let vm = parse_with(rest, KERNEL, &mut |_, _| Ok(false))?;
        check_image(&vm, KERNEL)?;
        return Ok(ArmRequest {
            name,
            vm,
            source: None,
        });
    }
    let mut source = SourceSpec::new(Path::new(first)).map_err(|e| e.context(KERNEL))?;
    let vm = parse_with(rest, KERNEL, &mut |k, v| {
        source.take_key(k, v).map_err(|e| e.context(KERNEL))
    })?;
    Ok(ArmRequest {
        name,
        vm,
        source: Some(source),
    })
}

/// Checks that the user gave exactly two arms and that their names
/// differ.
fn two_named_apart(names: &[&str]) -> Result<()> {
    if names.len() != 2 {
        usage_bail!(
            "--kernel: give exactly two arms (the baseline first), e.g. --kernel base=IMAGE \
             --kernel patched=IMAGE2; {} given",
            names.len()
        );
    }
    if names[0] == names[1] {
        usage_bail!(
            "--kernel: both arms are named '{}': name them apart",
            names[0]
        );
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

/// Parses `FIRST[,KEY=VALUE]...[,append=ARGS]` without checking FIRST:
/// keys other than cpus, memory and append go to `extra`, which returns
/// whether it took them (a kernel source's `rev=`, `patch=`, `config=`).
fn parse_with(
    value: &str,
    option: &str,
    extra: &mut dyn FnMut(&str, &str) -> Result<bool>,
) -> Result<VmSpec> {
    let format = format_of(option);
    let mut rest = value.trim();
    if rest.is_empty() {
        usage_bail!("{option}: no kernel image given; {format}");
    }
    let (image, mut tail) = match rest.find(',') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mut spec = VmSpec {
        image: PathBuf::from(image),
        append: String::new(),
        cpus: None,
        memory: None,
    };
    while let Some(t) = tail.take() {
        rest = t;
        if let Some(args) = rest.strip_prefix("append=") {
            spec.append = args.trim().to_string();
            break;
        }
        let (item, next) = match rest.find(',') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        tail = next;
        let Some((key, v)) = item.split_once('=') else {
            usage_bail!("{option} {value}: '{item}' is not KEY=VALUE; {format}");
        };
        match key.trim() {
            "cpus" => match v.trim().parse::<u32>() {
                Ok(n) if (1..=256).contains(&n) => spec.cpus = Some(n),
                _ => {
                    usage_bail!("{option} {value}: cpus={v}: give a number of vCPUs from 1 to 256")
                }
            },
            "memory" => spec.memory = Some(memory(v.trim(), option, value)?),
            other if extra(other, v.trim())? => {}
            other @ ("rev" | "patch" | "config") if option == KERNEL => {
                usage_bail!(
                    "{option} {value}: {other}= is for a kernel source tree, and {image} is not \
                     a directory{}; give the path of a git checkout or unpacked source (a \
                     directory with the kernel's Makefile), or drop {other}= to boot an image",
                    if Path::new(image).exists() {
                        ""
                    } else {
                        " (it does not exist)"
                    }
                )
            }
            other => {
                let known: &[&str] = if option == KERNEL {
                    &["cpus", "memory", "append", "rev", "patch", "config"]
                } else {
                    &["cpus", "memory", "append"]
                };
                usage_bail!(
                    "{option} {value}: unknown key '{other}' (known: {}{}){}; {format}",
                    known.join(", "),
                    if option == KERNEL {
                        "; rev, patch and config for a source tree"
                    } else {
                        ""
                    },
                    crate::params::did_you_mean(other, known.iter().copied())
                )
            }
        }
    }
    Ok(spec)
}

/// Checks that a spec's image is a kernel image QEMU can boot, worded
/// for `option`.
fn check_image(spec: &VmSpec, option: &str) -> Result<()> {
    let image = spec.image.display();
    match crate::vm::spec::image_problem(&spec.image) {
        None => Ok(()),
        Some(ImageProblem::NotAFile) => {
            let source = if option == KERNEL {
                ", or a kernel source tree (a directory with the kernel's Makefile, e.g. \
                 /usr/src/linux-source-6.1 after apt-get install linux-source-6.1)"
            } else {
                ""
            };
            usage_bail!(
                "{option}: {image} is neither a kernel image nor a directory; give a bzImage or \
                 /boot/vmlinuz-* (Debian: apt-get install linux-image-amd64){source}"
            )
        }
        Some(ImageProblem::Unreadable(e)) => usage_bail!(
            "{option}: cannot read kernel image {image}: {e} (run as root, or copy the image)"
        ),
        Some(ImageProblem::NotBootable { what, beside }) => usage_bail!(
            "{option}: {image} is not a kernel image QEMU can boot: it is {what}, where a bzImage \
             has the x86 boot header (\"HdrS\" at byte 0x202); give a bzImage or \
             /boot/vmlinuz-*{}",
            beside
                .map(|p| format!(" (beside it: {})", p.display()))
                .unwrap_or_default()
        ),
    }
}

/// Checks a memory size as QEMU takes it: a number with an optional K, M,
/// G suffix, at least 256M.
fn memory(v: &str, option: &str, value: &str) -> Result<String> {
    let (digits, unit) = match v.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&v[..i], &v[i..]),
        None => (v, "M"),
    };
    let mib = match (digits.parse::<u64>(), unit.to_ascii_uppercase().as_str()) {
        (Ok(n), "K") => n / 1024,
        (Ok(n), "M") => n,
        (Ok(n), "G") => n * 1024,
        _ => usage_bail!(
            "{option} {value}: memory={v}: give a size such as 2G or 1536M (QEMU's syntax)"
        ),
    };
    if mib < 256 {
        usage_bail!("{option} {value}: memory={v}: a guest needs at least 256M");
    }
    Ok(format!("{mib}M"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::spec::tests::image;

    fn parse(value: &str, option: &str) -> Result<VmSpec> {
        let spec = parse_with(value, option, &mut |_, _| Ok(false))?;
        check_image(&spec, option)?;
        Ok(spec)
    }

    #[test]
    fn image_alone_and_with_every_key() {
        let f = image();
        let p = f.path().display().to_string();
        let s = vm_spec(&p).unwrap();
        assert_eq!(s.image, f.path());
        assert_eq!((s.append.as_str(), s.cpus, s.memory), ("", None, None));
        let s = vm_spec(&format!(
            "{p},cpus=2,memory=1G,append=lsm=landlock,selinux audit=1"
        ))
        .unwrap();
        assert_eq!(s.cpus, Some(2));
        assert_eq!(s.memory.as_deref(), Some("1024M"));
        // append= keeps the commas of the rest of the value.
        assert_eq!(s.append, "lsm=landlock,selinux audit=1");
        assert_eq!(vm_spec(&s.to_arg()).unwrap(), s);
    }

    #[test]
    fn bad_values_are_usage_errors_that_say_how() {
        let f = image();
        let p = f.path().display().to_string();
        for (bad, says) in [
            ("".to_string(), "no kernel image"),
            (
                "/nonexistent/vmlinuz".to_string(),
                "is neither a kernel image",
            ),
            (format!("{p},cpus=0"), "from 1 to 256"),
            (format!("{p},cpus=x"), "from 1 to 256"),
            (format!("{p},memory=12"), "at least 256M"),
            (format!("{p},memory=2T"), "such as 2G"),
            (format!("{p},colour=red"), "unknown key 'colour'"),
            (format!("{p},lonely"), "is not KEY=VALUE"),
        ] {
            let e = vm_spec(&bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}");
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_file_that_is_no_kernel_image_is_named_for_what_it_is_with_the_flag() {
        let config = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(
            config.path(),
            "#\n# Linux/x86 6.1.0 Kernel Configuration\n#\nCONFIG_X=y\n",
        )
        .unwrap();
        let p = config.path().display().to_string();
        let e = format!("{:#}", vm_spec(&p).unwrap_err());
        assert!(
            e.starts_with(&format!("--vm: {p} is not a kernel image QEMU can boot")),
            "{e}"
        );
        assert!(e.contains("a kernel's configuration"), "{e}");
        let e = format!(
            "{:#}",
            kernel_arms(&[format!("a={p}"), format!("b={p}")], None, false).unwrap_err()
        );
        assert!(e.starts_with("--kernel: "), "{e}");
    }

    #[test]
    fn a_kernels_bad_key_or_path_is_told_both_kinds_of_source() {
        // Issue 44: `pach=` was told to "give --vm IMAGE", and a mistyped
        // source directory only about bzImages.
        let f = image();
        let p = f.path().display().to_string();
        let e = parse(&format!("{p},pach=x.patch"), KERNEL).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("did you mean 'patch'?"), "{e}");
        assert!(e.contains("give --kernel NAME=IMAGE|SOURCE"), "{e}");
        assert!(!e.contains("give --vm"), "{e}");
        let e = parse("/usr/src/linux-sorce-6.1", KERNEL).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("or a kernel source tree"), "{e}");
        let e = parse("/nonexistent/vmlinuz", VM).unwrap_err();
        assert!(!e.to_string().contains("source tree"), "{e}");
        // A source's key on a path that is no directory (a mistyped tree)
        // says so, not "unknown key 'rev' ... did you mean 'rev'?".
        let e = parse("/nonexistent/linux,rev=v6.1", KERNEL).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let e = e.to_string();
        assert!(
            e.contains("rev= is for a kernel source tree, and /nonexistent/linux is not a directory (it does not exist)"),
            "{e}"
        );
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn arms_are_two_named_apart_with_names_of_their_own() {
        let f = image();
        let p = f.path().display().to_string();
        let arms = kernel_arms(
            &[
                format!("audit0={p},append=audit=0"),
                format!("audit1={p},append=audit=1"),
            ],
            None,
            false,
        )
        .unwrap();
        assert_eq!(arms[0].name, "audit0");
        assert_eq!(arms[0].vm.append, "audit=0");
        assert!(arms.iter().all(|a| a.source.is_none()));
        let a = format!("a={p}");
        for (bad, says) in [
            (vec![a.clone()], "exactly two"),
            (vec![a.clone(), a.clone()], "both arms are named"),
            (
                vec![a.clone(), format!("b={p}"), format!("c={p}")],
                "exactly two",
            ),
        ] {
            let e = kernel_arms(&bad, None, false).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2);
            assert!(e.to_string().contains(says), "{e}");
        }
        for bad in [p.clone(), format!("bad name={p}"), format!("={p}")] {
            let e = kernel_arms(&[bad.clone(), format!("b={p}")], None, false).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}");
        }
        // The layout control needs a source baseline.
        let e = kernel_arms(&[a, format!("b={p}")], None, true).unwrap_err();
        assert!(e.to_string().contains("--layout-control"), "{e}");
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
        let f = image();
        let image = parse_request(&format!("base={}", f.path().display())).unwrap();
        assert!(image.source.is_none());
        let e = parse_request(&format!("x={src},colour=red")).unwrap_err();
        assert!(
            e.to_string()
                .contains("rev, patch and config for a source tree"),
            "{e}"
        );
        // A source key's own error, worded with the flag.
        let e = parse_request(&format!("x={src},rev=-x")).unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            "--kernel: rev=-x: give a git revision (a commit id, tag or branch)"
        );
        let e = kernel_arms(&[format!("a={src}"), format!("a={src}")], None, false).unwrap_err();
        assert!(e.to_string().contains("both arms are named"), "{e}");
        // --kernel-config goes to every source arm without its own.
        let frag = t.path().join("frag");
        std::fs::write(&frag, "CONFIG_X=y\n").unwrap();
        let arms = kernel_arms(
            &[format!("a={src}"), format!("b={src},rev=v1")],
            Some(&frag),
            true,
        )
        .unwrap();
        assert_eq!(arms.len(), 3, "the layout control's arm added");
        assert!(
            arms.iter()
                .all(|a| a.source.as_ref().unwrap().config.is_some())
        );
        assert!(arms[2].source.as_ref().unwrap().layout);
        let e = kernel_arms(
            &[format!("a={src}"), format!("b={src},rev=v1")],
            Some(&t.path().join("nope")),
            false,
        )
        .unwrap_err();
        assert!(format!("{e:#}").starts_with("--kernel-config: "), "{e:#}");
    }
}
