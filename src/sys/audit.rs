//! The kernel audit subsystem over a NETLINK_AUDIT socket, as `auditctl`
//! talks to it: status (AUDIT_GET), the enabled flag (AUDIT_SET), and the
//! rule list (AUDIT_LIST_RULES, AUDIT_ADD_RULE, AUDIT_DEL_RULE).
//!
//! Used by the probe (read only) and by the `audit` mechanism (which
//! changes the machine's audit configuration and puts it back exactly).
//! The file is split in three: pure parsing of reply datagrams and pure
//! encoding of requests (tested byte by byte against captures from a real
//! kernel and from `auditctl`, under tests/fixtures/), then the socket
//! exchange. Every request has a sequence number and replies with another
//! one are ignored; requests that change something ask for an
//! acknowledgement (NLM_F_ACK) and fail with the request's name and the
//! errno when the kernel refuses ("AUDIT_ADD_RULE: EEXIST ..."). The socket
//! has a receive timeout and every exchange a deadline, so nothing hangs.
//!
//! Rules are handled as the raw `struct audit_rule_data` payloads the
//! kernel lists: a rule listed and added back is the same rule, byte for
//! byte, which is what lets a snapshot be restored exactly.

use std::cell::Cell;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use netlink_packet_audit::{StatusMessage, StatusMessageBuffer};
use netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, Parseable};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_AUDIT};

pub use netlink_packet_audit::{
    AUDIT_ADD_RULE, AUDIT_DEL_RULE, AUDIT_GET, AUDIT_LIST_RULES, AUDIT_SET,
};

use super::errno_name;

/// Longest wait for any one reply datagram.
pub const RECV_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest time one request may take in all (a long rule list included).
pub const DEADLINE: Duration = Duration::from_secs(5);
/// Netlink header length.
pub const NLMSG_HDRLEN: usize = 16;

/// `struct audit_status.mask` bit: the `enabled` field is to be set.
pub const AUDIT_STATUS_ENABLED: u32 = 0x0001;
/// Size of `struct audit_status` as auditctl 3.x sends it (11 u32s, up to
/// backlog_wait_time_actual); the kernel copies what it knows of it.
pub const AUDIT_STATUS_LEN: usize = 44;

/// Rule lists (`struct audit_rule_data.flags`, `-a LIST,ACTION`), as in
/// `<linux/audit.h>`: user-space messages (`user`), task creation
/// (`task`), syscall exit (`exit`), record types to drop (`exclude`),
/// file systems (`filesystem`), io_uring operations (`io_uring`).
pub const AUDIT_FILTER_USER: u32 = 0x00;
pub const AUDIT_FILTER_TASK: u32 = 0x01;
/// Rule list: on syscall exit (`-a ...,exit`).
pub const AUDIT_FILTER_EXIT: u32 = 0x04;
pub const AUDIT_FILTER_EXCLUDE: u32 = 0x05;
pub const AUDIT_FILTER_FS: u32 = 0x06;
pub const AUDIT_FILTER_URING_EXIT: u32 = 0x07;
/// Number of rule lists; the kernel lists rules list by list in this order.
pub const AUDIT_NR_FILTERS: u32 = 8;
/// Flag beside the list: add at the front of the list (`-A`). The kernel
/// clears it once the rule is in place, so listings never show it.
pub const AUDIT_FILTER_PREPEND: u32 = 0x10;
/// Rule actions (`-a always,...`, `-a never,...`).
pub const AUDIT_NEVER: u32 = 0;
pub const AUDIT_ALWAYS: u32 = 2;

