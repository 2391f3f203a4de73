//! Tests of the profile compiler: fixtures parsed and evaluated, the
//! compiled filter run by a classic-BPF interpreter against the profile's
//! own rules, the filter installed in forked children, generated input.

use std::collections::BTreeSet;
use std::path::PathBuf;

use proptest::prelude::*;

use super::parse::OPS;
use super::*;
use crate::error::exit_code;
use crate::sys::bpf::{
    BPF_ABS, BPF_JA, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_MAXINSNS, BPF_RET, BPF_W,
    SockFilter, SockFprog, fprog,
};
use crate::sys::seccomp::{DATA_ARCH, DATA_NR, X32_SYSCALL_BIT};

const ALL_CAPS: u64 = (1 << CAPS.len()) - 1;
const ROOT: EvalContext = EvalContext {
    caps_effective: ALL_CAPS,
    kernel: (6, 18),
};
const NO_CAPS: EvalContext = EvalContext {
    caps_effective: 0,
    kernel: (6, 18),
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/seccomp")
        .join(name)
}

fn compiled(name: &str, ctx: &EvalContext) -> CompiledProfile {
    let path = fixture(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let p = parse(&text, &path.display().to_string()).unwrap_or_else(|e| panic!("{name}: {e:#}"));
    compile(&p, ctx).unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

fn nr(name: &str) -> u32 {
    native_nr(name).unwrap_or_else(|| panic!("{name} is not native"))
}

fn native_audit() -> u32 {
    NATIVE.unwrap().audit
}

// ---------------------------------------------------------------------
// A classic-BPF interpreter for what seccomp filters may contain
// ---------------------------------------------------------------------

/// `struct seccomp_data` as the kernel lays it out.
fn seccomp_data(arch: u32, nr: u32, args: &[u64; 6]) -> [u8; 64] {
    let mut d = [0u8; 64];
    d[0..4].copy_from_slice(&nr.to_ne_bytes());
    d[4..8].copy_from_slice(&arch.to_ne_bytes());
    d[8..16].copy_from_slice(&0x7f00_dead_beefu64.to_ne_bytes());
    for (i, a) in args.iter().enumerate() {
        d[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_ne_bytes());
    }
    d
}

/// Runs `prog` on `data` as the kernel's classic-BPF interpreter would,
/// refusing what the kernel's checker refuses for seccomp (other
/// instructions, misaligned or out-of-range loads, jumps out of the
/// program, running off the end).
fn run_bpf(prog: &[SockFilter], data: &[u8; 64]) -> Result<u32, String> {
    let mut a: u32 = 0;
    let mut pc = 0usize;
    let mut steps = 0;
    loop {
        let insn = prog.get(pc).ok_or(format!("ran off the end at {pc}"))?;
        steps += 1;
        if steps > prog.len() {
            return Err("loop".into());
        }
        let jump = |off: usize| -> Result<usize, String> {
            let to = pc + 1 + off;
            if to >= prog.len() {
                return Err(format!("jump from {pc} to {to}, past the end"));
            }
            Ok(to)
        };
        match insn.code {
            0x20 => {
                let k = insn.k as usize;
                if !k.is_multiple_of(4) || k + 4 > 64 {
                    return Err(format!("load at offset {k}"));
                }
                a = u32::from_ne_bytes(data[k..k + 4].try_into().unwrap());
                pc += 1;
            }
            0x54 => {
                a &= insn.k;
                pc += 1;
            }
            0x05 => pc = jump(insn.k as usize)?,
            0x15 | 0x25 | 0x35 | 0x45 => {
                let hit = match insn.code {
                    0x15 => a == insn.k,
                    0x25 => a > insn.k,
                    0x35 => a >= insn.k,
                    _ => a & insn.k != 0,
                };
                pc = jump(usize::from(if hit { insn.jt } else { insn.jf }))?;
            }
            0x06 => return Ok(insn.k),
            c => return Err(format!("instruction {c:#x} at {pc}")),
        }
    }
}

/// Argument values worth trying: the edges, and every value a condition
/// of the profile names, with its neighbours.
fn interesting_args(p: &CompiledProfile) -> Vec<u64> {
    let mut v: BTreeSet<u64> = [
        0,
        1,
        8,
        40,
        0x7e02_0000,
        0xffff_ffff,
        0x1_0000_0000,
        0x1_0000_0008,
        1 << 63,
        u64::MAX - 1,
        u64::MAX,
    ]
    .into();
    for rules in p.rules.values() {
        for c in rules.iter().flat_map(|r| &r.conds) {
            for x in [c.value, c.value_two] {
                v.extend([x, x.wrapping_add(1), x.wrapping_sub(1), x | (1 << 40)]);
            }
        }
    }
    v.into_iter().collect()
}

/// Checks the filter against the profile's rules on every native number
/// (and a few beyond), each argument position taking every interesting
/// value, and on other architectures and x32.
fn check_filter_matches_rules(p: &CompiledProfile) {
    let arch = native_audit();
    let values = interesting_args(p);
    let max_nr = syscalls::Sysno::last().id() as u32 + 8;
    let mut nrs: Vec<u32> = (0..=max_nr).collect();
    nrs.extend([0x3fff_ffff, X32_SYSCALL_BIT, X32_SYSCALL_BIT | 39, u32::MAX]);
    for &n in &nrs {
        let mut argsets = vec![[0u64; 6]];
        if p.rules
            .get(&n)
            .is_some_and(|rs| rs.iter().any(|r| !r.conds.is_empty()))
        {
            for pos in 0..6 {
                for &x in &values {
                    let mut a = [0u64; 6];
                    a[pos] = x;
                    argsets.push(a);
                    a = [x; 6];
                    argsets.push(a);
                }
            }
        }
        let decision = p.decision_nr(n);
        for args in &argsets {
            let got = run_bpf(&p.program, &seccomp_data(arch, n, args));
            let want = p.expected_return(arch, n, args);
            assert_eq!(got, Ok(want), "nr {n} args {args:x?}");
            // What the profile says of the call whatever its arguments
            // never contradicts what the filter does with these.
            let allowed = [libc::SECCOMP_RET_ALLOW, libc::SECCOMP_RET_LOG].contains(&want);
            match (&decision, n < X32_SYSCALL_BIT) {
                (Decision::Allow, true) => assert!(allowed, "nr {n} {args:x?}"),
                (Decision::Deny(_), true) => assert!(!allowed, "nr {n} {args:x?}"),
                _ => {}
            }
        }
    }
    for other in [crate::sys::audit::AUDIT_ARCH_X86_64 ^ 1, 0x4000_0003, 0] {
        let got = run_bpf(&p.program, &seccomp_data(other, 39, &[0; 6]));
        assert_eq!(got, Ok(libc::SECCOMP_RET_KILL_PROCESS));
    }
}

#[test]
fn interpreter_opcodes_are_the_uapi_ones() {
    // <linux/bpf_common.h>: class | op | source (libc's definitions).
    assert_eq!(BPF_LD | BPF_W | BPF_ABS, 0x20);
    assert_eq!(libc::BPF_ALU | libc::BPF_AND | libc::BPF_K, 0x54);
    assert_eq!(BPF_JMP | BPF_JA, 0x05);
    assert_eq!(BPF_JMP | BPF_JEQ | BPF_K, 0x15);
    assert_eq!(libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K, 0x25);
    assert_eq!(BPF_JMP | BPF_JGE | BPF_K, 0x35);
    assert_eq!(libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K, 0x45);
    assert_eq!(BPF_RET | BPF_K, 0x06);
    // A hand-made program: the x32 guard lets -1 through, kills x32.
    let p = compiled("deny_getppid.json", &ROOT);
    let run = |n: u32| run_bpf(&p.program, &seccomp_data(native_audit(), n, &[0; 6]));
    assert_eq!(run(nr("getppid")), Ok(libc::SECCOMP_RET_ERRNO | 1));
    assert_eq!(run(nr("getpid")), Ok(libc::SECCOMP_RET_ALLOW));
    assert_eq!(run(u32::MAX), Ok(libc::SECCOMP_RET_ALLOW));
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        run(X32_SYSCALL_BIT | 39),
        Ok(libc::SECCOMP_RET_KILL_PROCESS)
    );
}

/// kernel/seccomp.c `seccomp_is_const_allow`: whether the kernel's action
/// cache (Linux 5.11+) marks native call `nr` as always allowed, so that
/// it skips the filter.
fn const_allow(prog: &[SockFilter], nr: u32) -> bool {
    let mut a = 0u32;
    let mut pc = 0usize;
    while let Some(insn) = prog.get(pc) {
        match insn.code {
            0x20 => match insn.k {
                DATA_NR => a = nr,
                DATA_ARCH => a = native_audit(),
                _ => return false,
            },
            0x06 => return insn.k == libc::SECCOMP_RET_ALLOW,
            0x05 => pc += insn.k as usize,
            0x15 | 0x25 | 0x35 | 0x45 => {
                let hit = match insn.code {
                    0x15 => a == insn.k,
                    0x25 => a > insn.k,
                    0x35 => a >= insn.k,
                    _ => a & insn.k != 0,
                };
                pc += usize::from(if hit { insn.jt } else { insn.jf });
            }
            0x54 => a &= insn.k,
            _ => return false,
        }
        pc += 1;
    }
    false
}

#[test]
fn number_only_allowed_calls_stay_cacheable() {
    for (name, ctx) in [
        ("docker_like.json", NO_CAPS),
        ("docker_like.json", ROOT),
        ("edge_cases.json", ROOT),
        ("kill_allowlist.json", ROOT),
    ] {
        let p = compiled(name, &ctx);
        let mut cached = 0;
        for n in 0..=syscalls::Sysno::last().id() as u32 {
            let rules = p.rules.get(&n).map(Vec::as_slice).unwrap_or(&[]);
            let want = rules.iter().all(|r| r.conds.is_empty())
                && p.action_for(n, &[0; 6]) == Action::Allow;
            assert_eq!(const_allow(&p.program, n), want, "{name}: nr {n}");
            cached += usize::from(want);
        }
        assert!(cached > 0, "{name}");
    }
    let p = compiled("docker_like.json", &NO_CAPS);
    assert!(const_allow(&p.program, nr("getppid")));
    assert!(!const_allow(&p.program, nr("personality")));
    assert!(!const_allow(&p.program, nr("mknod")), "LOG is not cached");
}

// ---------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------

#[test]
fn docker_like_profile_decides_per_capability() {
    let root = compiled("docker_like.json", &ROOT);
    let none = compiled("docker_like.json", &NO_CAPS);
    for p in [&root, &none] {
        assert_eq!(p.decision("getppid"), Decision::Allow);
        assert_eq!(p.decision("arch_prctl"), Decision::Allow);
        assert_eq!(p.decision("getcpu"), Decision::Allow, "legacy 'name'");
        assert_eq!(p.decision("personality"), Decision::Depends);
        assert_eq!(p.decision("socket"), Decision::Depends);
        assert_eq!(p.decision("mknod"), Decision::Allow, "LOG runs the call");
        assert_eq!(
            p.decision("kexec_load"),
            Decision::Deny("SCMP_ACT_ERRNO(EPERM=1)".into()),
            "minKernel 99.0 is not this kernel"
        );
        assert_eq!(
            p.decision("reboot"),
            Decision::Deny("SCMP_ACT_KILL_PROCESS".into())
        );
        assert_eq!(p.decision("swapon"), Decision::Deny("SCMP_ACT_TRAP".into()));
        assert_eq!(
            p.decision("vhangup"),
            Decision::Deny("SCMP_ACT_ERRNO(EACCES=13)".into())
        );
        assert_eq!(p.decision("chown32"), Decision::Unknown);
        assert_eq!(p.entries_total, 19);
    }
    // CAP_SYS_ADMIN: clone unconditional, clone3 allowed.
    assert_eq!(root.decision("clone"), Decision::Allow);
    assert_eq!(root.decision("clone3"), Decision::Allow);
    assert_eq!(root.decision("acct"), Decision::Allow);
    assert_eq!(root.decision("ptrace"), Decision::Allow);
    // Without: clone only without namespace flags, clone3 ENOSYS.
    assert_eq!(none.decision("clone"), Decision::Depends);
    assert_eq!(
        none.decision("clone3"),
        Decision::Deny("SCMP_ACT_ERRNO(ENOSYS=38)".into())
    );
    assert_eq!(
        none.decision("acct"),
        Decision::Deny("SCMP_ACT_ERRNO(EPERM=1)".into())
    );
    assert_eq!(
        none.decision("ptrace"),
        Decision::Deny("SCMP_ACT_ERRNO(EPERM=1)".into())
    );
    let clone = nr("clone");
    assert_eq!(
        none.action_for(clone, &[0x11, 0, 0, 0, 0, 0]),
        Action::Allow
    );
    assert_eq!(
        none.action_for(clone, &[0x2000_0000 | 0x11, 0, 0, 0, 0, 0]),
        Action::Errno(1),
        "CLONE_NEWUTS"
    );
    // Applied entries: root lacks only the clone/clone3 excludes, the
    // arm entry and the kernel 99.0 one.
    assert_eq!(root.entries_applied, 15);
    assert_eq!(none.entries_applied, 14);
    for p in [&root, &none] {
        check_filter_matches_rules(p);
    }
}

#[test]
fn notes_and_summary_say_what_was_done() {
    let p = compiled("docker_like.json", &NO_CAPS);
    let notes = p.notes.join("\n");
    for want in [
        "calls of SCMP_ARCH_X86, SCMP_ARCH_X32 are killed",
        "5 names are system calls of other architectures only",
        "chown32",
        "syscalls[10] (\"arm_fadvise64_64\") (includes arches arm, arm64 only)",
        "syscalls[12] (\"kexec_load\") (needs kernel 99.0 or later)",
        "syscalls[6] (\"clone\") (needs CAP_SYS_ADMIN, which this process lacks)",
        "1 entries repeat the default action",
        "syscalls[18] (\"syslog\")",
    ] {
        assert!(notes.contains(want), "missing '{want}' in:\n{notes}");
    }
    assert!(
        !notes.contains("breakpoint"),
        "gated-out names are not listed: {notes}"
    );
    let s = p.summary();
    assert!(
        s.starts_with("docker_like.json: ")
            && s.contains("syscalls in 14 of 19 entries")
            && s.contains("default SCMP_ACT_ERRNO(EPERM=1)")
            && s.ends_with(&format!(
                "one filter of {} BPF instructions",
                p.instructions()
            )),
        "{s}"
    );
    println!("{s}\n{notes}");

    let e = compiled("edge_cases.json", &ROOT);
    let notes = e.notes.join("\n");
    for want in [
        "syscalls[0] (\"kill\"): several conditions test one argument",
        "(args[1] & 0xf) == 0x10 can never hold",
        "flags SECCOMP_FILTER_FLAG_SPEC_ALLOW are not applied",
        "calls of SCMP_ARCH_X86 are killed",
    ] {
        assert!(notes.contains(want), "missing '{want}' in:\n{notes}");
    }
}

#[test]
fn edge_cases_follow_runc() {
    let p = compiled("edge_cases.json", &ROOT);
    let kill = nr("kill");
    // Same-index conditions are ORed.
    assert_eq!(p.action_for(kill, &[5, 9, 0, 0, 0, 0]), Action::Errno(1));
    assert_eq!(p.action_for(kill, &[5, 19, 0, 0, 0, 0]), Action::Errno(1));
    assert_eq!(p.action_for(kill, &[5, 15, 0, 0, 0, 0]), Action::Allow);
    // Different indices are ANDed.
    let prl = nr("prlimit64");
    assert_eq!(p.action_for(prl, &[7, 0, 1, 0, 0, 0]), Action::Errno(1));
    assert_eq!(p.action_for(prl, &[0, 0, 1, 0, 0, 0]), Action::Allow);
    assert_eq!(p.action_for(prl, &[7, 0, 0, 0, 0, 0]), Action::Allow);
    // A masked comparison that can never hold is left out.
    assert_eq!(p.decision("setns"), Decision::Allow);
    assert_eq!(
        p.action_for(nr("setns"), &[0, 0x10, 0, 0, 0, 0]),
        Action::Allow
    );
    // GE 0 always holds: denied whatever the arguments.
    assert_eq!(
        p.decision("mlock"),
        Decision::Deny("SCMP_ACT_ERRNO(EPERM=1)".into())
    );
    assert_eq!(
        p.decision("acct"),
        Decision::Deny("SCMP_ACT_TRACE(1)".into())
    );
    assert_eq!(p.decision("getppid"), Decision::Allow);
    // The most restrictive matching rule wins.
    let madvise = nr("madvise");
    assert_eq!(
        p.action_for(madvise, &[0, 0, 4, 0, 0, 0]),
        Action::Errno(22)
    );
    assert_eq!(
        p.action_for(madvise, &[0, 0, 101, 0, 0, 0]),
        Action::KillThread
    );
    assert_eq!(p.action_for(madvise, &[0, 0, 3, 0, 0, 0]), Action::Allow);
    assert_eq!(p.decision("madvise"), Decision::Depends);
    check_filter_matches_rules(&p);
}

#[test]
fn small_profiles_compile_to_what_they_say() {
    for (name, ctx) in [
        ("kill_allowlist.json", ROOT),
        ("deny_getppid.json", ROOT),
        ("deny_getppid.json", NO_CAPS),
    ] {
        let p = compiled(name, &ctx);
        check_filter_matches_rules(&p);
    }
    let p = compiled("deny_getppid.json", &ROOT);
    assert_eq!(
        p.decision("getppid"),
        Decision::Deny("SCMP_ACT_ERRNO(EPERM=1)".into())
    );
    assert_eq!(p.decision("getpid"), Decision::Allow);
    // Arch check (3), x32 guard (4), load + one syscall (5) + default.
    #[cfg(target_arch = "x86_64")]
    assert_eq!(p.instructions(), 3 + 4 + 1 + 5 + 1);
    let k = compiled("kill_allowlist.json", &ROOT);
    assert_eq!(
        k.decision("getpid"),
        Decision::Deny("SCMP_ACT_KILL_THREAD".into())
    );
    assert_eq!(k.notes, Vec::<String>::new());
}

#[test]
fn broken_profiles_are_usage_errors_that_say_where() {
    for (file, wants) in [
        ("broken_json.json", &["line 4, column 24", "expected"][..]),
        (
            "broken_unknown_syscall.json",
            &[
                "syscalls[1] (\"getpid\")",
                "'getppidd' is not a system call",
            ][..],
        ),
        (
            "broken_unknown_action.json",
            &[
                "syscalls[0] (\"read\")",
                "unknown action 'SCMP_ACT_PERMIT'",
                "SCMP_ACT_ALLOW",
            ][..],
        ),
        (
            "broken_unknown_op.json",
            &["args[0]: unknown op 'SCMP_CMP_EQUAL'", "SCMP_CMP_MASKED_EQ"][..],
        ),
        (
            "broken_arg_index.json",
            &["syscalls[0] (\"mmap\"): args[0] has index 6", "0 to 5"][..],
        ),
        (
            "broken_notify.json",
            &["SCMP_ACT_NOTIFY", "no", "listener", "replace it with"][..],
        ),
    ] {
        let path = fixture(file);
        let e = load(&path).unwrap_err();
        assert_eq!(exit_code(&e), 2, "{file}: {e:#}");
        let msg = format!("{e:#}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        for w in wants {
            assert!(msg.contains(w), "{file}: '{w}' missing in: {msg}");
        }
    }
    let missing = fixture("no_such_profile.json");
    let e = load(&missing).unwrap_err();
    assert_eq!(exit_code(&e), 2);
    let msg = format!("{e:#}");
    assert!(
        msg.contains("no_such_profile.json") && msg.contains("cannot read it"),
        "{msg}"
    );
}

#[test]
fn field_mistakes_are_usage_errors() {
    let cases = [
        (r#"{"syscalls": []}"#, "no defaultAction"),
        (r#"[]"#, "line 1: not a JSON object"),
        ("\n\n  42", "line 3: not a JSON object"),
        (
            r#"{"defaultAction": "SCMP_ACT_ALLOW", "defaultErrnoRet": 3}"#,
            "takes none",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 5000}"#,
            "errno 5000 is out of range",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_Z80"]}"#,
            "unknown architecture 'SCMP_ARCH_Z80'",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86_64"],
                "archMap": [{"architecture": "SCMP_ARCH_X86_64"}]}"#,
            "use one of them",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "flags": ["SECCOMP_FILTER_FLAG_FAST"]}"#,
            "unknown flag",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": [], "action": "SCMP_ACT_ALLOW"}]}"#,
            "syscalls[0]: names no system call",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"name": "read", "names": ["write"], "action": "SCMP_ACT_ALLOW"}]}"#,
            "use 'names' only",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"]}]}"#,
            "syscalls[0] (\"read\"): no action",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW", "includes": {"caps": ["CAP_SYS_ADMN"]}}]}"#,
            "unknown capability 'CAP_SYS_ADMN'",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW", "excludes": {"arches": ["amd46"]}}]}"#,
            "unknown architecture 'amd46'",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW", "includes": {"minKernel": "4"}}]}"#,
            "minKernel '4' is not MAJOR.MINOR",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": -1, "op": "SCMP_CMP_EQ"}]}]}"#,
            "line 1, column",
        ),
        (
            r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW", "errnoRet": 1}]}"#,
            "takes none",
        ),
    ];
    for (text, want) in cases {
        let e = parse(text, "t.json")
            .and_then(|p| compile(&p, &ROOT))
            .unwrap_err();
        assert_eq!(exit_code(&e), 2, "{text}: {e:#}");
        let msg = format!("{e:#}");
        assert!(
            msg.starts_with("seccomp profile t.json: ") && msg.contains(want),
            "{text}: '{want}' missing in: {msg}"
        );
    }
    // Accepted: unknown fields, nulls, the CAP_ prefix left out.
    let p = parse(
        r#"{"defaultAction": "SCMP_ACT_ERRNO", "comment": "x", "architectures": null,
            "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": null,
            "includes": {"caps": ["sys_admin"]}, "whatever": [1, 2]}]}"#,
        "t.json",
    )
    .unwrap();
    assert_eq!(p.entries[0].includes.caps, vec![21]);
}

