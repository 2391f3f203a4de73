//! The fields of a rule: `-F FIELD OP VALUE` and `-C FIELD OP FIELD`, as
//! auditctl's `audit_rule_fieldpair_data` and
//! `audit_rule_interfield_comp_data` read them.
//!
//! A field is named as in auditctl's lib/fieldtab.h (any case), the
//! operator is the first of `!=`, `>=`, `<=`, `&=`, `=`, `>`, `<`, `&`
//! found in the pair, and each field family checks the lists and operators
//! it may be used with before reading its value (a user or group name, an
//! errno, a record type, a string, an arch, permissions, a number). The
//! value goes into the rule being built; strings into its `buf`.

use super::host::arch_value;
use super::kernel::PATH_MAX;
use super::setopt::LineState;
use super::values::{lookup, number, number_u32, perm_bits, signed_u32, starts_with_digit};
use super::{kernel, tables};
use crate::sys::audit::{self as au, RuleField};

/// `AF_MAX` of glibc 2.36, which auditctl 3.0.9 checks `saddr_fam` against.
const AF_MAX: u32 = 46;
/// `4294967295`: `-F auid=unset`, `-F sessionid=unset`.
const UNSET_ID: u32 = u32::MAX;

/// Fields the exclude list takes.
const EXCLUDE_FIELDS: &[u32] = &[
    au::AUDIT_PID,
    au::AUDIT_UID,
    au::AUDIT_GID,
    au::AUDIT_LOGINUID,
    au::AUDIT_MSGTYPE,
    au::AUDIT_SUBJ_USER,
    au::AUDIT_SUBJ_ROLE,
    au::AUDIT_SUBJ_TYPE,
    au::AUDIT_SUBJ_SEN,
    au::AUDIT_SUBJ_CLR,
    au::AUDIT_EXE,
];

/// Fields only the exit list takes.
const EXIT_ONLY: &[u32] = &[
    au::AUDIT_EXIT,
    au::AUDIT_OBJ_USER,
    au::AUDIT_OBJ_ROLE,
    au::AUDIT_OBJ_TYPE,
    au::AUDIT_OBJ_LEV_LOW,
    au::AUDIT_OBJ_LEV_HIGH,
    au::AUDIT_WATCH,
    au::AUDIT_DIR,
    au::AUDIT_PERM,
    au::AUDIT_FILETYPE,
    au::AUDIT_DEVMAJOR,
    au::AUDIT_DEVMINOR,
    au::AUDIT_INODE,
    au::AUDIT_SUCCESS,
    au::AUDIT_PPID,
];

/// Fields that take only `=` and `!=` (`perm` takes only `=`).
const EQUALITY_ONLY: &[u32] = &[
    au::AUDIT_EXE,
    au::AUDIT_ARCH,
    au::AUDIT_FSTYPE,
    au::AUDIT_INODE,
];

