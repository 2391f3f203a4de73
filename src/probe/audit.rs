//! Linux audit status and rule count, asked of the kernel over a
//! NETLINK_AUDIT socket (AUDIT_GET, AUDIT_LIST_RULES), as `auditctl -s` and
//! `auditctl -l` do.
//!
//! Audit rules are evaluated on every syscall of every process once any rule
//! exists (and syscall auditing is enabled), so the rule count and the
//! enabled flag change what each syscall costs. The file is split in two:
//! pure parsing of reply datagrams (tested on bytes captured from a real
//! kernel, tests/fixtures/probe/audit/) and the socket exchange. The socket
//! has a receive timeout and the exchange a deadline, so the probe cannot
//! hang.

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use netlink_packet_audit::{
    AUDIT_GET, AUDIT_LIST_RULES, AuditMessage, StatusMessage, StatusMessageBuffer,
};
use netlink_packet_core::{
    ErrorBuffer, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, NetlinkBuffer, NetlinkMessage, Parseable,
};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_AUDIT};
use serde::{Deserialize, Serialize};

use super::Probed;
use crate::sys::errno_name;

/// Longest wait for any one reply datagram.
const RECV_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest time one request may take in all (a long rule list included).
const DEADLINE: Duration = Duration::from_secs(5);
/// Netlink header length.
const NLMSG_HDRLEN: usize = 16;

/// The kernel's audit state (struct audit_status) and rule count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditInfo {
    /// 0 disabled, 1 enabled, 2 enabled and locked until reboot.
    pub enabled: u32,
    /// What the kernel does when it cannot log: 0 silent, 1 printk, 2 panic.
    pub failure: u32,
    /// Pid of the registered audit daemon; 0 when none (records go to the
    /// kernel log).
    pub auditd_pid: u32,
    /// Records per second before the kernel drops them; 0 unlimited.
    pub rate_limit: u32,
    /// Records that may wait for auditd before the failure action applies.
    pub backlog_limit: u32,
    /// Records waiting now.
    pub backlog: u32,
    /// Records lost since boot.
    pub lost: u32,
    /// How long a task waits for backlog room, in jiffies.
    pub backlog_wait_time: u32,
    /// Number of loaded audit rules (AUDIT_LIST_RULES replies).
    pub rules: Probed<u32>,
}

impl AuditInfo {
    /// Human words for `enabled`.
    pub fn enabled_text(&self) -> &'static str {
        match self.enabled {
            0 => "disabled",
            1 => "enabled",
            2 => "enabled, locked",
            _ => "unknown",
        }
    }

    /// Human words for `failure`.
    pub fn failure_text(&self) -> &'static str {
        match self.failure {
            0 => "silent",
            1 => "printk",
            2 => "panic",
            _ => "unknown",
        }
    }
}

/// Asks the running kernel for audit status and rules.
pub fn probe() -> Probed<AuditInfo> {
    let sock = match AuditSocket::open() {
        Ok(s) => s,
        Err(reason) => return Probed::unavailable(reason),
    };
    let status = match sock
        .exchange(AuditMessage::GetStatus(None), 1, is_status_end)
        .and_then(|d| status_of(&d))
    {
        Ok(s) => s,
        Err(reason) => return Probed::unavailable(reason),
    };
    let rules = sock
        .exchange(AuditMessage::ListRules(None), 2, is_rules_end)
        .and_then(|d| rule_count_of(&d))
        .into();
    Probed::Ok(info_from(&status, rules))
}

// ---------------------------------------------------------------------------
// Parsing: reply datagrams to replies, replies to answers. No I/O.
// ---------------------------------------------------------------------------

/// One netlink message of a reply, as far as the probe cares.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reply {
    /// AUDIT_GET: the status.
    Status(StatusMessage),
    /// AUDIT_LIST_RULES: one rule (its content is not needed).
    Rule,
    /// NLMSG_DONE: end of a multi-part reply.
    Done,
    /// NLMSG_ERROR: 0 is an acknowledgement, a negative value an errno.
    Error(i32),
    /// Anything else (type number).
    Other(u16),
}

