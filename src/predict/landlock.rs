//! The Landlock cost model. Landlock adds work only where it has a hook:
//! opening a file (`file_open`, also the executable an `execve` opens),
//! and changing the tree (make, remove, rename, link, truncate, a device
//! ioctl). Each such check walks from the file up its path through the
//! ruleset (`is_access_to_paths_allowed`), so it costs about what it costs
//! `openat` at the same depth: probe 0 is the treatment itself on the
//! `open` workload (an `openat` and a `close` per operation; `close` has
//! no Landlock hook), charged to every hooked call. Every other call
//! (`read`, `stat`, `mmap`, ...) costs nothing: there is no hook on its
//! path, which secperf's own survey shows (`getppid`, `stat`: no
//! difference detected).

use anyhow::Result;

use super::model::{CallCost, ModelPlan, Probe};
use crate::mechanisms::Treatment;

/// Calls whose path goes through a Landlock filesystem hook.
const HOOKED: &[&str] = &[
    "open",
    "openat",
    "openat2",
    "creat",
    "execve",
    "execveat",
    "truncate",
    "ftruncate",
    "mkdir",
    "mkdirat",
    "mknod",
    "mknodat",
    "unlink",
    "unlinkat",
    "rmdir",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "ioctl",
];

/// Calls whose path goes through a Landlock network hook (when the
/// treatment handles ports: `bind=` or `connect=`).
const NET: &[&str] = &["bind", "connect"];

pub fn plan(t: &Treatment) -> Result<ModelPlan> {
    let spec = t.to_string();
    let net = ["bind", "connect"]
        .iter()
        .any(|k| t.params.get(*k).is_some_and(|v| !v.is_empty()));
    let depth = crate::workloads::find("open")
        .map(|w| w.params_with_defaults(&Default::default()))
        .and_then(|p| p.get("depth").cloned())
        .unwrap_or_default();
    let probes = vec![Probe {
        spec: spec.clone(),
        workload: "open".into(),
        role: format!("an openat {depth} directories below a ruled one, and its close"),
    }];
    let mut notes = vec![format!(
        "a hooked call is charged what the sandbox costs openat {depth} directories below a \
         ruled directory; deeper paths cost more (measure yours: overhead -m {spec} -w open \
         --sweep open.depth=2,8,16)"
    )];
    if net {
        notes.push(
            "bind and connect go through Landlock's network hooks, which this model does not \
             measure: they are charged nothing"
                .into(),
        );
    }
    let classify = move |_nr: u32, name: &str| -> CallCost {
        let (class, weight) = if HOOKED.contains(&name) {
            ("filesystem hook", 1.0)
        } else if net && NET.contains(&name) {
            ("network hook (not modelled)", 0.0)
        } else {
            ("no Landlock hook", 0.0)
        };
        CallCost {
            class: class.into(),
            weights: vec![weight],
            denied: false,
        }
    };
    Ok(ModelPlan {
        model: format!(
            "ns per call = what {spec} costs an openat (open workload) for the calls with a \
             Landlock filesystem hook, 0 for the others"
        ),
        spec,
        probes,
        notes,
        cold: None,
        classify: Box::new(classify),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hooked_calls_pay() {
        let p = plan(&Treatment::parse("landlock").unwrap()).unwrap();
        assert_eq!(p.probes[0].workload, "open");
        assert_eq!((p.classify)(0, "openat").weights, vec![1.0]);
        assert_eq!((p.classify)(0, "newfstatat").weights, vec![0.0]);
        assert_eq!((p.classify)(0, "read").class, "no Landlock hook");
    }
}
