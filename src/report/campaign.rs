//! One campaign's runs side by side: `secperf campaign` ran one measuring
//! command on many hosts, and each host's finished run was stored with the
//! campaign's tag. [`view`] lines those runs up: one column per host, one
//! item per comparison or result (matched across hosts by its label), and
//! the facts of the hosts' probe snapshots that differ between them
//! (kernel, command line, CPU, mitigations, LSMs, secperf version, ...),
//! which are what a difference between two hosts' figures is read
//! against. `report::sections::campaign` writes it for people,
//! `report::formats::campaign` in every `--format`, and the HTML page is
//! `report::html::campaign`.
//!
//! A host of the campaign without a finished run is listed as missing; a
//! host lacking an item another host measured gets an empty cell. Runs
//! tagged with another campaign, and unfinished runs, are left out; of
//! several finished runs of one host, the latest (highest run id) counts.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;
use serde_json::Value;

use crate::model::{Comparison, Mode, Summary, WorkloadResult};
use crate::report::doc::RunDoc;
use crate::report::{label, number};
use crate::stats::decision::Verdict;

/// One campaign's runs side by side per host.
#[derive(Debug, Clone, Serialize)]
pub struct CampaignView {
    /// The campaign's id.
    pub campaign: String,
    /// The hosts with a finished run, in the campaign's order (then any
    /// other host a run names, in the order of the runs).
    pub hosts: Vec<HostColumn>,
    /// Comparisons and results, in order of first appearance, host by host.
    pub items: Vec<Item>,
    /// The probe facts that differ between the hosts.
    pub differences: Vec<Difference>,
    /// Hosts of the campaign with no finished run.
    pub missing: Vec<String>,
}

/// A host's column: its run and what it ran on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostColumn {
    /// The name the campaign gave the host.
    pub host: String,
    pub run_id: i64,
    /// The run's identity across databases, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// `uname -r`.
    pub kernel: Option<String>,
    /// The CPU model, short ("AMD EPYC 7763", "Intel Xeon Platinum 8480+").
    pub cpu: Option<String>,
}

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    /// An A/B comparison: overhead in % of the baseline's ns/op.
    Comparison,
    /// A measurement of one configuration: ns/op.
    Result,
}

impl ItemKind {
    pub fn name(self) -> &'static str {
        match self {
            ItemKind::Comparison => "comparison",
            ItemKind::Result => "result",
        }
    }

    /// The unit of the cells' estimate and interval.
    pub fn unit(self) -> &'static str {
        match self {
            ItemKind::Comparison => "%",
            ItemKind::Result => "ns/op",
        }
    }
}

/// One comparison or result, with one cell per host.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// What identifies it across hosts: "seccomp:allow on getppid
    /// tasks=1" (a comparison, " mode=thread" added for threads),
    /// "getppid tasks=1 mode=process" (a result).
    pub label: String,
    pub kind: ItemKind,
    /// The workload as labels name it ("open depth=16").
    pub workload: String,
    /// A comparison's treatment ("seccomp:allow"); none for a result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub treatment: Option<String>,
    pub tasks: u32,
    pub mode: Mode,
    /// "%" (comparisons) or "ns/op" (results).
    pub unit: String,
    /// One per host column, in [`CampaignView::hosts`] order; none where
    /// the host did not measure the item.
    pub cells: Vec<Option<HostCell>>,
}

/// One host's figure of an item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostCell {
    /// Overhead in % (comparison) or median ns/op (result).
    pub estimate: f64,
    /// Its 95% interval.
    pub ci_low: f64,
    pub ci_high: f64,
    /// A comparison's verdict and p-value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// A comparison's medians of each arm's ns/op.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_ns_per_op: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub treatment_ns_per_op: Option<f64>,
    /// A result's operations per second, all tasks together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ops_per_sec: Option<Summary>,
    /// Pairs (comparison) or kept samples (result) behind the figure.
    pub n: u32,
}

