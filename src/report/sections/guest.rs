//! A run measured in a VM guest (`--vm`): the VM and the kernel it booted
//! (release, command line, build id), what secperf prepared in it, and,
//! under emulation, the warning every figure of such a run carries. Shown
//! in every view, since it changes what every figure means.

use super::super::doc::RunDoc;
use super::super::markup::Markup;
use crate::vm::{Accel, VmFacts};

/// The warning line of an emulated run, or None.
pub fn emulated_warning(doc: &RunDoc) -> Option<String> {
    let facts = VmFacts::of(&doc.meta.system)?;
    (facts.accel == Accel::Emulated).then(crate::vm::emulated_warning)
}

/// The data formats' `vm_accel` field of every figure: `emulated` or
/// `kvm` for a run measured in a VM guest, empty on the host.
pub fn accel_field(doc: &RunDoc) -> crate::report::markup::Raw {
    match VmFacts::of(&doc.meta.system) {
        Some(f) => crate::report::markup::Raw::Text(f.accel.to_string()),
        None => crate::report::markup::Raw::Empty,
    }
}

pub fn guest(doc: &RunDoc, m: &mut dyn Markup) {
    if !doc.boot_arms.is_empty() {
        return boot_arms(doc, m);
    }
    let Some(facts) = VmFacts::of(&doc.meta.system) else {
        return;
    };
    m.heading("VM guest");
    if let Some(w) = emulated_warning(doc) {
        m.text(&w);
    }
    let mut items = vec![facts.line()];
    let g = &facts.guest;
    items.push(format!(
        "guest kernel {}, command line (virtme-ng's own words left out): {}",
        g.release.as_deref().unwrap_or("?"),
        g.cmdline
            .as_deref()
            .map_or("?".into(), crate::vm::guest::chosen_words)
    ));
    if !facts.append.is_empty() {
        items.push(format!("added by secperf and append=: {}", facts.append));
    }
    items.push(format!(
        "the guest took {:.1} s, boot included",
        facts.wall_s
    ));
    items.extend(g.prepared.iter().cloned());
    m.list(&items);
}

/// A kernel A/B across boots: each arm's image, release and command line,
/// and its boots.
fn boot_arms(doc: &RunDoc, m: &mut dyn Markup) {
    m.heading("Kernel A/B across boots");
    if let Some(w) = emulated_warning(doc) {
        m.text(&w);
    }
    let mut items = Vec::new();
    for arm in &doc.boot_arms {
        let first = arm.boots.first();
        let g = first.map(|f| &f.guest);
        let boot_s: Vec<f64> = arm.boots.iter().filter_map(|b| b.boot_s).collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        items.push(format!(
            "{} ({}): {}{}, kernel {}, {} boots of {:.1} s to boot and {:.1} s in all on average",
            arm.name,
            arm.role,
            arm.spec.image.display(),
            g.and_then(|g| g.build_id.as_deref())
                .map(|id| format!(" (build id {})", &id[..id.len().min(12)]))
                .unwrap_or_default(),
            g.and_then(|g| g.release.as_deref()).unwrap_or("?"),
            arm.boots.len(),
            mean(&boot_s),
            mean(&arm.boots.iter().map(|b| b.wall_s).collect::<Vec<_>>()),
        ));
        items.push(format!(
            "{} command line (virtme-ng's own words left out): {}",
            arm.name,
            g.and_then(|g| g.cmdline.as_deref())
                .map_or("?".into(), crate::vm::guest::chosen_words)
        ));
        if let Some(f) = first {
            items.push(format!(
                "{} VM: {}, {} vCPUs, {}",
                arm.name, f.accel, f.vcpus, f.memory
            ));
            for p in &f.guest.prepared {
                items.push(format!("{} (every boot): {p}", arm.name));
            }
        }
    }
    m.list(&items);
}