#[test]
fn too_long_profiles_are_refused_with_the_limit() {
    // One action: seccompiler's own limit.
    let entries: Vec<String> = (0..700)
        .map(|i| {
            format!(
                r#"{{"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{{"index": 0, "value": {i}, "op": "SCMP_CMP_EQ"}}]}}"#
            )
        })
        .collect();
    // Two actions, each within the limit, together not.
    let two: Vec<String> = (0..800)
        .map(|i| {
            let action = if i % 2 == 0 {
                "SCMP_ACT_ALLOW"
            } else {
                "SCMP_ACT_LOG"
            };
            format!(
                r#"{{"names": ["read"], "action": "{action}", "args": [{{"index": 0, "value": {i}, "op": "SCMP_CMP_EQ"}}]}}"#
            )
        })
        .collect();
    for list in [entries, two] {
        let text = format!(
            r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}]}}"#,
            list.join(",")
        );
        let e = parse(&text, "long.json")
            .and_then(|p| compile(&p, &ROOT))
            .unwrap_err();
        assert_eq!(exit_code(&e), 2, "{e:#}");
        assert!(
            format!("{e}").contains("the 4096 the kernel accepts"),
            "{e}"
        );
    }
    // Just under: 500 conditional rules fit.
    let ok: Vec<String> = (0..500)
        .map(|i| {
            format!(
                r#"{{"names": ["read"], "action": "SCMP_ACT_ALLOW", "args": [{{"index": 0, "value": {i}, "op": "SCMP_CMP_EQ"}}]}}"#
            )
        })
        .collect();
    let text = format!(
        r#"{{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{}]}}"#,
        ok.join(",")
    );
    let p = compile(&parse(&text, "ok.json").unwrap(), &ROOT).unwrap();
    assert!(p.instructions() <= BPF_MAXINSNS, "{}", p.instructions());
    check_filter_matches_rules(&p);
}