/// Splits one datagram into its netlink messages.
fn parse_datagram(buf: &[u8]) -> Result<Vec<Reply>, String> {
    let mut replies = Vec::new();
    let mut offset = 0;
    while offset + NLMSG_HDRLEN <= buf.len() {
        let rest = &buf[offset..];
        let header = NetlinkBuffer::new(rest);
        let len = header.length() as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            return Err(format!(
                "bad netlink message length {len} at offset {offset} of a {}-byte reply",
                buf.len()
            ));
        }
        let payload = &rest[NLMSG_HDRLEN..len];
        replies.push(parse_message(header.message_type(), payload)?);
        // Messages are padded to 4 bytes.
        offset += (len + 3) & !3;
    }
    Ok(replies)
}

/// One message from its type and payload.
fn parse_message(message_type: u16, payload: &[u8]) -> Result<Reply, String> {
    Ok(match message_type {
        AUDIT_GET => {
            let buf = StatusMessageBuffer::new_checked(payload)
                .map_err(|e| format!("parsing AUDIT_GET reply: {e}"))?;
            let status =
                StatusMessage::parse(&buf).map_err(|e| format!("parsing AUDIT_GET reply: {e}"))?;
            Reply::Status(status)
        }
        AUDIT_LIST_RULES => Reply::Rule,
        NLMSG_DONE => Reply::Done,
        NLMSG_ERROR => {
            let buf = ErrorBuffer::new_checked(payload)
                .map_err(|e| format!("parsing NLMSG_ERROR: {e}"))?;
            Reply::Error(buf.code().map_or(0, |c| c.get()))
        }
        other => Reply::Other(other),
    })
}

/// Whether a status request is answered.
fn is_status_end(r: &Reply) -> bool {
    matches!(r, Reply::Status(_)) || matches!(r, Reply::Error(e) if *e != 0)
}

/// Whether a rule listing is complete.
fn is_rules_end(r: &Reply) -> bool {
    matches!(r, Reply::Done) || matches!(r, Reply::Error(e) if *e != 0)
}

/// The status in the reply datagrams of an AUDIT_GET.
fn status_of(datagrams: &[Vec<u8>]) -> Result<StatusMessage, String> {
    for d in datagrams {
        for r in parse_datagram(d)? {
            match r {
                Reply::Status(s) => return Ok(s),
                Reply::Error(e) if e != 0 => return Err(errno_reason("AUDIT_GET", -e)),
                _ => {}
            }
        }
    }
    Err("AUDIT_GET: the kernel sent no status".to_string())
}

/// The number of rules in the reply datagrams of an AUDIT_LIST_RULES.
fn rule_count_of(datagrams: &[Vec<u8>]) -> Result<u32, String> {
    let mut rules = 0;
    for d in datagrams {
        for r in parse_datagram(d)? {
            match r {
                Reply::Rule => rules += 1,
                Reply::Done => return Ok(rules),
                Reply::Error(e) if e != 0 => return Err(errno_reason("AUDIT_LIST_RULES", -e)),
                _ => {}
            }
        }
    }
    Err(format!(
        "AUDIT_LIST_RULES: list ended without NLMSG_DONE after {rules} rules"
    ))
}

/// The record from a parsed status and the rule count.
fn info_from(s: &StatusMessage, rules: Probed<u32>) -> AuditInfo {
    AuditInfo {
        enabled: s.enabled,
        failure: s.failure,
        auditd_pid: s.pid,
        rate_limit: s.rate_limiting,
        backlog_limit: s.backlog_limit,
        backlog: s.backlog,
        lost: s.lost,
        backlog_wait_time: s.backlog_wait_time,
        rules,
    }
}

/// A reason for an errno from the audit socket, with what to do about it.
fn errno_reason(what: &str, errno: i32) -> String {
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
        _ => format!(
            "{what}: {name} ({})",
            std::io::Error::from_raw_os_error(errno)
        ),
    }
}

/// A reason for a failed socket operation.
fn io_reason(what: &str, err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(errno) => errno_reason(what, errno),
        None => format!("{what}: {err}"),
    }
}

// ---------------------------------------------------------------------------
// Socket I/O.
// ---------------------------------------------------------------------------

/// A NETLINK_AUDIT socket connected to the kernel, with a receive timeout.
struct AuditSocket {
    sock: Socket,
}

