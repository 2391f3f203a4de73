//! The `struct audit_rule_data` a line builds, and what the kernel makes
//! of it once sent.
//!
//! The parser fills in a [`RuleData`] the way auditctl fills in its rule:
//! syscall bits in the mask, fields with their strings in `buf` (at most
//! `AUDIT_MAX_FIELDS - 1`, the key included), the fresh exit-list
//! rule a watch starts, the `perm` field `-p` updates. `RuleData::encode`
//! (in `crate::sys::audit`) then turns it into the bytes the kernel gets,
//! which the tests compare with auditctl's byte for byte. Once a file is
//! loaded, the kernel's side: why it refused a rule ([`kernel_refusal`])
//! and the order in which it lists the rules ([`listing_order`]).

use std::collections::VecDeque;

use super::RuleFile;
use crate::sys::audit::{self as au, RuleData, RuleField};

/// `PATH_MAX`: the longest string value (path, exe, label).
pub(super) const PATH_MAX: usize = 4096;
/// `NAME_MAX`: the longest last component of a watched path.
pub(super) const NAME_MAX: usize = 255;

/// The rule a watch starts (auditctl's `audit_add_watch_dir`): a fresh
/// always,exit rule on every syscall, with `kind` (`AUDIT_WATCH` or
/// `AUDIT_DIR`) naming `path`, then `perm=rwxa`.
pub(super) fn watch_rule(kind: u32, path: &str) -> RuleData {
    let mut rule = RuleData::new(au::AUDIT_FILTER_EXIT, au::AUDIT_ALWAYS);
    rule.mask = [u32::MAX; au::AUDIT_BITMASK_SIZE];
    rule.fields.push(RuleField {
        field: kind,
        op: au::AUDIT_EQUAL,
        value: path.len() as u32,
    });
    rule.buf.extend_from_slice(path.as_bytes());
    rule.fields.push(RuleField {
        field: au::AUDIT_PERM,
        op: au::AUDIT_EQUAL,
        value: au::AUDIT_PERM_READ
            | au::AUDIT_PERM_WRITE
            | au::AUDIT_PERM_EXEC
            | au::AUDIT_PERM_ATTR,
    });
    rule
}

/// `-p`'s permissions `perms` into `rule` (auditctl's
/// `audit_update_watch_perms`): every `perm` field it has takes them, or a
/// new one is added when there is room.
pub(super) fn set_perms(rule: &mut RuleData, perms: u32) -> Result<(), String> {
    let mut done = false;
    for f in rule.fields.iter_mut().filter(|f| f.field == au::AUDIT_PERM) {
        f.value = perms;
        done = true;
    }
    if !done {
        check_room(rule)?;
        rule.fields.push(RuleField {
            field: au::AUDIT_PERM,
            op: au::AUDIT_EQUAL,
            value: perms,
        });
    }
    Ok(())
}

/// Whether `rule` has room for one more field: auditctl stops at
/// `AUDIT_MAX_FIELDS - 1` fields, the key (added last) included.
pub(super) fn check_room(rule: &RuleData) -> Result<(), String> {
    if rule.fields.len() >= au::AUDIT_MAX_FIELDS - 1 {
        return Err(too_many_fields());
    }
    Ok(())
}

fn too_many_fields() -> String {
    format!(
        "too many fields: a rule holds at most {} (key included)",
        au::AUDIT_MAX_FIELDS - 1
    )
}

/// Sets syscall `nr`'s bit.
pub(super) fn set_bit(mask: &mut [u32], nr: u32) {
    mask[nr as usize / 32] |= 1 << (nr % 32);
}

/// Groups the kernel's errno for a refused rule with what it usually
/// means for that rule, for the mechanism's error.
pub fn kernel_refusal(rule: &RuleData, errno: i32) -> String {
    let name = crate::sys::errno_name(errno);
    let has = |f: u32| rule.fields.iter().any(|x| x.field == f);
    let meaning = match errno {
        libc::ENOENT if has(au::AUDIT_WATCH) => {
            "the watched path's parent directory does not exist on this machine (the kernel \
             watches a path through its parent); create it or drop the line"
        }
        libc::ENOENT if has(au::AUDIT_DIR) => {
            "the watched directory does not exist on this machine; create it or drop the line"
        }
        libc::ENOENT if has(au::AUDIT_EXE) => {
            "the executable's directory does not exist on this machine"
        }
        libc::EEXIST => "the same rule appears earlier in the file (auditctl -R fails there too)",
        libc::EINVAL
            if rule.fields.iter().any(|f| {
                matches!(f.field, au::AUDIT_SUBJ_USER..=au::AUDIT_SUBJ_CLR)
                    || matches!(f.field, au::AUDIT_OBJ_USER..=au::AUDIT_OBJ_LEV_HIGH)
            }) =>
        {
            "the kernel refused an LSM label field (subj_*/obj_*): the label is invalid, or no \
             LSM that understands it (SELinux, AppArmor, Smack) is active"
        }
        libc::EINVAL => {
            "the kernel refused the rule as invalid (for example an operator the field does not \
             take, path= with a trailing '/', or a field the list does not allow)"
        }
        libc::EOPNOTSUPP => "this kernel does not support something the rule uses",
        libc::ENOSPC | libc::ENOMEM => "the kernel is out of room for watches or memory",
        libc::EPERM | libc::EACCES => "needs CAP_AUDIT_CONTROL (run as root)",
        _ => "",
    };
    let desc = std::io::Error::from_raw_os_error(errno);
    if meaning.is_empty() {
        format!("the kernel refused it: {name} ({desc})")
    } else {
        format!("the kernel refused it: {name} ({desc}): {meaning}")
    }
}

/// The lines of `file` in the order the kernel will list them, with their
/// line numbers (see [`au::listing_after_adding`]).
pub fn listing_order(file: &RuleFile) -> Vec<usize> {
    let mut lists: Vec<VecDeque<usize>> =
        (0..au::AUDIT_NR_FILTERS).map(|_| VecDeque::new()).collect();
    for l in &file.lines {
        if let Some(list) = lists.get_mut(l.rule.list() as usize) {
            if l.rule.flags & au::AUDIT_FILTER_PREPEND != 0 {
                list.push_front(l.line);
            } else {
                list.push_back(l.line);
            }
        }
    }
    lists.into_iter().flatten().collect()
}