#[test]
fn name_table_covers_the_native_one() {
    let native = NATIVE.unwrap();
    let mut n = 0;
    for s in syscalls::Sysno::iter() {
        let arches = arches_of(s.name()).unwrap_or_else(|| panic!("{} missing", s.name()));
        assert!(
            arches.split(' ').any(|a| a == native.kernel),
            "{}: {arches}",
            s.name()
        );
        n += 1;
    }
    assert!(n > 300, "{n}");
    // Names of other architectures only are not native, and are known.
    for other in [
        "chown32",
        "_llseek",
        "arm_fadvise64_64",
        "breakpoint",
        "riscv_flush_icache",
    ] {
        assert_eq!(native_nr(other), None, "{other}");
        assert!(arches_of(other).is_some(), "{other}");
    }
    assert_eq!(arches_of("getppidd"), None);
}

#[test]
fn workload_syscall_lists_use_native_names() {
    // check_workload looks these names up; a misspelt one would never be
    // checked.
    for w in crate::workloads::WORKLOADS {
        for s in w.syscalls {
            assert!(native_nr(s).is_some(), "workload {}: {s}", w.name);
        }
    }
}

#[test]
fn small_helpers() {
    assert_eq!(kernel_version("6.18.44-fc-v669"), Some((6, 18)));
    assert_eq!(kernel_version("3.12-1-amd64"), Some((3, 12)));
    assert_eq!(kernel_version("5.4rc1"), Some((5, 4)));
    assert_eq!(kernel_version("x"), None);
    assert_eq!(cap_number("CAP_SYS_ADMIN"), Some(21));
    assert_eq!(cap_number("cap_bpf"), Some(39));
    assert_eq!(cap_number("CHECKPOINT_RESTORE"), Some(40));
    assert_eq!(cap_number("CAP_NOPE"), None);
    let ctx = EvalContext::current().unwrap();
    assert!(ctx.kernel.0 >= 3);
    assert_eq!(Action::Errno(38).effect(), "the call fails with ENOSYS=38");
}

