//! The bpf(2) calls that load the no-op LSM program and attach it, with
//! `union bpf_attr` laid out by hand.
//!
//! Loading and attaching is what the `bpf-lsm` treatment switches on: while
//! the link fd is open, every call of the hook (`security_file_permission`
//! for eventfd_write, the lsm-hooks-2020 experiment) runs through a BPF trampoline into
//! the program. Each command reads its own member of `union bpf_attr`
//! (include/uapi/linux/bpf.h); the structs below reproduce those members
//! with explicit fields up to a fixed [`ATTR_SIZE`], so every byte is
//! initialised (zero unless set) and the kernel, which checks that bytes it
//! does not know are zero, accepts the size on older and newer kernels.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::sys::SysError;

use super::insn::{BpfInsn, NOOP_PROGRAM};

/// `BPF_PROG_LOAD`.
pub const BPF_PROG_LOAD: u32 = 5;
/// `BPF_RAW_TRACEPOINT_OPEN`: attaches BTF-based programs on kernels
/// before `BPF_LINK_CREATE` knew LSM programs.
pub const BPF_RAW_TRACEPOINT_OPEN: u32 = 17;
/// `BPF_LINK_CREATE`.
pub const BPF_LINK_CREATE: u32 = 28;
/// `BPF_PROG_TYPE_LSM`.
pub const BPF_PROG_TYPE_LSM: u32 = 29;
/// `BPF_LSM_MAC`: the attach type of LSM programs.
pub const BPF_LSM_MAC: u32 = 27;

/// Bytes of every attr passed: the PROG_LOAD member as of Linux 6.18
/// (through `keyring_id`). Kernels copy what they know and require the
/// rest to be zero.
pub const ATTR_SIZE: usize = 168;

/// The verifier log buffer: far more than two instructions need.
pub const LOG_SIZE: usize = 64 * 1024;

/// LSM programs must have a GPL-compatible license.
const LICENSE: &[u8] = b"GPL\0";
/// Shown by `bpftool prog` (at most 15 characters of [A-Za-z0-9_.]).
const PROG_NAME: &[u8] = b"secperf_noop";

/// The `BPF_PROG_LOAD` member of `union bpf_attr`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ProgLoadAttr {
    pub prog_type: u32,
    pub insn_cnt: u32,
    pub insns: u64,
    pub license: u64,
    pub log_level: u32,
    pub log_size: u32,
    pub log_buf: u64,
    pub kern_version: u32,
    pub prog_flags: u32,
    pub prog_name: [u8; 16],
    pub prog_ifindex: u32,
    pub expected_attach_type: u32,
    pub prog_btf_fd: u32,
    pub func_info_rec_size: u32,
    pub func_info: u64,
    pub func_info_cnt: u32,
    pub line_info_rec_size: u32,
    pub line_info: u64,
    pub line_info_cnt: u32,
    pub attach_btf_id: u32,
    /// Union with `attach_prog_fd`; 0 means vmlinux.
    pub attach_btf_obj_fd: u32,
    pub core_relo_cnt: u32,
    pub fd_array: u64,
    pub core_relos: u64,
    pub core_relo_rec_size: u32,
    pub log_true_size: u32,
    pub prog_token_fd: i32,
    pub fd_array_cnt: u32,
    pub signature: u64,
    pub signature_size: u32,
    pub keyring_id: i32,
}

/// The `BPF_LINK_CREATE` member (the `tracing` variant of its union is
/// `target_btf_id` and `cookie`, both 0 here).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LinkCreateAttr {
    /// Union with `map_fd`.
    pub prog_fd: u32,
    /// Union with `target_ifindex`; 0 for LSM programs.
    pub target_fd: u32,
    pub attach_type: u32,
    pub flags: u32,
    pub target_btf_id: u32,
    pub _pad: u32,
    pub cookie: u64,
    pub _rest: [u64; 17],
}

/// The `BPF_RAW_TRACEPOINT_OPEN` member (`name` 0: the program's own
/// `attach_btf_id` says where).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RawTracepointOpenAttr {
    pub name: u64,
    pub prog_fd: u32,
    pub _pad: u32,
    pub cookie: u64,
    pub _rest: [u64; 18],
}

/// Calls bpf(2) with `attr` and its size; a non-negative result is a new
/// file descriptor (close-on-exec, as the kernel makes all bpf fds).
fn bpf_fd<T>(cmd: u32, attr: &mut T, call: &'static str) -> Result<OwnedFd, SysError> {
    // SAFETY: `attr` is a live, fully initialised repr(C) struct (all
    // fields explicit, no padding) of size_of::<T>() bytes: every T this
    // module passes is one of its bpf_attr members. Pointers stored in it
    // are the caller's buffers, alive for the call.
    let fd = unsafe { crate::sys::calls::bpf(cmd, attr, call) }?;
    // SAFETY: on success these commands return a new descriptor that
    // nothing else owns; OwnedFd closes it exactly once.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A refused BPF_PROG_LOAD: the errno and what the verifier said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub sys: SysError,
    /// The verifier log, up to its NUL (empty when the kernel refused
    /// before verifying).
    pub log: String,
}

