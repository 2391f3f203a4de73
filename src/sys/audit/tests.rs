//! Tests of the audit netlink code: parsing of replies captured from a real
//! kernel (tests/fixtures/probe/audit/, tests/fixtures/audit/), encoding of
//! requests compared byte for byte with what `auditctl` sends, and, as root
//! with audit available, a live round trip that leaves the machine's audit
//! configuration as it found it. Also helpers the mechanism's tests share.

use std::path::PathBuf;
use std::sync::MutexGuard;

use super::*;

/// A file under tests/fixtures.
fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Reads a hex fixture: one hex line per datagram, `#` lines are comments.
pub(crate) fn read_hex(rel: &str) -> Vec<Vec<u8>> {
    let path = fixture(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| from_hex(l).unwrap())
        .collect()
}

/// All messages of all datagrams.
fn messages(datagrams: &[Vec<u8>]) -> Vec<RawMsg> {
    datagrams
        .iter()
        .flat_map(|d| split_datagram(d).unwrap())
        .collect()
}

/// A kernel-style message.
fn message(msg_type: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
    let len = (NLMSG_HDRLEN + payload.len()) as u32;
    let mut m = Vec::new();
    m.extend_from_slice(&len.to_ne_bytes());
    m.extend_from_slice(&msg_type.to_ne_bytes());
    m.extend_from_slice(&0u16.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(payload);
    while m.len() % 4 != 0 {
        m.push(0);
    }
    m
}

/// An NLMSG_ERROR reply with `errno` (0: an acknowledgement).
fn error_reply(errno: i32, seq: u32) -> Vec<u8> {
    let mut payload = (-errno).to_ne_bytes().to_vec();
    payload.extend_from_slice(&[0u8; 16]);
    message(NLMSG_ERROR, seq, &payload)
}

/// The rule `auditctl -a always,exit -F arch=b64 -S getppid -k secperf`.
fn getppid_rule() -> RuleData {
    RuleData::always_exit(AUDIT_ARCH_X86_64)
        .with_syscall(libc::SYS_getppid as u32)
        .with_key("secperf")
}

#[test]
fn parses_the_captured_status_reply() {
    let msgs = messages(&read_hex("probe/audit/get_status.hex"));
    let s = status_of(&msgs).unwrap();
    assert!(s.enabled <= 2, "{s:?}");
    assert!(s.failure <= 2, "{s:?}");
    assert!(s.backlog_limit > 0, "{s:?}");
    assert!(is_status_end(&msgs[0]));
}

#[test]
fn parses_the_captured_empty_rule_list() {
    let msgs = messages(&read_hex("probe/audit/list_rules.hex"));
    assert_eq!(rules_of(&msgs).unwrap(), Vec::<Vec<u8>>::new());
    assert!(msgs.iter().any(is_rules_end));
}

#[test]
fn parses_the_captured_listing_of_the_getppid_rule() {
    // The kernel lists the rule exactly as it was added: what lets a
    // listed rule be deleted and added back byte for byte.
    let msgs = messages(&read_hex("audit/list_rules_getppid_key_secperf.hex"));
    let rules = rules_of(&msgs).unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0], getppid_rule().encode());
    let decoded = RuleData::decode(&rules[0]).unwrap();
    assert_eq!(decoded, getppid_rule());
    assert_eq!(decoded.key().as_deref(), Some("secperf"));
    assert_eq!(decoded.syscalls(), [libc::SYS_getppid as u32]);
}

#[test]
fn add_rule_matches_auditctl_byte_for_byte() {
    // auditctl sent this as its second request (seq 2).
    let captured = read_hex("audit/add_rule_getppid_key_secperf.hex");
    let ours = encode_request(AUDIT_ADD_RULE, true, 2, &getppid_rule().encode());
    assert_eq!(ours.len(), captured[0].len());
    assert_eq!(to_hex(&ours), to_hex(&captured[0]));
    let captured = read_hex("audit/del_rule_getppid_key_secperf.hex");
    let ours = encode_request(AUDIT_DEL_RULE, true, 2, &getppid_rule().encode());
    assert_eq!(to_hex(&ours), to_hex(&captured[0]));
}

