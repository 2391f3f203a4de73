//! Linux audit status and rule count, asked of the kernel over a
//! NETLINK_AUDIT socket (AUDIT_GET, AUDIT_LIST_RULES), as `auditctl -s` and
//! `auditctl -l` do.
//!
//! Audit rules are evaluated on every syscall of every process once any rule
//! exists (and syscall auditing is enabled), so the rule count and the
//! enabled flag change what each syscall costs. The socket exchange and the
//! parsing of replies live in [`crate::sys::audit`] (shared with the
//! `audit` mechanism, and tested there on bytes captured from a real
//! kernel); this file turns the answers into the probe's record. Nothing
//! here can hang: the socket has a receive timeout and each request a
//! deadline.

use netlink_packet_audit::StatusMessage;
use serde::{Deserialize, Serialize};

use super::Probed;
use super::audit_phantom::PhantomCheck;
use crate::sys::audit::AuditSocket;

/// The kernel's audit state (struct audit_status) and rule count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Whether the kernel still charges syscalls for audit rules that are
    /// gone (see [`super::audit_phantom`]): None when it was not checked
    /// (the plain probe is read-only) or could not tell;
    /// `phantom_check.reason` says which.
    #[serde(default)]
    pub phantom_rules: Option<bool>,
    /// How `phantom_rules` was found.
    #[serde(default = "PhantomCheck::not_recorded")]
    pub phantom_check: PhantomCheck,
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
        Err(e) => return Probed::unavailable(e.reason),
    };
    let status = match sock.status() {
        Ok(s) => s,
        Err(e) => return Probed::unavailable(e.reason),
    };
    let rules = sock
        .list_rules()
        .map(|r| r.len() as u32)
        .map_err(|e| e.reason)
        .into();
    Probed::Ok(info_from(&status, rules))
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
        phantom_rules: None,
        phantom_check: PhantomCheck::read_only(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixtures::fixture_file;
    use crate::sys::audit::{from_hex, split_datagram, status_of};

    #[test]
    fn record_from_the_captured_status_reply() {
        let text = std::fs::read_to_string(fixture_file("audit/get_status.hex")).unwrap();
        let msgs: Vec<_> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .flat_map(|l| split_datagram(&from_hex(l.trim()).unwrap()).unwrap())
            .collect();
        let info = info_from(&status_of(&msgs).unwrap(), Probed::Ok(3));
        assert!(info.enabled <= 2, "{info:?}");
        assert!(info.backlog_limit > 0, "{info:?}");
        assert_eq!(info.rules, Probed::Ok(3));
        assert!(!info.enabled_text().is_empty() && info.failure_text() != "unknown");
    }

    #[test]
    fn live_probe_never_fails() {
        // Root or not, audit built in or not: a value or a reason. The
        // probe's own deadline keeps it from waiting on a kernel that never
        // answers; the limit here only reports a hang, it is no time check.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(probe());
        });
        let limit = std::time::Duration::from_secs(120);
        let probed = rx
            .recv_timeout(limit)
            .unwrap_or_else(|_| panic!("the audit probe never returned (gave up after {limit:?})"));
        match probed {
            Probed::Ok(info) => assert!(info.enabled <= 2, "{info:?}"),
            Probed::Unavailable { reason } => assert!(!reason.is_empty()),
        }
    }

    /// Regenerates the fixtures from this machine's kernel (needs root):
    /// `cargo test capture_audit_fixtures -- --ignored`.
    #[test]
    #[ignore]
    fn capture_audit_fixtures() {
        use crate::sys::audit::{AUDIT_GET, AUDIT_LIST_RULES, NLMSG_HDRLEN, to_hex};
        // The same requests the probe makes, answered datagram by datagram.
        let sock = netlink_sys::Socket::new(netlink_sys::protocols::NETLINK_AUDIT).unwrap();
        sock.connect(&netlink_sys::SocketAddr::new(0, 0)).unwrap();
        let done = netlink_packet_core::NLMSG_DONE;
        // (file, request name, request type, seq, message type that ends the reply)
        for (name, what, msg_type, seq, last) in [
            ("get_status.hex", "AUDIT_GET", AUDIT_GET, 1, AUDIT_GET),
            (
                "list_rules.hex",
                "AUDIT_LIST_RULES",
                AUDIT_LIST_RULES,
                2,
                done,
            ),
        ] {
            let request = crate::sys::audit::encode_request(msg_type, false, seq, &[]);
            assert_eq!(request.len(), NLMSG_HDRLEN);
            sock.send(&request, 0).unwrap();
            let mut text = format!(
                "# Kernel replies to {what}, captured from Linux {} by\n\
                 # `cargo test capture_audit_fixtures -- --ignored` (one datagram per line, hex)\n",
                crate::probe::kernel::probe(std::path::Path::new("/"))
                    .value()
                    .map_or("?".to_string(), |k| k.release.clone())
            );
            let mut ended = false;
            while !ended {
                let mut buf = Vec::with_capacity(1 << 16);
                sock.recv(&mut buf, 0).unwrap();
                text.push_str(&to_hex(&buf));
                text.push('\n');
                ended = split_datagram(&buf)
                    .unwrap()
                    .iter()
                    .any(|m| m.msg_type == last || m.error_code().is_some_and(|c| c != 0));
            }
            std::fs::write(fixture_file(&format!("audit/{name}")), text).unwrap();
        }
    }
}
