//! Inside a guest: what secperf records about the kernel it booted (the
//! build id from /sys/kernel/notes, the release, the command line) for the
//! host to store with the run.
//!
//! A guest is a secperf started by the host with [`GUEST_ENV`] naming the
//! directory it shares with the host.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Set in the guest's environment to the shared directory.
pub const GUEST_ENV: &str = "SECPERF_VM_GUEST";
/// The file in the shared directory that holds [`GuestFacts`].
pub const FACTS_FILE: &str = "guest.json";

/// The shared directory when this secperf runs as a guest.
pub fn shared_dir() -> Option<PathBuf> {
    std::env::var_os(GUEST_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// What the guest says of its kernel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestFacts {
    /// `uname -r`.
    pub release: Option<String>,
    /// /proc/cmdline.
    pub cmdline: Option<String>,
    /// The GNU build id of the running kernel, hex.
    pub build_id: Option<String>,
    /// Seconds since the guest kernel started, when secperf started.
    pub uptime_s: Option<f64>,
    /// What secperf did to the guest before measuring (e.g. loaded an
    /// allow-all SELinux policy), one sentence each.
    #[serde(default)]
    pub prepared: Vec<String>,
}

impl GuestFacts {
    /// Reads the facts of the running kernel.
    pub fn read() -> GuestFacts {
        let text = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
        };
        GuestFacts {
            release: text("/proc/sys/kernel/osrelease"),
            cmdline: text("/proc/cmdline").map(|c| crate::probe::without_virtme_script(&c)),
            build_id: std::fs::read("/sys/kernel/notes")
                .ok()
                .and_then(|b| build_id(&b)),
            uptime_s: text("/proc/uptime").and_then(|u| u.split_whitespace().next()?.parse().ok()),
            prepared: Vec::new(),
        }
    }

    /// Writes them to the shared directory.
    pub fn write(&self, shared: &Path) -> std::io::Result<()> {
        std::fs::write(
            shared.join(FACTS_FILE),
            serde_json::to_string_pretty(self).map_err(std::io::Error::other)?,
        )
    }

    /// Reads them back from the shared directory (None when the guest
    /// wrote none).
    pub fn load(shared: &Path) -> Option<GuestFacts> {
        serde_json::from_str(&std::fs::read_to_string(shared.join(FACTS_FILE)).ok()?).ok()
    }
}