// ---------------------------------------------------------------------
// In the kernel
// ---------------------------------------------------------------------

/// Forks; the child installs `prog` and runs `body` (raw system calls
/// only, no allocation: the parent is multi-threaded) whose return value
/// is its exit status. Returns the raw wait status.
fn in_filtered_child(prog: &[SockFilter], body: fn() -> i32) -> i32 {
    let fp = fprog(prog);
    // SAFETY: the child only makes raw system calls on memory prepared
    // before the fork, then leaves with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: prctl and seccomp with integer arguments and a pointer
        // to fp, which points at `prog` (alive in this copy of the
        // address space); _exit never returns.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                libc::_exit(100);
            }
            if libc::syscall(
                libc::SYS_seccomp,
                libc::c_ulong::from(libc::SECCOMP_SET_MODE_FILTER),
                0 as libc::c_ulong,
                &fp as *const SockFprog,
            ) != 0
            {
                libc::_exit(101);
            }
            libc::_exit(body());
        }
    }
    let mut status = 0;
    // SAFETY: pid is our child; status is a valid out pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid);
    status
}

/// `syscall(nr, args...)` -> Ok(return) or Err(errno).
fn raw(nr: libc::c_long, a: [libc::c_long; 3]) -> Result<libc::c_long, i32> {
    // SAFETY: only called with calls whose pointer arguments are NULL or
    // absent, which the kernel checks (or the filter answers first).
    let r = unsafe { libc::syscall(nr, a[0], a[1], a[2]) };
    if r == -1 {
        // SAFETY: errno is thread-local and readable after a failed call.
        Err(unsafe { *libc::__errno_location() })
    } else {
        Ok(r)
    }
}