impl LoadError {
    /// The last non-empty line of the verifier log.
    pub fn last_log_line(&self) -> Option<&str> {
        last_line(&self.log)
    }
}

/// The last non-empty line of a log.
pub fn last_line(log: &str) -> Option<&str> {
    log.lines().map(str::trim).rev().find(|l| !l.is_empty())
}

/// The PROG_LOAD attr for `insns` attached to the hook with BTF id
/// `attach_btf_id`, logging into `log`.
pub fn prog_load_attr(insns: &[BpfInsn], attach_btf_id: u32, log: &mut [u8]) -> ProgLoadAttr {
    let mut prog_name = [0u8; 16];
    prog_name[..PROG_NAME.len()].copy_from_slice(PROG_NAME);
    ProgLoadAttr {
        prog_type: BPF_PROG_TYPE_LSM,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: LICENSE.as_ptr() as u64,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr() as u64,
        prog_name,
        expected_attach_type: BPF_LSM_MAC,
        attach_btf_id,
        ..ProgLoadAttr::default()
    }
}

/// Loads `r0 = 0; exit` as an LSM program for the hook whose
/// `bpf_lsm_<hook>` FUNC has BTF id `attach_btf_id` (in vmlinux).
pub fn load_noop(attach_btf_id: u32) -> Result<OwnedFd, LoadError> {
    let mut log = vec![0u8; LOG_SIZE];
    let mut attr = prog_load_attr(&NOOP_PROGRAM, attach_btf_id, &mut log);
    let result = bpf_fd(BPF_PROG_LOAD, &mut attr, "bpf(BPF_PROG_LOAD)");
    result.map_err(|sys| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        LoadError {
            sys,
            log: String::from_utf8_lossy(&log[..end]).into_owned(),
        }
    })
}

/// Attaches a loaded LSM program; the returned link fd keeps it attached
/// until closed. Tries BPF_LINK_CREATE, and BPF_RAW_TRACEPOINT_OPEN where
/// the kernel does not know LINK_CREATE for LSM programs (EINVAL, before
/// Linux 5.10ish). Also returns which command worked.
pub fn attach(prog: &OwnedFd) -> Result<(OwnedFd, &'static str), SysError> {
    let prog_fd = prog.as_raw_fd() as u32;
    let mut link = LinkCreateAttr {
        prog_fd,
        target_fd: 0,
        attach_type: BPF_LSM_MAC,
        ..LinkCreateAttr::default()
    };
    match bpf_fd(BPF_LINK_CREATE, &mut link, "bpf(BPF_LINK_CREATE)") {
        Ok(fd) => Ok((fd, "BPF_LINK_CREATE")),
        Err(e) if e.errno == libc::EINVAL => {
            let mut raw = RawTracepointOpenAttr {
                prog_fd,
                ..RawTracepointOpenAttr::default()
            };
            bpf_fd(
                BPF_RAW_TRACEPOINT_OPEN,
                &mut raw,
                "bpf(BPF_RAW_TRACEPOINT_OPEN)",
            )
            .map(|fd| (fd, "BPF_RAW_TRACEPOINT_OPEN"))
        }
        Err(e) => Err(e),
    }
}

/// Capability numbers (include/uapi/linux/capability.h).
pub const CAP_SYS_ADMIN: u32 = 21;
pub const CAP_PERFMON: u32 = 38;
pub const CAP_BPF: u32 = 39;

