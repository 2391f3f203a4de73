//! Choosing from the catalog by name: a `-w` list, and `--param` values
//! overlaid on the chosen workloads' defaults. Every unknown name or key is
//! a usage error that lists what is valid.

use std::collections::BTreeMap;

use anyhow::Result;

use super::{WORKLOADS, WorkloadDef, find, names};
use crate::model::Params;
use crate::usage_bail;

/// Parses `-w`.
pub fn parse_list(spec: &str) -> Result<Vec<&'static WorkloadDef>> {
    if spec.trim() == "all" {
        return Ok(WORKLOADS.iter().filter(|w| w.in_all).collect());
    }
    let mut out: Vec<&'static WorkloadDef> = Vec::new();
    for name in spec.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let Some(def) = find(name) else {
            // `open:depth=0` or `open,depth=0`: parameters go with -p.
            if let Some((w, kv)) = name.split_once([':', '.'])
                && find(w).is_some()
            {
                usage_bail!(
                    "-w {name}: a workload's parameters go with -p: -w {w} -p {w}.{kv} \
                     (`secperf list` shows them)"
                );
            }
            usage_bail!(
                "unknown workload '{name}'{} (valid: {}, or all)",
                crate::params::did_you_mean(name, WORKLOADS.iter().map(|w| w.name)),
                names()
            );
        };
        if !out.iter().any(|d| d.name == def.name) {
            out.push(def);
        }
    }
    if out.is_empty() {
        usage_bail!("no workload given (valid: {}, or all)", names());
    }
    Ok(out)
}

/// Applies `--param` to the selected workloads' defaults.
pub fn resolve_params(
    selected: &[&'static WorkloadDef],
    raw: &[String],
) -> Result<BTreeMap<String, Params>> {
    let mut given: BTreeMap<&str, Params> = Default::default();
    for p in raw {
        let Some((key, value)) = p.split_once('=') else {
            usage_bail!("--param '{p}': expected [WORKLOAD.]KEY=VALUE, e.g. open.depth=8");
        };
        let (target, key) = match key.split_once('.') {
            Some((w, k)) => (Some(w), k),
            None => (None, key),
        };
        let mut matched = false;
        for def in selected {
            if target.is_some_and(|t| t != def.name) {
                continue;
            }
            if def.params.iter().any(|d| d.name == key) {
                given
                    .entry(def.name)
                    .or_default()
                    .insert(key.to_string(), value.to_string());
                matched = true;
            } else if target.is_some() {
                let valid: Vec<&str> = def.params.iter().map(|d| d.name).collect();
                usage_bail!(
                    "--param '{p}': workload {} has no parameter '{key}' (valid: {})",
                    def.name,
                    if valid.is_empty() {
                        "none".to_string()
                    } else {
                        valid.join(", ")
                    }
                );
            }
        }
        if !matched {
            match target {
                Some(t) if find(t).is_none() => {
                    usage_bail!("--param '{p}': unknown workload '{t}' (valid: {})", names())
                }
                Some(t) => usage_bail!("--param '{p}': workload {t} is not selected with -w"),
                None => usage_bail!(
                    "--param '{p}': no selected workload has a parameter '{key}' (see `secperf list`)"
                ),
            }
        }
    }
    let mut out = BTreeMap::new();
    for def in selected {
        let params = def.params_with_defaults(given.get(def.name).unwrap_or(&Params::new()));
        crate::params::check_numbers(def.params, &format!("workload {}", def.name), &params)?;
        (def.validate)(&params)?;
        out.insert(def.name.to_string(), params);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_selection() {
        // `all` leaves out the workloads that need a value (the command,
        // the service) and predict's cold probe.
        let all = parse_list("all").unwrap();
        assert_eq!(all.len(), WORKLOADS.len() - 3);
        assert!(
            all.iter()
                .all(|w| !["command", "service", "getppid_cold"].contains(&w.name))
        );
        let w = parse_list("open,getppid,open").unwrap();
        assert_eq!(
            w.iter().map(|d| d.name).collect::<Vec<_>>(),
            vec!["open", "getppid"]
        );
        let e = parse_list("getppid,nope").unwrap_err();
        assert!(e.to_string().contains("valid: getppid"), "{e}");
    }

    #[test]
    fn params_scoped_and_unscoped() {
        let sel = parse_list("open,stat,getppid").unwrap();
        let p = resolve_params(&sel, &["open.depth=8".into()]).unwrap();
        assert_eq!(p["open"]["depth"], "8");
        assert_eq!(p["stat"]["depth"], "4");
        let p = resolve_params(&sel, &["depth=2".into()]).unwrap();
        assert_eq!(
            (p["open"]["depth"].as_str(), p["stat"]["depth"].as_str()),
            ("2", "2")
        );
        for bad in [
            "depth",
            "open.nope=1",
            "nope.depth=1",
            "tree_walk.dirs=3",
            "colour=1",
            "open.depth=x",
        ] {
            let e = resolve_params(&sel, &[bad.into()]).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), 2, "{bad}: {e}");
        }
    }
}
