//! `access-2023`: Paul Moore, "Re: [PATCH v2 2/2] vfs: avoid duplicating
//! creds in faccessat if possible", linux-fsdevel, linux-kernel and
//! linux-security-module, 2023-01-23, the review of Mateusz Guzik's patch
//! of 2023-01-16. `access(2)` built new credentials on every call to switch to the
//! real uid; the patch skips that when they would be identical
//! (will-it-scale `access1`, one file per task, +121% at 1 process and
//! +1353% at 24; `access2`, all tasks on one file, +125%). The reviewer
//! asked for the other side: what it costs when the credentials really must
//! be overridden.
//!
//! Here: `access1` and `access2` on the process ladder, under the current
//! configuration, and as A/B pairs without and with a forced credential
//! override (fsuid different from the real uid, so every call must build
//! and drop new credentials: the path the patch cannot skip). Kernels with
//! and without the patch are the reboot side.

use super::{
    AbShape, Citation, Item, Layout, Metric, PctStyle, PlanCtx, RunShape, SuiteDef, SuitePlan,
    doubling_ladder,
};

pub static SUITE: SuiteDef = SuiteDef {
    name: "access-2023",
    version: 1,
    post: Citation {
        author: "Paul Moore (reviewing Mateusz Guzik's patch)",
        date: "2023-01-23",
        list: "linux-fsdevel, linux-kernel, linux-security-module",
        subject: "Re: [PATCH v2 2/2] vfs: avoid duplicating creds in faccessat if possible",
        link: Some(
            "https://lore.kernel.org/all/CAHC9VhTnpWKnKRu3wFTNfub_qdcDePdEXYZWOpvpqL0fcfS_Uw@mail.gmail.com/",
        ),
    },
    title: "access(2) allocating new credentials on every call (Guzik, 2023)",
    summary: "access1/access2 (will-it-scale) on the process ladder, without and with forced credential override, ops/s",
    layout: Layout::ItemRows,
    plan,
    other_side: "The post compared a kernel before and after the patch. Boot each, run `secperf \
suite access-2023 --label before` and `--label after`, then `secperf suite access-2023 --report \
after --baseline before` prints the post's before/after table (or `secperf compare before after`). In one command, in VM guests: `secperf suite access-2023 --kernel A=IMAGE --kernel B=IMAGE2` (one boot a side, in this table), or paired across boots: `secperf overhead -w access1,access2 --kernel before=IMAGE --kernel after=IMAGE2` (docs/vms.md).",
};

fn plan(ctx: &PlanCtx) -> SuitePlan {
    // The post used 1 and 24 processes: the ladder from 1 to all CPUs.
    let ladder = doubling_ladder(ctx.cpus);
    let items = || {
        vec![
            Item::new("access1", ladder.clone(), Metric::OpsPerSec).per("procs"),
            Item::new("access2", ladder.clone(), Metric::OpsPerSec).per("procs"),
        ]
    };
    let mut notes = vec![
        "values: access() calls per second, all processes together (higher is better); \
         % = change of ops/s against the first column"
            .to_string(),
    ];
    if ctx.cpus < 24 {
        notes.push(format!(
            "process ladder 1..{} (the post used 1 and 24 processes on a larger machine)",
            ctx.cpus
        ));
    }
    SuitePlan {
        current: items(),
        run: RunShape::standard(ctx.quick),
        treatments: vec!["cred".into()],
        ab_items: items(),
        ab: AbShape::standard(ctx.quick),
        baseline_name: "no override".into(),
        pct_style: PctStyle::Change,
        collect_avc: false,
        notes,
    }
}
