//! Which part of the kernel a sample's time belongs to: one data table
//! ([`RULES`]) that names the functions of each group (syscall entry and
//! exit, audit, seccomp, the LSM framework, each LSM, credentials, the
//! scheduler, interrupts), and the rule that assigns a whole call chain.
//!
//! A sample belongs to the group of the *innermost* frame of its kernel
//! call chain that the table recognises, so time a function causes below
//! itself (the slab allocation and memcg accounting `prepare_creds`
//! triggers, the Landlock hook `security_file_open` calls) counts with
//! it. Some rules match only the sampled frame itself ([`Reach::SelfOnly`]):
//! the syscall entry path is the outermost caller of everything in a
//! system call, so counting what it calls would put every syscall body
//! there. User-space samples form their own group; kernel samples no rule
//! recognises are "kernel (other)".
//!
//! JIT-compiled eBPF programs (`bpf_prog_<tag>_<name>`) are deliberately
//! not in the table: their caller decides (a BPF LSM program runs under a
//! `bpf_trampoline_*`). Classic BPF JIT images, which have no name, are
//! seccomp filters.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A group of the attribution table, in the order reports list them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Group {
    Syscall,
    Audit,
    Seccomp,
    Lsm,
    Selinux,
    Apparmor,
    Landlock,
    BpfLsm,
    Cred,
    Scheduler,
    Interrupts,
    KernelOther,
    KernelUnsymbolised,
    User,
}

impl Group {
    /// Every group, in report order.
    pub const ALL: [Group; 14] = [
        Group::Syscall,
        Group::Audit,
        Group::Seccomp,
        Group::Lsm,
        Group::Selinux,
        Group::Apparmor,
        Group::Landlock,
        Group::BpfLsm,
        Group::Cred,
        Group::Scheduler,
        Group::Interrupts,
        Group::KernelOther,
        Group::KernelUnsymbolised,
        Group::User,
    ];

