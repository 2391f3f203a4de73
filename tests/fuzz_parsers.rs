//! Parsers that never panic: property tests over everything a user types
//! or feeds secperf (mechanism specs, `--param`, `-w` lists, run
//! references, `--sweep`, OCI seccomp profiles, audit rule files, Landlock
//! path and port lists), each with random garbage and with tokens of the
//! real grammar recombined (names, separators, digits, huge numbers,
//! unicode, empty).
//!
//! The property: the parser returns, and a rejection is an error with a
//! non-empty message whose exit code (`secperf::error::exit_code`) is 2, a
//! usage error. `--tasks` is parsed by a private function of the CLI, so it
//! is checked through the binary with a handful of cases.
//!
//! Each property runs [`cases`] generated inputs (100 000 under `CI=true`,
//! 2 000 elsewhere; `SECPERF_FUZZ_CASES` or `PROPTEST_CASES` to change
//! it), drawn from random garbage and grammar-aware generators; each
//! prints how many of its inputs were accepted, so a generator that never
//! gets past the first check shows. With 100 000 the whole file takes
//! about 2 minutes in a debug build on the 2-CPU development VM (OCI
//! profiles, parsed and compiled, are the slowest: about 65 s).
//! No regression files are written (failure persistence is off): a panic
//! found here is kept as an `#[ignore]`d `BUG:` test instead.

mod common;

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use secperf::error::exit_code;

/// Generated inputs per parser: `SECPERF_FUZZ_CASES`, else
/// `PROPTEST_CASES`, else 100 000 under CI and 2 000 elsewhere (a quick
/// local run).
fn cases() -> u32 {
    let from = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse().ok());
    from("SECPERF_FUZZ_CASES")
        .or_else(|| from("PROPTEST_CASES"))
        .unwrap_or(if common::under_ci() { 100_000 } else { 2_000 })
}

/// Runs `check` on `cases()` inputs of `strategy`; any panic or a
/// rejection that is not a usage error with a message fails the test with
/// the (shrunk) input.
fn fuzz<S: Strategy>(name: &str, strategy: S, check: impl Fn(S::Value) -> anyhow::Result<()>)
where
    S::Value: std::fmt::Debug,
{
    let n = cases();
    let mut runner = TestRunner::new(Config {
        cases: n,
        failure_persistence: None,
        // Shrink a failure far enough to show a minimal input.
        max_shrink_iters: 10_000,
        ..Config::default()
    });
    let started = std::time::Instant::now();
    let accepted = std::cell::Cell::new(0u64);
    let result = runner.run(&strategy, |input| {
        let shown = format!("{input:?}");
        match check(input) {
            Ok(()) => {
                accepted.set(accepted.get() + 1);
                Ok(())
            }
            Err(e) => {
                let code = exit_code(&e);
                let msg = format!("{e:#}");
                prop_assert_eq!(code, 2, "{}: not a usage error: {}", shown, msg);
                prop_assert!(!e.to_string().trim().is_empty(), "{}: empty message", shown);
                Ok(())
            }
        }
    });
    eprintln!(
        "{name}: {n} cases ({} accepted) in {:.2?}",
        accepted.get(),
        started.elapsed()
    );
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}

/// Random text: any chars, printable ASCII, ASCII bytes, short and long.
/// (Built from `char`s: proptest's regex-based string strategies cost
/// milliseconds per value in a debug build.)
fn garbage() -> BoxedStrategy<String> {
    let text = |c: BoxedStrategy<char>, max: usize| {
        prop::collection::vec(c, 0..max).prop_map(String::from_iter)
    };
    prop_oneof![
        text(any::<char>().boxed(), 64),
        text(prop::char::range(' ', '~').boxed(), 48),
        text(prop::char::range('\0', '\x7f').boxed(), 16),
        Just(String::new()),
    ]
    .boxed()
}