impl LineState<'_> {
    /// `-F field OP value`: `audit_rule_fieldpair_data`. The checks keep
    /// their order (room in the rule, the pair's form, the field, its list,
    /// `arch` before `-S`, its operator, then its value), which decides the
    /// fault a line with several is refused for.
    pub(super) fn field_pair(&mut self, pair: &str, flags: u32) -> Result<(), String> {
        kernel::check_room(&self.rule)?;
        let (name, op, v) = split_pair(pair)?;
        let Some(field) = field_of(name) else {
            return Err(format!(
                "unknown field '{name}' (auditctl(8) lists them: arch, auid, uid, exit, \
                 success, a0..a3, path, dir, perm, key, exe, msgtype, ...)"
            ));
        };
        check_list(field, name, flags)?;
        if field == au::AUDIT_ARCH && self.syscall_added {
            return Err("-F arch= must come before -S (as auditctl requires)".into());
        }
        check_op(field, name, op)?;
        let value = self.field_value(field, name, v)?;
        self.rule.fields.push(RuleField { field, op, value });
        Ok(())
    }

    /// The value of `field` (written `name`) given as `v`, read as its
    /// family reads it; string values go into the rule's `buf`.
    fn field_value(&mut self, field: u32, name: &str, v: &str) -> Result<u32, String> {
        match field {
            au::AUDIT_UID
            | au::AUDIT_EUID
            | au::AUDIT_SUID
            | au::AUDIT_FSUID
            | au::AUDIT_LOGINUID
            | au::AUDIT_OBJ_UID => self.user_value(v),
            au::AUDIT_GID
            | au::AUDIT_EGID
            | au::AUDIT_SGID
            | au::AUDIT_FSGID
            | au::AUDIT_OBJ_GID => self.group_value(v),
            au::AUDIT_OBJ_USER
            | au::AUDIT_OBJ_ROLE
            | au::AUDIT_OBJ_TYPE
            | au::AUDIT_OBJ_LEV_LOW
            | au::AUDIT_OBJ_LEV_HIGH
            | au::AUDIT_WATCH
            | au::AUDIT_DIR
            | au::AUDIT_SUBJ_USER
            | au::AUDIT_SUBJ_ROLE
            | au::AUDIT_SUBJ_TYPE
            | au::AUDIT_SUBJ_SEN
            | au::AUDIT_SUBJ_CLR
            | au::AUDIT_FILTERKEY
            | au::AUDIT_EXE => self.string_value(field, name, v),
            au::AUDIT_ARCH => {
                let elf = arch_value(v)?;
                self.elf = elf;
                Ok(elf)
            }
            au::AUDIT_FSTYPE => {
                let magic = fstype_value(v)?;
                self.filterfs_added = true;
                Ok(magic)
            }
            au::AUDIT_EXIT => exit_value(v),
            au::AUDIT_MSGTYPE => msgtype_value(v),
            au::AUDIT_PERM => perm_bits(v),
            au::AUDIT_FILETYPE => filetype_value(v),
            au::AUDIT_ARG0..=au::AUDIT_ARG3 => {
                number(v).unwrap_or_else(|| Err(format!("'{name}' takes a number, not '{v}'")))
            }
            au::AUDIT_SESSIONID => sessionid_value(v),
            au::AUDIT_SADDR_FAM => saddr_fam_value(v),
            _ => plain_number(field, name, v),
        }
    }

    /// A uid (`auid`, `euid`, ...): a number, `unset`, or a user name
    /// looked up on the machine.
    fn user_value(&self, v: &str) -> Result<u32, String> {
        number(v).unwrap_or_else(|| {
            if v == "unset" {
                Ok(UNSET_ID)
            } else {
                self.host
                    .user(v)
                    .ok_or_else(|| format!("unknown user '{v}' on this machine"))
            }
        })
    }

    /// A gid (`egid`, `obj_gid`, ...): a number or a group name looked up
    /// on the machine.
    fn group_value(&self, v: &str) -> Result<u32, String> {
        if starts_with_digit(v) {
            signed_u32(v)
        } else {
            self.host
                .group(v)
                .ok_or_else(|| format!("unknown group '{v}' on this machine"))
        }
    }

    /// A string field (a path, a label, an exe, a key): the value is its
    /// length, the string goes into the rule's `buf`.
    fn string_value(&mut self, field: u32, name: &str, v: &str) -> Result<u32, String> {
        match field {
            au::AUDIT_WATCH | au::AUDIT_DIR => self.perm_added = true,
            au::AUDIT_EXE => self.exe_added = true,
            au::AUDIT_FILTERKEY if !self.can_take_key() => {
                return Err(
                    "a key needs a watch, a syscall or an exe path before it on its line".into(),
                );
            }
            _ => {}
        }
        if field == au::AUDIT_FILTERKEY && v.len() > au::AUDIT_MAX_KEY_LEN {
            return Err(format!(
                "the key is longer than {} bytes",
                au::AUDIT_MAX_KEY_LEN
            ));
        } else if v.len() > PATH_MAX {
            return Err(format!("'{name}' is longer than {PATH_MAX} bytes"));
        }
        self.rule.buf.extend_from_slice(v.as_bytes());
        Ok(v.len() as u32)
    }

    /// `-C left OP right`: `audit_rule_interfield_comp_data`.
    pub(super) fn compare_pair(&mut self, pair: &str, flags: u32) -> Result<(), String> {
        kernel::check_room(&self.rule)?;
        let (left, op, right) = if let Some((l, r)) = pair.split_once("!=") {
            (l, au::AUDIT_NOT_EQUAL, r)
        } else if let Some((l, r)) = pair.split_once('=') {
            (l, au::AUDIT_EQUAL, r)
        } else {
            return Err(format!("-C {pair}: comparisons take only = or !="));
        };
        if left.is_empty() {
            return Err("-C: no field name before the operator".into());
        }
        if right.is_empty() {
            return Err("-C: no field name after the operator".into());
        }
        let f1 = field_of(left).ok_or_else(|| format!("-C: unknown field '{left}'"))?;
        let f2 = field_of(right).ok_or_else(|| format!("-C: unknown field '{right}'"))?;
        if flags != au::AUDIT_FILTER_EXIT {
            return Err("-C can only be used on the exit list".into());
        }
        let value = compare_of(f1, f2).ok_or_else(|| {
            format!(
                "-C {left}{}{right}: the kernel cannot compare these fields (uids with uids, \
                 gids with gids)",
                if op == au::AUDIT_EQUAL { "=" } else { "!=" }
            )
        })?;
        self.rule.fields.push(RuleField {
            field: au::AUDIT_FIELD_COMPARE,
            op,
            value,
        });
        Ok(())
    }
}