/// Rule fields (`-F field...`), `<linux/audit.h>`.
pub const AUDIT_PID: u32 = 0;
pub const AUDIT_UID: u32 = 1;
pub const AUDIT_EUID: u32 = 2;
pub const AUDIT_SUID: u32 = 3;
pub const AUDIT_FSUID: u32 = 4;
pub const AUDIT_GID: u32 = 5;
pub const AUDIT_EGID: u32 = 6;
pub const AUDIT_SGID: u32 = 7;
pub const AUDIT_FSGID: u32 = 8;
/// `auid`, `loginuid`.
pub const AUDIT_LOGINUID: u32 = 9;
pub const AUDIT_PERS: u32 = 10;
/// Rule field: the syscall's architecture (`-F arch=...`).
pub const AUDIT_ARCH: u32 = 11;
pub const AUDIT_MSGTYPE: u32 = 12;
pub const AUDIT_SUBJ_USER: u32 = 13;
pub const AUDIT_SUBJ_ROLE: u32 = 14;
pub const AUDIT_SUBJ_TYPE: u32 = 15;
pub const AUDIT_SUBJ_SEN: u32 = 16;
pub const AUDIT_SUBJ_CLR: u32 = 17;
pub const AUDIT_PPID: u32 = 18;
pub const AUDIT_OBJ_USER: u32 = 19;
pub const AUDIT_OBJ_ROLE: u32 = 20;
pub const AUDIT_OBJ_TYPE: u32 = 21;
pub const AUDIT_OBJ_LEV_LOW: u32 = 22;
pub const AUDIT_OBJ_LEV_HIGH: u32 = 23;
pub const AUDIT_SESSIONID: u32 = 25;
pub const AUDIT_FSTYPE: u32 = 26;
pub const AUDIT_DEVMAJOR: u32 = 100;
pub const AUDIT_DEVMINOR: u32 = 101;
pub const AUDIT_INODE: u32 = 102;
pub const AUDIT_EXIT: u32 = 103;
pub const AUDIT_SUCCESS: u32 = 104;
/// `path=`, `-w FILE`: a string field.
pub const AUDIT_WATCH: u32 = 105;
pub const AUDIT_PERM: u32 = 106;
/// `dir=`, `-w DIRECTORY`: a string field.
pub const AUDIT_DIR: u32 = 107;
pub const AUDIT_FILETYPE: u32 = 108;
pub const AUDIT_OBJ_UID: u32 = 109;
pub const AUDIT_OBJ_GID: u32 = 110;
/// `-C left op right`: the value is an `AUDIT_COMPARE_*` number.
pub const AUDIT_FIELD_COMPARE: u32 = 111;
pub const AUDIT_EXE: u32 = 112;
pub const AUDIT_SADDR_FAM: u32 = 113;
pub const AUDIT_ARG0: u32 = 200;
pub const AUDIT_ARG1: u32 = 201;
pub const AUDIT_ARG2: u32 = 202;
pub const AUDIT_ARG3: u32 = 203;
/// Rule field: the key records carry (`-k KEY`, `-F key=KEY`).
pub const AUDIT_FILTERKEY: u32 = 210;

/// Rule field operators, kept in `fieldflags` (`<linux/audit.h>`).
pub const AUDIT_BIT_MASK: u32 = 0x0800_0000;
pub const AUDIT_LESS_THAN: u32 = 0x1000_0000;
pub const AUDIT_GREATER_THAN: u32 = 0x2000_0000;
pub const AUDIT_NOT_EQUAL: u32 = 0x3000_0000;
/// Rule field operator `=` (kept in `fieldflags`).
pub const AUDIT_EQUAL: u32 = 0x4000_0000;
pub const AUDIT_BIT_TEST: u32 = AUDIT_BIT_MASK | AUDIT_EQUAL;
pub const AUDIT_LESS_THAN_OR_EQUAL: u32 = AUDIT_LESS_THAN | AUDIT_EQUAL;
pub const AUDIT_GREATER_THAN_OR_EQUAL: u32 = AUDIT_GREATER_THAN | AUDIT_EQUAL;

/// `perm=` bits (`-p rwxa`).
pub const AUDIT_PERM_EXEC: u32 = 1;
pub const AUDIT_PERM_WRITE: u32 = 2;
pub const AUDIT_PERM_READ: u32 = 4;
pub const AUDIT_PERM_ATTR: u32 = 8;

/// The longest key, all `-k` of a rule joined.
pub const AUDIT_MAX_KEY_LEN: usize = 256;
/// What joins several keys of one rule (`-k a -k b`).
pub const AUDIT_KEY_SEPARATOR: u8 = 0x01;
/// The top bits of the syscall bitmap name syscall classes, not syscalls:
/// the kernel clears them (and adds the class's syscalls) when a rule is
/// added.
pub const AUDIT_SYSCALL_CLASSES: usize = 16;