    /// The name reports print.
    pub fn name(self) -> &'static str {
        match self {
            Group::Syscall => "syscall entry/exit",
            Group::Audit => "audit",
            Group::Seccomp => "seccomp",
            Group::Lsm => "LSM framework",
            Group::Selinux => "selinux",
            Group::Apparmor => "apparmor",
            Group::Landlock => "landlock",
            Group::BpfLsm => "bpf_lsm",
            Group::Cred => "cred",
            Group::Scheduler => "scheduler",
            Group::Interrupts => "interrupts",
            Group::KernelOther => "kernel (other)",
            Group::KernelUnsymbolised => "kernel (unsymbolised)",
            Group::User => "user space",
        }
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a function name is matched.
#[derive(Debug, Clone, Copy)]
pub enum Pattern {
    Exact(&'static str),
    Prefix(&'static str),
}

/// Whether a rule claims everything below its functions or only samples
/// taken in them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Inclusive,
    SelfOnly,
}

/// One line of the table.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub pattern: Pattern,
    pub group: Group,
    pub reach: Reach,
}

const fn inc(pattern: Pattern, group: Group) -> Rule {
    Rule {
        pattern,
        group,
        reach: Reach::Inclusive,
    }
}

const fn own(pattern: Pattern, group: Group) -> Rule {
    Rule {
        pattern,
        group,
        reach: Reach::SelfOnly,
    }
}

use Group::*;
use Pattern::{Exact, Prefix};

/// The table. The first rule that matches a name decides, so exact names
/// that would otherwise fall under a broader prefix come first (SELinux's
/// `security_compute_av` before the framework's `security_`).
pub const RULES: &[Rule] = &[
    // SELinux functions outside its own prefixes.
    inc(Exact("security_compute_av"), Selinux),
    inc(Exact("security_compute_xperms_decision"), Selinux),
    inc(Exact("context_struct_compute_av"), Selinux),
    inc(Exact("inode_has_perm"), Selinux),
    inc(Exact("file_has_perm"), Selinux),
    inc(Exact("cred_has_perm"), Selinux),
    inc(Exact("path_has_perm"), Selinux),
    inc(Exact("dentry_has_perm"), Selinux),
    inc(Prefix("selinux_"), Selinux),
    inc(Prefix("avc_"), Selinux),
    inc(Prefix("sidtab_"), Selinux),
    inc(Prefix("avtab_"), Selinux),
    inc(Prefix("ebitmap_"), Selinux),
    // AppArmor.
    inc(Prefix("apparmor_"), Apparmor),
    inc(Prefix("aa_"), Apparmor),
    inc(Prefix("__aa_"), Apparmor),
    // Landlock: its hooks are static `hook_*` functions in security/landlock.
    inc(Prefix("landlock_"), Landlock),
    inc(Prefix("hook_"), Landlock),
    inc(Exact("is_access_to_paths_allowed"), Landlock),
    inc(Exact("current_check_access_path"), Landlock),
    inc(Exact("check_access_path"), Landlock),
    inc(Exact("check_access_path_dual"), Landlock),
    inc(Exact("collect_domain_accesses"), Landlock),
    inc(Exact("find_rule"), Landlock),
    inc(Exact("unmask_layers"), Landlock),
    inc(Exact("get_current_fs_domain"), Landlock),
    // The BPF LSM: its hook stubs and the trampolines that call programs.
    inc(Prefix("bpf_lsm_"), BpfLsm),
    inc(Prefix("bpf_trampoline_"), BpfLsm),
    inc(Exact("__bpf_prog_enter_lsm_cgroup"), BpfLsm),
    inc(Exact("__bpf_prog_exit_lsm_cgroup"), BpfLsm),
    // The framework's credential hooks: they copy and free the LSMs'
    // credential blobs, and run only because credentials are copied or
    // freed, so their cost is credential handling (an LSM's own cred hook
    // below them, such as `landlock_cred_prepare`, stays with that LSM).
    inc(Exact("security_prepare_creds"), Cred),
    inc(Exact("security_cred_free"), Cred),
    inc(Exact("security_cred_alloc_blank"), Cred),
    inc(Exact("security_transfer_creds"), Cred),
    inc(Exact("lsm_cred_alloc"), Cred),
    // The LSM framework: hook dispatch and blob management.
    // (Generic helpers such as `lsm_blob_alloc` are not listed: the hook
    // that calls them decides.)
    inc(Prefix("security_"), Lsm),
    inc(Exact("call_int_hook"), Lsm),
    // Audit.
    inc(Prefix("audit_"), Audit),
    inc(Prefix("__audit_"), Audit),
    inc(Prefix("audit"), Audit),
    // Seccomp: the filter run, seccomp_data population, the JIT-ed filter
    // (attributed through its caller).
    inc(Prefix("__seccomp_"), Seccomp),
    inc(Prefix("seccomp_"), Seccomp),
    inc(Exact("__secure_computing"), Seccomp),
    inc(Exact("populate_seccomp_data"), Seccomp),
    inc(Prefix("__get_seccomp_filter"), Seccomp),
    // A JIT-compiled classic BPF program has no kallsyms entry and its
    // frame ends the call chain (the unwinder cannot step out of JIT
    // code); in a system call the only classic BPF is a seccomp filter.
    inc(Exact(crate::profile::symbols::CBPF_JIT), Seccomp),
    // Credentials.
    inc(Exact("prepare_creds"), Cred),
    inc(Exact("prepare_kernel_cred"), Cred),
    inc(Exact("override_creds"), Cred),
    inc(Exact("revert_creds"), Cred),
    inc(Exact("put_cred"), Cred),
    inc(Exact("__put_cred"), Cred),
    inc(Exact("put_cred_rcu"), Cred),
    inc(Exact("abort_creds"), Cred),
    inc(Exact("commit_creds"), Cred),
    inc(Exact("access_override_creds"), Cred),
    inc(Exact("cred_alloc_blank"), Cred),
    inc(Exact("get_task_cred"), Cred),
    inc(Exact("override_creds_light"), Cred),
    inc(Exact("revert_creds_light"), Cred),
    // Interrupts and softirqs (timer ticks, the sampling timer itself).
    inc(Prefix("asm_sysvec_"), Interrupts),
    inc(Prefix("sysvec_"), Interrupts),
    inc(Prefix("asm_common_interrupt"), Interrupts),
    inc(Exact("common_interrupt"), Interrupts),
    inc(Exact("irq_exit_rcu"), Interrupts),
    inc(Exact("__irq_exit_rcu"), Interrupts),
    inc(Exact("handle_softirqs"), Interrupts),
    inc(Exact("__do_softirq"), Interrupts),
    // The scheduler.
    inc(Exact("schedule"), Scheduler),
    inc(Exact("__schedule"), Scheduler),
    inc(Exact("preempt_schedule"), Scheduler),
    inc(Exact("preempt_schedule_irq"), Scheduler),
    inc(Exact("preempt_schedule_common"), Scheduler),
    inc(Exact("try_to_wake_up"), Scheduler),
    inc(Prefix("finish_task_switch"), Scheduler),
    inc(Prefix("pick_next_task"), Scheduler),
    inc(Prefix("enqueue_task"), Scheduler),
    inc(Prefix("dequeue_task"), Scheduler),
    inc(Prefix("ttwu_"), Scheduler),
    inc(Exact("update_curr"), Scheduler),
    // Syscall entry and exit: only their own time (they are the outermost
    // callers of every system call body).
    own(Exact("entry_SYSCALL_64"), Syscall),
    own(Exact("entry_SYSCALL_64_after_hwframe"), Syscall),
    own(Exact("entry_SYSCALL_64_safe_stack"), Syscall),
    own(Exact("entry_SYSRETQ_unsafe_stack"), Syscall),
    own(Exact("entry_SYSRETQ_end"), Syscall),
    own(Exact("do_syscall_64"), Syscall),
    own(Exact("x64_sys_call"), Syscall),
    own(Prefix("syscall_exit_"), Syscall),
    own(Prefix("syscall_enter_"), Syscall),
    own(Exact("syscall_trace_enter"), Syscall),
    own(Exact("exit_to_user_mode_prepare"), Syscall),
    own(Exact("exit_to_user_mode_loop"), Syscall),
    own(Exact("arch_exit_to_user_mode_prepare"), Syscall),
    own(Exact("fpregs_assert_state_consistent"), Syscall),
    own(Exact("switch_fpu_return"), Syscall),
];

impl Pattern {
    fn matches(self, name: &str) -> bool {
        match self {
            Pattern::Exact(e) => name == e,
            Pattern::Prefix(p) => name.starts_with(p),
        }
    }
}

/// The first rule matching `name`, if any.
pub fn rule_for(name: &str) -> Option<&'static Rule> {
    // Compiler-made clones (`foo.isra.0`, `foo.cold`) belong with `foo`.
    let base = name.split('.').next().unwrap_or(name);
    RULES.iter().find(|r| r.pattern.matches(base))
}