/// `FIELD OP VALUE` split at its operator, each part non-empty.
fn split_pair(pair: &str) -> Result<(&str, u32, &str), String> {
    let Some((name, op, v)) = split_op(pair) else {
        return Err(format!(
            "no operator in '{pair}' (=, !=, <, >, <=, >=, & or &=)"
        ));
    };
    if name.is_empty() {
        return Err("no field name before the operator".into());
    }
    if v.is_empty() {
        return Err(format!("no value after the operator for '{name}'"));
    }
    Ok((name, op, v))
}

/// Whether `field` (written `name`) may be used on the list `flags`: the
/// exclude list takes only [`EXCLUDE_FIELDS`], and some fields belong to
/// one list or a few.
fn check_list(field: u32, name: &str, flags: u32) -> Result<(), String> {
    use au::{
        AUDIT_FILTER_EXCLUDE as EXCLUDE, AUDIT_FILTER_EXIT as EXIT, AUDIT_FILTER_FS as FS,
        AUDIT_FILTER_USER as USER,
    };
    if flags == EXCLUDE && !EXCLUDE_FIELDS.contains(&field) {
        return Err(format!(
            "'{name}' cannot be used on the exclude list (only msgtype, pid, uid, gid, auid, \
             subj_* and exe)"
        ));
    }
    let (lists, why): (&[u32], String) = match field {
        au::AUDIT_MSGTYPE => (
            &[EXCLUDE, USER],
            "msgtype can only be used on the exclude or user list".into(),
        ),
        au::AUDIT_FSTYPE => (
            &[FS],
            "fstype can only be used on the filesystem list".into(),
        ),
        au::AUDIT_SESSIONID => (
            &[EXCLUDE, USER, EXIT],
            "sessionid can only be used on the exclude, user or exit list".into(),
        ),
        f if EXIT_ONLY.contains(&f) => (
            &[EXIT],
            format!("'{name}' can only be used on the exit list (-a always,exit or never,exit)"),
        ),
        _ => return Ok(()),
    };
    if lists.contains(&flags) {
        Ok(())
    } else {
        Err(why)
    }
}

/// Whether `field` (written `name`) takes the operator `op`.
fn check_op(field: u32, name: &str, op: u32) -> Result<(), String> {
    if field == au::AUDIT_PERM && op != au::AUDIT_EQUAL {
        return Err("'perm' takes only =".into());
    }
    if EQUALITY_ONLY.contains(&field) && op != au::AUDIT_EQUAL && op != au::AUDIT_NOT_EQUAL {
        return Err(format!("'{name}' takes only = or !="));
    }
    Ok(())
}

/// `exit=`: a number (`-13`) or an errno name (`-EACCES`).
fn exit_value(v: &str) -> Result<u32, String> {
    number(v).unwrap_or_else(|| {
        errno_value(v)
            .ok_or_else(|| format!("unknown errno '{v}' (write e.g. -EACCES, -EPERM or a number)"))
    })
}

/// `msgtype=`: a number or a record type name.
fn msgtype_value(v: &str) -> Result<u32, String> {
    if starts_with_digit(v) {
        signed_u32(v)
    } else {
        msg_type(v).ok_or_else(|| {
            format!("unknown message type '{v}' (e.g. CWD, PATH, SYSCALL, or a number)")
        })
    }
}

