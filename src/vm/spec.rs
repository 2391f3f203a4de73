//! `--vm IMAGE[,append=ARGS][,cpus=N][,memory=SIZE]`: which kernel a guest
//! boots, with which command line and size, checked before anything boots.
//!
//! `append=` takes the rest of the value when it comes last, so a command
//! line with commas (`lsm=landlock,yama,selinux`) needs no quoting; put
//! `cpus=` and `memory=` before it.

use std::path::PathBuf;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::usage_bail;

/// Guest vCPUs when `cpus=` is not given: the host's online CPUs, at most
/// this many.
pub const DEFAULT_MAX_CPUS: u32 = 2;
/// Guest memory when `memory=` is not given (virtme-ng's size syntax).
pub const DEFAULT_MEMORY: &str = "2G";

/// A kernel to boot and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmSpec {
    /// The kernel image (bzImage or /boot/vmlinuz-*).
    pub image: PathBuf,
    /// Extra kernel command line, after what virtme-ng and secperf add.
    pub append: String,
    /// vCPUs; None: the host's online CPUs, at most [`DEFAULT_MAX_CPUS`].
    pub cpus: Option<u32>,
    /// Memory, e.g. "2G" or "1536M"; None: [`DEFAULT_MEMORY`].
    pub memory: Option<String>,
}

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
    if option == "--kernel" {
        KERNEL_FORMAT
    } else {
        FORMAT
    }
}

/// Parses a `--vm` value (also the part after `NAME=` of `--kernel`). The
/// image must be a readable file.
pub fn parse(value: &str, option: &str) -> Result<VmSpec> {
    let spec = parse_with(value, option, &mut |_, _| Ok(false))?;
    check_image(&spec, option)?;
    Ok(spec)
}