/// Strings built from `tokens` (the grammar's own words) and generic
/// pieces: separators, digits, huge numbers, unicode, whitespace, nothing.
/// (Tokens are drawn with `select`: a `Union` of many strategies builds a
/// value tree for every option before the one it picks.)
fn grammar(tokens: Vec<String>, max_len: usize) -> BoxedStrategy<String> {
    let mut words = tokens;
    words.extend(s(GENERIC));
    let piece = prop_oneof![
        8 => prop::sample::select(words),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => (0u32..300).prop_map(|n| n.to_string()),
        1 => prop::collection::vec(prop::char::range('a', 'z'), 1..10)
            .prop_map(String::from_iter),
    ];
    prop::collection::vec(piece, 0..max_len)
        .prop_map(|v| v.concat())
        .boxed()
}

/// Pieces every grammar shares.
const GENERIC: &[&str] = &[
    ":",
    ",",
    "=",
    ".",
    "~",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\0",
    "-",
    "+",
    "0",
    "1",
    "4",
    "-1",
    "4096",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999",
    "0x10",
    "1e3",
    "NaN",
    "é",
    "ß",
    "💥",
    "\u{202e}",
    "\u{feff}",
    "İ",
    "all",
    "auto",
    "none",
    "latest",
    "",
];

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|t| (*t).to_string()).collect()
}

/// Mechanism names, variants and parameter names, from the registry.
fn mechanism_tokens() -> Vec<String> {
    let mut t = Vec::new();
    for m in secperf::mechanisms::MECHANISMS {
        t.push(m.name().to_string());
        t.push(format!("{}:", m.name()));
        for v in m.variants() {
            t.push(v.name.to_string());
        }
        for p in m.params() {
            t.push(p.name.to_string());
            t.push(format!("{}=", p.name));
            t.push(format!(",{}={}", p.name, p.default));
        }
    }
    t.extend(s(&[
        "/nonexistent",
        "/tmp",
        "/etc/passwd",
        "/dev/null",
        "/",
        "bpf-lsm",
        "filters=",
        "args",
    ]));
    t
}

/// Workload names and parameter names, from the catalog.
fn workload_tokens() -> Vec<String> {
    let mut t = Vec::new();
    for w in secperf::workloads::WORKLOADS {
        t.push(w.name.to_string());
        t.push(format!("{}.", w.name));
        for p in w.params {
            t.push(p.name.to_string());
            t.push(format!("{}=", p.name));
            t.push(format!("{}.{}={}", w.name, p.name, p.default));
        }
    }
    t.extend(s(&["/nonexistent", "/tmp", "/bin/true", "true"]));
    t
}

// --- mechanism specs -----------------------------------------------------

/// Values a parameter might be given: every default, numbers, paths,
/// colon lists, garbage.
fn values() -> BoxedStrategy<String> {
    let mut pool: Vec<String> = secperf::mechanisms::MECHANISMS
        .iter()
        .flat_map(|m| m.params().iter().map(|p| p.default.to_string()))
        .chain(
            secperf::workloads::WORKLOADS
                .iter()
                .flat_map(|w| w.params.iter().map(|p| p.default.to_string())),
        )
        .collect();
    pool.extend(s(&[
        "/tmp",
        "/usr:/etc",
        "/tmp:/nonexistent",
        "/etc/passwd",
        "/dev/null",
        "80:443",
        "none",
        "0",
        "1",
        "2",
        "8",
        "64",
        "1000",
        "65536",
        "4294967296",
        "18446744073709551616",
        "-3",
        " 4 ",
        "",
    ]));
    prop_oneof![
        6 => prop::sample::select(pool),
        2 => any::<u64>().prop_map(|n| n.to_string()),
        2 => (0u64..4096).prop_map(|n| n.to_string()),
        1 => garbage(),
    ]
    .boxed()
}

