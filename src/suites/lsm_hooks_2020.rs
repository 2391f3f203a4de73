//! `lsm-hooks-2020`: Brendan Jackman (patch by Paul Renauld), "[RFC]
//! security: replace indirect calls with static calls",
//! linux-security-module, bpf and linux-kernel, 2020-08-20. Every LSM hook was an indirect call through a
//! retpoline; with the BPF LSM enabled, its default no-op callback alone
//! cost 4% on `eventfd_write`, which goes through the `file_permission`
//! hook. The RFC replaced the indirect calls with static calls.
//!
//! Here: `eventfd` (an 8-byte write and read of an eventfd per operation)
//! under the current configuration, and as A/B pairs: an A/A control (the
//! noise floor of this machine), the BPF LSM with a no-op program on
//! `file_permission`, and every other mechanism whose LSM implements
//! `file_permission` (SELinux, AppArmor), each skipped with the reason
//! where it cannot run. A kernel with static calls (or without the BPF LSM
//! in `lsm=`) is the reboot side.

use super::{
    AbShape, Citation, Item, Layout, Metric, PctStyle, PlanCtx, RunShape, SuiteDef, SuitePlan,
};
use crate::mechanisms::MECHANISMS;

pub static SUITE: SuiteDef = SuiteDef {
    name: "lsm-hooks-2020",
    version: 1,
    post: Citation {
        author: "Brendan Jackman (patch by Paul Renauld)",
        date: "2020-08-20",
        list: "linux-security-module, bpf, linux-kernel",
        subject: "[RFC] security: replace indirect calls with static calls",
        link: Some(
            "https://lore.kernel.org/linux-security-module/20200820164753.3256899-1-jackmanb@chromium.org/",
        ),
    },
    title: "LSM hooks as retpolined indirect calls; the BPF LSM's no-op hooks (Renauld, 2020)",
    summary: "eventfd (file_permission hook) with and without a BPF LSM no-op program and every other mechanism on file_permission",
    layout: Layout::ItemRows,
    plan,
    other_side: "The post compared kernels (indirect calls vs static calls) and the BPF LSM in \
or out of `lsm=` at boot. Boot each, run `secperf suite lsm-hooks-2020 --label NAME` on each, then \
`secperf suite lsm-hooks-2020 --report NAME2 --baseline NAME1` (or `secperf compare NAME1 NAME2`). In one command, in VM guests: `secperf suite lsm-hooks-2020 --kernel A=IMAGE --kernel B=IMAGE2` (one boot a side, in this table), or paired across boots: `secperf overhead -w eventfd --kernel indirect=IMAGE --kernel static=IMAGE2 (or one image, append=lsm=... with and without bpf)` (docs/vms.md).",
};

/// The hook `eventfd_write` reaches.
const HOOK: &str = "file_permission";

fn plan(ctx: &PlanCtx) -> SuitePlan {
    let item = || Item::new("eventfd", vec![1], Metric::NsPerOp).titled("eventfd write+read");
    // The A/A control first, then bpf-lsm, then the rest of the table's
    // mechanisms that implement the hook.
    let mut treatments = vec!["none".to_string(), "bpf-lsm".to_string()];
    for m in MECHANISMS {
        if m.lsm_hooks().contains(&HOOK) && !treatments.iter().any(|t| t == m.name()) {
            treatments.push(m.name().to_string());
        }
    }
    SuitePlan {
        current: vec![item()],
        run: RunShape::standard(ctx.quick),
        treatments,
        ab_items: vec![item()],
        // The post's effect was 4%: enough pairs to see it on a quiet machine.
        ab: AbShape {
            min_pairs: if ctx.quick { 10 } else { 30 },
            ..AbShape::standard(ctx.quick)
        },
        baseline_name: "without".into(),
        pct_style: PctStyle::Change,
        collect_avc: false,
        notes: vec![
            "values: ns per eventfd write + read of one task (lower is better); \
             % = change of ns/op against the baseline arm (+ is slower); the post measured \
             4% for the BPF LSM's no-op hooks"
                .into(),
            "seccomp and audit act at syscall entry and exit, not through file_permission: \
             `secperf overhead -w eventfd` measures them"
                .into(),
        ],
    }
}
