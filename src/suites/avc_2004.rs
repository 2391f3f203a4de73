//! `avc-2004`: James Morris, "[PATCH 0/3] SELinux scalability and analysis
//! patches.", linux-kernel, 2004-11-15 (the RCU work by Kaigai Kohei).
//! SELinux's access vector cache took a global lock on every
//! permission check; replacing it with RCU made parallel `write()` scale
//! again (535.8 -> 30.2 Kcalls/s from 1 to 32 CPUs before, linear after).
//! The post tabled, per configuration (no LSM, capabilities, SELinux,
//! SELinux+RCU): parallel write calls on 1..32 CPUs, dbench by clients,
//! UnixBench sub-tests, ApacheBench on loopback (500 kB document,
//! concurrency 1..8, KB/s), hackbench and STREAM, and exported the AVC
//! statistics through selinuxfs.
//!
//! Here: the same workloads under the current configuration, by task
//! count as in the post's tables (capped at the CPUs there are), the
//! UnixBench subset and STREAM in one table, and the AVC counters before
//! and after each workload where SELinux is active. SELinux enforcing vs
//! permissive is an A/B on the live kernel where SELinux runs; the post's
//! other configurations (SELinux off, another kernel) are the reboot side.

use super::{
    AbShape, Citation, Item, Layout, Metric, PctStyle, PlanCtx, RunShape, SuiteDef, SuitePlan,
    capped_ladder,
};

pub static SUITE: SuiteDef = SuiteDef {
    name: "avc-2004",
    version: 1,
    post: Citation {
        author: "James Morris (patches by Kaigai Kohei)",
        date: "2004-11-15",
        list: "linux-kernel",
        subject: "[PATCH 0/3] SELinux scalability and analysis patches.",
        link: Some("https://lkml.iu.edu/hypermail/linux/kernel/0411.1/2029.html"),
    },
    title: "SELinux AVC global lock replaced by RCU (Morris, KaiGai, 2004)",
    summary: "parallel write by CPUs, dbench by clients, http by concurrency, UnixBench subset, hackbench, stream; AVC statistics",
    layout: Layout::ConfigRows,
    plan,
    other_side: "The post compared kernels and boot configurations (no LSM, capabilities only, \
SELinux, SELinux with the RCU patches). Boot each, run `secperf suite avc-2004 --label NAME` on \
each, then `secperf suite avc-2004 --report NAME2 --baseline NAME1` puts both in the post's \
tables with the % change of every cell (or `secperf compare NAME1 NAME2`). In one command, in VM guests: `secperf suite avc-2004 --kernel A=IMAGE --kernel B=IMAGE2` (one boot a side, in this table), or paired across boots: `secperf overhead -w write,dbench,http --kernel spinlock=IMAGE,append=lsm=selinux --kernel rcu=IMAGE2,append=lsm=selinux` (docs/vms.md).",
};

fn plan(ctx: &PlanCtx) -> SuitePlan {
    let mut notes = Vec::new();
    let mut ladder = |post: &[usize], what: &str| {
        let (l, note) = capped_ladder(post, ctx.cpus, what);
        notes.extend(note);
        l
    };
    let write_cpus = ladder(&[1, 2, 4, 8, 16, 32], "write() CPU ladder");
    let dbench_clients = ladder(&[1, 2, 4, 8], "dbench clients");
    let http_concurrency = ladder(&[1, 2, 4, 8], "http concurrency");
    let write = Item::new("write", write_cpus, Metric::KOpsPerSec)
        .titled("parallel write() calls")
        .per("CPUs");
    let single = |w: &'static str, metric, title: &str| {
        Item::new(w, vec![1], metric)
            .titled(title)
            .laid_out(Layout::ItemRows)
    };
    let current = vec![
        write.clone(),
        Item::new("dbench", dbench_clients, Metric::MBPerSec)
            .titled("dbench throughput")
            .per("clients"),
        Item::new("http", http_concurrency, Metric::KBPerSec)
            .titled("Apachebench, 500 kB document, received")
            .per("concurrent"),
        single("pipe", Metric::OpsPerSec, "Pipe Throughput"),
        single(
            "pipe_ctx",
            Metric::OpsPerSec,
            "Pipe-based Context Switching",
        ),
        single("spawn", Metric::OpsPerSec, "Process Creation"),
        single("exec", Metric::OpsPerSec, "Execl Throughput"),
        single("file_copy", Metric::KBPerSec, "File Copy 256B").param("buf", "256"),
        single("file_copy", Metric::KBPerSec, "File Copy 1KB").param("buf", "1024"),
        single("file_copy", Metric::KBPerSec, "File Copy 4KB").param("buf", "4096"),
        single("hackbench", Metric::OpsPerSec, "hackbench messages"),
        single("stream", Metric::MBPerSec, "Stream triad"),
    ];
    notes.push(
        "rates of all tasks together (higher is better); hackbench as messages per second \
         where the post gave seconds; no UnixBench index (its reference machine's figures \
         do not apply to these loops)"
            .into(),
    );
    SuitePlan {
        current,
        run: RunShape::standard(ctx.quick),
        treatments: vec!["selinux:enforcing".into()],
        ab_items: vec![write],
        ab: AbShape::standard(ctx.quick),
        baseline_name: "permissive".into(),
        pct_style: PctStyle::Change,
        collect_avc: true,
        notes,
    }
}