/// `AUDIT_ARCH_*` (`<linux/audit.h>`): EM_* | __AUDIT_ARCH_64BIT |
/// __AUDIT_ARCH_LE, as audit rules and seccomp's `seccomp_data.arch` carry.
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
pub const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;
pub const AUDIT_ARCH_ARM: u32 = 0x4000_0028;
pub const AUDIT_ARCH_PPC: u32 = 0x0000_0014;
pub const AUDIT_ARCH_PPC64: u32 = 0x8000_0015;
pub const AUDIT_ARCH_PPC64LE: u32 = 0xc000_0015;
pub const AUDIT_ARCH_S390: u32 = 0x0000_0016;
pub const AUDIT_ARCH_S390X: u32 = 0x8000_0016;

/// The architecture this binary's syscalls report.
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH_NATIVE: Option<u32> = Some(AUDIT_ARCH_X86_64);
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH_NATIVE: Option<u32> = Some(AUDIT_ARCH_AARCH64);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const AUDIT_ARCH_NATIVE: Option<u32> = None;
/// Words in a rule's syscall bitmap.
pub const AUDIT_BITMASK_SIZE: usize = 64;
/// Fields a rule may have.
pub const AUDIT_MAX_FIELDS: usize = 64;
/// Size of `struct audit_rule_data` without its string buffer: flags,
/// action, field_count, `mask[64]`, `fields[64]`, `values[64]`, `fieldflags[64]`,
/// buflen.
pub const AUDIT_RULE_DATA_LEN: usize = 4 * (3 + AUDIT_BITMASK_SIZE + 3 * AUDIT_MAX_FIELDS + 1);

// ---------------------------------------------------------------------------
// Errors.
// ---------------------------------------------------------------------------

/// A failed audit request: which one, the errno when the kernel gave one,
/// and a reason that says what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct AuditError {
    /// "AUDIT_ADD_RULE", "socket(NETLINK_AUDIT)", ...
    pub request: &'static str,
    pub errno: Option<i32>,
    pub reason: String,
}

impl AuditError {
    /// The kernel (or a socket call) answered `request` with `errno`.
    pub fn errno(request: &'static str, errno: i32) -> Self {
        AuditError {
            request,
            errno: Some(errno),
            reason: errno_reason(request, errno),
        }
    }

    /// A failed socket operation.
    fn io(request: &'static str, err: &std::io::Error) -> Self {
        match err.raw_os_error() {
            Some(errno) => Self::errno(request, errno),
            None => Self::other(request, err.to_string()),
        }
    }

    /// Anything else (a malformed reply, a missing answer).
    fn other(request: &'static str, msg: impl std::fmt::Display) -> Self {
        AuditError {
            request,
            errno: None,
            reason: format!("{request}: {msg}"),
        }
    }
}

/// A reason for an errno from the audit socket, with what to do about it.
pub fn errno_reason(what: &str, errno: i32) -> String {
    let name = errno_name(errno);
    match errno {
        libc::EPERM | libc::EACCES => {
            format!("{what}: {name}: needs CAP_AUDIT_CONTROL (run as root)")
        }
        libc::ECONNREFUSED => format!(
            "{what}: {name}: the kernel answers audit requests only from the initial \
             user and PID namespaces (running in a container?)"
        ),
        libc::EPROTONOSUPPORT => {
            format!("{what}: {name}: kernel built without audit (CONFIG_AUDIT)")
        }
        libc::EAGAIN => format!(
            "{what}: no reply from the kernel audit subsystem within {} s",
            RECV_TIMEOUT.as_secs()
        ),
        libc::EEXIST => format!(
            "{what}: {name}: the same rule is already loaded (see `auditctl -l`; \
             `auditctl -d ...` removes it)"
        ),
        libc::ENOENT if what == "AUDIT_DEL_RULE" => {
            format!("{what}: {name}: no such rule is loaded (see `auditctl -l`)")
        }
        libc::EINVAL => format!(
            "{what}: {name}: the kernel rejected the request as malformed \
             (Invalid argument); this is a bug in secperf, please report it"
        ),
        _ => format!(
            "{what}: {name} ({})",
            std::io::Error::from_raw_os_error(errno)
        ),
    }
}

// ---------------------------------------------------------------------------
// Parsing: reply datagrams to messages, messages to answers. No I/O.
// ---------------------------------------------------------------------------

/// One netlink message of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawMsg {
    pub msg_type: u16,
    pub seq: u32,
    pub payload: Vec<u8>,
}