/// `NAME[:VARIANT][,KEY=VALUE...]` or `NAME:KEY=VALUE[,...]` from the
/// registry's own names, with the odd wrong name mixed in.
fn treatment_specs() -> BoxedStrategy<String> {
    let mechs: Vec<usize> = (0..secperf::mechanisms::MECHANISMS.len()).collect();
    let any_name = prop::sample::select(mechanism_tokens());
    (
        prop::sample::select(mechs),
        prop::option::of(any::<prop::sample::Index>()),
        prop::collection::vec((any::<prop::sample::Index>(), values()), 0..4),
        any::<bool>(),
        prop::option::weighted(0.2, any_name),
    )
        .prop_map(|(m, variant, kvs, leading, wrong)| {
            let m = secperf::mechanisms::MECHANISMS[m];
            let mut spec = m.name().to_string();
            let params = m.params();
            let kv: Vec<String> = kvs
                .iter()
                .map(|(k, v)| match params.is_empty() {
                    true => format!("x={v}"),
                    false => format!("{}={v}", k.get(params).name),
                })
                .collect();
            match (variant, leading && !kv.is_empty()) {
                (_, true) => spec.push_str(&format!(":{}", kv[0])),
                (Some(v), false) => spec.push_str(&format!(":{}", v.get(m.variants()).name)),
                (None, false) => {}
            }
            for (i, p) in kv.iter().enumerate() {
                if i == 0 && leading {
                    continue;
                }
                spec.push(',');
                spec.push_str(p);
            }
            if let Some(w) = wrong {
                spec.push_str(&w);
            }
            spec
        })
        .boxed()
}

#[test]
fn mechanism_specs_never_panic() {
    let strategy = prop_oneof![
        garbage(),
        grammar(mechanism_tokens(), 10),
        treatment_specs(),
    ];
    fuzz("Treatment::parse", strategy, |spec| {
        secperf::mechanisms::Treatment::parse(&spec).map(|_| ())
    });
}

// --- parameters ----------------------------------------------------------

#[test]
fn parameters_never_panic() {
    use secperf::params::{Params, check_numbers, find, in_range, u64_of, with_defaults};
    // Every declaration secperf has, workloads' and mechanisms'.
    let mut defs: Vec<(&'static [secperf::params::ParamDef], String)> = Vec::new();
    for w in secperf::workloads::WORKLOADS {
        defs.push((w.params, format!("workload {}", w.name)));
    }
    for m in secperf::mechanisms::MECHANISMS {
        defs.push((m.params(), format!("mechanism {}", m.name())));
    }
    let mut keys: Vec<String> = defs
        .iter()
        .flat_map(|(d, _)| d.iter().map(|p| p.name.to_string()))
        .collect();
    keys.extend(s(&["", " ", "x", "depth "]));
    let n = defs.len();
    let strategy = (
        0..n,
        any::<prop::sample::Index>(),
        prop::option::weighted(0.2, prop_oneof![prop::sample::select(keys), garbage()]),
        prop_oneof![garbage(), grammar(Vec::new(), 4), values()],
        0u64..100,
        0u64..=u64::MAX,
    )
        .prop_map(|(i, own, other, value, lo, hi)| {
            // Mostly one of the owner's own keys, sometimes any other.
            let key = match (other, defs[i].0.is_empty()) {
                (Some(k), _) => k,
                (None, true) => "x".to_string(),
                (None, false) => own.get(defs[i].0).name.to_string(),
            };
            (i, key, value, lo, hi)
        });
    fuzz("params", strategy, |(i, key, value, lo, hi)| {
        let (d, owner) = &defs[i];
        let def = find(d, owner, &key)?;
        let mut given = Params::new();
        given.insert(def.name.to_string(), value.clone());
        let p = with_defaults(d, &given);
        check_numbers(d, owner, &p)?;
        if def.is_numeric() {
            u64_of(&p, owner, def.name)?;
            in_range(&p, owner, def.name, lo.min(hi)..=hi)?;
        }
        Ok(())
    });
}

// --- `-w` and `--param` --------------------------------------------------

#[test]
fn workload_lists_never_panic() {
    let names = prop::sample::select(workload_tokens());
    let lists = prop::collection::vec(names, 0..5).prop_map(|n| n.join(","));
    let strategy = prop_oneof![garbage(), grammar(workload_tokens(), 8), lists];
    fuzz("parse_list", strategy, |spec| {
        secperf::workloads::select::parse_list(&spec).map(|_| ())
    });
}

#[test]
fn param_resolution_never_panics() {
    use secperf::workloads::select::{parse_list, resolve_params};
    let names: Vec<String> = secperf::workloads::WORKLOADS
        .iter()
        .map(|w| w.name.to_string())
        .collect();
    let strategy = (
        prop::collection::vec(prop::sample::select(names), 1..4),
        prop::collection::vec(
            prop_oneof![garbage(), grammar(workload_tokens(), 6), workload_params(),],
            0..4,
        ),
    );
    fuzz("resolve_params", strategy, |(selected, raw)| {
        let selected = parse_list(&selected.join(",")).expect("catalog names");
        resolve_params(&selected, &raw).map(|_| ())
    });
}

/// `[WORKLOAD.]KEY=VALUE` from the catalog's names.
fn workload_params() -> BoxedStrategy<String> {
    let all: Vec<(String, String)> = secperf::workloads::WORKLOADS
        .iter()
        .flat_map(|w| {
            w.params
                .iter()
                .map(|p| (w.name.to_string(), p.name.to_string()))
        })
        .collect();
    (prop::sample::select(all), any::<bool>(), values())
        .prop_map(|((w, k), qualified, v)| {
            if qualified {
                format!("{w}.{k}={v}")
            } else {
                format!("{k}={v}")
            }
        })
        .boxed()
}

// --- run references ------------------------------------------------------

#[test]
fn run_references_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let store = secperf::store::Store::open(&dir.path().join("empty.db")).unwrap();
    let strategy = prop_oneof![
        garbage(),
        grammar(s(&["latest", "latest~", "~", "label", "-", "42"]), 6),
    ];
    fuzz("Store::resolve_run", strategy, |spec| {
        store.resolve_run(&spec).map(|_| ())
    });
}

