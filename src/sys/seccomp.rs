//! seccomp's kernel interface as the crate's filters use it, where libc
//! does not say it directly.
//!
//! libc has the rest, and callers use it as `libc::...`: the filter
//! return values `SECCOMP_RET_*`, `SECCOMP_SET_MODE_FILTER` and the
//! `SECCOMP_FILTER_FLAG_*`, `struct seccomp_data`. What is here is either
//! derived from libc (where a filter's loads find the system call number,
//! the architecture and the arguments in `seccomp_data`) or missing from
//! libc for the targets secperf builds for, and documented as such.

use std::mem::offset_of;

/// Offset of `seccomp_data.nr`, the system call number.
pub const DATA_NR: u32 = offset_of!(libc::seccomp_data, nr) as u32;
/// Offset of `seccomp_data.arch`, the `AUDIT_ARCH_*` of the call.
pub const DATA_ARCH: u32 = offset_of!(libc::seccomp_data, arch) as u32;
/// Offset of `seccomp_data.args`.
const DATA_ARGS: u32 = offset_of!(libc::seccomp_data, args) as u32;

/// Offset of the low 32 bits of `seccomp_data.args[i]` (classic BPF loads
/// 32 bits at a time).
pub const fn data_arg_low(i: u32) -> u32 {
    DATA_ARGS + 8 * i + if cfg!(target_endian = "big") { 4 } else { 0 }
}

/// x32 system calls carry this bit in their number (`__X32_SYSCALL_BIT`
/// of `<asm/unistd.h>`). Not from libc: it defines the constant only when
/// building for x32 itself, while x86_64 filters must recognise x32 calls.
pub const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The largest errno the kernel returns from a filter (`MAX_ERRNO` of
/// `<linux/err.h>`, which is not uapi, so not in libc).
pub const MAX_ERRNO: u64 = 4095;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_the_uapi_layout() {
        // struct seccomp_data { int nr; __u32 arch; __u64
        // instruction_pointer; __u64 args[6]; }
        assert_eq!((DATA_NR, DATA_ARCH, DATA_ARGS), (0, 4, 16));
        #[cfg(target_endian = "little")]
        assert_eq!(
            (data_arg_low(0), data_arg_low(1), data_arg_low(5)),
            (16, 24, 56)
        );
        assert_eq!(std::mem::size_of::<libc::seccomp_data>(), 64);
    }
}
