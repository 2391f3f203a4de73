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
//!
//! The post's redis figure ("an 8-10% hit on all operations") is measured
//! too where redis is installed, except with `--quick`: redis-server under
//! the arm, redis-benchmark outside it (the `service` workload), as A/B
//! pairs; the client's requests/s get their own paired intervals.

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

/// The port the redis case's server listens on (fixed, so that a stored
/// run's comparisons match the plan when reported again).
pub const REDIS_PORT: u16 = 16379;

/// The post's redis case, "of greater concern" than sysbench ("an 8-10%
/// hit on all operations"): redis-server under the arm, redis-benchmark
/// outside it (the `service` workload), one client run of 20000 GETs and
/// 20000 SETs; or why it is left out (with --quick, where redis is not
/// installed, or its port is taken).
fn redis(ctx: &PlanCtx) -> Result<Item, String> {
    if ctx.quick {
        return Err(
            "the post's redis case is left out with --quick (its pairs take about a \
                    second a run); run without --quick to measure it"
                .into(),
        );
    }
    if crate::sys::which("redis-server").is_none() || crate::sys::which("redis-benchmark").is_none()
    {
        return Err(
            "the post's redis case is skipped: redis-server and redis-benchmark are not \
                    installed (Debian: apt-get install redis-server redis-tools)"
                .into(),
        );
    }
    let taken = crate::workloads::service::ready::Ready::Tcp(REDIS_PORT)
        .check_free()
        .is_err();
    if taken {
        return Err(format!(
            "the post's redis case is skipped: its port {REDIS_PORT} on 127.0.0.1 is taken"
        ));
    }
    let port = REDIS_PORT.to_string();
    Ok(Item::new("service", vec![1], Metric::NsPerOp)
        .param(
            "server",
            crate::workloads::command::argv_param(&[
                "redis-server",
                "--port",
                &port,
                "--save",
                "",
                "--appendonly",
                "no",
            ]),
        )
        .param(
            "argv",
            crate::workloads::command::argv_param(&[
                "redis-benchmark",
                "-p",
                &port,
                "-n",
                "20000",
                "-t",
                "get,set",
                "--csv",
            ]),
        )
        .param("ready", format!("tcp:{port}"))
        .titled("redis (redis-benchmark, 20000 GET + 20000 SET)")
        .laid_out(Layout::ItemRows))
}

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
         % is the change of the value against the first column: + is slower (the post, as \
         mmtests prints it, signed it the other way: positive better)"
            .to_string(),
    ];
    notes.extend(note);
    notes.push(
        "the post also compared perf profiles symbol by symbol (read_tsc 0% -> 5.95%): \
         `perf record -e cpu-clock -g -- secperf run -w mutex_yield --mode thread` on each \
         configuration, then `perf report --sort symbol`"
            .into(),
    );
    let mut ab_items = vec![item()];
    match redis(ctx) {
        Ok(redis) => ab_items.push(redis),
        Err(why) => notes.push(why),
    }
    SuitePlan {
        current: vec![item()],
        run: RunShape::standard(ctx.quick),
        treatments: vec!["audit:enabled".into(), "audit:unrelated-rule".into()],
        ab_items,
        ab: AbShape::standard(ctx.quick),
        baseline_name: "audit off".into(),
        pct_style: PctStyle::Change,
        collect_avc: false,
        notes,
    }
}
