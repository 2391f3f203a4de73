//! The audit cost model. With audit on, every syscall of every task pays
//! the entry and exit hooks and a walk of the exit list (each rule's
//! syscall bitmap is tested; fields only where the bitmap has the call);
//! a call a rule matches also writes a record. So, per call:
//!
//! - no record: what the treatment costs `getppid`, a call it does not
//!   record (probe 0: the treatment itself on getppid);
//! - a call that names a path (`openat`, `newfstatat`, `execve`, ...):
//!   once any rule is loaded, the audit context is live and every path
//!   lookup is kept for the record the call might write
//!   (`__audit_getname`, `__audit_inode`), then matched against the
//!   watches at exit, so it is priced as the treatment costs `stat`
//!   (probe 3: the treatment on the `stat` workload, one `newfstatat` of a
//!   file 4 directories deep per operation) instead of getppid;
//! - a record: add a record's cost, `audit:matching-rule` minus
//!   `audit:enabled` on getppid (probes 1 and 2).
//!
//! Which calls are recorded is read off the rules for the program's
//! credentials: a rule records a call when its bitmap has the call and
//! every field holds (arch, and the uid/gid/auid fields against the
//! target's ids). A rule with another field (exit code, success, a path or
//! watch, arguments, `-C`) depends on each call: counted as no record and
//! counted in the class, so the user sees that records may come from them.

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use super::model::{CallCost, ModelPlan, Probe};
use crate::mechanisms::Treatment;
use crate::sys::audit as au;
use crate::sys::audit::RuleData;

/// The ids audit fields are compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Creds {
    /// Real, effective, saved, filesystem.
    pub uid: [u32; 4],
    pub gid: [u32; 4],
    /// `auid` (4294967295 when unset).
    pub loginuid: u32,
}

impl Creds {
    /// The ids of process `pid` (`/proc/PID/status`, `/proc/PID/loginuid`).
    pub fn of(pid: libc::pid_t) -> Result<Creds> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .with_context(|| format!("reading /proc/{pid}/status"))?;
        let ids = |key: &str| -> Result<[u32; 4]> {
            let line = status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .with_context(|| format!("/proc/{pid}/status has no {key}"))?;
            let v: Vec<u32> = line
                .split_whitespace()
                .map(str::parse)
                .collect::<Result<_, _>>()
                .with_context(|| format!("/proc/{pid}/status: {key}{line}"))?;
            v.try_into()
                .map_err(|v| anyhow::anyhow!("/proc/{pid}/status: {key} {v:?}"))
        };
        let loginuid = std::fs::read_to_string(format!("/proc/{pid}/loginuid"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(u32::MAX);
        Ok(Creds {
            uid: ids("Uid:")?,
            gid: ids("Gid:")?,
            loginuid,
        })
    }
}

/// Calls that take a path name (`getname`): audit keeps each name it
/// looks up for the call's record.
const NAMES_A_PATH: &[&str] = &[
    "open",
    "openat",
    "openat2",
    "creat",
    "stat",
    "lstat",
    "newfstatat",
    "statx",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "execve",
    "execveat",
    "chdir",
    "chroot",
    "chmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "lchown",
    "fchownat",
    "mkdir",
    "mkdirat",
    "mknod",
    "mknodat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "truncate",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "statfs",
    "getxattr",
    "lgetxattr",
    "setxattr",
    "lsetxattr",
    "listxattr",
    "llistxattr",
    "removexattr",
    "lremovexattr",
    "mount",
    "umount2",
    "pivot_root",
    "swapon",
    "swapoff",
    "acct",
    "inotify_add_watch",
    "name_to_handle_at",
    "fanotify_mark",
    "quotactl",
    "uselib",
    "open_tree",
    "move_mount",
    "mount_setattr",
];

/// Whether a rule records a call, for given credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The bitmap does not have the call, or a field fails.
    No,
    /// Every field holds.
    Matches,
    /// A field depends on the call (exit code, path, arguments...).
    Depends,
}

fn holds(op: u32, left: u32, right: u32) -> bool {
    match op {
        au::AUDIT_EQUAL => left == right,
        au::AUDIT_NOT_EQUAL => left != right,
        au::AUDIT_LESS_THAN => left < right,
        au::AUDIT_GREATER_THAN => left > right,
        au::AUDIT_LESS_THAN_OR_EQUAL => left <= right,
        au::AUDIT_GREATER_THAN_OR_EQUAL => left >= right,
        au::AUDIT_BIT_MASK => left & right != 0,
        au::AUDIT_BIT_TEST => left & right == right,
        _ => false,
    }
}

