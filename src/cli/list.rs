//! `secperf list`: the workload catalog, driven by the one table.

use anyhow::Result;
use serde::Serialize;

use crate::mechanisms::{Availability, MECHANISMS, Scope, VariantDef};
use crate::params::ParamDef;
use crate::workloads::WORKLOADS;

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
struct MechanismInfo {
    name: &'static str,
    description: &'static str,
    scope: Scope,
    /// The first is the default.
    variants: &'static [VariantDef],
    params: &'static [ParamDef],
    survey_workloads: &'static [&'static str],
    survey_variants: &'static [&'static str],
    /// Whether it can be measured here, now, by this user.
    availability: Availability,
}

#[derive(Serialize)]
struct Listing {
    workloads: Vec<WorkloadInfo>,
    mechanisms: Vec<MechanismInfo>,
}

/// `list`'s options.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Mechanisms whose LSM the guest of --vm should boot with (selinux,
    /// apparmor, bpf-lsm: the lsm= that `overhead --vm ... -m NAME` adds).
    #[arg(short, long = "mechanism", value_name = "NAME")]
    pub mechanisms: Vec<String>,

    #[command(flatten)]
    pub vm: super::vm::VmArgs,
}

pub fn list(args: ListArgs, db: Option<&std::path::Path>, json: bool) -> Result<()> {
    if args.vm.vm.is_some() {
        return super::vm::relay(
            &args.vm,
            &args.mechanisms,
            db,
            false,
            super::vm::Show::GuestStdout {
                stores_run: false,
                json,
            },
        );
    }
    args.vm.resolve(false)?;
    // In the guest -m has done its work (the boot's lsm=).
    if !args.mechanisms.is_empty() && crate::vm::guest::shared_dir().is_none() {
        crate::usage_bail!("list -m NAME chooses the LSMs of a guest: add --vm IMAGE");
    }
    listing(json)
}

fn listing(json: bool) -> Result<()> {
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
        mechanisms: MECHANISMS
            .iter()
            .map(|m| MechanismInfo {
                name: m.name(),
                description: m.description(),
                scope: m.scope(),
                variants: m.variants(),
                params: m.params(),
                survey_workloads: m.survey_workloads(),
                survey_variants: m.survey_variants(),
                availability: m.probe(),
            })
            .collect(),
    };
    if json {
        return super::emit::print_json(&listing);
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
    super::emit::emit_fmt!("{t}");
    super::emit::emit_fmt!(
        "Set parameters with --param WORKLOAD.KEY=VALUE (e.g. --param open.depth=8).\n"
    );
    let mut t = crate::report::table::new_table(&[
        "mechanism",
        "scope",
        "variants (first = default)",
        "parameters (default)",
        "here",
    ]);
    for m in &listing.mechanisms {
        let variants: Vec<String> = m
            .variants
            .iter()
            .map(|v| format!("{}: {}", v.name, v.description))
            .collect();
        let params: Vec<String> = m
            .params
            .iter()
            .map(|p| format!("{}={}: {}", p.name, p.default, p.help))
            .collect();
        let here = match &m.availability {
            Availability::Available => "available".to_string(),
            Availability::Unavailable(r) => format!("unavailable: {r}"),
        };
        let scope = match m.scope {
            Scope::Worker => "in each task",
            Scope::System => "system-wide",
        };
        t.add_row(vec![
            m.name.to_string(),
            scope.to_string(),
            variants.join("\n"),
            params.join("\n"),
            here,
        ]);
    }
    super::emit::emit_fmt!("{t}");
    super::emit::emit_fmt!("Measure one with `secperf overhead -m NAME[:VARIANT][,KEY=VALUE...]`.");
    Ok(())
}
