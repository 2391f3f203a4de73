//! How workloads, treatments and comparisons are named in every output:
//! one builder, so a comparison reads the same in the progress lines, the
//! tables of every format, the HTML page, the negative control and the
//! sweeps ("seccomp:args,filters=4 on open depth=16 tasks=1").
//!
//! A workload shows the parameters that differ from its defaults (`open
//! depth=16`; plain `open` at the default depth), and `command` shows its
//! command line instead of its name.

use crate::model::{Comparison, Params};

/// A workload with the parameters that differ from its defaults:
/// "open depth=16", "getppid", "dd if=/dev/zero of=/dev/null".
pub fn workload(name: &str, params: &Params) -> String {
    let mut label = crate::workloads::label(name, params);
    for p in non_default_params(name, params) {
        label.push(' ');
        label.push_str(&p);
    }
    label
}

/// `key=value` for each parameter that differs from the workload's
/// default (every parameter of a workload not in the catalog; none of a
/// command's, whose label is its command line).
pub fn non_default_params(name: &str, params: &Params) -> Vec<String> {
    if name == crate::workloads::command::NAME || name == crate::workloads::service::NAME {
        return Vec::new();
    }
    let defs = crate::workloads::find(name)
        .map(|w| w.params)
        .unwrap_or(&[]);
    params
        .iter()
        .filter(|(k, v)| {
            defs.iter()
                .find(|d| d.name == k.as_str())
                .is_none_or(|d| d.default != v.as_str())
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

/// `k=v;k=v`, every parameter (defaults included), for the data formats.
pub fn params_field(params: &Params) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// The treatment of a comparison as it was given: "seccomp:args,filters=4".
pub fn treatment(c: &Comparison) -> String {
    crate::mechanisms::label_of(c)
}

/// "TREATMENT on WORKLOAD tasks=N", from its parts.
pub fn case(treatment: &str, workload: &str, tasks: u32) -> String {
    format!("{treatment} on {workload} tasks={tasks}")
}

/// A comparison: "seccomp:args,filters=4 on open depth=16 tasks=1".
pub fn comparison(c: &Comparison) -> String {
    case(
        &treatment(c),
        &workload(&c.workload, &c.workload_params),
        c.tasks,
    )
}

/// A negative-control comparison: its treatment, with " tasks=N" beyond
/// one task (the workload is always the control workload).
pub fn control(c: &Comparison) -> String {
    let label = treatment(c);
    if c.tasks == 1 {
        label
    } else {
        format!("{label} tasks={}", c.tasks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::comparison as cmp;

    #[test]
    fn workloads_show_only_what_differs_from_the_defaults() {
        let open = crate::workloads::find("open").unwrap();
        let defaults = open.params_with_defaults(&Params::new());
        assert_eq!(workload("open", &defaults), "open");
        let mut deep = defaults.clone();
        deep.insert("depth".into(), "16".into());
        assert_eq!(workload("open", &deep), "open depth=16");
        let mut odd = Params::new();
        odd.insert("x".into(), "1".into());
        assert_eq!(workload("not-in-catalog", &odd), "not-in-catalog x=1");
    }

    #[test]
    fn comparisons_are_named_once() {
        let mut c = cmp("open", "seccomp", "args");
        c.workload_params.insert("depth".into(), "16".into());
        c.tasks = 2;
        assert_eq!(comparison(&c), "seccomp:args on open depth=16 tasks=2");
        assert_eq!(control(&c), "seccomp:args tasks=2");
        c.tasks = 1;
        assert_eq!(control(&c), "seccomp:args");
    }
}