fn outcome(rule: &RuleData, nr: u32, arch: u32, c: &Creds) -> Outcome {
    let has = rule
        .mask
        .get(nr as usize / 32)
        .is_some_and(|w| w & (1 << (nr % 32)) != 0);
    if rule.list() != au::AUDIT_FILTER_EXIT || !has {
        return Outcome::No;
    }
    let mut out = Outcome::Matches;
    for f in &rule.fields {
        let left = match f.field {
            au::AUDIT_FILTERKEY => continue,
            au::AUDIT_ARCH => arch,
            au::AUDIT_UID => c.uid[0],
            au::AUDIT_EUID => c.uid[1],
            au::AUDIT_SUID => c.uid[2],
            au::AUDIT_FSUID => c.uid[3],
            au::AUDIT_GID => c.gid[0],
            au::AUDIT_EGID => c.gid[1],
            au::AUDIT_SGID => c.gid[2],
            au::AUDIT_FSGID => c.gid[3],
            au::AUDIT_LOGINUID => c.loginuid,
            _ => {
                out = Outcome::Depends;
                continue;
            }
        };
        if !holds(f.op, left, f.value) {
            return Outcome::No;
        }
    }
    out
}

/// What the rules (in the kernel's order) do with call `nr`: the first
/// rule that matches decides (`always` records, `never` stops); rules
/// that depend on the call before it are counted (by line when one).
fn classify_rules(rules: &[(usize, &RuleData)], nr: u32, arch: u32, c: &Creds) -> (bool, String) {
    let mut depends = Vec::new();
    for (line, r) in rules {
        match outcome(r, nr, arch, c) {
            Outcome::No => {}
            Outcome::Depends => depends.push(line.to_string()),
            Outcome::Matches if r.action == au::AUDIT_ALWAYS => {
                return (true, format!("recorded (line {line})"));
            }
            Outcome::Matches => return (false, format!("never rule (line {line})")),
        }
    }
    match depends.as_slice() {
        [] => (false, "not recorded".into()),
        [one] => (false, format!("not recorded; line {one} tests each call")),
        more => (
            false,
            format!("not recorded; {} rules test each call", more.len()),
        ),
    }
}