/// A probe fact whose value differs between hosts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// The fact as a dotted path in the probe snapshot: "kernel.release",
    /// "mitigations.spectre_v2", "lsm.modules", "secperf_version".
    pub key: String,
    /// One per host column, in [`CampaignView::hosts`] order; none where
    /// the host's snapshot lacks the fact.
    pub values: Vec<Option<String>>,
}

/// The view of campaign `campaign`, whose hosts are `hosts` (in order),
/// from its runs' documents.
pub fn view(campaign: &str, hosts: &[String], docs: &[RunDoc]) -> CampaignView {
    // The latest finished run of each host, tagged with this campaign (or
    // with no tag: the caller chose it).
    let mut latest: HashMap<String, &RunDoc> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for d in docs {
        if d.finished_at.is_none() {
            continue;
        }
        if d.campaign.as_ref().is_some_and(|t| t.id != campaign) {
            continue;
        }
        let host = host_of(d);
        match latest.get(&host) {
            Some(prev) if prev.run_id > d.run_id => {}
            Some(_) => {
                latest.insert(host, d);
            }
            None => {
                order.push(host.clone());
                latest.insert(host, d);
            }
        }
    }
    let mut columns: Vec<(String, &RunDoc)> = Vec::new();
    let mut missing = Vec::new();
    for h in hosts {
        match latest.get(h) {
            Some(d) if !columns.iter().any(|(c, _)| c == h) => columns.push((h.clone(), d)),
            Some(_) => {}
            None if !missing.contains(h) => missing.push(h.clone()),
            None => {}
        }
    }
    for h in order {
        if !hosts.contains(&h) {
            let d = latest[&h];
            columns.push((h, d));
        }
    }

    let host_columns = columns
        .iter()
        .map(|(h, d)| {
            let facts = d.machine();
            HostColumn {
                host: h.clone(),
                run_id: d.run_id,
                uuid: d.uuid.clone(),
                kernel: facts.kernel,
                cpu: facts.cpu_model.as_deref().map(short_cpu),
            }
        })
        .collect();
    let docs: Vec<&RunDoc> = columns.iter().map(|(_, d)| *d).collect();
    CampaignView {
        campaign: campaign.to_string(),
        hosts: host_columns,
        items: items(&docs),
        differences: differences(&docs),
        missing,
    }
}

/// The host a run was measured on: its campaign tag's, else the run's.
fn host_of(d: &RunDoc) -> String {
    d.campaign
        .as_ref()
        .map(|t| t.host.clone())
        .unwrap_or_else(|| d.meta.host.clone())
}

/// A CPU model without trademarks, clock, core count and filler words:
/// "Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz" -> "Intel Core i7-8650U".
pub fn short_cpu(model: &str) -> String {
    let model = model.split(" @ ").next().unwrap_or(model);
    let cleaned = ["(R)", "(r)", "(TM)", "(tm)"]
        .iter()
        .fold(model.to_string(), |s, t| s.replace(t, ""));
    let words: Vec<&str> = cleaned
        .split_whitespace()
        .filter(|w| {
            !(matches!(*w, "CPU" | "Processor" | "processor")
                || w.ends_with("-Core")
                || w.ends_with("-core"))
        })
        .collect();
    if words.is_empty() {
        model.trim().to_string()
    } else {
        words.join(" ")
    }
}

fn comparison_item(c: &Comparison) -> (String, Item, HostCell) {
    let mut label = label::comparison(c);
    if c.mode != Mode::Process {
        label.push_str(&format!(" mode={}", c.mode));
    }
    let o = &c.overhead_pct;
    let cell = HostCell {
        estimate: o.estimate,
        ci_low: o.ci_low,
        ci_high: o.ci_high,
        verdict: Some(o.verdict),
        p_value: Some(o.p_value),
        baseline_ns_per_op: Some(c.baseline_per_op),
        treatment_ns_per_op: Some(c.treatment_per_op),
        ops_per_sec: None,
        n: c.pairs,
    };
    let item = Item {
        label: label.clone(),
        kind: ItemKind::Comparison,
        workload: label::workload(&c.workload, &c.workload_params),
        treatment: Some(label::treatment(c)),
        tasks: c.tasks,
        mode: c.mode,
        unit: ItemKind::Comparison.unit().into(),
        cells: Vec::new(),
    };
    (label, item, cell)
}