#[test]
fn rule_layout_is_the_kernel_struct() {
    let raw = getppid_rule().encode();
    assert_eq!(raw.len(), AUDIT_RULE_DATA_LEN + "secperf".len());
    assert_eq!(AUDIT_RULE_DATA_LEN, 1040);
    let word = |i: usize| u32::from_le_bytes(raw[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(word(0), AUDIT_FILTER_EXIT);
    assert_eq!(word(1), AUDIT_ALWAYS);
    assert_eq!(word(2), 2, "field_count");
    // getppid is 110 on x86_64: mask[3], bit 14.
    assert_eq!(word(3 + 3), 1 << 14);
    let fields = 3 + 64;
    let (values, ops) = (fields + 64, fields + 128);
    assert_eq!(
        (word(fields), word(fields + 1)),
        (AUDIT_ARCH, AUDIT_FILTERKEY)
    );
    assert_eq!((word(values), word(values + 1)), (AUDIT_ARCH_X86_64, 7));
    assert_eq!((word(ops), word(ops + 1)), (AUDIT_EQUAL, AUDIT_EQUAL));
    assert_eq!(word(fields + 192), 7, "buflen");
    assert_eq!(&raw[1040..], b"secperf");
}

#[test]
fn set_enabled_matches_auditctl() {
    let captured = read_hex("audit/set_enabled_0.hex");
    let ours = encode_request(AUDIT_SET, true, 1, &encode_set_enabled(0));
    assert_eq!(to_hex(&ours), to_hex(&captured[0]));
    let on = encode_set_enabled(1);
    assert_eq!(&on[..8], &[1, 0, 0, 0, 1, 0, 0, 0]);
    assert!(on[8..].iter().all(|b| *b == 0));
}

#[test]
fn decode_rejects_truncated_rules() {
    let raw = getppid_rule().encode();
    assert!(
        RuleData::decode(&raw[..100])
            .unwrap_err()
            .contains("shorter")
    );
    let err = RuleData::decode(&raw[..raw.len() - 1]).unwrap_err();
    assert!(err.contains("buflen 7"), "{err}");
    let no_key = RuleData::always_exit(AUDIT_ARCH_X86_64).with_syscall(155);
    let back = RuleData::decode(&no_key.encode()).unwrap();
    assert_eq!(back, no_key);
    assert_eq!(back.key(), None);
    assert_eq!(back.syscalls(), [155]);
}

#[test]
fn lists_rules_until_done() {
    let a = getppid_rule().encode();
    let b = RuleData::always_exit(AUDIT_ARCH_X86_64)
        .with_syscall(155)
        .encode();
    let d = vec![
        message(AUDIT_LIST_RULES, 2, &a),
        message(AUDIT_LIST_RULES, 2, &b),
        message(NLMSG_DONE, 2, &0i32.to_ne_bytes()),
    ];
    assert_eq!(rules_of(&messages(&d)).unwrap(), [a.clone(), b.clone()]);
    // Several messages in one datagram work too.
    assert_eq!(
        rules_of(&messages(&[d.concat()])).unwrap(),
        [a.clone(), b.clone()]
    );
    let err = rules_of(&messages(&d[..2])).unwrap_err();
    assert!(err.reason.contains("without NLMSG_DONE after 2"), "{err}");
}

#[test]
fn errors_name_the_request_and_the_fix() {
    let eperm = messages(&[error_reply(libc::EPERM, 1)]);
    assert!(is_status_end(&eperm[0]));
    let err = status_of(&eperm).unwrap_err();
    assert_eq!(
        err.reason,
        "AUDIT_GET: EPERM: needs CAP_AUDIT_CONTROL (run as root)"
    );
    assert_eq!(err.errno, Some(libc::EPERM));
    let err = ack_of("AUDIT_ADD_RULE", &messages(&[error_reply(libc::EEXIST, 3)])).unwrap_err();
    assert!(
        err.to_string().starts_with("AUDIT_ADD_RULE: EEXIST"),
        "{err}"
    );
    let err = ack_of("AUDIT_DEL_RULE", &messages(&[error_reply(libc::ENOENT, 3)])).unwrap_err();
    assert!(err.to_string().contains("no such rule"), "{err}");
    let err = rules_of(&messages(&[error_reply(libc::ECONNREFUSED, 2)])).unwrap_err();
    assert!(
        err.reason.contains("initial user and PID namespaces"),
        "{err}"
    );
    assert!(errno_reason("socket(NETLINK_AUDIT)", libc::EPROTONOSUPPORT).contains("without audit"));
    assert!(errno_reason("AUDIT_GET", libc::EAGAIN).contains("within 2 s"));
    assert!(
        ack_of("AUDIT_SET", &[])
            .unwrap_err()
            .reason
            .contains("no acknowledgement")
    );
}

#[test]
fn an_ack_ends_only_acknowledged_requests() {
    let ack = messages(&[error_reply(0, 4)]);
    assert_eq!(ack[0].error_code(), Some(0));
    assert!(is_ack(&ack[0]));
    assert!(!is_status_end(&ack[0]) && !is_rules_end(&ack[0]));
    assert_eq!(ack_of("AUDIT_SET", &ack), Ok(()));
}

#[test]
fn rejects_bad_lengths() {
    let mut m = message(AUDIT_GET, 1, &[0u8; 40]);
    m[0] = 200;
    assert!(
        split_datagram(&m)
            .unwrap_err()
            .contains("bad netlink message length")
    );
    let short = messages(&[message(AUDIT_GET, 1, &[0u8; 8])]);
    assert!(status_of(&short).unwrap_err().reason.contains("AUDIT_GET"));
    // A 17-byte message with no padding after it ends the datagram.
    let mut m = message(AUDIT_LIST_RULES, 1, &[7u8]);
    m.truncate(NLMSG_HDRLEN + 1);
    assert_eq!(split_datagram(&m).unwrap()[0].payload, [7u8]);
    assert_eq!(split_datagram(&[]).unwrap(), []);
}

#[test]
fn hex_round_trips() {
    let bytes = [0u8, 1, 0xab, 0xff];
    assert_eq!(to_hex(&bytes), "0001abff");
    assert_eq!(from_hex("0001abff").unwrap(), bytes);
    assert!(from_hex("abc").is_err());
    assert!(from_hex("zz").is_err());
}

// ---------------------------------------------------------------------------
// Live tests (root, audit available): helpers shared with the mechanism.
// ---------------------------------------------------------------------------

/// What a live test holds: the serialising lock, a socket, and the state
/// found before it began.
pub(crate) struct Live {
    _serial: MutexGuard<'static, ()>,
    /// secperf's own state lock: serialises with live tests in other test
    /// processes and with any secperf run changing audit meanwhile.
    _state: crate::safety::StateLock,
    pub sock: AuditSocket,
    pub before: AuditState,
}

/// The live-test context, or `None` (and `test` skipped, see
/// [`crate::testing`]) when this machine or user cannot change audit.
pub(crate) fn live_or_skip(test: &str) -> Option<Live> {
    use crate::testing::{root_or_skip, skip_kernel_feature};
    if !root_or_skip(test, "changing audit needs CAP_AUDIT_CONTROL") {
        return None;
    }
    let serial = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let state = match crate::safety::StateLock::acquire(std::time::Duration::from_secs(120)) {
        Ok(l) => l,
        Err(e) => {
            skip_kernel_feature(test, "free-state-lock", &format!("{e:#}"));
            return None;
        }
    };
    let sock = match AuditSocket::open() {
        Ok(s) => s,
        Err(e) => {
            skip_kernel_feature(test, "audit", &format!("audit unavailable: {e}"));
            return None;
        }
    };
    let before = match sock.state() {
        Ok(s) if s.enabled == 2 => {
            let reason = "audit is locked (enabled=2) until reboot";
            skip_kernel_feature(test, "audit", reason);
            return None;
        }
        Ok(s) => s,
        Err(e) => {
            skip_kernel_feature(test, "audit", &format!("audit unavailable: {e}"));
            return None;
        }
    };
    Some(Live {
        _serial: serial,
        _state: state,
        sock,
        before,
    })
}

/// Puts the audit state back on drop, whatever the test did; a failure is
/// printed loudly (a panic in a drop during unwinding would abort).
pub(crate) struct PutBack(pub AuditState);

impl Drop for PutBack {
    fn drop(&mut self) {
        let result = AuditSocket::open().and_then(|s| {
            s.set_state(&self.0)?;
            s.state()
        });
        match result {
            Ok(now) if now == self.0 => {}
            Ok(now) => eprintln!(
                "FAILED to put audit back: enabled {} with {} rules, expected enabled {} with {} rules",
                now.enabled,
                now.rules.len(),
                self.0.enabled,
                self.0.rules.len()
            ),
            Err(e) => eprintln!("FAILED to put audit back: {e}"),
        }
    }
}

#[test]
fn live_add_list_delete_round_trip() {
    let Some(live) = live_or_skip("live_add_list_delete_round_trip") else {
        return;
    };
    let _put_back = PutBack(live.before.clone());
    let rule = RuleData::always_exit(AUDIT_ARCH_X86_64)
        .with_syscall(libc::SYS_acct as u32)
        .with_key("secperf-test")
        .encode();
    live.sock.add_rule(&rule).unwrap();
    let listed = live.sock.list_rules().unwrap();
    assert_eq!(listed.len(), live.before.rules.len() + 1);
    assert_eq!(listed.last().unwrap(), &rule, "listed as added");
    let err = live.sock.add_rule(&rule).unwrap_err();
    assert!(
        err.to_string().starts_with("AUDIT_ADD_RULE: EEXIST"),
        "{err}"
    );
    live.sock.del_rule(&rule).unwrap();
    let err = live.sock.del_rule(&rule).unwrap_err();
    assert_eq!(err.errno, Some(libc::ENOENT), "{err}");
    assert_eq!(live.sock.state().unwrap(), live.before);
}

#[test]
fn live_set_state_is_exact_and_idempotent() {
    let Some(live) = live_or_skip("live_set_state_is_exact_and_idempotent") else {
        return;
    };
    let _put_back = PutBack(live.before.clone());
    let a = RuleData::always_exit(AUDIT_ARCH_X86_64)
        .with_syscall(libc::SYS_acct as u32)
        .with_key("secperf-test")
        .encode();
    let b = RuleData::always_exit(AUDIT_ARCH_X86_64)
        .with_syscall(libc::SYS_pivot_root as u32)
        .encode();
    let want = AuditState {
        enabled: 1 - live.before.enabled.min(1),
        rules: vec![b, a],
    };
    for _ in 0..2 {
        live.sock.set_state(&want).unwrap();
        assert_eq!(live.sock.state().unwrap(), want);
    }
    live.sock.set_state(&live.before).unwrap();
    assert_eq!(live.sock.state().unwrap(), live.before);
}

/// A rule on `list` with one `field = value`, every syscall (`-S all`,
/// as auditctl gives rules without -S).
fn rule_on(list: u32, action: u32, field: u32, value: u32) -> RuleData {
    let mut r = RuleData::new(list, action);
    r.mask = [u32::MAX; AUDIT_BITMASK_SIZE];
    r.fields.push(RuleField {
        field,
        op: AUDIT_EQUAL,
        value,
    });
    r
}

/// Rules the kernel lists in another order and form than they were
/// added: prepended, on several lists, with `-S all`.
fn mixed_rules(watched: &str) -> Vec<RuleData> {
    let mut watch = RuleData::new(AUDIT_FILTER_EXIT, AUDIT_ALWAYS);
    watch.mask = [u32::MAX; AUDIT_BITMASK_SIZE];
    watch.fields = vec![
        RuleField {
            field: AUDIT_WATCH,
            op: AUDIT_EQUAL,
            value: watched.len() as u32,
        },
        RuleField {
            field: AUDIT_PERM,
            op: AUDIT_EQUAL,
            value: AUDIT_PERM_WRITE | AUDIT_PERM_ATTR,
        },
    ];
    watch.buf = watched.as_bytes().to_vec();
    let mut prepended = RuleData::always_exit(AUDIT_ARCH_X86_64)
        .with_syscall(libc::SYS_pivot_root as u32)
        .with_key("secperf-test");
    prepended.flags |= AUDIT_FILTER_PREPEND;
    vec![
        // exclude: drop records of a type nothing here produces.
        rule_on(AUDIT_FILTER_EXCLUDE, AUDIT_NEVER, AUDIT_MSGTYPE, 1999),
        RuleData::always_exit(AUDIT_ARCH_X86_64)
            .with_syscall(libc::SYS_acct as u32)
            .with_key("secperf-test"),
        // `-a never,exit -F uid=<nobody's>` with -S all.
        rule_on(AUDIT_FILTER_EXIT, AUDIT_NEVER, AUDIT_UID, 0x7fff_fff0),
        prepended,
        rule_on(AUDIT_FILTER_USER, AUDIT_NEVER, AUDIT_UID, 0x7fff_fff0),
        watch,
    ]
}

#[test]
fn listing_model_orders_lists_and_normalises_rules() {
    let rules = mixed_rules("/tmp/x");
    let listed = listing_after_adding(&rules);
    let order: Vec<RuleData> = listed
        .iter()
        .map(|r| RuleData::decode(r).unwrap())
        .collect();
    // user list first, then exit (the prepended rule at its head), then
    // exclude.
    assert_eq!(order[0], rules[4].as_listed());
    assert_eq!(order[1].syscalls(), [libc::SYS_pivot_root as u32]);
    assert_eq!(order[1].flags, AUDIT_FILTER_EXIT, "no PREPEND once added");
    assert_eq!(order[2], rules[1]);
    assert_eq!(order[3], rules[2].as_listed());
    assert_eq!(order[3].mask[63], 0xffff, "class bits cleared");
    assert_eq!(order[4], rules[5].as_listed());
    assert_eq!(order[5].list(), AUDIT_FILTER_EXCLUDE);
    // Rules with neither are listed as sent.
    assert_eq!(rules[1].as_listed(), rules[1]);
    assert_eq!(rules[5].strings(), [(AUDIT_WATCH, b"/tmp/x".to_vec())]);
    assert!(rules[5].is_watch() && !rules[1].is_watch());
}

/// The file the live tests' watch rules watch: its directory, /etc, is
/// never deleted, moved or unmounted while they are loaded.
pub const WATCHED_FILE: &str = "/etc/secperf-test-watched";

/// The model above against the real kernel: the rules added one by one,
/// then listed.
#[test]
fn live_listing_after_adding_is_what_the_kernel_lists() {
    let Some(live) = live_or_skip("live_listing_after_adding_is_what_the_kernel_lists") else {
        return;
    };
    let _put_back = PutBack(live.before.clone());
    // A file in a directory that never vanishes: this test's watch was on
    // a file in a temporary directory, deleted (at the end of the test,
    // before the rules were put back) while the watch was loaded, and the
    // kernel went on counting the rule it dropped, until reboot (phantom
    // rules after every `cargo test` on the host).
    let rules = mixed_rules(WATCHED_FILE);
    live.sock.replace_rules(&[]).unwrap();
    for r in &rules {
        live.sock.add_rule(&r.encode()).unwrap();
    }
    let listed = live.sock.list_rules().unwrap();
    assert_eq!(listed.len(), rules.len());
    for (i, (got, want)) in listed.iter().zip(listing_after_adding(&rules)).enumerate() {
        assert_eq!(to_hex(got), to_hex(&want), "rule {i} of the listing");
    }
    // And the listed rules add back to the same listing (what restoring
    // relies on).
    live.sock.replace_rules(&[]).unwrap();
    live.sock.replace_rules(&listed).unwrap();
    assert_eq!(live.sock.list_rules().unwrap(), listed);
}

/// Regenerates tests/fixtures/audit/list_rules_getppid_key_secperf.hex
/// from this machine's kernel (needs root; leaves the rules as found):
/// `cargo test capture_rule_listing_fixture -- --ignored`.
#[test]
#[ignore]
fn capture_rule_listing_fixture() {
    let live = live_or_skip("capture_rule_listing_fixture").expect("needs root and audit");
    assert!(
        live.before.rules.is_empty(),
        "needs a machine with no rules"
    );
    let _put_back = PutBack(live.before.clone());
    live.sock.add_rule(&getppid_rule().encode()).unwrap();
    let replies = live
        .sock
        .exchange(
            "AUDIT_LIST_RULES",
            AUDIT_LIST_RULES,
            false,
            &[],
            is_rules_end,
        )
        .unwrap();
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let release = release.trim();
    let mut text = format!(
        "# Kernel replies to AUDIT_LIST_RULES with one rule loaded\n\
         # (`auditctl -a always,exit -F arch=b64 -S getppid -k secperf`), captured from\n\
         # Linux {release} by `cargo test capture_rule_listing_fixture -- --ignored`\n\
         # (one netlink message per line, hex; the kernel sends one per datagram).\n"
    );
    for m in replies {
        text.push_str(&to_hex(&encode_reply(&m)));
        text.push('\n');
    }
    std::fs::write(fixture("audit/list_rules_getppid_key_secperf.hex"), text).unwrap();
}

/// A received message back in wire form (header as the kernel sent it,
/// except flags and port id, which the parser does not keep).
fn encode_reply(m: &RawMsg) -> Vec<u8> {
    message(m.msg_type, m.seq, &m.payload)
}
