//! Which kernel a guest boots, with which command line and size
//! ([`VmSpec`], parsed from `--vm` and `--kernel` by the command line), and
//! whether a file is a kernel image QEMU can boot ([`image_problem`]),
//! checked before anything boots.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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

/// Why a path is no kernel image QEMU can boot.
#[derive(Debug)]
pub enum ImageProblem {
    /// Not a file (missing, or a directory).
    NotAFile,
    /// A file that cannot be read.
    Unreadable(std::io::Error),
    /// A file without the x86 boot header: what it is instead, and the
    /// image beside it when there is one (`/boot/vmlinuz-V` beside
    /// `/boot/config-V`).
    NotBootable {
        what: String,
        beside: Option<PathBuf>,
    },
}

/// What keeps `image` from being a kernel image QEMU can boot, if
/// anything; the command line words it with its flag.
pub fn image_problem(image: &std::path::Path) -> Option<ImageProblem> {
    if !image.is_file() {
        return Some(ImageProblem::NotAFile);
    }
    let head = match read_head(image) {
        Ok(h) => h,
        Err(e) => return Some(ImageProblem::Unreadable(e)),
    };
    boot_header(&head)
        .err()
        .map(|what| ImageProblem::NotBootable {
            what,
            beside: sibling_image(image),
        })
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
                match image_problem(&spec.image) {
                    Some(ImageProblem::NotBootable { what, beside }) => {
                        assert!(what.contains("a kernel's configuration"), "{what}");
                        assert_eq!(beside, Some(image.clone()));
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    pub fn image() -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), header_only_image()).unwrap();
        f
    }
}