fn result_item(r: &WorkloadResult) -> (String, Item, HostCell) {
    let workload = label::workload(&r.workload, &r.params);
    let label = format!("{workload} tasks={} mode={}", r.tasks, r.mode);
    let cell = HostCell {
        estimate: r.ns_per_op.median,
        ci_low: r.ns_per_op.ci_low,
        ci_high: r.ns_per_op.ci_high,
        verdict: None,
        p_value: None,
        baseline_ns_per_op: None,
        treatment_ns_per_op: None,
        ops_per_sec: Some(r.ops_per_sec),
        n: r.samples,
    };
    let item = Item {
        label: label.clone(),
        kind: ItemKind::Result,
        workload,
        treatment: None,
        tasks: r.tasks,
        mode: r.mode,
        unit: ItemKind::Result.unit().into(),
        cells: Vec::new(),
    };
    (label, item, cell)
}

/// The items of the columns' runs, aligned by kind and label. A label a
/// run holds twice gets " #2", " #3" on its repeats, so nothing is lost.
fn items(docs: &[&RunDoc]) -> Vec<Item> {
    let n = docs.len();
    let mut items: Vec<Item> = Vec::new();
    let mut index: HashMap<(ItemKind, String), usize> = HashMap::new();
    for (col, d) in docs.iter().enumerate() {
        let mut seen: HashMap<(ItemKind, String), usize> = HashMap::new();
        let all = d
            .comparisons
            .iter()
            .map(comparison_item)
            .chain(d.results.iter().map(result_item));
        for (label, mut item, cell) in all {
            let count = seen.entry((item.kind, label.clone())).or_insert(0);
            *count += 1;
            if *count > 1 {
                item.label = format!("{label} #{count}");
            }
            let key = (item.kind, item.label.clone());
            let i = *index.entry(key).or_insert_with(|| {
                item.cells = vec![None; n];
                items.push(item);
                items.len() - 1
            });
            items[i].cells[col] = Some(cell);
        }
    }
    items
}

/// Probe facts that change from one probe to the next on any machine and
/// say nothing about it (by last path segment): times, ids, counters.
const VOLATILE: &[&str] = &[
    "hostname",
    "nodename",
    "boot_id",
    "uptime",
    "uptime_s",
    "load",
    "loadavg",
    "load_avg",
    "timestamp",
    "time",
    "pid",
    "auditd_pid",
    "boot_s",
];

/// Volatile facts by full key: audit's current backlog and lost count.
const VOLATILE_KEYS: &[&str] = &["audit.backlog", "audit.lost"];

fn volatile(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    VOLATILE.contains(&last) || last.ends_with("_at") || VOLATILE_KEYS.contains(&key)
}

/// A probe snapshot as dotted keys and text values: objects are walked,
/// an unread item (`{"unavailable": reason}`) and an array of plain
/// values are one value each, an array of objects is walked by index.
pub fn flatten(system: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(system, "", &mut out);
    out
}

fn walk(v: &Value, key: &str, out: &mut BTreeMap<String, String>) {
    let join = |k: &str| {
        if key.is_empty() {
            k.to_string()
        } else {
            format!("{key}.{k}")
        }
    };
    match v {
        Value::Object(o) if o.len() == 1 && o.contains_key("unavailable") => {
            let reason = match &o["unavailable"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.insert(key.to_string(), format!("unavailable: {reason}"));
        }
        Value::Object(o) => {
            for (k, v) in o {
                walk(v, &join(k), out);
            }
        }
        Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
            for (i, v) in a.iter().enumerate() {
                walk(v, &join(&i.to_string()), out);
            }
        }
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(scalar).collect();
            out.insert(key.to_string(), parts.join(","));
        }
        v => {
            if !key.is_empty() {
                out.insert(key.to_string(), scalar(v));
            }
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        v => v.to_string(),
    }
}