/// Each check sets one bit of the exit status when it fails.
fn docker_like_child() -> i32 {
    let mut failed = 0;
    // Allowed: getppid returns the parent.
    // SAFETY: getppid takes no arguments.
    let parent = unsafe { libc::getppid() };
    if raw(libc::SYS_getppid, [0; 3]) != Ok(parent as libc::c_long) || parent <= 1 {
        failed |= 1;
    }
    // personality(0xffffffff) queries: allowed by an EQ rule.
    if raw(libc::SYS_personality, [0xffff_ffff, 0, 0]).is_err() {
        failed |= 2;
    }
    // personality(0x1234): no rule allows it, default ERRNO(EPERM).
    if raw(libc::SYS_personality, [0x1234, 0, 0]) != Err(libc::EPERM) {
        failed |= 4;
    }
    // clone3(NULL, 0): ERRNO(ENOSYS) without CAP_SYS_ADMIN (the kernel
    // itself would say EINVAL).
    if raw(libc::SYS_clone3, [0, 0, 0]) != Err(libc::ENOSYS) {
        failed |= 8;
    }
    // vhangup: ERRNO(EACCES) (the kernel would say EPERM or succeed).
    if raw(libc::SYS_vhangup, [0; 3]) != Err(libc::EACCES) {
        failed |= 16;
    }
    // acct(NULL): default ERRNO(EPERM) without CAP_SYS_PACCT in the
    // context compiled for (root would otherwise get 0).
    if raw(libc::SYS_acct, [0, 0, 0]) != Err(libc::EPERM) {
        failed |= 32;
    }
    // An x86_64 name the profile does not list: default.
    if raw(libc::SYS_kexec_load, [0, 0, 0]) != Err(libc::EPERM) {
        failed |= 64;
    }
    failed
}

