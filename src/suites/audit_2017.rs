//! `audit-2017`: Mel Gorman, "[PATCH] audit: Reduce overhead using a coarse
//! clock", linux-kernel, 2017-07-04 (merged for Linux 4.14 as commit
//! e832bf48c8e1). With audit enabled and no rules, every syscall paid for a precise timestamp
//! (`ktime_get_real_ts64`, `read_tsc` 0% -> 5.95% of the profile): an
//! 11-12% hit on sysbench-threads (threads lock and unlock a private mutex
//! and yield) at 1 to 16 threads, shown as mmtests' "Amean" per thread
//! count with the % change against the baseline kernel. secperf prints the
//! median per thread count (the A/B cells as the baseline times the paired
//! ratio), so the % follows from the values shown.
//!
//! Here: `mutex_yield` in threads at the post's thread counts (capped at
//! the CPUs there are, and saying so), with audit off, audit enabled with
//! no rules, and audit with one rule the workload never matches, as A/B
//! pairs on the live kernel; the current configuration is also measured
//! alone, for comparisons across kernels (the post's 4.9 vs 4.12 columns).

use super::{
    AbShape, Citation, Item, Layout, Metric, PctStyle, PlanCtx, RunShape, SuiteDef, SuitePlan,
    capped_ladder,
};

pub static SUITE: SuiteDef = SuiteDef {
    name: "audit-2017",
    version: 1,
    post: Citation {
        author: "Mel Gorman",
        date: "2017-07-04",
        list: "linux-kernel",
        subject: "[PATCH] audit: Reduce overhead using a coarse clock",
        link: Some("https://lkml.iu.edu/hypermail/linux/kernel/1707.0/01707.html"),
    },
    title: "audit with no rules slowing every syscall (Gorman, 2017)",
    summary: "mutex_yield (sysbench-threads) at 1..16 threads: audit off / enabled / unrelated rule, mmtests-style table of medians",
    layout: Layout::TaskRows,
    plan,
    other_side: "The post compared kernels (4.9, 4.12, 4.12 with the coarse-clock patch). Boot each \
kernel, run `secperf suite audit-2017 --label KERNEL` on each, then `secperf suite audit-2017 \
--report KERNEL2 --baseline KERNEL1` puts both in one table (or `secperf compare KERNEL1 \
KERNEL2`). In one command, in VM guests: `secperf suite audit-2017 --kernel A=IMAGE --kernel B=IMAGE2` (one boot a side, in this table), or paired across boots: `secperf overhead -w mutex_yield,getppid --kernel audit0=IMAGE,append=audit=0 --kernel audit1=IMAGE,append=audit=1 (or two kernel images)` (docs/vms.md).",
};

/// sysbench-threads' thread counts in the post.
const POST_THREADS: &[usize] = &[1, 3, 5, 7, 12, 16];

fn plan(ctx: &PlanCtx) -> SuitePlan {
    let (ladder, note) = capped_ladder(POST_THREADS, ctx.cpus, "thread ladder");
    let item = || {
        Item::new("mutex_yield", ladder.clone(), Metric::NsPerOp)
            .threads()
            .per("threads")
            .titled("mutex_yield")
    };
    let mut notes = vec![
        "values: median ns per lock/unlock/yield round of one thread (lower is better); \
         % as mmtests prints it: negative = slower than the first column"
            .to_string(),
    ];
    notes.extend(note);
    notes.push(
        "the post also compared perf profiles symbol by symbol (read_tsc 0% -> 5.95%): \
         `perf record -e cpu-clock -g -- secperf run -w mutex_yield --mode thread` on each \
         configuration, then `perf report --sort symbol`"
            .into(),
    );
    SuitePlan {
        current: vec![item()],
        run: RunShape::standard(ctx.quick),
        treatments: vec!["audit:enabled".into(), "audit:unrelated-rule".into()],
        ab_items: vec![item()],
        ab: AbShape::standard(ctx.quick),
        baseline_name: "audit off".into(),
        pct_style: PctStyle::Gain,
        collect_avc: false,
        notes,
    }
}
