//! `creds-2008`: David Howells, "Performance degradation measurement [was
//! Re: [PATCH 06/37] Security: Separate task security context from
//! task_struct [ver #34]]", linux-kernel, 2008-03-19. Moving a task's
//! credentials behind a pointer cost an extra dereference on every
//! permission check; he timed `openit` (fstatat + open of every entry of a
//! 266-directory, 19255-file tree, metadata cached) nine times per kernel
//! and reported the mean walk time and the "% degradation" (8.4% with
//! SELinux, -0.4%, "within the variance", without).
//!
//! Here: `tree_walk` over the same tree at one task, nine samples of the
//! current configuration (his nine runs), and, as A/B pairs on the live
//! kernel, every mechanism that adds work to the walk's permission checks
//! (Landlock's path walk, SELinux enforcing vs permissive, AppArmor, an
//! audit rule). The kernels with and without a patch, and SELinux off at
//! boot, are the reboot side: one labelled run per boot, then `--baseline`.

use super::{
    AbShape, Citation, Item, Layout, Metric, PctStyle, PlanCtx, RunShape, SuiteDef, SuitePlan,
};

pub static SUITE: SuiteDef = SuiteDef {
    name: "creds-2008",
    version: 1,
    post: Citation {
        author: "David Howells",
        date: "2008-03-19",
        list: "linux-kernel",
        subject: "Performance degradation measurement [was Re: [PATCH 06/37] Security: \
                  Separate task security context from task_struct [ver #34]]",
        link: Some("https://lore.kernel.org/lkml/17688.1205946728@redhat.com/"),
    },
    title: "task credentials behind a pointer, SELinux on/off (Howells, 2008)",
    summary: "tree_walk (openit: 266 dirs, 19255 files), median walk time and % degradation per configuration",
    layout: Layout::ConfigRows,
    plan,
    other_side: "The post compared kernels (with and without the credentials patches) and \
SELinux on and off at boot. Boot each configuration, run `secperf suite creds-2008 --label NAME` \
on each, then `secperf suite creds-2008 --report NAME2 --baseline NAME1` prints them in one table \
with the % degradation and its interval (or `secperf compare NAME1 NAME2`). In one command, in VM guests: `secperf suite creds-2008 --kernel A=IMAGE --kernel B=IMAGE2` (one boot a side, in this table), or paired across boots: `secperf overhead -w tree_walk --kernel before=IMAGE --kernel after=IMAGE2` (docs/vms.md).",
};

fn plan(ctx: &PlanCtx) -> SuitePlan {
    let walk = || Item::new("tree_walk", vec![1], Metric::MsPerOp).titled("openit tree walk");
    SuitePlan {
        current: vec![walk()],
        run: if ctx.quick {
            RunShape {
                samples: 5,
                sample_ms: 200,
                warmup: 1,
            }
        } else {
            // The post's nine timed runs, after warming the cache.
            RunShape {
                samples: 9,
                sample_ms: 500,
                warmup: 2,
            }
        },
        treatments: vec![
            "landlock".into(),
            "audit:unrelated-rule".into(),
            "selinux:enforcing".into(),
            "apparmor".into(),
        ],
        ab_items: vec![walk()],
        ab: if ctx.quick {
            AbShape {
                min_pairs: 10,
                sample_ms: 60,
                samples_per_half: 1,
                warmup: 1,
            }
        } else {
            AbShape {
                min_pairs: 12,
                sample_ms: 150,
                samples_per_half: 2,
                warmup: 1,
            }
        },
        baseline_name: "current configuration".into(),
        pct_style: PctStyle::Change,
        collect_avc: false,
        notes: vec![
            "% degradation: change of the median walk time (+ is slower; the post used the mean); \
             A/B rows carry the paired estimate and its 95% interval"
                .into(),
        ],
    }
}