#[cfg(target_arch = "x86_64")]
#[test]
fn compiled_filters_behave_in_the_kernel() {
    let p = compiled("docker_like.json", &NO_CAPS);
    let status = in_filtered_child(&p.program, docker_like_child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status:#x}: exit {} (bits = failed checks)",
        libc::WEXITSTATUS(status)
    );
    // KILL_PROCESS and TRAP end the child with SIGSYS.
    fn reboot() -> i32 {
        // Bad magic: EINVAL if the filter let it through.
        let _ = raw(libc::SYS_reboot, [0, 0, 0]);
        0
    }
    fn swapon() -> i32 {
        let _ = raw(libc::SYS_swapon, [0, 0, 0]);
        0
    }
    for body in [reboot as fn() -> i32, swapon] {
        let status = in_filtered_child(&p.program, body);
        assert!(
            libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSYS,
            "status {status:#x}"
        );
    }
    // Default KILL: getppid allowed, getpid kills.
    let k = compiled("kill_allowlist.json", &ROOT);
    fn getppid_then_getpid() -> i32 {
        if raw(libc::SYS_getppid, [0; 3]).is_err() {
            return 1;
        }
        let _ = raw(libc::SYS_getpid, [0; 3]);
        2
    }
    let status = in_filtered_child(&k.program, getppid_then_getpid);
    assert!(
        libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSYS,
        "status {status:#x}"
    );
}