/// What a sample's stack looks like to the grouping rule.
pub enum Stack<'a> {
    /// A sample taken in user space.
    User,
    /// A kernel sample whose addresses could not be symbolised.
    KernelUnsymbolised,
    /// A kernel sample's frames, innermost (the sampled function) first.
    Kernel(&'a [&'a str]),
}

/// The group a sample belongs to: its innermost recognised frame's group
/// (self-only rules count only for the innermost frame).
pub fn group_of(stack: &Stack) -> Group {
    let frames = match stack {
        Stack::User => return Group::User,
        Stack::KernelUnsymbolised => return Group::KernelUnsymbolised,
        Stack::Kernel(frames) => frames,
    };
    for (depth, frame) in frames.iter().enumerate() {
        if let Some(rule) = rule_for(frame)
            && (rule.reach == Reach::Inclusive || depth == 0)
        {
            return rule.group;
        }
    }
    Group::KernelOther
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(frames: &[&str]) -> Group {
        group_of(&Stack::Kernel(frames))
    }

    #[test]
    fn allocation_under_prepare_creds_counts_as_credentials() {
        assert_eq!(
            group(&[
                "__memcg_slab_post_alloc_hook",
                "kmem_cache_alloc_noprof",
                "prepare_creds",
                "access_override_creds",
                "do_faccessat",
                "do_syscall_64",
                "entry_SYSCALL_64_after_hwframe",
            ]),
            Cred
        );
    }

    #[test]
    fn the_frameworks_credential_blob_counts_as_credentials() {
        let chain = [
            "__kmalloc_noprof",
            "lsm_blob_alloc",
            "security_prepare_creds",
            "prepare_creds",
            "access_override_creds",
        ];
        assert_eq!(group(&chain), Cred);
        assert_eq!(
            group(&["landlock_cred_prepare", "security_prepare_creds"]),
            Landlock
        );
        assert_eq!(
            group(&["kfree", "security_cred_free", "put_cred_rcu"]),
            Cred
        );
        // The same helper under a file hook is the framework's.
        assert_eq!(group(&["lsm_blob_alloc", "security_file_alloc"]), Lsm);
    }

    #[test]
    fn landlock_hook_under_the_framework_counts_as_landlock() {
        let chain = [
            "is_access_to_paths_allowed",
            "hook_file_open",
            "security_file_open",
            "do_dentry_open",
            "path_openat",
            "do_syscall_64",
        ];
        assert_eq!(group(&chain), Landlock);
        // The framework's own dispatch, with no LSM below it.
        assert_eq!(group(&chain[2..]), Lsm);
    }

    #[test]
    fn audit_functions_are_audit_whatever_their_prefix() {
        for leaf in [
            "__audit_syscall_exit",
            "audit_reset_context",
            "auditd_test_task",
            "audit_filter_inodes",
            "__audit_filter_op",
        ] {
            assert_eq!(
                group(&[leaf, "syscall_exit_work", "do_syscall_64"]),
                Audit,
                "{leaf}"
            );
        }
    }

    #[test]
    fn a_jit_filter_belongs_to_its_caller() {
        assert_eq!(
            group(&[
                "bpf_prog_3a8ab9d2b7a1e6c4_",
                "__seccomp_filter",
                "syscall_trace_enter",
                "do_syscall_64",
            ]),
            Seccomp
        );
        assert_eq!(
            group(&[
                "bpf_prog_1234_restrict_open",
                "bpf_trampoline_6442491234",
                "security_file_open",
            ]),
            BpfLsm
        );
    }

    #[test]
    fn an_unnamed_jit_image_is_a_seccomp_filter() {
        assert_eq!(group(&[crate::profile::symbols::CBPF_JIT]), Seccomp);
    }

    #[test]
    fn syscall_entry_claims_only_its_own_time() {
        assert_eq!(group(&["do_syscall_64", "entry_SYSCALL_64"]), Syscall);
        assert_eq!(group(&["syscall_exit_to_user_mode"]), Syscall);
        // A syscall body under the entry path is not "syscall entry/exit".
        assert_eq!(group(&["__x64_sys_getppid", "do_syscall_64"]), KernelOther);
    }

    #[test]
    fn selinux_names_under_the_security_prefix_are_selinux() {
        assert_eq!(group(&["security_compute_av", "avc_has_perm"]), Selinux);
        assert_eq!(group(&["security_inode_permission"]), Lsm);
    }

    #[test]
    fn compiler_clones_match_their_function() {
        assert_eq!(group(&["prepare_creds.cold"]), Cred);
        assert_eq!(group(&["audit_filter_rules.isra.0"]), Audit);
    }

    #[test]
    fn user_unsymbolised_and_unknown_samples() {
        assert_eq!(group_of(&Stack::User), User);
        assert_eq!(group_of(&Stack::KernelUnsymbolised), KernelUnsymbolised);
        assert_eq!(group(&["memcpy_orig", "copy_to_user"]), KernelOther);
        assert_eq!(group(&[]), KernelOther);
    }

    #[test]
    fn every_group_has_a_distinct_name() {
        let mut names: Vec<_> = Group::ALL.iter().map(|g| g.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Group::ALL.len());
    }
}