impl AuditSocket {
    fn open() -> Result<Self, String> {
        let mut sock =
            Socket::new(NETLINK_AUDIT).map_err(|e| io_reason("socket(NETLINK_AUDIT)", &e))?;
        set_recv_timeout(&sock, RECV_TIMEOUT)?;
        sock.bind_auto()
            .map_err(|e| io_reason("bind(NETLINK_AUDIT)", &e))?;
        sock.connect(&SocketAddr::new(0, 0))
            .map_err(|e| io_reason("connect(NETLINK_AUDIT)", &e))?;
        Ok(AuditSocket { sock })
    }

    /// Sends `msg` and returns the raw reply datagrams, up to and including
    /// the one where `is_end` holds for a message.
    fn exchange(
        &self,
        msg: AuditMessage,
        seq: u32,
        is_end: fn(&Reply) -> bool,
    ) -> Result<Vec<Vec<u8>>, String> {
        let what = match msg {
            AuditMessage::GetStatus(_) => "AUDIT_GET",
            _ => "AUDIT_LIST_RULES",
        };
        let mut nl = NetlinkMessage::from(msg);
        nl.header.flags = NLM_F_REQUEST;
        nl.header.sequence_number = seq;
        nl.finalize();
        let mut request = vec![0; nl.buffer_len()];
        nl.serialize(&mut request);
        self.sock
            .send(&request, 0)
            .map_err(|e| io_reason(what, &e))?;

        let start = Instant::now();
        let mut datagrams = Vec::new();
        while start.elapsed() < DEADLINE {
            let mut buf = Vec::with_capacity(1 << 16);
            self.sock
                .recv(&mut buf, 0)
                .map_err(|e| io_reason(what, &e))?;
            let done = parse_datagram(&buf)?.iter().any(is_end);
            datagrams.push(buf);
            if done {
                return Ok(datagrams);
            }
        }
        Err(format!(
            "{what}: reply not complete after {} s",
            DEADLINE.as_secs()
        ))
    }
}

