//! Landlock: whether it runs, its ABI version and errata, asked of the
//! kernel with `landlock_create_ruleset(NULL, 0, flag)`.
//!
//! The ABI version says which access rights a sandbox can restrict (ABI 4:
//! TCP ports, 6: signals and abstract sockets, ...), so it bounds what a
//! Landlock workload can measure. EOPNOTSUPP means built in but disabled at
//! boot (not in `lsm=`), ENOSYS means not built.

use serde::{Deserialize, Serialize};

use super::Probed;
use crate::sys::errno_name;
use crate::sys::query::{
    LANDLOCK_CREATE_RULESET_ERRATA, LANDLOCK_CREATE_RULESET_VERSION, landlock_query,
};

/// Whether Landlock can be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LandlockState {
    Enabled,
    /// Built in, but not enabled at boot (EOPNOTSUPP).
    DisabledAtBoot,
    /// Not built into this kernel (ENOSYS).
    NotBuilt,
}

/// Landlock facts; `abi` and `errata` are `None` unless enabled (and, for
/// errata, unless the kernel can report them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockInfo {
    pub state: LandlockState,
    pub abi: Option<u32>,
    /// Bitmask of fixed errata (`LANDLOCK_CREATE_RULESET_ERRATA`).
    pub errata: Option<u32>,
}

/// Asks the running kernel.
pub fn probe() -> Probed<LandlockInfo> {
    let query = |flags| landlock_query(flags).map_err(|e| e.errno);
    let version = query(LANDLOCK_CREATE_RULESET_VERSION);
    let errata = || query(LANDLOCK_CREATE_RULESET_ERRATA);
    interpret(version, errata)
}

/// Turns the two answers (a value or an errno) into the record.
fn interpret(
    version: Result<i64, i32>,
    errata: impl FnOnce() -> Result<i64, i32>,
) -> Probed<LandlockInfo> {
    let state_only = |state| {
        Probed::Ok(LandlockInfo {
            state,
            abi: None,
            errata: None,
        })
    };
    match version {
        Ok(abi) => Probed::Ok(LandlockInfo {
            state: LandlockState::Enabled,
            abi: u32::try_from(abi).ok(),
            // EINVAL: the kernel predates the errata flag; nothing to report.
            errata: errata().ok().and_then(|e| u32::try_from(e).ok()),
        }),
        Err(libc::EOPNOTSUPP) => state_only(LandlockState::DisabledAtBoot),
        Err(libc::ENOSYS) => state_only(LandlockState::NotBuilt),
        Err(errno) => Probed::unavailable(format!(
            "landlock_create_ruleset: {} ({})",
            errno_name(errno),
            std::io::Error::from_raw_os_error(errno)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_each_errno() {
        let e = interpret(Ok(7), || Ok(1));
        assert_eq!(
            e.value().unwrap(),
            &LandlockInfo {
                state: LandlockState::Enabled,
                abi: Some(7),
                errata: Some(1)
            }
        );
        assert_eq!(
            interpret(Ok(3), || Err(libc::EINVAL))
                .value()
                .unwrap()
                .errata,
            None
        );
        assert_eq!(
            interpret(Err(libc::EOPNOTSUPP), || Ok(0))
                .value()
                .unwrap()
                .state,
            LandlockState::DisabledAtBoot
        );
        assert_eq!(
            interpret(Err(libc::ENOSYS), || Ok(0))
                .value()
                .unwrap()
                .state,
            LandlockState::NotBuilt
        );
        let reason = interpret(Err(libc::EPERM), || Ok(0))
            .reason()
            .unwrap()
            .to_string();
        assert!(
            reason.starts_with("landlock_create_ruleset: EPERM"),
            "{reason}"
        );
    }

    #[test]
    fn this_kernel_answers() {
        // Any of the three states is fine; it must not be an odd errno.
        assert!(probe().value().is_some(), "{:?}", probe());
    }
}
