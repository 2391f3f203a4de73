//! A run measured in a VM guest (`--vm`): the VM and the kernel it booted
//! (release, command line, build id), what secperf prepared in it, and,
//! under emulation, the warning every figure of such a run carries. Shown
//! in every view, since it changes what every figure means.

use super::super::doc::RunDoc;
use super::super::markup::Markup;
use crate::vm::{Accel, VmFacts};

/// The warning line of an emulated run, or None; for counted
/// instructions (icount), the note that every figure is a count.
pub fn emulated_warning(doc: &RunDoc) -> Option<String> {
    let facts = VmFacts::of(&doc.meta.system)?;
    if facts.icount.is_some() {
        return Some(crate::vm::ICOUNT_NOTE.to_string());
    }
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
    if let Some(q) = &facts.icount {
        items.push(format!(
            "instructions counted by {} with {}",
            q.version, q.options
        ));
    }
    items.extend(g.prepared.iter().cloned());
    items.extend(facts.stamps.as_ref().and_then(crate::vm::Stamps::note));
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
        if let Some(b) = &arm.build {
            items.extend(build_lines(&arm.name, b));
        }
    }
    m.list(&items);
    layout_control(doc, m);
}

/// What an arm built from source was built from.
pub fn build_lines(name: &str, b: &crate::kbuild::BuildRecord) -> Vec<String> {
    let mut from = b.source.display().to_string();
    if let Some(c) = &b.identity.commit {
        from.push_str(&format!(
            " at {} ({})",
            &c[..c.len().min(12)],
            b.identity.subject.as_deref().unwrap_or("")
        ));
    } else {
        from.push_str(&format!(
            " ({})",
            &b.identity.id[..b.identity.id.len().min(19)]
        ));
    }
    for p in &b.patches {
        from.push_str(&format!(
            " + {} (sha256 {})",
            p.path.display(),
            &p.sha256[..p.sha256.len().min(12)]
        ));
    }
    if let Some((p, _)) = &b.fragment {
        from.push_str(&format!(" + config {}", p.display()));
    }
    if let Some(l) = &b.layout {
        from.push_str(&format!(
            " + the layout control's inert padding ({} bytes of no-ops in a function nothing \
             calls, in {})",
            l.pad_bytes, l.file
        ));
    }
    let mut out = vec![
        format!("{name} built from {from}"),
        format!(
            "{name} build {}: .config sha256 {}, {}; {}",
            b.key,
            &b.config_sha256[..b.config_sha256.len().min(12)],
            b.toolchain,
            if b.cached {
                format!("from the cache (built {}, {:.0} s)", b.built_at, b.build_s)
            } else {
                format!(
                    "built in this run in {:.0} s ({} files compiled)",
                    b.build_s, b.compiled_files
                )
            }
        ),
    ];
    for d in &b.dropped {
        out.push(format!("{name} config: {}", d.line()));
    }
    out
}

/// With the layout control: each workload's change beside the change an
/// inert rebuild of the baseline made.
fn layout_control(doc: &RunDoc, m: &mut dyn Markup) {
    let Some((text, items)) = layout_lines(doc) else {
        return;
    };
    m.heading("Layout control");
    m.text(&text);
    m.list(&items);
}

/// The layout control's explanation and its lines (one per workload: the
/// patch's change, then the layout arm's), or None without one.
pub fn layout_lines(doc: &RunDoc) -> Option<(String, Vec<String>)> {
    let layout = doc.boot_arms.iter().find(|a| a.role == "layout control")?;
    let treatment = doc.boot_arms.get(1)?;
    let base = &doc.boot_arms[0].name;
    let text = format!(
        "Arm '{}' is '{base}' rebuilt with an inert change that moves the code linked after \
         it. A change of '{}' no larger than the layout control's may be code layout, not \
         what the patch changed (docs/methodology.md, \"A control for code layout\").",
        layout.name, treatment.name
    );
    let pct = |c: &crate::model::Comparison| {
        let o = &c.overhead_pct;
        format!(
            "{:+.1}% [{:+.1}, {:+.1}] {}",
            o.estimate, o.ci_low, o.ci_high, o.verdict
        )
    };
    let mut items = Vec::new();
    for c in doc
        .comparisons
        .iter()
        .filter(|c| c.variant == treatment.name)
    {
        let what = crate::report::label::workload(&c.workload, &c.workload_params);
        let twin = doc.comparisons.iter().find(|l| {
            l.variant == layout.name
                && l.workload == c.workload
                && l.workload_params == c.workload_params
                && l.tasks == c.tasks
        });
        items.push(format!(
            "{what} tasks={}: {} {}; {} (layout control) {}",
            c.tasks,
            treatment.name,
            pct(c),
            layout.name,
            twin.map_or("not measured".to_string(), pct)
        ));
    }
    Some((text, items))
}