// --- sweeps --------------------------------------------------------------

#[test]
fn sweep_lists_never_panic() {
    let mut tokens = mechanism_tokens();
    tokens.extend(workload_tokens());
    let keys: Vec<String> = secperf::mechanisms::MECHANISMS
        .iter()
        .flat_map(|m| m.params().iter().map(|p| p.name.to_string()))
        .chain(
            secperf::workloads::WORKLOADS
                .iter()
                .flat_map(|w| w.params.iter().map(|p| format!("{}.{}", w.name, p.name))),
        )
        .chain(s(&["", " ", ".", "x.", ".depth", "a.b.c"]))
        .collect();
    let structured = (
        prop::sample::select(keys),
        prop::collection::vec(values(), 0..6),
    )
        .prop_map(|(k, v)| format!("{k}={}", v.join(",")));
    let strategy = prop_oneof![garbage(), grammar(tokens, 10), structured];
    fuzz("sweep::parse", strategy, |spec| {
        secperf::engine::sweep::parse(&spec).map(|_| ())
    });
}

// --- OCI seccomp profiles ------------------------------------------------

/// A JSON value from OCI profile words: objects with the profile's keys,
/// arrays, strings (action names, syscall names, operators), numbers.
fn seccomp_json() -> BoxedStrategy<String> {
    let words = prop::sample::select(s(&[
        "SCMP_ACT_ERRNO",
        "SCMP_ACT_ALLOW",
        "SCMP_ACT_KILL",
        "SCMP_ACT_KILL_PROCESS",
        "SCMP_ACT_KILL_THREAD",
        "SCMP_ACT_TRAP",
        "SCMP_ACT_TRACE",
        "SCMP_ACT_LOG",
        "SCMP_ACT_NOTIFY",
        "SCMP_ARCH_X86_64",
        "SCMP_ARCH_X86",
        "SCMP_ARCH_X32",
        "SCMP_ARCH_AARCH64",
        "SCMP_CMP_EQ",
        "SCMP_CMP_NE",
        "SCMP_CMP_LT",
        "SCMP_CMP_LE",
        "SCMP_CMP_GT",
        "SCMP_CMP_GE",
        "SCMP_CMP_MASKED_EQ",
        "SECCOMP_FILTER_FLAG_LOG",
        "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
        "SECCOMP_FILTER_FLAG_TSYNC",
        "CAP_SYS_ADMIN",
        "CAP_NET_ADMIN",
        "getppid",
        "read",
        "write",
        "openat",
        "personality",
        "clone",
        "socket",
        "nosuchcall",
        "4.8",
        "5.",
        "0.0",
        "99999999999.1",
        "amd64",
        "x86_64",
        "",
        "💥",
    ]))
    .prop_map(serde_json::Value::String);
    let num = prop_oneof![
        any::<u64>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        (0u64..8).prop_map(serde_json::Value::from),
        Just(serde_json::json!(1.5)),
        Just(serde_json::json!(1e300)),
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
    ];
    let keys = prop::sample::select(s(&[
        "defaultAction",
        "defaultErrnoRet",
        "architectures",
        "archMap",
        "architecture",
        "subArchitectures",
        "flags",
        "listenerPath",
        "listenerMetadata",
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
        "unknownKey",
    ]));
    let leaf = prop_oneof![words, num];
    let value = leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..6)
                .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
        ]
    });
    // Mostly an object at the top, with a default action, so the parser
    // gets past its first checks.
    (
        prop::collection::btree_map(
            prop::sample::select(s(&[
                "architectures",
                "archMap",
                "flags",
                "syscalls",
                "defaultErrnoRet",
                "listenerPath",
            ])),
            value.clone(),
            0..4,
        ),
        prop::option::of(prop::sample::select(s(&[
            "SCMP_ACT_ERRNO",
            "SCMP_ACT_ALLOW",
            "SCMP_ACT_LOG",
            "SCMP_ACT_KILL",
            "SCMP_ACT_BOGUS",
        ]))),
        value,
        any::<bool>(),
    )
        .prop_map(|(mut top, default, other, use_other)| {
            if use_other {
                return other.to_string();
            }
            if let Some(d) = default {
                top.insert("defaultAction".into(), serde_json::Value::String(d));
            }
            serde_json::Value::Object(top.into_iter().collect()).to_string()
        })
        .boxed()
}