/// Where a fact comes in the list: the ones that move every figure first.
fn rank(key: &str) -> u8 {
    let under = |p: &str| key.starts_with(&format!("{p}."));
    match key {
        "kernel.release" => 0,
        "kernel.cmdline" => 1,
        "kernel.version" => 2,
        _ if under("kernel") => 3,
        "cpu.model" => 4,
        "cpu.online_count" => 5,
        _ if under("cpu") => 6,
        "lsm.modules" => 7,
        _ if under("lsm") => 8,
        _ if under("mitigations") || key == "mitigations" => 9,
        "secperf_version" => 10,
        _ => 11,
    }
}

/// The facts of the columns' probe snapshots that take more than one
/// value across hosts (a fact one snapshot lacks counts as a value).
fn differences(docs: &[&RunDoc]) -> Vec<Difference> {
    if docs.len() < 2 {
        return Vec::new();
    }
    let flat: Vec<BTreeMap<String, String>> = docs
        .iter()
        .map(|d| {
            let mut f = flatten(&d.meta.system);
            f.retain(|k, _| !volatile(k));
            f.entry("secperf_version".into())
                .or_insert_with(|| d.meta.secperf_version.clone());
            f
        })
        .collect();
    let keys: BTreeSet<&String> = flat.iter().flat_map(|f| f.keys()).collect();
    let mut out: Vec<Difference> = keys
        .into_iter()
        .filter_map(|k| {
            let values: Vec<Option<String>> = flat.iter().map(|f| f.get(k).cloned()).collect();
            let distinct: BTreeSet<&Option<String>> = values.iter().collect();
            (distinct.len() > 1).then(|| Difference {
                key: k.clone(),
                values,
            })
        })
        .collect();
    out.sort_by(|a, b| (rank(&a.key), &a.key).cmp(&(rank(&b.key), &b.key)));
    out
}

/// "297.5 ns [296.0, 299.1]": a median and its interval in one unit.
pub fn ns_interval(median: f64, lo: f64, hi: f64) -> String {
    let (div, unit, digits) = number::ns_scale(median);
    let f = |x: f64| {
        if x.is_finite() {
            format!("{:.digits$}", x / div)
        } else {
            "?".into()
        }
    };
    format!("{} {unit} [{}, {}]", f(median), f(lo), f(hi))
}