impl RawMsg {
    /// For NLMSG_ERROR: 0 for an acknowledgement, else a negative errno.
    pub fn error_code(&self) -> Option<i32> {
        if self.msg_type != NLMSG_ERROR {
            return None;
        }
        // A truncated error message is still an error; EIO stands in.
        Some(
            self.payload
                .get(..4)
                .map_or(-libc::EIO, |b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
        )
    }

    fn is_failure(&self) -> bool {
        self.error_code().is_some_and(|c| c != 0)
    }
}

/// Splits one datagram into its netlink messages.
pub fn split_datagram(buf: &[u8]) -> Result<Vec<RawMsg>, String> {
    let mut msgs = Vec::new();
    let mut offset = 0;
    while offset + NLMSG_HDRLEN <= buf.len() {
        let rest = &buf[offset..];
        let len = u32::from_ne_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            return Err(format!(
                "bad netlink message length {len} at offset {offset} of a {}-byte reply",
                buf.len()
            ));
        }
        msgs.push(RawMsg {
            msg_type: u16::from_ne_bytes([rest[4], rest[5]]),
            seq: u32::from_ne_bytes([rest[8], rest[9], rest[10], rest[11]]),
            payload: rest[NLMSG_HDRLEN..len].to_vec(),
        });
        // Messages are padded to 4 bytes.
        offset += (len + 3) & !3;
    }
    Ok(msgs)
}

/// Whether a status request is answered.
fn is_status_end(m: &RawMsg) -> bool {
    m.msg_type == AUDIT_GET || m.is_failure()
}

/// Whether a rule listing is complete.
fn is_rules_end(m: &RawMsg) -> bool {
    m.msg_type == NLMSG_DONE || m.is_failure()
}

/// Whether an acknowledged request is answered.
fn is_ack(m: &RawMsg) -> bool {
    m.msg_type == NLMSG_ERROR
}

/// The status in the replies to an AUDIT_GET.
pub fn status_of(msgs: &[RawMsg]) -> Result<StatusMessage, AuditError> {
    const WHAT: &str = "AUDIT_GET";
    for m in msgs {
        if m.msg_type == AUDIT_GET {
            let buf = StatusMessageBuffer::new_checked(&m.payload[..])
                .map_err(|e| AuditError::other(WHAT, format!("parsing the reply: {e}")))?;
            return StatusMessage::parse(&buf)
                .map_err(|e| AuditError::other(WHAT, format!("parsing the reply: {e}")));
        }
        if let Some(code) = m.error_code().filter(|c| *c != 0) {
            return Err(AuditError::errno(WHAT, -code));
        }
    }
    Err(AuditError::other(WHAT, "the kernel sent no status"))
}

/// The rules (raw `struct audit_rule_data`, in list order) in the replies
/// to an AUDIT_LIST_RULES.
pub fn rules_of(msgs: &[RawMsg]) -> Result<Vec<Vec<u8>>, AuditError> {
    const WHAT: &str = "AUDIT_LIST_RULES";
    let mut rules = Vec::new();
    for m in msgs {
        match m.msg_type {
            AUDIT_LIST_RULES => rules.push(m.payload.clone()),
            NLMSG_DONE => return Ok(rules),
            _ => {
                if let Some(code) = m.error_code().filter(|c| *c != 0) {
                    return Err(AuditError::errno(WHAT, -code));
                }
            }
        }
    }
    Err(AuditError::other(
        WHAT,
        format!("list ended without NLMSG_DONE after {} rules", rules.len()),
    ))
}

/// The outcome of an acknowledged request.
pub fn ack_of(request: &'static str, msgs: &[RawMsg]) -> Result<(), AuditError> {
    match msgs.iter().find_map(RawMsg::error_code) {
        Some(0) => Ok(()),
        Some(code) => Err(AuditError::errno(request, -code)),
        None => Err(AuditError::other(
            request,
            "the kernel sent no acknowledgement",
        )),
    }
}

// ---------------------------------------------------------------------------
// Encoding requests. No I/O.
// ---------------------------------------------------------------------------