/// A plausible profile: allow or errno by default, entries with names,
/// actions, argument conditions and include/exclude gates.
fn seccomp_profile() -> BoxedStrategy<String> {
    // Mostly valid words, the odd wrong one (one bad word rejects the
    // whole profile, and a profile has many).
    let mostly = |good: &[&str], bad: &[&str]| {
        prop_oneof![
            30 => prop::sample::select(s(good)),
            1 => prop::sample::select(s(bad)),
        ]
    };
    let sys = mostly(
        &[
            "getppid", "read", "write", "openat", "clone", "socket", "ioctl", "kill",
        ],
        &["bogus", ""],
    );
    let action = prop::sample::select(s(&[
        "SCMP_ACT_ALLOW",
        "SCMP_ACT_ERRNO",
        "SCMP_ACT_LOG",
        "SCMP_ACT_TRAP",
        "SCMP_ACT_KILL_PROCESS",
    ]));
    let op = mostly(
        &[
            "SCMP_CMP_EQ",
            "SCMP_CMP_NE",
            "SCMP_CMP_LT",
            "SCMP_CMP_LE",
            "SCMP_CMP_GT",
            "SCMP_CMP_GE",
            "SCMP_CMP_MASKED_EQ",
        ],
        &["SCMP_CMP_NOPE"],
    );
    let index = prop_oneof![20 => 0u64..6, 1 => 6u64..8];
    let arg = (index, any::<u64>(), prop::option::of(any::<u64>()), op).prop_map(
        |(index, value, two, op)| {
            let mut a = serde_json::json!({"index": index, "value": value, "op": op});
            if let Some(t) = two {
                a["valueTwo"] = t.into();
            }
            a
        },
    );
    let gate = (
        prop::collection::vec(mostly(&["CAP_SYS_ADMIN", "CAP_BPF"], &["CAP_NOPE"]), 0..2),
        prop::collection::vec(prop::sample::select(s(&["amd64", "x86_64", "arm64"])), 0..2),
        prop::option::of(mostly(&["4.8", "99.0", "6.18"], &["x.y", "", "0.0"])),
    )
        .prop_map(|(caps, arches, min)| {
            let mut g = serde_json::json!({});
            if !caps.is_empty() {
                g["caps"] = caps.into();
            }
            if !arches.is_empty() {
                g["arches"] = arches.into();
            }
            if let Some(m) = min {
                g["minKernel"] = m.into();
            }
            g
        });
    let entry = (
        prop_oneof![20 => prop::collection::vec(sys.clone(), 1..4), 1 => prop::collection::vec(sys, 0..1)],
        action.clone(),
        prop::collection::vec(arg, 0..4),
        prop::option::of(gate.clone()),
        prop::option::of(gate),
        prop::option::of(0u32..5000),
    )
        .prop_map(|(names, action, args, inc, exc, errno)| {
            let mut e = serde_json::json!({"names": names, "action": &action});
            if !args.is_empty() {
                e["args"] = args.into();
            }
            if let Some(i) = inc {
                e["includes"] = i;
            }
            if let Some(x) = exc {
                e["excludes"] = x;
            }
            // errnoRet belongs with SCMP_ACT_ERRNO (elsewhere: rarely).
            if let Some(n) = errno.filter(|n| action == "SCMP_ACT_ERRNO" || n % 20 == 0) {
                e["errnoRet"] = n.into();
            }
            e
        });
    (
        action,
        prop::collection::vec(
            mostly(
                &[
                    "SCMP_ARCH_X86_64",
                    "SCMP_ARCH_X86",
                    "SCMP_ARCH_X32",
                    "SCMP_ARCH_AARCH64",
                ],
                &["SCMP_ARCH_NOPE"],
            ),
            0..3,
        ),
        prop::collection::vec(entry, 0..12),
    )
        .prop_map(|(default, arches, syscalls)| {
            serde_json::json!({
                "defaultAction": default,
                "architectures": arches,
                "syscalls": syscalls,
            })
            .to_string()
        })
        .boxed()
}

