//! KVM or emulation: which accelerator a guest runs under, decided before
//! the boot from what the host offers.
//!
//! KVM runs a full (unmodified) guest only when the host loaded a hardware
//! virtualisation module, `kvm_intel` or `kvm_amd`, and /dev/kvm opens for
//! reading and writing. Some hosts have /dev/kvm from a paravirtual-only
//! hypervisor (`kvm_pvm`) on which QEMU fails at once ("failed to set MSR
//! 0x10a"): there only emulation (QEMU's TCG) boots a stock kernel, and its
//! timings are not those of real hardware.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::usage_bail;

/// What the user asked for (`--vm-accel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AccelChoice {
    /// KVM where the host can run a full guest under it, else emulation
    /// with a warning.
    Auto,
    /// KVM, or an error saying why the host cannot.
    Kvm,
    /// QEMU's emulation (TCG): slow, timings unlike real hardware's.
    Emulated,
}

/// What a guest runs under, recorded with its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Accel {
    Kvm,
    Emulated,
}

/// The words every figure of an emulated guest carries.
pub const EMULATED_NOTE: &str = "emulated: timings are not those of real hardware";

/// Whether KVM can run a full guest on the host whose /sys and /dev lie
/// under `root`: Ok, or the reason it cannot.
pub fn kvm_usable(root: &Path) -> Result<(), String> {
    let dev = root.join("dev/kvm");
    if !dev.exists() {
        return Err(
            "/dev/kvm is missing (no KVM module loaded, or a VM without nested \
                    virtualisation)"
                .into(),
        );
    }
    let module = ["kvm_intel", "kvm_amd"]
        .into_iter()
        .find(|m| root.join("sys/module").join(m).exists());
    if module.is_none() {
        let pvm = root.join("sys/module/kvm_pvm").exists();
        return Err(if pvm {
            "the host's KVM is kvm_pvm, which runs only paravirtualised guests, not a stock \
             kernel"
                .into()
        } else {
            "neither kvm_intel nor kvm_amd is loaded (no hardware virtualisation)".into()
        });
    }
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&dev)
    {
        return Err(format!(
            "cannot open /dev/kvm: {e} (run as root or join the kvm group)"
        ));
    }
    Ok(())
}

/// Resolves the choice on the host under `root`: the accelerator and, for
/// `auto` falling back to emulation, a warning to print.
pub fn resolve(choice: AccelChoice, root: &Path) -> Result<(Accel, Option<String>)> {
    match (choice, kvm_usable(root)) {
        (AccelChoice::Emulated, _) => Ok((Accel::Emulated, None)),
        (AccelChoice::Kvm | AccelChoice::Auto, Ok(())) => Ok((Accel::Kvm, None)),
        (AccelChoice::Kvm, Err(why)) => usage_bail!(
            "--vm-accel kvm: KVM cannot run this guest here: {why}; use --vm-accel emulated \
             (slow, and {EMULATED_NOTE})"
        ),
        (AccelChoice::Auto, Err(why)) => Ok((
            Accel::Emulated,
            Some(format!(
                "KVM cannot run the guest here ({why}): booting under emulation, 10 to 30 s a \
                 boot; {EMULATED_NOTE}"
            )),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(files: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in files {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            if f.starts_with("sys/module/") {
                std::fs::create_dir_all(&p).unwrap();
            } else {
                std::fs::write(&p, "").unwrap();
            }
        }
        d
    }

    #[test]
    fn kvm_needs_the_device_and_a_hardware_module() {
        let none = host(&[]);
        assert!(kvm_usable(none.path()).unwrap_err().contains("missing"));
        let pvm = host(&["dev/kvm", "sys/module/kvm", "sys/module/kvm_pvm"]);
        assert!(kvm_usable(pvm.path()).unwrap_err().contains("kvm_pvm"));
        let intel = host(&["dev/kvm", "sys/module/kvm_intel"]);
        assert_eq!(kvm_usable(intel.path()), Ok(()));
    }

    #[test]
    fn auto_falls_back_with_a_warning_and_kvm_refuses() {
        let pvm = host(&["dev/kvm", "sys/module/kvm_pvm"]);
        let (a, warn) = resolve(AccelChoice::Auto, pvm.path()).unwrap();
        assert_eq!(a, Accel::Emulated);
        assert!(warn.unwrap().contains(EMULATED_NOTE));
        let e = resolve(AccelChoice::Kvm, pvm.path()).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("--vm-accel emulated"), "{e}");
        let amd = host(&["dev/kvm", "sys/module/kvm_amd"]);
        assert_eq!(
            resolve(AccelChoice::Auto, amd.path()).unwrap(),
            (Accel::Kvm, None)
        );
        assert_eq!(
            resolve(AccelChoice::Emulated, amd.path()).unwrap().0,
            Accel::Emulated
        );
    }
}
