//! The virtme-ng command line that boots a guest: the host's filesystem
//! read-only with copy-on-write overlays (virtme-ng's default), one shared
//! read-write directory for the guest's results, and the guest command as
//! a shell script.
//!
//! virtme-ng (`vng`) does the rest: QEMU's arguments, its own init, the
//! kernel's modules. secperf writes no init, image or root filesystem.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::accel::Accel;
use super::spec::VmSpec;
use crate::usage_bail;

/// How to get virtme-ng, for the error when it is missing.
pub const INSTALL: &str = "install virtme-ng and QEMU (`pip install virtme-ng` and \
                           `apt-get install qemu-system-x86`, or your distribution's \
                           virtme-ng package)";

/// The line the guest prints just before secperf starts, and after it
/// ended: what lies between is secperf's own stderr, shown to the user;
/// the rest is the console (kept for errors).
pub const START: &str = "@@secperf-guest-start@@";
pub const END: &str = "@@secperf-guest-end@@";

/// Kernel messages of level warning and above reach the console (a panic
/// or an oops is what the error of a failed boot must show), informational
/// ones do not.
pub const CONSOLE_LOGLEVEL: &str = "loglevel=4";

/// Finds `vng` on PATH, after checking what it needs to boot: QEMU, and
/// a busybox for the initramfs it builds (it looks for `busybox-static`,
/// `busybox.static` and `busybox`, on PATH and in the usual bin
/// directories, as here). Each missing one is a usage error naming the
/// package, before anything boots.
pub fn find() -> Result<PathBuf> {
    let vng = match crate::sys::which("vng") {
        Some(p) => p,
        None => usage_bail!("--vm needs virtme-ng's `vng`, which is not on PATH: {INSTALL}"),
    };
    if crate::sys::which("qemu-system-x86_64").is_none() {
        usage_bail!(
            "--vm needs QEMU's qemu-system-x86_64, which is not on PATH: `apt-get install \
             qemu-system-x86` (or your distribution's QEMU package)"
        );
    }
    if find_busybox(Path::new("/")).is_none() {
        usage_bail!(
            "--vm needs a busybox for the initramfs virtme-ng builds, and none was found \
             (busybox-static, busybox.static or busybox, on PATH or in /usr/local/bin, \
             /usr/bin, /bin and their sbin): `apt-get install busybox-static`"
        );
    }
    Ok(vng)
}

/// A busybox where virtme-ng looks for one, under `root`.
pub fn find_busybox(root: &Path) -> Option<PathBuf> {
    const NAMES: [&str; 3] = ["busybox-static", "busybox.static", "busybox"];
    const DIRS: [&str; 6] = [
        "usr/local/bin",
        "usr/local/sbin",
        "usr/bin",
        "usr/sbin",
        "bin",
        "sbin",
    ];
    NAMES.iter().find_map(|n| {
        (root == Path::new("/"))
            .then(|| crate::sys::which(n))
            .flatten()
            .or_else(|| {
                DIRS.iter()
                    .map(|d| root.join(d).join(n))
                    .find(|p| p.is_file())
            })
    })
}

/// What one boot runs.
#[derive(Debug, Clone)]
pub struct Boot<'a> {
    pub spec: &'a VmSpec,
    pub accel: Accel,
    /// Command-line words secperf adds before the user's `append=`.
    pub extra_append: Vec<String>,
    /// The host directory shared read-write with the guest (same path).
    pub shared: &'a Path,
    /// The guest's command: argv, run with `env` in the guest.
    pub argv: Vec<String>,
    /// Environment of the guest command.
    pub env: Vec<(String, String)>,
    /// Count instructions: QEMU's icount under emulation
    /// ([`super::icount`]).
    pub icount: bool,
}

/// The vng arguments (after `vng` itself) for a boot.
pub fn args(boot: &Boot) -> Vec<String> {
    let mut a = vec![
        "--run".to_string(),
        boot.spec.image.display().to_string(),
        "--cpus".into(),
        boot.spec.vcpus().to_string(),
        "--memory".into(),
        boot.spec.memory(),
        "--rwdir".into(),
        boot.shared.display().to_string(),
        // The console shows kernel messages (at CONSOLE_LOGLEVEL), so a
        // failed boot can be explained.
        "--verbose".into(),
    ];
    if boot.accel == Accel::Emulated || boot.icount {
        // 9p rather than virtiofs for the root: where virtiofsd cannot run
        // (as on the VMs this was built on) virtme-ng waits 5 s for it
        // before falling back, and under emulation the file system's speed
        // is not what is measured.
        a.push("--disable-kvm".into());
        a.push("--force-9p".into());
    }
    if boot.icount {
        a.push(format!("--qemu-opts={}", super::icount::QEMU_OPTS));
    }
    let append: Vec<&str> = std::iter::once(CONSOLE_LOGLEVEL)
        .chain(boot.extra_append.iter().map(String::as_str))
        .chain((!boot.spec.append.is_empty()).then_some(boot.spec.append.as_str()))
        .collect();
    a.push("--append".into());
    a.push(append.join(" "));
    a.push("--exec".into());
    a.push(script(boot));
    a
}