#[test]
fn seccomp_profiles_never_panic() {
    use secperf::policy::oci_seccomp::{EvalContext, compile, parse};
    let ctxs = [
        EvalContext {
            caps_effective: u64::MAX,
            kernel: (6, 18),
        },
        EvalContext {
            caps_effective: 0,
            kernel: (3, 10),
        },
    ];
    let strategy = (
        prop_oneof![
            1 => garbage(),
            2 => seccomp_json(),
            3 => seccomp_profile(),
        ],
        any::<bool>(),
    );
    fuzz("oci_seccomp::parse + compile", strategy, |(text, root)| {
        let p = parse(&text, "fuzz.json")?;
        compile(&p, &ctxs[usize::from(root)]).map(|_| ())
    });
}

// --- audit rule files ----------------------------------------------------

/// A machine with one directory, one user and one group, so parsing does
/// not depend on (or wait for) the real passwd database.
struct FakeHost;

impl secperf::policy::audit_rules::Host for FakeHost {
    fn is_dir(&self, path: &str) -> bool {
        path == "/etc" || path == "/tmp"
    }
    fn user(&self, name: &str) -> Option<u32> {
        (name == "root").then_some(0)
    }
    fn group(&self, name: &str) -> Option<u32> {
        (name == "wheel").then_some(10)
    }
}

fn audit_tokens() -> Vec<String> {
    s(&[
        "-a",
        "-A",
        "-d",
        "-D",
        "-w",
        "-W",
        "-p",
        "-k",
        "-F",
        "-S",
        "-C",
        "-b",
        "-f",
        "-e",
        "-r",
        "-i",
        "-c",
        "-l",
        "-s",
        "-R",
        "-t",
        "-q",
        "-v",
        "-h",
        "--backlog_wait_time",
        "--backlog_wait_time=",
        "--loginuid-immutable",
        "--reset-lost",
        "--signal",
        "--",
        "always",
        "never",
        "exit",
        "task",
        "user",
        "exclude",
        "filesystem",
        "io_uring",
        "entry",
        "always,exit",
        "exit,always",
        "never,exclude",
        "arch=b64",
        "arch=b32",
        "arch=x86_64",
        "arch=i386",
        "arch=",
        "arch=3221225534",
        "uid=",
        "auid>=",
        "auid!=",
        "auid=unset",
        "gid=",
        "euid",
        "pid",
        "ppid",
        "msgtype=",
        "msgtype",
        "perm=",
        "perm",
        "rwxa",
        "wa",
        "key=",
        "exe=",
        "path=",
        "dir=",
        "filetype=",
        "file",
        "dir",
        "subj_type=",
        "obj_user=",
        "sessionid=",
        "success=",
        "exit=",
        "-EPERM",
        "a0=",
        "a1&",
        "a2&=",
        "<",
        ">",
        "<=",
        ">=",
        "!=",
        "=",
        "&",
        "&=",
        "saddr_fam=",
        "inode=",
        "devmajor=",
        "fstype=",
        "debugfs",
        "field_compare=",
        "auid!=obj_uid",
        "all",
        "getppid",
        "openat",
        "pivot_root",
        "acct,swapoff",
        "read,write",
        "2031",
        "2032",
        "2047",
        "root",
        "wheel",
        "nobody",
        "/etc",
        "/etc/passwd",
        "/tmp",
        "/nonexistent/x",
        "relative",
        "\\ ",
        "\\\\",
        "\\",
        "#",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        ",",
        "=",
    ])
}

