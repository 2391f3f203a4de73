//! `-S`: the syscalls of a rule, as auditctl's
//! `audit_rule_syscallbyname_data` sets them in the rule's bitmap.
//!
//! Names are looked up in the syscall table of the rule's architecture
//! (this machine's until `-F arch=` says otherwise, see [`Machine`]),
//! numbers are taken as written below the kernel's syscall-class bits, and
//! `all` sets every bit. On the `io_uring` list the names are io_uring
//! operations instead (auditctl 4.x's table). Like auditctl, a rule with no
//! arch on x86_64 whose syscalls are other ones for 32-bit programs gets a
//! warning.

use super::host::Machine;
use super::setopt::{LineState, UNSET};
use super::values::{c_unsigned, lookup};
use super::{kernel, tables};
use crate::sys::audit as au;

/// The first syscall number that is a syscall-class bit, not a syscall.
const FIRST_CLASS_BIT: u32 = (au::AUDIT_BITMASK_SIZE * 32 - au::AUDIT_SYSCALL_CLASSES) as u32;

impl LineState<'_> {
    /// `-S NAME[,NAME...]`.
    pub(super) fn syscall_option(&mut self, arg: &str) -> Result<(), String> {
        if self.on_list(au::AUDIT_FILTER_URING_EXIT) {
            for op in arg.split(',').filter(|s| !s.is_empty()) {
                self.uring_op(op)?;
            }
            self.syscall_added = true;
            return Ok(());
        }
        self.check_syscall_list()?;
        let unknown_arch = self.elf == 0;
        if unknown_arch {
            let Some(native) = Machine::native() else {
                return Err(
                    "secperf does not know this machine's architecture; give -F arch= first".into(),
                );
            };
            self.elf = native.elf();
        }
        let mut mask = [0u32; au::AUDIT_BITMASK_SIZE];
        for name in arg.split(',').filter(|s| !s.is_empty()) {
            self.syscall_by_name(name, &mut mask)?;
        }
        for (m, add) in self.rule.mask.iter_mut().zip(mask) {
            *m |= add;
        }
        self.syscall_added = true;
        if unknown_arch && self.add != UNSET && self.elf == au::AUDIT_ARCH_X86_64 {
            self.check_mismatch(arg, &mask);
        }
        Ok(())
    }

    /// Whether the rule's list takes syscalls (task, user, filesystem and
    /// exclude do not).
    fn check_syscall_list(&self) -> Result<(), String> {
        for (list, name) in [
            (au::AUDIT_FILTER_TASK, "task"),
            (au::AUDIT_FILTER_USER, "user"),
            (au::AUDIT_FILTER_FS, "filesystem"),
        ] {
            if self.on_list(list) {
                return Err(format!(
                    "syscalls (-S) cannot be audited on the {name} list"
                ));
            }
        }
        if self.exclude {
            return Err("syscalls (-S) cannot be put on the exclude list".into());
        }
        Ok(())
    }

    /// auditctl's `check_rule_mismatch`: a rule with no arch on x86_64 whose
    /// syscalls are other ones for 32-bit programs gets a warning.
    fn check_mismatch(&mut self, arg: &str, mask: &[u32; au::AUDIT_BITMASK_SIZE]) {
        let mut other = [0u32; au::AUDIT_BITMASK_SIZE];
        for name in arg.split(',').filter(|s| !s.is_empty()) {
            if name == "all" {
                other = [u32::MAX; au::AUDIT_BITMASK_SIZE];
            } else if let Some(nr) = Machine::I386.syscall(name) {
                kernel::set_bit(&mut other, nr);
            } else if let Ok(nr) = syscall_number(name) {
                kernel::set_bit(&mut other, nr);
            }
        }
        if other != *mask {
            self.out.warnings.push(
                "32/64 bit syscall mismatch: without -F arch=b64 or b32 the rule names \
                 x86_64 numbers, which are other syscalls for 32-bit programs (auditctl \
                 warns the same; give an arch)"
                    .into(),
            );
        }
    }

    /// `audit_rule_syscallbyname_data`.
    fn syscall_by_name(&self, name: &str, mask: &mut [u32]) -> Result<(), String> {
        if name == "all" {
            mask.iter_mut().for_each(|m| *m = u32::MAX);
            return Ok(());
        }
        let machine = Machine::from_elf(self.elf)
            .ok_or_else(|| format!("no machine for arch 0x{:x}", self.elf))?;
        let nr = match machine.syscall(name) {
            Some(nr) => nr,
            None if name.starts_with(|c: char| c.is_ascii_digit()) => syscall_number(name)?,
            None if !machine.has_table() => {
                return Err(format!(
                    "secperf has no {} syscall table: give '{name}' as a number",
                    machine.name()
                ));
            }
            None => {
                return Err(format!(
                    "unknown syscall '{name}' for {} (check the spelling, or the rule's -F \
                     arch=)",
                    machine.name()
                ));
            }
        };
        kernel::set_bit(mask, nr);
        Ok(())
    }

    /// An io_uring operation (`-a always,io_uring -S openat`).
    fn uring_op(&mut self, name: &str) -> Result<(), String> {
        if name == "all" {
            for (_, nr) in tables::URING_OPS {
                kernel::set_bit(&mut self.rule.mask, *nr);
            }
            return Ok(());
        }
        let nr = match lookup(tables::URING_OPS, name) {
            Some(nr) => nr,
            None if name.starts_with(|c: char| c.is_ascii_digit()) => syscall_number(name)?,
            None => return Err(format!("unknown io_uring operation '{name}'")),
        };
        kernel::set_bit(&mut self.rule.mask, nr);
        Ok(())
    }
}

/// A syscall given by number.
fn syscall_number(text: &str) -> Result<u32, String> {
    let nr = c_unsigned(text).ok_or_else(|| format!("'{text}' is not a syscall name or number"))?;
    if nr >= u64::from(FIRST_CLASS_BIT) {
        return Err(format!(
            "syscall number {nr} is out of range (below {FIRST_CLASS_BIT}; the bitmap's top bits \
             are the kernel's syscall classes)"
        ));
    }
    Ok(nr as u32)
}
