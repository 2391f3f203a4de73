//! Compiling a [`Profile`] for this machine: entries evaluated
//! (includes/excludes, names this architecture lacks, entries repeating
//! the default, same-index conditions ORed as runc does) into per-syscall
//! [`Rule`]s, the notes that say what was done, and the
//! [`CompiledProfile`] that answers what the profile does with a call.
//! The filter itself is emitted by [`super::emit`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::Result;

use super::bad;
use super::emit::{ProgramError, build_program};
use super::host::{EvalContext, NativeArch, arches_of, gate_reason, native, native_nr};
use super::types::{Action, ArgCmp, CmpOp, Entry, Profile, Rule, Truth};
use crate::sys::bpf::{BPF_MAXINSNS, SockFilter};
use crate::sys::seccomp::X32_SYSCALL_BIT;

/// What a profile does with one system call whatever its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Runs, whatever the arguments (ALLOW or LOG).
    Allow,
    /// Never runs: the actions it may get, e.g. "SCMP_ACT_ERRNO(EPERM=1)".
    Deny(String),
    /// Depends on the arguments (conditional entries).
    Depends,
    /// Not a system call of this architecture.
    Unknown,
}

/// A profile compiled for this machine.
#[derive(Debug, Clone)]
pub struct CompiledProfile {
    /// The filter, ready for seccomp(2).
    pub program: Vec<SockFilter>,
    pub path: PathBuf,
    /// What the user should know: names skipped, entries left out, what
    /// is not compiled.
    pub notes: Vec<String>,
    pub default_action: Action,
    /// Entries in the profile, and those that apply on this machine.
    pub entries_total: usize,
    pub entries_applied: usize,
    /// Native number -> its rules, in profile order.
    pub(super) rules: BTreeMap<u32, Vec<Rule>>,
    audit_arch: u32,
    x32_bit: bool,
}

impl CompiledProfile {
    /// Length of the filter in BPF instructions.
    pub fn instructions(&self) -> usize {
        self.program.len()
    }

    /// System calls (native numbers) with at least one rule.
    pub fn syscalls_with_rules(&self) -> usize {
        self.rules.len()
    }

    /// What the profile does with syscall `name` whatever its arguments.
    pub fn decision(&self, name: &str) -> Decision {
        match native_nr(name) {
            Some(nr) => self.decision_nr(nr),
            None => Decision::Unknown,
        }
    }

    /// [`CompiledProfile::decision`] by native number.
    pub fn decision_nr(&self, nr: u32) -> Decision {
        let rules = self.rules.get(&nr).map(Vec::as_slice).unwrap_or(&[]);
        // The outcomes some arguments may give (a superset: conditional
        // rules are assumed to match or not independently). With a rule
        // that always matches, the most restrictive such decides unless a
        // more restrictive conditional one matches too; with none, the
        // default applies when no conditional rule matches, and any of
        // them may.
        let always = rules
            .iter()
            .filter(|r| r.truth() == Truth::Always)
            .map(|r| r.action)
            .min();
        let base = always.unwrap_or(self.default_action);
        let mut outcomes: BTreeSet<Action> = BTreeSet::from([base]);
        outcomes.extend(
            rules
                .iter()
                .filter(|r| r.truth() == Truth::Depends)
                .filter(|r| always.is_none() || r.action < base)
                .map(|r| r.action),
        );
        if outcomes.iter().all(|a| a.allows()) {
            Decision::Allow
        } else if outcomes.iter().all(|a| !a.allows()) {
            Decision::Deny(
                outcomes
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" or "),
            )
        } else {
            Decision::Depends
        }
    }

    /// The action for native call `nr` with `args`, by the profile's rules
    /// (not the filter): the most restrictive matching rule, else the
    /// default.
    pub fn action_for(&self, nr: u32, args: &[u64; 6]) -> Action {
        self.rules
            .get(&nr)
            .into_iter()
            .flatten()
            .filter(|r| r.conds.iter().all(|c| c.holds(args)))
            .map(|r| r.action)
            .min()
            .unwrap_or(self.default_action)
    }

    /// What the filter must return for a call: [`CompiledProfile::action_for`]
    /// for native calls; KILL_PROCESS for other architectures and x32.
    pub fn expected_return(&self, arch: u32, nr: u32, args: &[u64; 6]) -> u32 {
        if arch != self.audit_arch || (self.x32_bit && nr >= X32_SYSCALL_BIT && nr != u32::MAX) {
            return libc::SECCOMP_RET_KILL_PROCESS;
        }
        self.action_for(nr, args).ret()
    }

    /// One line, e.g. (Docker's default profile, as root) "default.json:
    /// 333 syscalls in 21 of 28 entries (the others do not apply here),
    /// default SCMP_ACT_ERRNO(EPERM=1); one filter of 1706 BPF
    /// instructions".
    pub fn summary(&self) -> String {
        let file = self
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string());
        let entries = if self.entries_applied == self.entries_total {
            format!("{} entries", self.entries_total)
        } else {
            format!(
                "{} of {} entries (the others do not apply here)",
                self.entries_applied, self.entries_total
            )
        };
        format!(
            "{file}: {} syscalls in {entries}, default {}; one filter of {} BPF instructions",
            self.rules.len(),
            self.default_action,
            self.program.len()
        )
    }
}