/// Lines shaped like real rules: `-a LIST,ACTION [-F arch=..] [-S ..]
/// [-F FIELD OP VALUE]... [-k KEY]`, `-w PATH [-p PERM] [-k KEY]`, and
/// control lines, with words drawn from auditctl's vocabulary.
fn audit_lines() -> BoxedStrategy<String> {
    let pick = |v: &[&str]| prop::sample::select(s(v));
    let list = pick(&[
        "always,exit",
        "never,exit",
        "exit,always",
        "always,task",
        "never,exclude",
        "always,filesystem",
        "always,io_uring",
        "always,user",
        "always,entry",
        "sometimes,exit",
    ]);
    let arch = pick(&[
        "",
        "-F arch=b64 ",
        "-F arch=b32 ",
        "-F arch=i386 ",
        "-F arch=nope ",
    ]);
    let sys = pick(&[
        "getppid",
        "openat",
        "pivot_root",
        "all",
        "acct,swapoff",
        "read,write",
        "2031",
        "2032",
        "99999",
        "open",
        "socketcall",
        "nosuchcall",
        "",
    ]);
    let field = pick(&[
        "uid",
        "auid",
        "euid",
        "gid",
        "pid",
        "ppid",
        "msgtype",
        "perm",
        "key",
        "exe",
        "path",
        "dir",
        "filetype",
        "subj_type",
        "obj_user",
        "sessionid",
        "success",
        "exit",
        "a0",
        "a1",
        "saddr_fam",
        "inode",
        "devmajor",
        "fstype",
        "field_compare",
        "arch",
        "nope",
    ]);
    let op = pick(&["=", "!=", "<", ">", "<=", ">=", "&", "&=", "=="]);
    let value = prop_oneof![
        pick(&[
            "0",
            "1000",
            "unset",
            "-1",
            "4294967295",
            "4294967296",
            "rwxa",
            "wa",
            "x",
            "/etc/passwd",
            "/tmp",
            "relative",
            "file",
            "dir",
            "debugfs",
            "root",
            "wheel",
            "nobody",
            "-EPERM",
            "auid!=obj_uid",
            "auid",
            "0x10",
            "10x",
            "",
        ]),
        any::<u64>().prop_map(|n| n.to_string()),
    ];
    let fields = prop::collection::vec((field, op, value), 0..4).prop_map(|f| {
        f.into_iter()
            .map(|(f, o, v)| format!("-F {f}{o}{v} "))
            .collect::<String>()
    });
    let key = prop::option::of(pick(&["secperf", "k", "a\\ b", "", "💥"]));
    let rule = (
        list,
        pick(&["-a", "-A", "-d"]),
        arch,
        prop::collection::vec(sys, 0..3),
        fields,
        key.clone(),
    )
        .prop_map(|(l, a, arch, sys, f, k)| {
            let sys: String = sys.iter().map(|s| format!("-S {s} ")).collect();
            let k = k.map(|k| format!("-k {k}")).unwrap_or_default();
            format!("{a} {l} {arch}{sys}{f}{k}")
        });
    let watch = (
        pick(&["-w", "-W"]),
        pick(&[
            "/etc/passwd",
            "/tmp",
            "/etc",
            "relative",
            "/nonexistent/x",
            "/",
            "",
        ]),
        prop::option::of(pick(&["r", "w", "x", "a", "rwxa", "wa", "q", ""])),
        key,
    )
        .prop_map(|(w, path, perm, k)| {
            let perm = perm.map(|p| format!(" -p {p}")).unwrap_or_default();
            let k = k.map(|k| format!(" -k {k}")).unwrap_or_default();
            format!("{w} {path}{perm}{k}")
        });
    let control = pick(&[
        "-D",
        "-b 8192",
        "-b",
        "-f 1",
        "-f 2",
        "-f 3",
        "-e 0",
        "-e 1",
        "-e 2",
        "-e 3",
        "-r 0",
        "-r 100",
        "--backlog_wait_time 60000",
        "--backlog_wait_time=0",
        "-i",
        "-c",
        "--loginuid-immutable",
        "--reset-lost",
        "-D -k secperf",
        "-l",
        "-s",
    ]);
    prop_oneof![3 => rule, 1 => watch, 1 => control].boxed()
}

