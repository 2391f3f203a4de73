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
//! Beside the in-binary `http`, ApacheBench runs against a real web
//! server where nginx and ab are installed: nginx serving the 500 kB
//! document at the post's concurrencies (the `service` workload).

use super::{
    AbShape, Citation, Item, Layout, Metric, PctStyle, PlanCtx, RunShape, SuiteDef, SuitePlan,
    capped_ladder,
};

/// The port the nginx case's server listens on (fixed, so that a stored
/// run's results match the plan when reported again).
pub const NGINX_PORT: u16 = 16380;
/// Where the nginx case keeps its configuration and its document.
pub const NGINX_DIR: &str = "/tmp/secperf-avc2004-nginx";
/// The post's document: 500 kB.
pub const DOCUMENT_BYTES: u64 = 512_000;
/// Requests per ApacheBench run.
pub const AB_REQUESTS: u64 = 200;

/// ApacheBench against a real web server, beside the in-binary `http`:
/// nginx serving the post's 500 kB document on loopback, `ab -n 200` at
/// the post's concurrencies (the `service` workload: the server started
/// fresh for each measurement, the client outside any mechanism); or why
/// it is left out (nginx or ab not installed, its port taken).
fn nginx_ab() -> Result<Vec<Item>, String> {
    let missing: Vec<&str> = ["nginx", "ab"]
        .into_iter()
        .filter(|t| crate::sys::which(t).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "ApacheBench against nginx is skipped: {} not installed (Debian: apt-get install \
             nginx-light apache2-utils)",
            missing.join(" and ")
        ));
    }
    if crate::workloads::service::ready::Ready::Tcp(NGINX_PORT)
        .check_free()
        .is_err()
    {
        return Err(format!(
            "ApacheBench against nginx is skipped: its port {NGINX_PORT} on 127.0.0.1 is taken"
        ));
    }
    let (d, port) = (NGINX_DIR, NGINX_PORT);
    let temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
        .map(|k| format!("{k}_temp_path {d}/tmp;"))
        .join(" ");
    // nginx's workers drop to nobody: the directory and the document are
    // world-readable. The configuration is written afresh each time.
    let script = format!(
        "mkdir -p {d}/tmp && chmod 755 {d} && \
         {{ [ \"$(stat -c %s {d}/doc 2>/dev/null)\" = {DOCUMENT_BYTES} ] || \
         head -c {DOCUMENT_BYTES} /dev/urandom > {d}/doc; }} && chmod 644 {d}/doc && \
         printf '%s\\n' 'worker_processes 1; error_log stderr; pid {d}/nginx.pid; \
         events {{ worker_connections 256; }} http {{ access_log off; {temp} \
         server {{ listen 127.0.0.1:{port}; root {d}; }} }}' > {d}/nginx.conf && \
         exec nginx -e stderr -p {d} -c {d}/nginx.conf -g 'daemon off;'"
    );
    let server = crate::workloads::command::argv_param(&["sh", "-c", &script]);
    let url = format!("http://127.0.0.1:{port}/doc");
    Ok([1, 2, 4, 8]
        .into_iter()
        .map(|c: u32| {
            let (n, c) = (AB_REQUESTS.to_string(), c.to_string());
            Item::new("service", vec![1], Metric::OpsPerSec)
                .param("server", server.clone())
                .param(
                    "argv",
                    crate::workloads::command::argv_param(&["ab", "-q", "-n", &n, "-c", &c, &url]),
                )
                .param("ready", format!("tcp:{port}"))
                .titled(format!(
                    "ApacheBench against nginx, 500 kB document, concurrency {c} (runs of \
                     {AB_REQUESTS} requests per s)"
                ))
                .laid_out(Layout::ItemRows)
        })
        .collect())
}

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
    let mut current = vec![
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
    match nginx_ab() {
        Ok(items) => current.extend(items),
        Err(why) => notes.push(why),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The nginx case really serves the document to ab, and nothing is
    /// left running (CI installs nginx-light and apache2-utils).
    #[test]
    fn apachebench_against_nginx_serves_the_document() {
        let items = match nginx_ab() {
            Ok(items) => items,
            Err(why) if why.contains("not installed") => {
                crate::testing::skip_missing_tool(
                    "apachebench_against_nginx_serves_the_document",
                    "nginx",
                    &why,
                );
                return;
            }
            Err(why) => panic!("{why}"),
        };
        let item = &items[1];
        let params = item.full_params();
        (item.def().validate)(&params).unwrap();
        let mut opts =
            crate::runner::testing::brief_opts(crate::model::Mode::Process, 20, params.clone());
        opts.warmup = 0;
        opts.samples = 2;
        let r = crate::runner::measure(item.def(), &opts, &mut |_| {})
            .unwrap_or_else(|e| panic!("{e:#}"));
        let rps = r
            .client_metrics
            .iter()
            .find(|m| m.name == "requests_per_sec")
            .unwrap_or_else(|| panic!("{:?}", r.client_metrics));
        assert!(rps.value > 10.0, "{rps:?}");
        assert_eq!(
            std::fs::metadata(format!("{NGINX_DIR}/doc")).unwrap().len(),
            DOCUMENT_BYTES
        );
        let cpu = r.child_cpu.expect("the server's CPU");
        // nginx's worker does the sending: its group's CPU is counted.
        assert!(cpu.sys_ns_per_op > 0.0, "{cpu:?}");
        assert!(
            crate::workloads::service::ready::Ready::Tcp(NGINX_PORT)
                .check_free()
                .is_ok(),
            "nginx still listens"
        );
    }
}