// ---------------------------------------------------------------------
// Generated input
// ---------------------------------------------------------------------

const KEYS: &[&str] = &[
    "defaultAction",
    "defaultErrnoRet",
    "architectures",
    "archMap",
    "architecture",
    "subArchitectures",
    "flags",
    "listenerPath",
    "syscalls",
    "names",
    "name",
    "action",
    "errnoRet",
    "args",
    "index",
    "value",
    "valueTwo",
    "op",
    "includes",
    "excludes",
    "caps",
    "arches",
    "minKernel",
    "comment",
];

const WORDS: &[&str] = &[
    "SCMP_ACT_ALLOW",
    "SCMP_ACT_ERRNO",
    "SCMP_ACT_KILL",
    "SCMP_ACT_NOTIFY",
    "SCMP_ACT_LOG",
    "SCMP_CMP_EQ",
    "SCMP_CMP_MASKED_EQ",
    "SCMP_ARCH_X86_64",
    "SCMP_ARCH_X86",
    "read",
    "getppid",
    "chown32",
    "nope",
    "CAP_SYS_ADMIN",
    "amd64",
    "4.8",
    "99.0",
    "",
];

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (0u64..8).prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        proptest::sample::select(WORDS).prop_map(|s| Value::String(s.into())),
        ".{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..6).prop_map(
                |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            ),
        ]
    })
}

const NAME_POOL: &[&str] = &[
    "read",
    "write",
    "getppid",
    "personality",
    "clone",
    "socket",
    "kill",
    "mmap",
    "futex",
    "prlimit64",
    "chown32",
    "_llseek",
    "acct",
    "ioctl",
];
const VALUES: &[u64] = &[
    0,
    1,
    8,
    15,
    16,
    40,
    0x7e02_0000,
    0xffff_ffff,
    1 << 32,
    u64::MAX,
];
const ACTION_NAMES: &[&str] = &[
    "SCMP_ACT_KILL",
    "SCMP_ACT_KILL_PROCESS",
    "SCMP_ACT_KILL_THREAD",
    "SCMP_ACT_TRAP",
    "SCMP_ACT_ERRNO",
    "SCMP_ACT_TRACE",
    "SCMP_ACT_ALLOW",
    "SCMP_ACT_LOG",
];

fn action_json() -> impl Strategy<Value = serde_json::Value> {
    (
        proptest::sample::select(ACTION_NAMES),
        proptest::option::of(0u64..4),
    )
        .prop_map(|(a, e)| {
            let mut m = serde_json::Map::new();
            m.insert("action".into(), a.into());
            if let Some(e) = e.filter(|_| a == "SCMP_ACT_ERRNO" || a == "SCMP_ACT_TRACE") {
                m.insert("errnoRet".into(), e.into());
            }
            serde_json::Value::Object(m)
        })
}