#[test]
fn audit_rule_files_never_panic() {
    use secperf::policy::audit_rules::parse_with;
    let origin = Path::new("fuzz.rules");
    // A file is lines; each line is mostly words of auditctl's grammar.
    let line = prop_oneof![garbage(), grammar(audit_tokens(), 14), audit_lines()];
    let strategy = prop::collection::vec(line, 0..5).prop_map(|l| l.join("\n"));
    fuzz("audit_rules::parse_with", strategy, |text| {
        parse_with(&text, origin, &FakeHost).map(|_| ())
    });
}

#[test]
fn audit_rule_files_on_this_machine_never_panic() {
    // The real host (stat, getpwnam, getgrnam): each lookup reads the
    // passwd and group files.
    let strategy = prop::collection::vec(
        prop_oneof![grammar(audit_tokens(), 14), audit_lines()],
        0..3,
    )
    .prop_map(|l| l.join("\n"));
    fuzz("audit_rules::parse (system host)", strategy, |text| {
        secperf::policy::audit_rules::parse(&text, "fuzz.rules").map(|_| ())
    });
}

// --- Landlock sandbox lists -------------------------------------------------

#[test]
fn landlock_lists_never_panic() {
    let path_tokens = s(&[
        "/",
        "/tmp",
        "/etc",
        "/usr",
        "/etc/passwd",
        "/nonexistent",
        ":",
        "::",
        "/dev/null",
        "relative",
        ".",
        "..",
        "\0",
        "none",
    ]);
    let port_tokens = s(&[
        ":", "80", "443", "8080", "65535", "65536", "-1", "none", " ", "0",
    ]);
    let list = |t: Vec<String>| {
        let words = prop::sample::select(t.clone());
        prop_oneof![
            garbage(),
            grammar(t, 6),
            prop::collection::vec(words, 0..4).prop_map(|w| w.join(":")),
        ]
    };
    let strategy = (
        list(path_tokens.clone()),
        list(path_tokens),
        list(port_tokens.clone()),
        list(port_tokens),
    );
    fuzz(
        "landlock_sandbox::parse",
        strategy,
        |(ro, rw, bind, connect)| {
            secperf::policy::landlock_sandbox::parse(&ro, &rw, &bind, &connect).map(|_| ())
        },
    );
}

// --- `--tasks`, through the CLI ----------------------------------------------

/// `--tasks` is parsed by a private function of the CLI
/// (`cli::args::parse_tasks`), so a handful of inputs go through the
/// binary: bad ladders exit 2 before anything is measured.
#[test]
fn task_ladders_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for bad in [
        "0",
        "abc",
        ",",
        "1,-2",
        "4097",
        "18446744073709551616",
        "1,2,x",
        "💥",
        "auto,1",
        " , ",
    ] {
        let out = common::secperf(&db)
            .env("SECPERF_STATE_DIR", dir.path().join("state"))
            .args(["overhead", "-m", "none", "-w", "getppid", "--tasks", bad])
            .args(common::TINY)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--tasks {bad:?}: {stderr}");
        // secperf's own message (not clap's), before anything ran.
        assert!(
            stderr.contains("error: --tasks: "),
            "--tasks {bad:?}: {stderr}"
        );
    }
}