/// A cell's figure on one line: "+12.3% [8.0, 26.8] *" or
/// "297.5 ns [296.0, 299.1]".
pub fn cell_text(kind: ItemKind, c: &HostCell) -> String {
    match kind {
        ItemKind::Comparison => number::change(
            c.estimate,
            c.ci_low,
            c.ci_high,
            c.verdict.unwrap_or(Verdict::NoChange),
        ),
        ItemKind::Result => ns_interval(c.estimate, c.ci_low, c.ci_high),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Campaign runs built in memory, shared with the HTML page's tests.

    use std::path::PathBuf;

    use serde_json::json;

    use crate::model::testing::{comparison, result, run};
    use crate::model::{CampaignTag, Summary};
    use crate::report::doc::RunDoc;
    use crate::stats::decision::Verdict;

    /// A finished run of campaign `id` on `host` with kernel `kernel`,
    /// holding the comparisons `(workload, overhead %, verdict)` and the
    /// results `(workload, ns/op)`.
    pub fn doc(
        id: &str,
        host: &str,
        run_id: i64,
        kernel: &str,
        comparisons: &[(&str, f64, Verdict)],
        results: &[(&str, f64)],
    ) -> RunDoc {
        let results = results
            .iter()
            .map(|&(w, ns)| {
                let mut r = result(w, &[ns, ns * 1.01, ns * 0.99]);
                r.ns_per_op = Summary {
                    median: ns,
                    ci_low: ns * 0.99,
                    ci_high: ns * 1.01,
                };
                r.ops_per_sec = Summary {
                    median: 1e9 / ns,
                    ci_low: 1e9 / ns / 1.01,
                    ci_high: 1e9 / ns / 0.99,
                };
                r
            })
            .collect();
        let mut stored = run(run_id, "", kernel, results);
        stored.meta.host = format!("{host}.example.org");
        stored.meta.system = json!({
            "secperf_version": "0.1.0",
            "probed_at": format!("2026-01-0{}T00:00:00Z", run_id % 9 + 1),
            "kernel": {"release": kernel, "machine": "x86_64", "cmdline": "quiet"},
            "cpu": {"model": "AMD EPYC 7763 64-Core Processor", "online_count": 4},
            "lsm": {"modules": ["capability", "landlock"], "source": "syscall"},
            "mitigations": {"spectre_v2": "Mitigation: Retpolines", "mds": "Not affected"},
            "audit": {"enabled": 0, "backlog": run_id, "auditd_pid": run_id * 100},
        });
        stored.comparisons = comparisons
            .iter()
            .map(|&(w, pct, v)| {
                let mut c = comparison(w, "seccomp", "allow");
                c.pairs = 20;
                c.baseline_per_op = 300.0;
                c.treatment_per_op = 300.0 + 3.0 * pct;
                c.overhead_pct.estimate = pct;
                c.overhead_pct.ci_low = pct - 2.0;
                c.overhead_pct.ci_high = pct + 2.0;
                c.overhead_pct.p_value = 0.01;
                c.overhead_pct.verdict = v;
                c
            })
            .collect();
        stored.campaign = Some(CampaignTag {
            id: id.into(),
            host: host.into(),
        });
        RunDoc::of(stored, PathBuf::from("/tmp/runs.db"))
    }

    /// Campaign "c1" on hosts alpha, beta, gamma: alpha and beta finished
    /// (beta on another kernel, without getpid's comparison), gamma did
    /// not.
    pub fn three_hosts() -> (Vec<String>, Vec<RunDoc>) {
        let hosts = ["alpha", "beta", "gamma"].map(String::from).to_vec();
        let docs = vec![
            doc(
                "c1",
                "alpha",
                3,
                "6.18.0",
                &[
                    ("getppid", 12.0, Verdict::Slower),
                    ("getpid", 0.3, Verdict::NoChange),
                ],
                &[("getppid", 297.5)],
            ),
            doc(
                "c1",
                "beta",
                4,
                "6.19.1",
                &[("getppid", -4.0, Verdict::Faster)],
                &[("getppid", 45_000.0)],
            ),
        ];
        (hosts, docs)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{doc, three_hosts};
    use super::*;

    fn item<'a>(v: &'a CampaignView, label: &str) -> &'a Item {
        v.items
            .iter()
            .find(|i| i.label == label)
            .unwrap_or_else(|| panic!("no item {label}: {:#?}", v.items))
    }

    #[test]
    fn items_are_aligned_by_label_across_hosts() {
        let (hosts, docs) = three_hosts();
        let v = view("c1", &hosts, &docs);
        let names: Vec<&str> = v.hosts.iter().map(|h| h.host.as_str()).collect();
        assert_eq!(names, ["alpha", "beta"]);
        assert_eq!(v.hosts[0].run_id, 3);
        assert_eq!(v.hosts[1].kernel.as_deref(), Some("6.19.1"));
        assert_eq!(v.hosts[0].cpu.as_deref(), Some("AMD EPYC 7763"));
        assert_eq!(v.items.len(), 3, "{:#?}", v.items);

        let getppid = item(&v, "seccomp:allow on getppid tasks=1");
        assert_eq!(getppid.kind, ItemKind::Comparison);
        assert_eq!(getppid.unit, "%");
        let cells: Vec<f64> = getppid
            .cells
            .iter()
            .map(|c| c.as_ref().unwrap().estimate)
            .collect();
        assert_eq!(cells, [12.0, -4.0]);
        assert_eq!(
            getppid.cells[1].as_ref().unwrap().verdict,
            Some(Verdict::Faster)
        );

        let result = item(&v, "getppid tasks=1 mode=process");
        assert_eq!(result.kind, ItemKind::Result);
        assert_eq!(result.cells[0].as_ref().unwrap().estimate, 297.5);
        assert_eq!(result.cells[1].as_ref().unwrap().estimate, 45_000.0);
        assert!(result.cells[0].as_ref().unwrap().ops_per_sec.is_some());
    }

    #[test]
    fn a_host_lacking_an_item_gets_an_empty_cell() {
        let (hosts, docs) = three_hosts();
        let v = view("c1", &hosts, &docs);
        let getpid = item(&v, "seccomp:allow on getpid tasks=1");
        assert!(getpid.cells[0].is_some());
        assert!(getpid.cells[1].is_none());
    }

    #[test]
    fn a_host_without_a_finished_run_is_missing() {
        let (hosts, mut docs) = three_hosts();
        // An unfinished run of gamma, and a run of another campaign.
        let mut unfinished = doc("c1", "gamma", 5, "6.18.0", &[], &[("getppid", 1.0)]);
        unfinished.finished_at = None;
        docs.push(unfinished);
        docs.push(doc("c2", "gamma", 6, "6.18.0", &[], &[("getppid", 1.0)]));
        let v = view("c1", &hosts, &docs);
        assert_eq!(v.missing, ["gamma"]);
        assert_eq!(v.hosts.len(), 2);
    }

    #[test]
    fn the_latest_run_of_a_host_counts() {
        let (hosts, mut docs) = three_hosts();
        docs.push(doc(
            "c1",
            "alpha",
            9,
            "6.18.0",
            &[("getppid", 20.0, Verdict::Slower)],
            &[],
        ));
        let v = view("c1", &hosts, &docs);
        assert_eq!(v.hosts[0].run_id, 9);
        let getppid = item(&v, "seccomp:allow on getppid tasks=1");
        assert_eq!(getppid.cells[0].as_ref().unwrap().estimate, 20.0);
    }

    #[test]
    fn differences_name_what_differs_and_only_that() {
        let (hosts, mut docs) = three_hosts();
        docs[1].meta.system["mitigations"]["spectre_v2"] = "Vulnerable".into();
        let v = view("c1", &hosts, &docs);
        let keys: Vec<&str> = v.differences.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(
            keys,
            ["kernel.release", "mitigations.spectre_v2"],
            "{keys:?}"
        );
        let kernel = &v.differences[0];
        assert_eq!(
            kernel.values,
            [Some("6.18.0".to_string()), Some("6.19.1".to_string())]
        );
        // Equal facts (cpu, LSMs, command line) and volatile ones (probe
        // time, audit backlog, auditd pid) are not differences.
        for k in [
            "cpu.model",
            "lsm.modules",
            "kernel.cmdline",
            "probed_at",
            "audit.backlog",
        ] {
            assert!(!keys.contains(&k), "{k}");
        }
    }

    #[test]
    fn flattening_keeps_unread_items_and_lists_whole() {
        let f = flatten(&serde_json::json!({
            "lsm": {"modules": ["capability", "bpf"]},
            "lockdown": {"unavailable": "securityfs not mounted"},
            "x": [{"a": 1}, {"a": null}],
        }));
        assert_eq!(f["lsm.modules"], "capability,bpf");
        assert_eq!(f["lockdown"], "unavailable: securityfs not mounted");
        assert_eq!(f["x.0.a"], "1");
        assert_eq!(f["x.1.a"], "none");
        assert_eq!(f.len(), 4);
    }

    #[test]
    fn cpu_models_are_shortened() {
        assert_eq!(
            short_cpu("Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz"),
            "Intel Core i7-8650U"
        );
        assert_eq!(
            short_cpu("AMD EPYC 7763 64-Core Processor"),
            "AMD EPYC 7763"
        );
        assert_eq!(short_cpu("AMD EPYC"), "AMD EPYC");
        assert_eq!(
            ns_interval(45_000.0, 44_000.0, 46_000.0),
            "45.00 us [44.00, 46.00]"
        );
    }
}
