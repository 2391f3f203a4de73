//! Booting kernels in VMs with virtme-ng: a measuring command (`run`,
//! `overhead`, `suite`, `calibrate`) runs inside a guest booted from any
//! kernel image with any command line, with the host's own secperf binary
//! and filesystem (read-only, copy-on-write), so mechanisms the host does
//! not run (SELinux, AppArmor, the BPF LSM) and other kernels can be
//! measured. Nothing the guest does changes the host: it writes only into
//! one shared temporary directory.
//!
//! - [`spec`]: `--vm IMAGE[,cpus=N][,memory=SIZE][,append=ARGS]`.
//! - [`accel`]: KVM or emulation.
//! - [`arms`]: the two kernels of an A/B across boots.
//! - [`lsm`]: the `lsm=` a mechanism's LSM needs.
//! - [`vng`]: virtme-ng's command line and the guest's script.
//! - [`process`]: the guest's processes, which never outlive secperf.
//! - [`guest`]: what a guest records of its kernel.
//! - [`icount`]: counted instructions (`--metric instructions`): QEMU's
//!   icount, and the guest's check that its clock counts them.
//!
//! The engine (`engine::boots::vm`) puts these together and copies the guest's
//! run into the host's store.

pub mod accel;
pub mod arms;
pub mod guest;
pub mod icount;
pub mod lsm;
pub mod process;
pub mod spec;
pub mod vng;

use serde::{Deserialize, Serialize};

pub use accel::{Accel, EMULATED_NOTE};

/// The sentence every view of an emulated guest's figures starts with.
pub fn emulated_warning() -> String {
    format!("Measured in a VM guest under QEMU's emulation, without KVM: {EMULATED_NOTE}.")
}

/// The sentence every view of a guest's counted instructions starts with.
pub const ICOUNT_NOTE: &str = "Instructions counted in a VM guest under QEMU's emulation with \
                               icount (-icount shift=0,sleep=off): every figure is \
                               instructions per operation, exact and repeatable, not time; \
                               QEMU charges every instruction the same, so cache misses, \
                               serialising instructions and TLB flushes cost no more than an \
                               add.";
pub use spec::VmSpec;

/// What a run measured in a guest records about the VM (stored under
/// `vm` in the run's system facts, beside the guest's probe).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VmFacts {
    /// `kvm` or `emulated`.
    pub accel: Accel,
    pub vcpus: u32,
    /// Guest memory as QEMU took it ("2048M").
    pub memory: String,
    /// The kernel image booted, and its sha256.
    pub image: String,
    pub image_sha256: Option<String>,
    /// The command line secperf and the user added (`lsm=`, `append=`).
    pub append: String,
    /// Seconds from starting virtme-ng to the guest starting secperf.
    pub boot_s: Option<f64>,
    /// Seconds the whole guest took, boot to power-off.
    pub wall_s: f64,
    /// What the guest said of its kernel.
    pub guest: guest::GuestFacts,
    /// With `--metric instructions`: the QEMU that counted them and its
    /// icount options; absent for a guest whose clock kept time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icount: Option<icount::QemuFacts>,
    /// Whose clock the run's stored times are; absent in a boot's facts
    /// (a kernel A/B's run is the host's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamps: Option<Stamps>,
}

/// Whose clock a guest's run was stamped by. Under icount a guest's clock
/// counts instructions, and idle time passes in no time at all, so its
/// stamps run minutes ahead of the host's: every stored time is the
/// host's, and this says how it was got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "clock", rename_all = "snake_case")]
pub enum Stamps {
    /// Stamped by the host: the run starts when the host booted the guest
    /// and ends when the guest was done, by the host's clock; a time inside
    /// it (a result's start) is the guest's, placed in proportion on the
    /// host's span from the guest starting secperf to its end. `guest`
    /// keeps what the guest's clock said (absent for a kernel A/B, whose
    /// run the host records itself).
    Host {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guest: Option<GuestClock>,
    },
    /// Stored by an older secperf with the guest's instruction-counting
    /// clock, and mended from the guest's facts: the guest kernel read the
    /// host's clock while booting (its stamp less its uptime), so the run
    /// started within `within_s` (the boot's length) before that reading.
    Mended { guest: GuestClock, within_s: f64 },
    /// Stored by an older secperf with the clock of a guest that kept the
    /// host's time (not counting instructions): left as it was, within
    /// about a second of the host's.
    GuestKeptTime,
    /// Stored by an older secperf with the guest's instruction-counting
    /// clock, without the facts to mend it: the times are the guest's,
    /// ahead of the host's, and `why` says what is missing.
    Unmended { why: String },
}

/// What a guest's own clock said of its run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuestClock {
    pub started_at: chrono::DateTime<chrono::Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Stamps {
    /// A sentence for a run's facts where its times are not plainly the
    /// host's (None where they are).
    pub fn note(&self) -> Option<String> {
        match self {
            Stamps::Host { .. } | Stamps::GuestKeptTime => None,
            Stamps::Mended { within_s, .. } => Some(format!(
                "times: stored by an older secperf with the guest's instruction-counting clock, \
                 mended onto the host's from the guest's uptime (the start within {within_s:.0} s)"
            )),
            Stamps::Unmended { why } => Some(format!(
                "times: the guest's instruction-counting clock, ahead of the host's (stored by an \
                 older secperf, and not mended: {why})"
            )),
        }
    }
}

impl VmFacts {
    /// The facts stored in a run's system JSON, if it ran in a guest.
    pub fn of(system: &serde_json::Value) -> Option<VmFacts> {
        serde_json::from_value(system.get("vm")?.clone()).ok()
    }

    /// One line for reports: "VM: emulated, 2 vCPUs, 2048M,
    /// /boot/vmlinuz-6.1 (build id ...), boot 18.2 s".
    pub fn line(&self) -> String {
        let counted = if self.icount.is_some() {
            " with icount (instructions counted)"
        } else {
            ""
        };
        let mut s = format!(
            "VM: {}{counted}, {} vCPUs, {}, {}",
            self.accel, self.vcpus, self.memory, self.image
        );
        if let Some(id) = &self.guest.build_id {
            s.push_str(&format!(" (build id {})", &id[..id.len().min(12)]));
        }
        if let Some(b) = self.boot_s {
            s.push_str(&format!(", boot {b:.1} s"));
        }
        s
    }
}