/// A netlink request: header and payload, padded to 4 bytes (the length
/// in the header includes the padding, as auditctl sends it).
pub fn encode_request(msg_type: u16, ack: bool, seq: u32, payload: &[u8]) -> Vec<u8> {
    let padded = (payload.len() + 3) & !3;
    let len = (NLMSG_HDRLEN + padded) as u32;
    let flags = NLM_F_REQUEST | if ack { NLM_F_ACK } else { 0 };
    let mut m = Vec::with_capacity(len as usize);
    m.extend_from_slice(&len.to_ne_bytes());
    m.extend_from_slice(&msg_type.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    // Port id 0: the kernel fills in the sender.
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(payload);
    m.resize(len as usize, 0);
    m
}

/// The AUDIT_SET payload that sets only the enabled flag
/// (`auditctl -e N`).
pub fn encode_set_enabled(enabled: u32) -> Vec<u8> {
    let mut p = vec![0u8; AUDIT_STATUS_LEN];
    p[0..4].copy_from_slice(&AUDIT_STATUS_ENABLED.to_ne_bytes());
    p[4..8].copy_from_slice(&enabled.to_ne_bytes());
    p
}

/// One field of a rule: `-F field op value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleField {
    pub field: u32,
    /// The operator, as kept in `fieldflags` ([`AUDIT_EQUAL`]).
    pub op: u32,
    /// The value; for string fields (the key) the string's length, the
    /// string itself being in [`RuleData::buf`].
    pub value: u32,
}

/// `struct audit_rule_data`, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleData {
    /// The filter list ([`AUDIT_FILTER_EXIT`]).
    pub flags: u32,
    /// [`AUDIT_ALWAYS`] or never.
    pub action: u32,
    /// Syscall bitmap: syscall `nr` is bit `nr % 32` of `mask[nr / 32]`.
    pub mask: [u32; AUDIT_BITMASK_SIZE],
    pub fields: Vec<RuleField>,
    /// The strings of string fields, one after another, no terminators.
    pub buf: Vec<u8>,
}

impl RuleData {
    /// A rule on `list` (with [`AUDIT_FILTER_PREPEND`] when it goes first)
    /// with `action`, no syscalls and no fields yet.
    pub fn new(list: u32, action: u32) -> Self {
        RuleData {
            flags: list,
            action,
            mask: [0; AUDIT_BITMASK_SIZE],
            fields: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// `-a always,exit -F arch=<arch>` with no syscalls yet.
    pub fn always_exit(arch: u32) -> Self {
        RuleData {
            flags: AUDIT_FILTER_EXIT,
            action: AUDIT_ALWAYS,
            mask: [0; AUDIT_BITMASK_SIZE],
            fields: vec![RuleField {
                field: AUDIT_ARCH,
                op: AUDIT_EQUAL,
                value: arch,
            }],
            buf: Vec::new(),
        }
    }

    /// Adds `-S nr`.
    pub fn with_syscall(mut self, nr: u32) -> Self {
        assert!(
            (nr as usize) < AUDIT_BITMASK_SIZE * 32,
            "syscall {nr} out of range"
        );
        self.mask[nr as usize / 32] |= 1 << (nr % 32);
        self
    }

    /// Adds `-k key`.
    pub fn with_key(mut self, key: &str) -> Self {
        self.fields.push(RuleField {
            field: AUDIT_FILTERKEY,
            op: AUDIT_EQUAL,
            value: key.len() as u32,
        });
        self.buf.extend_from_slice(key.as_bytes());
        self
    }

    /// The syscall numbers in the bitmap.
    pub fn syscalls(&self) -> Vec<u32> {
        (0..(AUDIT_BITMASK_SIZE * 32) as u32)
            .filter(|nr| self.mask[*nr as usize / 32] & (1 << (nr % 32)) != 0)
            .collect()
    }

    /// The key (`-k`), if the rule has one.
    pub fn key(&self) -> Option<String> {
        let mut offset = 0usize;
        for f in &self.fields {
            if f.field == AUDIT_FILTERKEY {
                let end = offset.checked_add(f.value as usize)?;
                return self
                    .buf
                    .get(offset..end)
                    .map(|b| String::from_utf8_lossy(b).into_owned());
            }
            if is_string_field(f.field) {
                offset += f.value as usize;
            }
        }
        None
    }

    /// The strings of the string fields, in field order: (field, bytes).
    pub fn strings(&self) -> Vec<(u32, Vec<u8>)> {
        let mut offset = 0usize;
        let mut out = Vec::new();
        for f in self.fields.iter().filter(|f| is_string_field(f.field)) {
            let end = offset.saturating_add(f.value as usize);
            let text = self.buf.get(offset..end).unwrap_or_default();
            out.push((f.field, text.to_vec()));
            offset = end;
        }
        out
    }

    /// Whether the rule watches a path (`-w`, `-F path=`, `-F dir=`).
    pub fn is_watch(&self) -> bool {
        self.fields
            .iter()
            .any(|f| f.field == AUDIT_WATCH || f.field == AUDIT_DIR)
    }

    /// The directory whose deletion (or move, or unmount) makes the kernel
    /// drop this watch rule without lowering its rule count (phantom rules,
    /// docs/findings.md): a `dir=` rule's own directory, a `path=` rule's
    /// parent. None for a rule that watches no path.
    pub fn vanishes_with(&self) -> Option<std::path::PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        let (field, bytes) = self
            .strings()
            .into_iter()
            .find(|(f, _)| *f == AUDIT_WATCH || *f == AUDIT_DIR)?;
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(&bytes)).to_path_buf();
        match field {
            AUDIT_DIR => Some(path),
            _ => path.parent().map(|p| p.to_path_buf()),
        }
    }