/// Whether the calling thread has all of `caps` in its effective set.
pub fn has_effective_caps(caps: &[u32]) -> Result<bool, SysError> {
    crate::sys::caps::has_effective(caps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn syscall_number_is_the_x86_64_one() {
        #[cfg(target_arch = "x86_64")]
        assert_eq!(libc::SYS_bpf, 321);
    }

    #[test]
    fn prog_load_layout_matches_the_uapi() {
        assert_eq!(offset_of!(ProgLoadAttr, prog_type), 0);
        assert_eq!(offset_of!(ProgLoadAttr, insn_cnt), 4);
        assert_eq!(offset_of!(ProgLoadAttr, insns), 8);
        assert_eq!(offset_of!(ProgLoadAttr, license), 16);
        assert_eq!(offset_of!(ProgLoadAttr, log_level), 24);
        assert_eq!(offset_of!(ProgLoadAttr, log_size), 28);
        assert_eq!(offset_of!(ProgLoadAttr, log_buf), 32);
        assert_eq!(offset_of!(ProgLoadAttr, kern_version), 40);
        assert_eq!(offset_of!(ProgLoadAttr, prog_flags), 44);
        assert_eq!(offset_of!(ProgLoadAttr, prog_name), 48);
        assert_eq!(offset_of!(ProgLoadAttr, prog_ifindex), 64);
        assert_eq!(offset_of!(ProgLoadAttr, expected_attach_type), 68);
        assert_eq!(offset_of!(ProgLoadAttr, prog_btf_fd), 72);
        assert_eq!(offset_of!(ProgLoadAttr, func_info_rec_size), 76);
        assert_eq!(offset_of!(ProgLoadAttr, func_info), 80);
        assert_eq!(offset_of!(ProgLoadAttr, func_info_cnt), 88);
        assert_eq!(offset_of!(ProgLoadAttr, line_info_rec_size), 92);
        assert_eq!(offset_of!(ProgLoadAttr, line_info), 96);
        assert_eq!(offset_of!(ProgLoadAttr, line_info_cnt), 104);
        assert_eq!(offset_of!(ProgLoadAttr, attach_btf_id), 108);
        assert_eq!(offset_of!(ProgLoadAttr, attach_btf_obj_fd), 112);
        assert_eq!(offset_of!(ProgLoadAttr, core_relo_cnt), 116);
        assert_eq!(offset_of!(ProgLoadAttr, fd_array), 120);
        assert_eq!(offset_of!(ProgLoadAttr, core_relos), 128);
        assert_eq!(offset_of!(ProgLoadAttr, core_relo_rec_size), 136);
        assert_eq!(offset_of!(ProgLoadAttr, log_true_size), 140);
        assert_eq!(offset_of!(ProgLoadAttr, prog_token_fd), 144);
        assert_eq!(offset_of!(ProgLoadAttr, fd_array_cnt), 148);
        assert_eq!(offset_of!(ProgLoadAttr, signature), 152);
        assert_eq!(offset_of!(ProgLoadAttr, signature_size), 160);
        assert_eq!(offset_of!(ProgLoadAttr, keyring_id), 164);
        assert_eq!(size_of::<ProgLoadAttr>(), ATTR_SIZE);
    }

    #[test]
    fn link_and_raw_tracepoint_layouts_match_the_uapi() {
        assert_eq!(offset_of!(LinkCreateAttr, prog_fd), 0);
        assert_eq!(offset_of!(LinkCreateAttr, target_fd), 4);
        assert_eq!(offset_of!(LinkCreateAttr, attach_type), 8);
        assert_eq!(offset_of!(LinkCreateAttr, flags), 12);
        assert_eq!(offset_of!(LinkCreateAttr, target_btf_id), 16);
        assert_eq!(offset_of!(LinkCreateAttr, cookie), 24);
        assert_eq!(size_of::<LinkCreateAttr>(), ATTR_SIZE);
        assert_eq!(offset_of!(RawTracepointOpenAttr, name), 0);
        assert_eq!(offset_of!(RawTracepointOpenAttr, prog_fd), 8);
        assert_eq!(offset_of!(RawTracepointOpenAttr, cookie), 16);
        assert_eq!(size_of::<RawTracepointOpenAttr>(), ATTR_SIZE);
    }

    #[test]
    fn prog_load_attr_is_filled_for_an_lsm_program() {
        let mut log = vec![0u8; 256];
        let a = prog_load_attr(&NOOP_PROGRAM, 4242, &mut log);
        assert_eq!(a.prog_type, 29);
        assert_eq!(a.expected_attach_type, 27);
        assert_eq!(a.insn_cnt, 2);
        assert_eq!(a.insns, NOOP_PROGRAM.as_ptr() as u64);
        assert_eq!(a.attach_btf_id, 4242);
        assert_eq!((a.log_level, a.log_size), (1, 256));
        assert_eq!(a.log_buf, log.as_ptr() as u64);
        assert_eq!(&a.prog_name[..13], b"secperf_noop\0");
        // SAFETY: `license` points at the static "GPL\0".
        let license = unsafe { std::ffi::CStr::from_ptr(a.license as *const libc::c_char) };
        assert_eq!(license.to_bytes(), b"GPL");
        // Everything not set is zero.
        let rest = ProgLoadAttr {
            prog_type: 0,
            insn_cnt: 0,
            insns: 0,
            license: 0,
            log_level: 0,
            log_size: 0,
            log_buf: 0,
            prog_name: [0; 16],
            expected_attach_type: 0,
            attach_btf_id: 0,
            ..a
        };
        assert_eq!(rest, ProgLoadAttr::default());
    }

    #[test]
    fn last_line_skips_blank_lines() {
        let log = "func#0 @0\n0: R1=ctx() R10=fp0\nattach_btf_id 7 is not a function\n\n";
        assert_eq!(last_line(log), Some("attach_btf_id 7 is not a function"));
        assert_eq!(last_line(""), None);
        let e = LoadError {
            sys: SysError {
                call: "bpf(BPF_PROG_LOAD)",
                errno: libc::EINVAL,
            },
            log: "a\n  b  \n".into(),
        };
        assert_eq!(e.last_log_line(), Some("b"));
    }

    #[test]
    fn capget_answers() {
        // The call works whoever runs it; no capabilities are always held
        // and one beyond the two 32-bit words never is.
        has_effective_caps(&[CAP_SYS_ADMIN, CAP_BPF]).unwrap();
        assert!(has_effective_caps(&[]).unwrap());
        assert!(!has_effective_caps(&[200]).unwrap());
    }
}
