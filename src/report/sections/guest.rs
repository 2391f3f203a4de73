//! A run measured in a VM guest (`--vm`): the VM and the kernel it booted
//! (release, command line, build id), what secperf prepared in it, and,
//! under emulation, the warning every figure of such a run carries. Shown
//! in every view, since it changes what every figure means.

use super::super::doc::RunDoc;
use super::super::markup::Markup;
use crate::vm::{Accel, EMULATED_NOTE, VmFacts};

/// The warning line of an emulated run, or None.
pub fn emulated_warning(doc: &RunDoc) -> Option<String> {
    let facts = VmFacts::of(&doc.meta.system)?;
    (facts.accel == Accel::Emulated).then(|| {
        format!("Measured in a VM guest under QEMU's emulation, without KVM: {EMULATED_NOTE}.")
    })
}

pub fn guest(doc: &RunDoc, m: &mut dyn Markup) {
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
        "guest kernel {}, command line: {}",
        g.release.as_deref().unwrap_or("?"),
        g.cmdline.as_deref().unwrap_or("?")
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