pub fn plan(t: &Treatment, creds: Creds) -> Result<ModelPlan> {
    let Some(arch) = au::AUDIT_ARCH_NATIVE else {
        anyhow::bail!("audit rules are only modelled on x86_64 and aarch64");
    };
    if t.variant == "matching-rule" {
        crate::usage_bail!(
            "audit:matching-rule matches the workload's own syscalls, which a prediction has not \
             got: write the rule in a file and give -m audit:rules=FILE"
        );
    }
    let spec = t.to_string();
    let getppid = libc::SYS_getppid as u32;
    let file = crate::mechanisms::audit::rule_file(t)?;
    let mut probes = vec![Probe {
        spec: spec.clone(),
        workload: "getppid".into(),
        role: "a call the rules do not record".into(),
    }];
    let mut notes = Vec::new();
    let stat = Probe {
        spec: spec.clone(),
        workload: "stat".into(),
        role: "a call that names a path (newfstatat), not recorded".into(),
    };
    let Some(file) = file else {
        probes.push(stat);
        let model = format!(
            "ns per call = what {spec} costs getppid, or a newfstatat (stat workload) for a call \
             that names a path"
        );
        return Ok(ModelPlan {
            spec,
            probes,
            model,
            notes,
            cold: None,
            classify: Box::new(|_, name| {
                let path = NAMES_A_PATH.contains(&name);
                CallCost {
                    class: if path {
                        "path; not recorded"
                    } else {
                        "not recorded"
                    }
                    .into(),
                    weights: if path { vec![0.0, 1.0] } else { vec![1.0, 0.0] },
                    denied: false,
                }
            }),
        });
    };
    probes.push(Probe {
        spec: "audit:enabled".into(),
        workload: "getppid".into(),
        role: "audit on without rules (subtracted from the next)".into(),
    });
    probes.push(Probe {
        spec: "audit:matching-rule".into(),
        workload: "getppid".into(),
        role: "audit on, every call recorded".into(),
    });
    probes.push(stat);
    let by_line: BTreeMap<usize, &RuleData> =
        file.lines.iter().map(|l| (l.line, &l.rule)).collect();
    let ordered: Vec<(usize, RuleData)> = crate::policy::audit_rules::kernel::listing_order(&file)
        .into_iter()
        .filter_map(|line| by_line.get(&line).map(|r| (line, (*r).clone())))
        .collect();
    let refs: Vec<(usize, &RuleData)> = ordered.iter().map(|(l, r)| (*l, r)).collect();
    if classify_rules(&refs, getppid, arch, &creds).0 {
        notes.push(
            "the rules record getppid itself for this program: the no-record cost is measured \
             with records, so the prediction counts records twice for getppid"
                .into(),
        );
    }
    notes.push(format!(
        "records are predicted for uid {} euid {} auid {}; a rule that tests the exit code, a \
         path or an argument is counted as no record (the class says how many such rules test each call)",
        creds.uid[0],
        creds.uid[1],
        if creds.loginuid == u32::MAX {
            "unset".to_string()
        } else {
            creds.loginuid.to_string()
        }
    ));
    let model = format!(
        "ns per call = what {spec} costs getppid (entry, exit and the rule walk), or what it \
         costs a newfstatat (stat workload) for a call that names a path, plus a record's cost \
         (audit:matching-rule minus audit:enabled on getppid) for a call a rule records"
    );
    let classify = move |nr: u32, name: &str| -> CallCost {
        let refs: Vec<(usize, &RuleData)> = ordered.iter().map(|(l, r)| (*l, r)).collect();
        let (records, class) = classify_rules(&refs, nr, arch, &creds);
        let path = NAMES_A_PATH.contains(&name);
        let mut weights = match path {
            true => vec![0.0, 0.0, 0.0, 1.0],
            false => vec![1.0, 0.0, 0.0, 0.0],
        };
        if records {
            weights[1] -= 1.0;
            weights[2] += 1.0;
        }
        CallCost {
            class: match path {
                true => format!("path; {class}"),
                false => class,
            },
            weights,
            denied: false,
        }
    };
    Ok(ModelPlan {
        spec,
        probes,
        model,
        notes,
        cold: None,
        classify: Box::new(classify),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: Creds = Creds {
        uid: [0; 4],
        gid: [0; 4],
        loginuid: u32::MAX,
    };

    fn plan_for(rules: &str) -> ModelPlan {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.rules");
        std::fs::write(&path, rules).unwrap();
        let t = Treatment::parse(&format!("audit:rules={}", path.display())).unwrap();
        plan(&t, ROOT).unwrap()
    }

    #[test]
    fn credentials_decide_records_and_per_call_fields_do_not() {
        let p = plan_for(
            "-a always,exit -F arch=b64 -S openat -F auid>=1000 -F auid!=unset -k user-open\n\
             -a always,exit -F arch=b64 -S unlinkat -F euid=0 -k root-unlink\n\
             -a always,exit -F arch=b64 -S openat -F exit=-EACCES -k denied\n",
        );
        assert_eq!(p.probes.len(), 4);
        assert_eq!(p.probes[3].workload, "stat");
        let unlink = (p.classify)(libc::SYS_unlinkat as u32, "unlinkat");
        assert_eq!(unlink.weights, vec![0.0, -1.0, 1.0, 1.0]);
        assert!(
            unlink.class.starts_with("path; recorded (line 2)"),
            "{}",
            unlink.class
        );
        let open = (p.classify)(libc::SYS_openat as u32, "openat");
        assert_eq!(open.weights, vec![0.0, 0.0, 0.0, 1.0]);
        assert_eq!(open.class, "path; not recorded; line 3 tests each call");
        let read = (p.classify)(libc::SYS_read as u32, "read");
        assert_eq!(read.class, "not recorded");
        assert_eq!(read.weights, vec![1.0, 0.0, 0.0, 0.0]);
        let kill = (p.classify)(libc::SYS_kill as u32, "kill");
        assert_eq!(kill.weights, vec![1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn a_never_rule_first_stops_the_record_and_other_arches_do_not_match() {
        let p = plan_for(
            "-a never,exit -F arch=b64 -S unlinkat -F uid=0\n\
             -a always,exit -F arch=b64 -S unlinkat -k all\n\
             -a always,exit -F arch=b32 -S unlink -k legacy\n",
        );
        let c = (p.classify)(libc::SYS_unlinkat as u32, "unlinkat");
        assert_eq!(c.weights, vec![0.0, 0.0, 0.0, 1.0]);
        assert!(c.class.starts_with("path; never rule"), "{}", c.class);
    }

    #[test]
    fn variants_without_a_file_cost_every_call_alike_and_matching_rule_is_refused() {
        let p = plan(&Treatment::parse("audit:enabled").unwrap(), ROOT).unwrap();
        assert_eq!(p.probes.len(), 2);
        assert_eq!((p.classify)(0, "read").weights, vec![1.0, 0.0]);
        assert_eq!((p.classify)(0, "openat").weights, vec![0.0, 1.0]);
        let e = plan(&Treatment::parse("audit:matching-rule").unwrap(), ROOT)
            .err()
            .unwrap();
        assert!(e.to_string().contains("audit:rules=FILE"), "{e}");
    }

    #[test]
    fn reads_this_process_ids() {
        let c = Creds::of(std::process::id() as i32).unwrap();
        // SAFETY: getuid cannot fail.
        assert_eq!(c.uid[0], unsafe { libc::getuid() });
    }
}