/// `filetype=`: a name from auditctl's table.
fn filetype_value(v: &str) -> Result<u32, String> {
    lookup(tables::FILE_TYPES, v).ok_or_else(|| {
        let hint = if v.eq_ignore_ascii_case("symlink") {
            " (auditctl calls it 'link')"
        } else {
            ""
        };
        format!("unknown file type '{v}'{hint} (file, dir, socket, link, character, block or fifo)")
    })
}

/// `fstype=`: a magic number or a name from auditctl's table.
fn fstype_value(v: &str) -> Result<u32, String> {
    if starts_with_digit(v) {
        number_u32(v)
    } else {
        lookup(tables::FS_TYPES, v).ok_or_else(|| {
            format!("unknown file-system type '{v}' (tracefs, debugfs or a magic number)")
        })
    }
}

/// `sessionid=`: a number or `unset`.
fn sessionid_value(v: &str) -> Result<u32, String> {
    number(v).unwrap_or_else(|| {
        if v == "unset" {
            Ok(UNSET_ID)
        } else {
            Err(format!("sessionid takes a number or 'unset', not '{v}'"))
        }
    })
}

/// `saddr_fam=`: an address family number.
fn saddr_fam_value(v: &str) -> Result<u32, String> {
    let fam = number_u32(v)?;
    if fam >= AF_MAX {
        return Err(format!(
            "saddr_fam {fam} is not an address family (below {AF_MAX})"
        ));
    }
    Ok(fam)
}

/// The other fields (`pid`, `ppid`, `inode`, `success`, `devmajor`, ...):
/// a number, written with a digit first.
fn plain_number(field: u32, name: &str, v: &str) -> Result<u32, String> {
    if !starts_with_digit(v) {
        return Err(format!("'{name}' takes a number, not '{v}'"));
    }
    if field == au::AUDIT_INODE {
        number_u32(v)
    } else {
        signed_u32(v)
    }
}

/// Splits `field OP value` at the first operator auditctl finds, trying
/// `!=`, `>=`, `<=`, `&=`, `=`, `>`, `<`, `&` in that order.
fn split_op(pair: &str) -> Option<(&str, u32, &str)> {
    const OPS: [(&str, u32); 8] = [
        ("!=", au::AUDIT_NOT_EQUAL),
        (">=", au::AUDIT_GREATER_THAN_OR_EQUAL),
        ("<=", au::AUDIT_LESS_THAN_OR_EQUAL),
        ("&=", au::AUDIT_BIT_TEST),
        ("=", au::AUDIT_EQUAL),
        (">", au::AUDIT_GREATER_THAN),
        ("<", au::AUDIT_LESS_THAN),
        ("&", au::AUDIT_BIT_MASK),
    ];
    OPS.iter().find_map(|(text, op)| {
        pair.find(text)
            .map(|at| (&pair[..at], *op, &pair[at + text.len()..]))
    })
}