fn valid_profile() -> impl Strategy<Value = String> {
    let arg = (
        0u64..6,
        proptest::sample::select(VALUES),
        proptest::sample::select(VALUES),
        proptest::sample::select(OPS),
    )
        .prop_map(|(i, v, v2, (op, _))| {
            serde_json::json!({"index": i, "value": v, "valueTwo": v2, "op": op})
        });
    let entry = (
        proptest::sample::subsequence(NAME_POOL, 1..4),
        action_json(),
        proptest::collection::vec(arg, 0..4),
        proptest::option::of(proptest::sample::select(&["CAP_SYS_ADMIN", "CAP_BPF"][..])),
    )
        .prop_map(|(names, action, args, cap)| {
            let mut e = action.as_object().unwrap().clone();
            e.insert("names".into(), serde_json::json!(names));
            e.insert("args".into(), serde_json::json!(args));
            if let Some(c) = cap {
                e.insert("excludes".into(), serde_json::json!({"caps": [c]}));
            }
            serde_json::Value::Object(e)
        });
    (action_json(), proptest::collection::vec(entry, 0..10)).prop_map(|(default, entries)| {
        let mut d = default.as_object().unwrap().clone();
        let action = d.remove("action").unwrap();
        let mut p = serde_json::Map::new();
        p.insert("defaultAction".into(), action);
        if let Some(e) = d.remove("errnoRet") {
            p.insert("defaultErrnoRet".into(), e);
        }
        p.insert("syscalls".into(), serde_json::Value::Array(entries));
        serde_json::Value::Object(p).to_string()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Anything JSON-like: an Ok or an error, never a panic.
    #[test]
    fn arbitrary_json_never_panics(v in json_value(), cut in 0usize..64) {
        let text = v.to_string();
        if let Ok(p) = parse(&text, "gen.json") {
            let _ = compile(&p, &ROOT);
        }
        // Truncated text too.
        let end = text.len().saturating_sub(cut);
        if text.is_char_boundary(end) {
            let _ = parse(&text[..end], "gen.json");
        }
    }

    /// Valid profiles compile, and the filter does what the rules say.
    #[test]
    fn generated_profiles_compile_and_agree(
        text in valid_profile(),
        probes in proptest::collection::vec(
            (0usize..NAME_POOL.len(), proptest::array::uniform6(proptest::sample::select(VALUES))),
            16,
        ),
        root in any::<bool>(),
    ) {
        let p = parse(&text, "gen.json").unwrap();
        let ctx = if root { ROOT } else { NO_CAPS };
        let c = match compile(&p, &ctx) {
            Ok(c) => c,
            Err(e) => {
                prop_assert_eq!(exit_code(&e), 2, "{:#}", e);
                prop_assert!(format!("{e}").contains("4096"), "{:#}", e);
                return Ok(());
            }
        };
        prop_assert!(c.instructions() <= BPF_MAXINSNS);
        for (i, args) in probes {
            let Some(n) = native_nr(NAME_POOL[i]) else { continue };
            let want = c.expected_return(native_audit(), n, &args);
            let got = run_bpf(&c.program, &seccomp_data(native_audit(), n, &args));
            prop_assert_eq!(got, Ok(want), "{} {:x?}\n{}", NAME_POOL[i], args, text);
            // The decision never contradicts a concrete outcome.
            let action = c.action_for(n, &args);
            match c.decision_nr(n) {
                Decision::Allow => prop_assert!(action.allows()),
                Decision::Deny(_) => prop_assert!(!action.allows()),
                _ => {}
            }
        }
    }
}

/// Manual check of a real profile (Docker's, Podman's), not kept in the
/// repository: `SECPERF_PROFILE=/path/default.json cargo test --lib --
/// --ignored --nocapture oci_seccomp::tests::a_real_profile`.
#[test]
#[ignore]
fn a_real_profile() {
    let Some(path) = std::env::var_os("SECPERF_PROFILE") else {
        println!("SECPERF_PROFILE is not set");
        return;
    };
    let p = load(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e:#}"));
    println!("{}", p.summary());
    for n in &p.notes {
        println!("note: {n}");
    }
    check_filter_matches_rules(&p);
    for w in crate::workloads::WORKLOADS {
        let denied: Vec<String> = w
            .syscalls
            .iter()
            .filter_map(|s| match p.decision(s) {
                Decision::Deny(a) => Some(format!("{s} ({a})")),
                _ => None,
            })
            .collect();
        println!(
            "{:>12}: {}",
            w.name,
            if denied.is_empty() {
                "runs".into()
            } else {
                denied.join(", ")
            }
        );
    }
    let status = in_filtered_child(&p.program, docker_default_child);
    println!("in the kernel: exit status {status:#x}");
}

/// getppid runs, personality(0x1234) fails with EPERM.
fn docker_default_child() -> i32 {
    let mut failed = 0;
    if raw(libc::SYS_getppid, [0; 3]).is_err() {
        failed |= 1;
    }
    if raw(libc::SYS_personality, [0x1234, 0, 0]) != Err(libc::EPERM) {
        failed |= 2;
    }
    failed
}

/// Docker's own default profile, when CI unpacked it from Debian's
/// `golang-github-docker-docker-dev` package (`.ci/run` sets
/// `SECPERF_DOCKER_PROFILE`; the repository does not ship it): it compiles
/// to one filter within the kernel's limit, the filter agrees with the
/// profile's rules, no workload is refused, and in the kernel getppid runs
/// while personality(0x1234) fails with EPERM.
#[test]
fn docker_default_profile_when_present() {
    let Some(path) = std::env::var_os("SECPERF_DOCKER_PROFILE") else {
        crate::testing::skip_missing_tool(
            "docker_default_profile_when_present",
            "Docker seccomp profile",
            "SECPERF_DOCKER_PROFILE is not set (.ci/run sets it)",
        );
        return;
    };
    let p = load(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e:#}"));
    println!("{}", p.summary());
    assert!(p.instructions() <= BPF_MAXINSNS, "{}", p.summary());
    assert!(
        p.summary().contains("default SCMP_ACT_ERRNO"),
        "{}",
        p.summary()
    );
    check_filter_matches_rules(&p);
    for w in crate::workloads::WORKLOADS {
        for s in w.syscalls {
            assert!(
                !matches!(p.decision(s), Decision::Deny(_)),
                "Docker's profile denies {s} of workload {}",
                w.name
            );
        }
    }
    assert_eq!(in_filtered_child(&p.program, docker_default_child), 0);
}