    /// The list the rule is on, without [`AUDIT_FILTER_PREPEND`].
    pub fn list(&self) -> u32 {
        self.flags & !AUDIT_FILTER_PREPEND
    }

    /// The rule as the kernel lists it once added: without
    /// [`AUDIT_FILTER_PREPEND`], and with the syscall-class bits (the top
    /// [`AUDIT_SYSCALL_CLASSES`] bits of the bitmap, all set by `-S all`)
    /// cleared. (The kernel also adds each named class's syscalls; a rule
    /// that sets those bits without `all` is not modelled: the rule-file
    /// parser refuses such syscall numbers.)
    pub fn as_listed(&self) -> RuleData {
        let mut r = self.clone();
        r.flags = self.list();
        let last = AUDIT_BITMASK_SIZE - 1;
        r.mask[last] &= !(u32::MAX << (32 - AUDIT_SYSCALL_CLASSES));
        r
    }

    /// The wire form: native-endian u32s (little-endian on x86_64), then
    /// the strings.
    pub fn encode(&self) -> Vec<u8> {
        assert!(self.fields.len() <= AUDIT_MAX_FIELDS, "too many fields");
        let mut out = Vec::with_capacity(AUDIT_RULE_DATA_LEN + self.buf.len());
        let mut put = |v: u32| out.extend_from_slice(&v.to_ne_bytes());
        put(self.flags);
        put(self.action);
        put(self.fields.len() as u32);
        self.mask.iter().for_each(|&w| put(w));
        let column = |get: fn(&RuleField) -> u32| {
            (0..AUDIT_MAX_FIELDS).map(move |i| self.fields.get(i).map_or(0, get))
        };
        column(|f| f.field).for_each(&mut put);
        column(|f| f.value).for_each(&mut put);
        column(|f| f.op).for_each(&mut put);
        put(self.buf.len() as u32);
        out.extend_from_slice(&self.buf);
        out
    }

    /// Decodes a rule as the kernel lists it.
    pub fn decode(raw: &[u8]) -> Result<RuleData, String> {
        if raw.len() < AUDIT_RULE_DATA_LEN {
            return Err(format!(
                "audit rule of {} bytes is shorter than struct audit_rule_data ({AUDIT_RULE_DATA_LEN})",
                raw.len()
            ));
        }
        let word = |i: usize| {
            let b = &raw[4 * i..4 * i + 4];
            u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
        };
        let field_count = word(2) as usize;
        if field_count > AUDIT_MAX_FIELDS {
            return Err(format!("audit rule with {field_count} fields (at most 64)"));
        }
        let mut mask = [0; AUDIT_BITMASK_SIZE];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = word(3 + i);
        }
        let fields_at = 3 + AUDIT_BITMASK_SIZE;
        let values_at = fields_at + AUDIT_MAX_FIELDS;
        let ops_at = values_at + AUDIT_MAX_FIELDS;
        let fields = (0..field_count)
            .map(|i| RuleField {
                field: word(fields_at + i),
                value: word(values_at + i),
                op: word(ops_at + i),
            })
            .collect();
        let buflen = word(ops_at + AUDIT_MAX_FIELDS) as usize;
        let buf = raw
            .get(AUDIT_RULE_DATA_LEN..AUDIT_RULE_DATA_LEN + buflen)
            .ok_or_else(|| {
                format!(
                    "audit rule says buflen {buflen} but has {} bytes after the header",
                    raw.len() - AUDIT_RULE_DATA_LEN
                )
            })?
            .to_vec();
        Ok(RuleData {
            flags: word(0),
            action: word(1),
            mask,
            fields,
            buf,
        })
    }
}