/// A field by name (lib/fieldtab.h), case-insensitive.
fn field_of(name: &str) -> Option<u32> {
    const FIELDS: &[(&str, u32)] = &[
        ("pid", au::AUDIT_PID),
        ("uid", au::AUDIT_UID),
        ("euid", au::AUDIT_EUID),
        ("suid", au::AUDIT_SUID),
        ("fsuid", au::AUDIT_FSUID),
        ("gid", au::AUDIT_GID),
        ("egid", au::AUDIT_EGID),
        ("sgid", au::AUDIT_SGID),
        ("fsgid", au::AUDIT_FSGID),
        ("auid", au::AUDIT_LOGINUID),
        ("loginuid", au::AUDIT_LOGINUID),
        ("pers", au::AUDIT_PERS),
        ("arch", au::AUDIT_ARCH),
        ("msgtype", au::AUDIT_MSGTYPE),
        ("subj_user", au::AUDIT_SUBJ_USER),
        ("subj_role", au::AUDIT_SUBJ_ROLE),
        ("subj_type", au::AUDIT_SUBJ_TYPE),
        ("subj_sen", au::AUDIT_SUBJ_SEN),
        ("subj_clr", au::AUDIT_SUBJ_CLR),
        ("ppid", au::AUDIT_PPID),
        ("obj_user", au::AUDIT_OBJ_USER),
        ("obj_role", au::AUDIT_OBJ_ROLE),
        ("obj_type", au::AUDIT_OBJ_TYPE),
        ("obj_lev_low", au::AUDIT_OBJ_LEV_LOW),
        ("obj_lev_high", au::AUDIT_OBJ_LEV_HIGH),
        ("sessionid", au::AUDIT_SESSIONID),
        ("devmajor", au::AUDIT_DEVMAJOR),
        ("devminor", au::AUDIT_DEVMINOR),
        ("inode", au::AUDIT_INODE),
        ("exit", au::AUDIT_EXIT),
        ("success", au::AUDIT_SUCCESS),
        ("path", au::AUDIT_WATCH),
        ("perm", au::AUDIT_PERM),
        ("dir", au::AUDIT_DIR),
        ("filetype", au::AUDIT_FILETYPE),
        ("fstype", au::AUDIT_FSTYPE),
        ("obj_uid", au::AUDIT_OBJ_UID),
        ("obj_gid", au::AUDIT_OBJ_GID),
        ("field_compare", au::AUDIT_FIELD_COMPARE),
        ("a0", au::AUDIT_ARG0),
        ("a1", au::AUDIT_ARG1),
        ("a2", au::AUDIT_ARG2),
        ("a3", au::AUDIT_ARG3),
        ("key", au::AUDIT_FILTERKEY),
        ("exe", au::AUDIT_EXE),
        ("saddr_fam", au::AUDIT_SADDR_FAM),
    ];
    lookup(FIELDS, name)
}

/// An errno by name, `EACCES` or `-EACCES` (case-insensitive).
fn errno_value(text: &str) -> Option<u32> {
    let (minus, name) = match text.strip_prefix('-') {
        Some(n) => (true, n),
        None => (false, text),
    };
    let v = lookup(tables::ERRNOS, name)?;
    Some(if minus { v.wrapping_neg() } else { v })
}

/// A record type by name (`CWD`; case-insensitive), or `UNKNOWN[N]`.
fn msg_type(text: &str) -> Option<u32> {
    if let Some(v) = lookup(tables::MSG_TYPES, text) {
        return Some(v);
    }
    let inner = text.strip_prefix("UNKNOWN[")?.strip_suffix(']')?;
    inner.parse().ok()
}

/// `AUDIT_COMPARE_*` for `-C left=right` (uid-like with uid-like,
/// gid-like with gid-like), as audit_rule_interfield_comp_data maps them.
fn compare_of(left: u32, right: u32) -> Option<u32> {
    use au::{
        AUDIT_EGID as EGID, AUDIT_EUID as EUID, AUDIT_FSGID as FSGID, AUDIT_FSUID as FSUID,
        AUDIT_GID as GID, AUDIT_LOGINUID as AUID, AUDIT_OBJ_GID as OGID, AUDIT_OBJ_UID as OUID,
        AUDIT_SGID as SGID, AUDIT_SUID as SUID, AUDIT_UID as UID,
    };
    // AUDIT_COMPARE_* from <linux/audit.h>, by unordered pair.
    const PAIRS: &[(u32, u32, u32)] = &[
        (UID, OUID, 1),
        (GID, OGID, 2),
        (EUID, OUID, 3),
        (EGID, OGID, 4),
        (AUID, OUID, 5),
        (SUID, OUID, 6),
        (SGID, OGID, 7),
        (FSUID, OUID, 8),
        (FSGID, OGID, 9),
        (UID, AUID, 10),
        (UID, EUID, 11),
        (UID, FSUID, 12),
        (UID, SUID, 13),
        (AUID, FSUID, 14),
        (AUID, SUID, 15),
        (AUID, EUID, 16),
        (EUID, SUID, 17),
        (EUID, FSUID, 18),
        (SUID, FSUID, 19),
        (GID, EGID, 20),
        (GID, FSGID, 21),
        (GID, SGID, 22),
        (EGID, FSGID, 23),
        (EGID, SGID, 24),
        (SGID, FSGID, 25),
    ];
    PAIRS
        .iter()
        .find(|(a, b, _)| (*a, *b) == (left, right) || (*b, *a) == (left, right))
        .map(|(_, _, v)| *v)
}