/// The guest's shell script. secperf's stderr goes through a pipe (`cat`),
/// so that it sees no terminal and prints plain progress lines rather than
/// a bar drawn for the serial console; its stdout (the host renders the
/// stored run instead) and exit status go to the shared directory.
pub fn script(boot: &Boot) -> String {
    let shared = boot.shared.display().to_string();
    let env: Vec<String> = boot.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let command = shell_words::join(
        std::iter::once("env".to_string())
            .chain(env)
            .chain(boot.argv.iter().cloned()),
    );
    let out = shell_words::quote(&format!("{shared}/stdout")).into_owned();
    let rc = shell_words::quote(&format!("{shared}/rc")).into_owned();
    format!("echo {START}; {{ {command} > {out}; echo $? > {rc}; }} 2>&1 | cat; echo {END}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busybox_is_found_where_virtme_ng_looks() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(find_busybox(root.path()), None);
        let sbin = root.path().join("usr/sbin");
        std::fs::create_dir_all(&sbin).unwrap();
        std::fs::write(sbin.join("busybox"), "").unwrap();
        assert_eq!(find_busybox(root.path()), Some(sbin.join("busybox")));
        // busybox-static comes first, as in virtme-ng.
        let bin = root.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("busybox-static"), "").unwrap();
        assert_eq!(find_busybox(root.path()), Some(bin.join("busybox-static")));
    }

    #[test]
    fn a_boot_becomes_vng_arguments() {
        let spec = VmSpec {
            image: "/boot/vmlinuz-6.1".into(),
            append: "audit=1".into(),
            cpus: Some(2),
            memory: Some("1024M".into()),
        };
        let boot = Boot {
            spec: &spec,
            accel: Accel::Emulated,
            extra_append: vec!["lsm=landlock,selinux".into()],
            shared: Path::new("/tmp/secperf-vm-x"),
            argv: vec![
                "/usr/bin/secperf".into(),
                "run".into(),
                "-l".into(),
                "a b".into(),
            ],
            env: vec![("SECPERF_DB".into(), "/tmp/secperf-vm-x/guest.db".into())],
            icount: false,
        };
        let a = args(&boot);
        let at = |k: &str| a[a.iter().position(|x| x == k).unwrap() + 1].clone();
        assert_eq!(at("--run"), "/boot/vmlinuz-6.1");
        assert_eq!(at("--cpus"), "2");
        assert_eq!(at("--memory"), "1024M");
        assert_eq!(at("--rwdir"), "/tmp/secperf-vm-x");
        assert!(a.contains(&"--disable-kvm".to_string()));
        assert!(a.contains(&"--force-9p".to_string()));
        // secperf's words first, the user's last: the user's win.
        assert_eq!(at("--append"), "loglevel=4 lsm=landlock,selinux audit=1");
        let s = at("--exec");
        assert!(s.starts_with(&format!("echo {START}; ")), "{s}");
        assert!(
            s.contains(
                "env 'SECPERF_DB=/tmp/secperf-vm-x/guest.db' /usr/bin/secperf run -l 'a b' \
                 > /tmp/secperf-vm-x/stdout; echo $? > /tmp/secperf-vm-x/rc;"
            ),
            "{s}"
        );
        assert!(!a.iter().any(|w| w.starts_with("--qemu-opts")), "{a:?}");
        let kvm = Boot {
            accel: Accel::Kvm,
            ..boot.clone()
        };
        assert!(!args(&kvm).contains(&"--disable-kvm".to_string()));
        // Counting instructions: icount, which QEMU runs under TCG only.
        let counted = args(&Boot {
            accel: Accel::Kvm,
            icount: true,
            ..boot
        });
        assert!(counted.contains(&"--disable-kvm".to_string()));
        assert!(
            counted.contains(&"--qemu-opts=-icount shift=0,sleep=off".to_string()),
            "{counted:?}"
        );
    }
}
