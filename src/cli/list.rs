//! `secperf list`: the workload catalog, driven by the one table.

use anyhow::Result;
use serde::Serialize;

use crate::workloads::{ParamDef, WORKLOADS};

#[derive(Serialize)]
struct WorkloadInfo {
    name: &'static str,
    description: &'static str,
    hooks: &'static [&'static str],
    params: &'static [ParamDef],
    /// Secondary unit reported per second besides operations, if any.
    unit: Option<&'static str>,
}

#[derive(Serialize)]
struct Listing {
    workloads: Vec<WorkloadInfo>,
}

pub fn list(json: bool) -> Result<()> {
    let listing = Listing {
        workloads: WORKLOADS
            .iter()
            .map(|w| WorkloadInfo {
                name: w.name,
                description: w.description,
                hooks: w.hooks,
                params: w.params,
                unit: w.unit,
            })
            .collect(),
    };
    if json {
        return super::print_json(&listing);
    }
    let mut t = crate::report::table::new_table(&[
        "workload",
        "one operation",
        "security hooks reached",
        "parameters (default)",
    ]);
    for w in &listing.workloads {
        let params: Vec<String> = w
            .params
            .iter()
            .map(|p| format!("{}={}: {}", p.name, p.default, p.help))
            .collect();
        t.add_row(vec![
            w.name.to_string(),
            w.description.to_string(),
            w.hooks.join(", "),
            params.join("\n"),
        ]);
    }
    println!("{t}");
    println!("Set parameters with --param WORKLOAD.KEY=VALUE (e.g. --param open.depth=8).");
    Ok(())
}