/// Lists at most `max` items, then "and N more".
fn list_some(items: &[String], max: usize) -> String {
    if items.len() <= max {
        items.join(", ")
    } else {
        format!(
            "{}, and {} more",
            items[..max].join(", "),
            items.len() - max
        )
    }
}

/// Compiles `p` for this architecture, evaluating includes/excludes with
/// `ctx`. A profile too long for the kernel is a usage error.
pub fn compile(p: &Profile, ctx: &EvalContext) -> Result<CompiledProfile> {
    let arch = native()?;
    let origin = p.origin.as_str();
    let mut notes = arch_notes(p, &arch);
    if !p.flags.is_empty() {
        notes.push(format!(
            "flags {} are not applied: secperf installs the filter with no flags, per thread",
            p.flags.join(", ")
        ));
    }
    if p.listener_path.is_some() || p.listener_metadata.is_some() {
        notes.push("listenerPath/listenerMetadata are ignored (no SCMP_ACT_NOTIFY entry)".into());
    }
    let applied = Applied::collect(p, &arch, ctx, &mut notes)?;
    applied.note(&mut notes);
    let program = build_program(&arch, &applied.rules, p.default_action)
        .map_err(|e| program_error(origin, e))?;
    Ok(CompiledProfile {
        program,
        path: PathBuf::from(origin),
        notes,
        default_action: p.default_action,
        entries_total: p.entries.len(),
        entries_applied: applied.count,
        rules: applied.rules,
        audit_arch: arch.audit,
        x32_bit: arch.x32_bit,
    })
}

/// What the notes say of the profile's architectures: only the native one
/// is compiled, whatever `architectures` or `archMap` list.
fn arch_notes(p: &Profile, arch: &NativeArch) -> Vec<String> {
    let mut notes = Vec::new();
    let arches: Vec<String> = if p.arch_map.is_empty() {
        p.architectures.clone()
    } else {
        match p.arch_map.iter().find(|(a, _)| a == arch.scmp) {
            Some((a, subs)) => std::iter::once(a.clone())
                .chain(subs.iter().cloned())
                .collect(),
            None => {
                notes.push(format!(
                    "archMap has no entry for {}: Docker then lists no architecture, which means \
                     the native one only",
                    arch.scmp
                ));
                Vec::new()
            }
        }
    };
    if !arches.is_empty() && !arches.iter().any(|a| a == arch.scmp) {
        notes.push(format!(
            "the profile lists {} but not {}; runc adds the native architecture anyway, and so \
             does secperf",
            arches.join(", "),
            arch.scmp
        ));
    }
    let others: Vec<&str> = arches
        .iter()
        .map(String::as_str)
        .filter(|a| *a != arch.scmp)
        .collect();
    if !others.is_empty() {
        notes.push(format!(
            "only {} is compiled: calls of {} are killed (SECCOMP_RET_KILL_PROCESS) by the \
             filter's architecture check instead of being filtered by the profile; secperf's \
             workloads make {} calls only",
            arch.scmp,
            others.join(", "),
            arch.kernel
        ));
    }
    notes
}

/// The entries that apply on this machine, as rules, and what was left
/// out on the way.
struct Applied {
    /// Native number -> its rules, in profile order.
    rules: BTreeMap<u32, Vec<Rule>>,
    /// Entries that apply.
    count: usize,
    /// Names of other architectures only -> the architectures that have
    /// them.
    other_arch: BTreeMap<String, String>,
    /// Entries that do not apply here, with why.
    gated: Vec<String>,
    /// Entries whose action is the default one.
    as_default: Vec<String>,
}