/// The words of a guest's command line that virtme-ng did not put there,
/// for reports: what secperf and the user chose. Its own are `virtme*`,
/// `init=` of its init, its console (`console=`, `earlyprintk=`,
/// `earlycon=`, `TERM=`, `psmouse.proto=`), `nr_open=`, `panic=-1`, the
/// `loglevel=` of --verbose or quiet (secperf's `loglevel=4` is kept),
/// and the root it mounts: `root=`, `rootfstype=`, `rootflags=`,
/// `rootwait`, `raid=noautodetect`, `ro` or `rw` (a kernel built from
/// source boots the host's root over 9p or virtiofs).
pub fn chosen_words(cmdline: &str) -> String {
    const WORDS: &[&str] = &[
        "panic=-1",
        "loglevel=0",
        "loglevel=1",
        "loglevel=7",
        "quiet",
        "debug",
        "raid=noautodetect",
        "ro",
        "rw",
        "rootwait",
    ];
    const PREFIXES: &[&str] = &[
        "virtme",
        "nr_open=",
        "console=",
        "earlyprintk=",
        "earlycon=",
        "TERM=",
        "psmouse.proto=",
        "root=",
        "rootfstype=",
        "rootflags=",
    ];
    cmdline
        .split_whitespace()
        .filter(|w| {
            !(WORDS.contains(w)
                || PREFIXES.iter().any(|p| w.starts_with(p))
                || (w.starts_with("init=") && w.contains("virtme")))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The GNU build id in a sequence of ELF notes (/sys/kernel/notes): each
/// note is namesz, descsz, type (u32 each, native order), then the name
/// and the descriptor, each padded to 4 bytes. The build id is type 3
/// (NT_GNU_BUILD_ID) with the name "GNU".
pub fn build_id(notes: &[u8]) -> Option<String> {
    let u32_at = |i: usize| -> Option<usize> {
        Some(u32::from_ne_bytes(notes.get(i..i + 4)?.try_into().ok()?) as usize)
    };
    let pad = |n: usize| n.div_ceil(4) * 4;
    let mut at = 0;
    while at + 12 <= notes.len() {
        let (namesz, descsz, kind) = (u32_at(at)?, u32_at(at + 4)?, u32_at(at + 8)?);
        let name = notes.get(at + 12..at + 12 + namesz)?;
        let desc_at = at + 12 + pad(namesz);
        let desc = notes.get(desc_at..desc_at + descsz)?;
        if kind == 3 && name == b"GNU\0" {
            return Some(desc.iter().map(|b| format!("{b:02x}")).collect());
        }
        at = desc_at + pad(descsz);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend((name.len() as u32).to_ne_bytes());
        v.extend((desc.len() as u32).to_ne_bytes());
        v.extend(kind.to_ne_bytes());
        v.extend(name);
        v.resize(v.len().div_ceil(4) * 4, 0);
        v.extend(desc);
        v.resize(v.len().div_ceil(4) * 4, 0);
        v
    }

    #[test]
    fn the_encoded_script_is_shortened() {
        assert_eq!(
            crate::probe::without_virtme_script("console=ttyS0 virtme.exec=`ZWNobyA=` lsm=selinux"),
            "console=ttyS0 virtme.exec=(secperf) lsm=selinux"
        );
    }

    #[test]
    fn virtme_ngs_own_words_are_left_out() {
        let c = "virtme_hostname=virtme-ng nr_open=1048576 virtme_rw_overlay0=/etc \
                 console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1 virtme.exec=(secperf) \
                 loglevel=7 loglevel=4 audit=1 lsm=selinux,bpf \
                 init=/usr/lib/python3/dist-packages/virtme/guest/bin/virtme-ng-init";
        assert_eq!(chosen_words(c), "loglevel=4 audit=1 lsm=selinux,bpf");
        // A kernel built from source boots the host's root over 9p: the
        // words that mount it are virtme-ng's too.
        let built = "virtme_hostname=virtme-ng nr_open=1048576 console=ttyS0 \
                     earlyprintk=serial,ttyS0,115200 psmouse.proto=exps TERM=xterm \
                     rootfstype=9p rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288 \
                     raid=noautodetect ro loglevel=4 lsm=landlock,bpf nokaslr \
                     init=/usr/lib/python3/dist-packages/virtme/guest/bin/virtme-ng-init";
        assert_eq!(chosen_words(built), "loglevel=4 lsm=landlock,bpf nokaslr");
    }

    #[test]
    fn the_gnu_build_id_is_found_among_other_notes() {
        let mut notes = note(b"Xen\0", 6, &[1, 2, 3, 4, 5]);
        notes.extend(note(b"GNU\0", 3, &[0xab, 0xcd, 0x01]));
        assert_eq!(build_id(&notes).as_deref(), Some("abcd01"));
        assert_eq!(build_id(&notes[..notes.len() - 4]), None);
        assert_eq!(build_id(&[]), None);
        assert_eq!(build_id(&note(b"GNU\0", 1, &[1])), None);
    }

    #[test]
    fn this_kernel_has_a_build_id() {
        // Every distribution kernel is built with one; /sys/kernel/notes is
        // readable by anyone.
        if let Ok(b) = std::fs::read("/sys/kernel/notes") {
            let id = build_id(&b).expect("a GNU build id note");
            assert!(
                id.len() >= 20 && id.chars().all(|c| c.is_ascii_hexdigit()),
                "{id}"
            );
        }
    }
}