/// Parses `FIRST[,KEY=VALUE]...[,append=ARGS]` as [`parse`] does, without
/// checking FIRST: keys other than cpus, memory and append go to `extra`,
/// which returns whether it took them (a kernel source's `rev=`,
/// `patch=`, `config=`).
pub fn parse_with(
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
            other @ ("rev" | "patch" | "config") if option == "--kernel" => {
                usage_bail!(
                    "{option} {value}: {other}= is for a kernel source tree, and {image} is not \
                     a directory{}; give the path of a git checkout or unpacked source (a \
                     directory with the kernel's Makefile), or drop {other}= to boot an image",
                    if std::path::Path::new(image).exists() {
                        ""
                    } else {
                        " (it does not exist)"
                    }
                )
            }
            other => {
                let known: &[&str] = if option == "--kernel" {
                    &["cpus", "memory", "append", "rev", "patch", "config"]
                } else {
                    &["cpus", "memory", "append"]
                };
                usage_bail!(
                    "{option} {value}: unknown key '{other}' (known: {}{}){}; {format}",
                    known.join(", "),
                    if option == "--kernel" {
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

/// Checks that a spec's image is a readable file.
pub fn check_image(spec: &VmSpec, option: &str) -> Result<()> {
    if !spec.image.is_file() {
        let source = if option == "--kernel" {
            ", or a kernel source tree (a directory with the kernel's Makefile, e.g. \
             /usr/src/linux-source-6.1 after apt-get install linux-source-6.1)"
        } else {
            ""
        };
        usage_bail!(
            "{option}: {} is neither a kernel image nor a directory; give a bzImage or \
             /boot/vmlinuz-* (Debian: apt-get install linux-image-amd64){source}",
            spec.image.display()
        );
    }
    let head = match read_head(&spec.image) {
        Ok(h) => h,
        Err(e) => usage_bail!(
            "{option}: cannot read kernel image {}: {e} (run as root, or copy the image)",
            spec.image.display()
        ),
    };
    if let Err(what) = boot_header(&head) {
        usage_bail!(
            "{option}: {} is not a kernel image QEMU can boot: it is {what}, where a bzImage has \
             the x86 boot header (\"HdrS\" at byte 0x202); give a bzImage or /boot/vmlinuz-*{}",
            spec.image.display(),
            sibling_image(&spec.image)
                .map(|p| format!(" (beside it: {})", p.display()))
                .unwrap_or_default()
        );
    }
    Ok(())
}

/// The first KiB of an x86 kernel image: its boot header and nothing to
/// boot, for tests that hand secperf an image that is never booted (a
/// `vng` of their own stands in for QEMU).
#[doc(hidden)]
pub fn header_only_image() -> Vec<u8> {
    let mut head = vec![0u8; 1024];
    head[0x1fe..0x200].copy_from_slice(&[0x55, 0xaa]);
    head[0x202..0x206].copy_from_slice(b"HdrS");
    head
}

/// The first bytes of a file, enough for its boot header.
fn read_head(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(1024);
    std::fs::File::open(path)?
        .take(1024)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// Whether `head` starts an x86 kernel image QEMU's `-kernel` boots (the
/// boot protocol's header: 0x55AA at 0x1FE, "HdrS" at 0x202), or else
/// what it looks like.
pub fn boot_header(head: &[u8]) -> std::result::Result<(), String> {
    if head.get(0x1fe..0x200) == Some(&[0x55, 0xaa]) && head.get(0x202..0x206) == Some(b"HdrS") {
        return Ok(());
    }
    if head.starts_with(b"\x7fELF") {
        return Err("an ELF file (an uncompressed vmlinux?)".into());
    }
    if head.is_empty() {
        return Err("empty".into());
    }
    let text = head
        .iter()
        .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace());
    if text {
        let text = String::from_utf8_lossy(head);
        let first = text
            .lines()
            .map(|l| l.trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .chars()
            .take(48)
            .collect::<String>();
        let config =
            text.contains("Kernel Configuration") || text.lines().any(|l| l.starts_with("CONFIG_"));
        let kind = if config {
            "a kernel's configuration (text)"
        } else {
            "a text file"
        };
        return Err(format!("{kind}, starting \"{first}\""));
    }
    if head.starts_with(&[0x1f, 0x8b]) || head.starts_with(b"070701") {
        return Err("an archive (an initramfs?)".into());
    }
    Err(format!("{} bytes without it", head.len()))
}

/// /boot/vmlinuz-VERSION beside /boot/config-VERSION (or System.map-,
/// initrd.img-), when it is there.
fn sibling_image(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let name = path.file_name()?.to_str()?;
    let version = ["config-", "System.map-", "initrd.img-", "vmlinux-"]
        .iter()
        .find_map(|p| name.strip_prefix(p))?;
    let image = path.with_file_name(format!("vmlinuz-{version}"));
    image.is_file().then_some(image)
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

impl VmSpec {
    /// The vCPUs the guest gets.
    pub fn vcpus(&self) -> u32 {
        self.cpus.unwrap_or_else(|| {
            let online = crate::sys::cpus::online_cpus().map_or(1, |c| c.len());
            (online as u32).clamp(1, DEFAULT_MAX_CPUS)
        })
    }

    /// The memory the guest gets.
    pub fn memory(&self) -> String {
        self.memory.clone().unwrap_or_else(|| DEFAULT_MEMORY.into())
    }

    /// The value as `--vm` takes it back (for a stored command line).
    pub fn to_arg(&self) -> String {
        let mut s = self.image.display().to_string();
        if let Some(c) = self.cpus {
            s.push_str(&format!(",cpus={c}"));
        }
        if let Some(m) = &self.memory {
            s.push_str(&format!(",memory={m}"));
        }
        if !self.append.is_empty() {
            s.push_str(&format!(",append={}", self.append));
        }
        s
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_file_without_the_x86_boot_header_is_named_for_what_it_is() {
        // Issue 53: /boot/config-* was booted, and QEMU printed nothing.
        assert_eq!(boot_header(&header_only_image()), Ok(()));
        let config = b"#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 6.1.0 \
                       Kernel Configuration\n#\nCONFIG_CC_VERSION_TEXT=\"gcc\"\n";
        let e = boot_header(config).unwrap_err();
        assert!(e.starts_with("a kernel's configuration (text)"), "{e}");
        assert!(e.contains("Automatically generated file"), "{e}");
        assert!(
            boot_header(b"hello\n")
                .unwrap_err()
                .starts_with("a text file")
        );
        assert!(boot_header(b"\x7fELF\x02\x01").unwrap_err().contains("ELF"));
        assert_eq!(boot_header(b"").unwrap_err(), "empty");
        assert!(
            boot_header(&[0x1f, 0x8b, 8, 0])
                .unwrap_err()
                .contains("archive")
        );
        // A real image, where the machine has one.
        if let Some(image) = std::fs::read_dir("/boot").ok().and_then(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.to_string_lossy().contains("vmlinuz-"))
        }) && let Ok(head) = read_head(&image)
        {
            assert_eq!(boot_header(&head), Ok(()), "{}", image.display());
            let config = image.with_file_name(
                image
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .replace("vmlinuz-", "config-"),
            );
            if config.is_file() {
                assert_eq!(sibling_image(&config), Some(image.clone()));
                let spec = VmSpec {
                    image: config.clone(),
                    append: String::new(),
                    cpus: None,
                    memory: None,
                };
                let e = check_image(&spec, "--vm").unwrap_err().to_string();
                assert!(e.contains("a kernel's configuration"), "{e}");
                assert!(
                    e.contains(&format!("beside it: {}", image.display())),
                    "{e}"
                );
            }
        }
    }

    pub fn image() -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), header_only_image()).unwrap();
        f
    }

    #[test]
    fn image_alone_and_with_every_key() {
        let f = image();
        let p = f.path().display().to_string();
        let s = parse(&p, "--vm").unwrap();
        assert_eq!(s.image, f.path());
        assert_eq!((s.append.as_str(), s.cpus, s.memory), ("", None, None));
        let s = parse(
            &format!("{p},cpus=2,memory=1G,append=lsm=landlock,selinux audit=1"),
            "--vm",
        )
        .unwrap();
        assert_eq!(s.cpus, Some(2));
        assert_eq!(s.memory.as_deref(), Some("1024M"));
        // append= keeps the commas of the rest of the value.
        assert_eq!(s.append, "lsm=landlock,selinux audit=1");
        assert_eq!(parse(&s.to_arg(), "--vm").unwrap(), s);
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
            let e = parse(&bad, "--vm").unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}");
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_kernels_bad_key_or_path_is_told_both_kinds_of_source() {
        // Issue 44: `pach=` was told to "give --vm IMAGE", and a mistyped
        // source directory only about bzImages.
        let f = image();
        let p = f.path().display().to_string();
        let e = parse(&format!("{p},pach=x.patch"), "--kernel").unwrap_err();
        let e = e.to_string();
        assert!(e.contains("did you mean 'patch'?"), "{e}");
        assert!(e.contains("give --kernel NAME=IMAGE|SOURCE"), "{e}");
        assert!(!e.contains("give --vm"), "{e}");
        let e = parse("/usr/src/linux-sorce-6.1", "--kernel").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("or a kernel source tree"), "{e}");
        let e = parse("/nonexistent/vmlinuz", "--vm").unwrap_err();
        assert!(!e.to_string().contains("source tree"), "{e}");
        // A source's key on a path that is no directory (a mistyped tree)
        // says so, not "unknown key 'rev' ... did you mean 'rev'?".
        let e = parse("/nonexistent/linux,rev=v6.1", "--kernel").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        let e = e.to_string();
        assert!(
            e.contains("rev= is for a kernel source tree, and /nonexistent/linux is not a directory (it does not exist)"),
            "{e}"
        );
        assert!(!e.contains("did you mean"), "{e}");
    }
}