/// Sets SO_RCVTIMEO so a missing reply ends in EAGAIN instead of a hang.
fn set_recv_timeout(sock: &Socket, timeout: Duration) -> Result<(), String> {
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
        return Err(crate::sys::SysError::last("setsockopt(SO_RCVTIMEO)").to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture_file;
    use netlink_packet_core::{ErrorMessage, NetlinkHeader, NetlinkPayload};
    use std::num::NonZeroI32;

    /// Reads a fixture of reply datagrams: one hex line per datagram,
    /// `#` lines are comments.
    fn read_hex(name: &str) -> Vec<Vec<u8>> {
        let text = std::fs::read_to_string(fixture_file(&format!("audit/{name}"))).unwrap();
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                (0..l.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap())
                    .collect()
            })
            .collect()
    }

    fn to_hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A kernel-style netlink message of `message_type` with `payload`.
    fn message(message_type: u16, payload: &[u8]) -> Vec<u8> {
        let len = (NLMSG_HDRLEN + payload.len()) as u32;
        let mut m = Vec::new();
        m.extend_from_slice(&len.to_ne_bytes());
        m.extend_from_slice(&message_type.to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&2u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(payload);
        while m.len() % 4 != 0 {
            m.push(0);
        }
        m
    }

    fn error_reply(errno: i32) -> Vec<u8> {
        let mut e = ErrorMessage::default();
        e.code = NonZeroI32::new(-errno);
        e.header = vec![0; 16];
        let mut nl =
            NetlinkMessage::<AuditMessage>::new(NetlinkHeader::default(), NetlinkPayload::Error(e));
        nl.finalize();
        let mut buf = vec![0; nl.buffer_len()];
        nl.serialize(&mut buf);
        buf
    }

    #[test]
    fn parses_the_captured_status_reply() {
        let d = read_hex("get_status.hex");
        let s = status_of(&d).unwrap();
        let info = info_from(&s, Probed::Ok(0));
        assert!(info.enabled <= 2, "{info:?}");
        assert!(info.failure <= 2, "{info:?}");
        assert!(info.backlog_limit > 0, "{info:?}");
        assert!(is_status_end(&parse_datagram(&d[0]).unwrap()[0]));
    }

    #[test]
    fn counts_the_captured_rule_list() {
        let d = read_hex("list_rules.hex");
        assert_eq!(rule_count_of(&d).unwrap(), 0);
        assert!(
            parse_datagram(d.last().unwrap())
                .unwrap()
                .iter()
                .any(is_rules_end)
        );
    }

    #[test]
    fn counts_rules_until_done() {
        let rule = message(AUDIT_LIST_RULES, &[0u8; 1040]);
        let done = message(NLMSG_DONE, &0i32.to_ne_bytes());
        let d = vec![rule.clone(), rule.clone(), rule, done];
        assert_eq!(rule_count_of(&d).unwrap(), 3);
        // Several messages in one datagram work too.
        let joined: Vec<u8> = d.concat();
        assert_eq!(rule_count_of(&[joined]).unwrap(), 3);
        let err = rule_count_of(&d[..2]).unwrap_err();
        assert!(err.contains("without NLMSG_DONE"), "{err}");
    }

    #[test]
    fn eperm_reply_asks_for_root() {
        let d = vec![error_reply(libc::EPERM)];
        assert!(is_status_end(&parse_datagram(&d[0]).unwrap()[0]));
        let err = status_of(&d).unwrap_err();
        assert_eq!(
            err,
            "AUDIT_GET: EPERM: needs CAP_AUDIT_CONTROL (run as root)"
        );
        let err = rule_count_of(&[error_reply(libc::ECONNREFUSED)]).unwrap_err();
        assert!(err.contains("initial user and PID namespaces"), "{err}");
    }

    #[test]
    fn an_ack_is_not_an_end() {
        let ack = parse_datagram(&error_reply(0)).unwrap();
        assert_eq!(ack, [Reply::Error(0)]);
        assert!(!is_status_end(&ack[0]) && !is_rules_end(&ack[0]));
    }

    #[test]
    fn rejects_bad_lengths() {
        let mut m = message(AUDIT_GET, &[0u8; 40]);
        m[0] = 200;
        assert!(
            parse_datagram(&m)
                .unwrap_err()
                .contains("bad netlink message length")
        );
        let short = message(AUDIT_GET, &[0u8; 8]);
        assert!(parse_datagram(&short).unwrap_err().contains("AUDIT_GET"));
    }

    #[test]
    fn unpadded_last_message_is_fine() {
        // A 17-byte message with no padding after it ends the datagram.
        let mut m = message(AUDIT_LIST_RULES, &[7u8]);
        m.truncate(NLMSG_HDRLEN + 1);
        assert_eq!(parse_datagram(&m).unwrap(), [Reply::Rule]);
        assert_eq!(parse_datagram(&[]).unwrap(), []);
    }

    #[test]
    fn reasons_name_the_fix() {
        assert!(
            errno_reason("socket(NETLINK_AUDIT)", libc::EPROTONOSUPPORT).contains("without audit")
        );
        assert!(errno_reason("AUDIT_GET", libc::EAGAIN).contains("within 2 s"));
    }

    #[test]
    fn live_probe_never_fails() {
        // Root or not, audit built in or not: a value or a reason, quickly.
        let start = Instant::now();
        match probe() {
            Probed::Ok(info) => assert!(info.enabled <= 2, "{info:?}"),
            Probed::Unavailable { reason } => assert!(!reason.is_empty()),
        }
        assert!(start.elapsed() < 2 * DEADLINE);
    }

    /// Regenerates the fixtures from this machine's kernel (needs root):
    /// `cargo test capture_audit_fixtures -- --ignored`.
    #[test]
    #[ignore]
    fn capture_audit_fixtures() {
        let sock = AuditSocket::open().unwrap();
        for (name, what, msg, seq, end) in [
            (
                "get_status.hex",
                "AUDIT_GET",
                AuditMessage::GetStatus(None),
                1,
                is_status_end as fn(&Reply) -> bool,
            ),
            (
                "list_rules.hex",
                "AUDIT_LIST_RULES",
                AuditMessage::ListRules(None),
                2,
                is_rules_end,
            ),
        ] {
            let d = sock.exchange(msg, seq, end).unwrap();
            let mut text = format!(
                "# Kernel replies to {what}, captured from Linux {} by\n\
                 # `cargo test capture_audit_fixtures -- --ignored` (one datagram per line, hex)\n",
                crate::probe::kernel::probe(std::path::Path::new("/"))
                    .value()
                    .map_or("?".to_string(), |k| k.release.clone())
            );
            for datagram in d {
                text.push_str(&to_hex(&datagram));
                text.push('\n');
            }
            std::fs::write(fixture_file(&format!("audit/{name}")), text).unwrap();
        }
    }
}