/// Whether a rule field's value is a string length (its text in `buf`):
/// subj/obj LSM labels (13-17, 19-23), watch, dir, exe, filterkey.
pub fn is_string_field(field: u32) -> bool {
    matches!(field, 13..=17 | 19..=23 | 105 | 107 | 112 | 210)
}

/// What AUDIT_LIST_RULES answers after `added` were added, in this order,
/// to an empty rule list: list by list (user, task, exit, exclude,
/// filesystem, io_uring), each list in the order the rules went in, except
/// that a prepended rule (`-A`) goes before the rules already on its list;
/// each rule [`RuleData::as_listed`].
pub fn listing_after_adding(added: &[RuleData]) -> Vec<Vec<u8>> {
    let mut lists: Vec<std::collections::VecDeque<RuleData>> =
        (0..AUDIT_NR_FILTERS).map(|_| Default::default()).collect();
    for rule in added {
        let Some(list) = lists.get_mut(rule.list() as usize) else {
            // Not a list the kernel has; it refuses the rule.
            continue;
        };
        if rule.flags & AUDIT_FILTER_PREPEND != 0 {
            list.push_front(rule.as_listed());
        } else {
            list.push_back(rule.as_listed());
        }
    }
    lists.into_iter().flatten().map(|r| r.encode()).collect()
}

/// Lower-case hex of bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes from hex (whitespace not allowed).
pub fn from_hex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!("odd-length hex string ({} characters)", text.len()));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad hex at character {i}"))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Socket I/O.
// ---------------------------------------------------------------------------

/// The audit configuration secperf changes and restores: the enabled flag
/// and the rules, raw and in list order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditState {
    pub enabled: u32,
    pub rules: Vec<Vec<u8>>,
}

/// A NETLINK_AUDIT socket connected to the kernel, with a receive timeout.
pub struct AuditSocket {
    sock: Socket,
    seq: Cell<u32>,
}

impl AuditSocket {
    /// Opens the socket. Needs no privilege; the requests do.
    pub fn open() -> Result<Self, AuditError> {
        const OPEN: &str = "socket(NETLINK_AUDIT)";
        let mut sock = Socket::new(NETLINK_AUDIT).map_err(|e| AuditError::io(OPEN, &e))?;
        set_recv_timeout(&sock, RECV_TIMEOUT)?;
        sock.bind_auto()
            .map_err(|e| AuditError::io("bind(NETLINK_AUDIT)", &e))?;
        sock.connect(&SocketAddr::new(0, 0))
            .map_err(|e| AuditError::io("connect(NETLINK_AUDIT)", &e))?;
        Ok(AuditSocket {
            sock,
            seq: Cell::new(0),
        })
    }

    /// AUDIT_GET: the kernel's audit status.
    pub fn status(&self) -> Result<StatusMessage, AuditError> {
        status_of(&self.exchange("AUDIT_GET", AUDIT_GET, false, &[], is_status_end)?)
    }

    /// AUDIT_LIST_RULES: every rule, raw, in the kernel's order.
    pub fn list_rules(&self) -> Result<Vec<Vec<u8>>, AuditError> {
        rules_of(&self.exchange(
            "AUDIT_LIST_RULES",
            AUDIT_LIST_RULES,
            false,
            &[],
            is_rules_end,
        )?)
    }

    /// AUDIT_SET with only AUDIT_STATUS_ENABLED: 0 off, 1 on (2 would lock
    /// the configuration until reboot; refused here).
    pub fn set_enabled(&self, enabled: u32) -> Result<(), AuditError> {
        const WHAT: &str = "AUDIT_SET";
        if enabled > 1 {
            return Err(AuditError::other(
                WHAT,
                format!("refusing to set enabled={enabled} (2 locks audit until reboot)"),
            ));
        }
        let payload = encode_set_enabled(enabled);
        ack_of(
            WHAT,
            &self.exchange(WHAT, AUDIT_SET, true, &payload, is_ack)?,
        )
    }