impl Applied {
    /// Evaluates every entry of `p`; what the user should know of single
    /// entries goes to `notes` as it is found.
    fn collect(
        p: &Profile,
        arch: &NativeArch,
        ctx: &EvalContext,
        notes: &mut Vec<String>,
    ) -> Result<Applied> {
        let mut applied = Applied {
            rules: BTreeMap::new(),
            count: 0,
            other_arch: BTreeMap::new(),
            gated: Vec::new(),
            as_default: Vec::new(),
        };
        for (i, e) in p.entries.iter().enumerate() {
            let label = p.entry_label(i);
            // Names are checked in every entry, applying or not: a typo is
            // a typo on every machine.
            let names = Names::resolve(&p.origin, &label, &e.names)?;
            if let Some(why) = gate_reason(e, arch, ctx) {
                applied.gated.push(format!("{label} ({why})"));
                continue;
            }
            applied.count += 1;
            applied.other_arch.extend(names.elsewhere);
            if e.action == p.default_action {
                applied.as_default.push(label);
                continue;
            }
            for conds in cond_sets(&label, e, notes) {
                let rule = Rule {
                    action: e.action,
                    conds,
                };
                if let Some(c) = rule
                    .conds
                    .iter()
                    .find(|c| c.op == CmpOp::MaskedEq && c.truth() == Truth::Never)
                {
                    notes.push(format!(
                        "{label}: {c} can never hold (valueTwo has bits outside the mask \
                         value), so that rule is left out"
                    ));
                    continue;
                }
                for &nr in &names.native {
                    applied.rules.entry(nr).or_default().push(rule.clone());
                }
            }
        }
        Ok(applied)
    }

    /// The notes on what was left out, each listing a few.
    fn note(&self, notes: &mut Vec<String>) {
        if !self.other_arch.is_empty() {
            let names: Vec<String> = self.other_arch.keys().cloned().collect();
            notes.push(format!(
                "{} names are system calls of other architectures only and are skipped, as runc \
                 does: {}",
                names.len(),
                list_some(&names, 8)
            ));
        }
        if !self.gated.is_empty() {
            notes.push(format!(
                "{} entries do not apply on this machine (Docker's includes/excludes) and are \
                 left out: {}",
                self.gated.len(),
                list_some(&self.gated, 8)
            ));
        }
        if !self.as_default.is_empty() {
            notes.push(format!(
                "{} entries repeat the default action and change nothing (runc skips them too): \
                 {}",
                self.as_default.len(),
                list_some(&self.as_default, 8)
            ));
        }
    }
}

/// An entry's names, resolved for this architecture.
struct Names {
    /// Native numbers.
    native: Vec<u32>,
    /// Names of other architectures only, with the architectures that
    /// have them.
    elsewhere: Vec<(String, String)>,
}

impl Names {
    /// Resolves `names`; a name no architecture has is a usage error.
    fn resolve(origin: &str, label: &str, names: &[String]) -> Result<Names> {
        let mut resolved = Names {
            native: Vec::new(),
            elsewhere: Vec::new(),
        };
        for name in names {
            match (native_nr(name), arches_of(name)) {
                (Some(nr), _) => resolved.native.push(nr),
                (None, Some(where_)) => resolved.elsewhere.push((name.clone(), where_)),
                (None, None) => {
                    return Err(bad(
                        origin,
                        format_args!(
                            "{label}: '{name}' is not a system call on any Linux architecture; \
                             correct the name (as in syscalls(2)) or remove it"
                        ),
                    ));
                }
            }
        }
        Ok(resolved)
    }
}

/// The condition sets of an entry's rules: one, its conditions ANDed;
/// or, when several test one argument, one rule per condition (ORed), as
/// runc does when libseccomp refuses the entry, with a note.
fn cond_sets(label: &str, e: &Entry, notes: &mut Vec<String>) -> Vec<Vec<ArgCmp>> {
    let mut seen = [0u8; 6];
    for c in &e.args {
        seen[usize::from(c.index)] += 1;
    }
    if seen.iter().any(|&n| n > 1) {
        notes.push(format!(
            "{label}: several conditions test one argument; libseccomp refuses that in one \
             rule and runc then adds each condition as a rule of its own, so they are ORed, \
             not ANDed (secperf does the same)"
        ));
        e.args.iter().map(|c| vec![*c]).collect()
    } else {
        vec![e.args.clone()]
    }
}

/// A failure to build the filter, as the user reads it.
fn program_error(origin: &str, e: ProgramError) -> anyhow::Error {
    match e {
        ProgramError::TooLong(n) => bad(
            origin,
            format_args!(
                "compiles to {n} BPF instructions, more than the {BPF_MAXINSNS} the kernel \
                 accepts in one filter; remove entries or conditions (number-only entries cost \
                 the least)"
            ),
        ),
        ProgramError::Backend(e) => anyhow::anyhow!("seccomp profile {origin}: compiling: {e}"),
        ProgramError::Layout(what) => {
            anyhow::anyhow!("seccomp profile {origin}: compiling: {what} (a seccompiler change?)")
        }
    }
}
