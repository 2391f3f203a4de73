//! The calling thread's capabilities and fsuid, raw (per thread, unlike
//! glibc's process-wide wrappers): capget(2), capset(2), setfsuid(2).

use super::{SysError, check};

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// One 32-bit word of each set (`struct __user_cap_data_struct`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CapData {
    pub effective: u32,
    pub permitted: u32,
    pub inheritable: u32,
}

/// capget(2) for the calling thread: capabilities 0-31, then 32-63.
pub fn capget() -> Result<[CapData; 2], SysError> {
    let mut hdr = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: hdr and data are valid for the kernel to read and write:
    // version 3 takes an array of two CapData.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) };
    check("capget", r)?;
    Ok(data)
}

/// capset(2) for the calling thread only (pid 0).
pub fn capset(data: &[CapData; 2]) -> Result<(), SysError> {
    let mut hdr = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    // SAFETY: hdr is valid; data holds the two CapData version 3 reads.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut hdr, data.as_ptr()) };
    check("capset", r).map(|_| ())
}

/// Whether the calling thread has all of `caps` in its effective set.
pub fn has_effective(caps: &[u32]) -> Result<bool, SysError> {
    let data = capget()?;
    Ok(caps.iter().all(|&cap| {
        data.get((cap / 32) as usize)
            .is_some_and(|d| d.effective & (1 << (cap % 32)) != 0)
    }))
}

/// setfsuid(2), raw (per thread): returns the previous fsuid. It reports
/// no error; a refused change leaves fsuid as it was.
pub fn setfsuid(uid: u32) -> u32 {
    // SAFETY: integer argument only; the call cannot fail as such.
    unsafe { libc::syscall(libc::SYS_setfsuid, uid) as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threads_sets_read_back_and_fsuid_reads_without_change() {
        let data = capget().unwrap();
        capset(&data).unwrap();
        assert_eq!(capget().unwrap()[0].effective, data[0].effective);
        assert!(has_effective(&[]).unwrap());
        let fsuid = setfsuid(u32::MAX);
        assert_eq!(setfsuid(u32::MAX), fsuid);
    }
}