    /// AUDIT_ADD_RULE with a raw `struct audit_rule_data`.
    pub fn add_rule(&self, rule: &[u8]) -> Result<(), AuditError> {
        const WHAT: &str = "AUDIT_ADD_RULE";
        ack_of(
            WHAT,
            &self.exchange(WHAT, AUDIT_ADD_RULE, true, rule, is_ack)?,
        )
    }

    /// AUDIT_DEL_RULE with a raw `struct audit_rule_data` (as listed).
    pub fn del_rule(&self, rule: &[u8]) -> Result<(), AuditError> {
        const WHAT: &str = "AUDIT_DEL_RULE";
        ack_of(
            WHAT,
            &self.exchange(WHAT, AUDIT_DEL_RULE, true, rule, is_ack)?,
        )
    }

    /// The enabled flag and the rules.
    pub fn state(&self) -> Result<AuditState, AuditError> {
        Ok(AuditState {
            enabled: self.status()?.enabled,
            rules: self.list_rules()?,
        })
    }

    /// Makes the rule list exactly `rules`, in order: nothing is done when
    /// it already is; otherwise every loaded rule is deleted (as listed)
    /// and `rules` are added one by one.
    pub fn replace_rules(&self, rules: &[Vec<u8>]) -> Result<(), AuditError> {
        let current = self.list_rules()?;
        if current == rules {
            return Ok(());
        }
        for rule in &current {
            match self.del_rule(rule) {
                // Gone already (another tool): what we wanted.
                Err(e) if e.errno == Some(libc::ENOENT) => {}
                other => other?,
            }
        }
        for rule in rules {
            self.add_rule(rule)?;
        }
        Ok(())
    }

    /// Sets the rules, then the enabled flag (see [`Self::replace_rules`]).
    pub fn set_state(&self, state: &AuditState) -> Result<(), AuditError> {
        self.replace_rules(&state.rules)?;
        if self.status()?.enabled != state.enabled {
            self.set_enabled(state.enabled)?;
        }
        Ok(())
    }

    /// Sends one request and returns the replies that carry its sequence
    /// number, up to and including the one where `is_end` holds.
    fn exchange(
        &self,
        what: &'static str,
        msg_type: u16,
        ack: bool,
        payload: &[u8],
        is_end: fn(&RawMsg) -> bool,
    ) -> Result<Vec<RawMsg>, AuditError> {
        let seq = self.seq.get().wrapping_add(1).max(1);
        self.seq.set(seq);
        let request = encode_request(msg_type, ack, seq, payload);
        self.sock
            .send(&request, 0)
            .map_err(|e| AuditError::io(what, &e))?;

        let start = Instant::now();
        let mut replies = Vec::new();
        while start.elapsed() < DEADLINE {
            let mut buf = Vec::with_capacity(1 << 16);
            match self.sock.recv(&mut buf, 0) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(AuditError::io(what, &e)),
            }
            let msgs = split_datagram(&buf).map_err(|e| AuditError::other(what, e))?;
            for m in msgs.into_iter().filter(|m| m.seq == seq) {
                let end = is_end(&m);
                replies.push(m);
                if end {
                    return Ok(replies);
                }
            }
        }
        Err(AuditError::other(
            what,
            format!("reply not complete after {} s", DEADLINE.as_secs()),
        ))
    }
}

/// Sets SO_RCVTIMEO so a missing reply ends in EAGAIN instead of a hang.
fn set_recv_timeout(sock: &Socket, timeout: Duration) -> Result<(), AuditError> {
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: the fd is owned by `sock` and open; `tv` is a valid timeval
    // and the length passed is its size.
    let ret = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if ret < 0 {
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        return Err(AuditError::errno("setsockopt(SO_RCVTIMEO)", errno));
    }
    Ok(())
}

/// Serialises the tests (unit tests anywhere in the crate) that change the
/// machine's audit configuration.
#[cfg(test)]
pub(crate) static TEST_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
pub(crate) mod tests;
