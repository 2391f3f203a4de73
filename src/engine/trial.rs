//! A command as the workload (`-- CMD`, or a server with its client): run
//! once before anything is measured, so that a command that fails is a
//! usage error before the first pair, and its time sizes the run's
//! estimate.

use anyhow::Result;

/// With a command as the workload: runs it once before anything is
/// measured (a failing command is a usage error with its exit status and
/// stderr tail), says how long it took, and returns its wall time in ms,
/// which stretches every slice it runs in. None without a command.
pub fn command_trial(
    params: &std::collections::BTreeMap<String, crate::model::Params>,
) -> Result<Option<f64>> {
    if let Some(p) = params.get(crate::workloads::service::NAME) {
        let label = crate::workloads::service::label(p).unwrap_or_default();
        if let Some(ms) = p.get("ready").and_then(|r| r.strip_prefix("delay:")) {
            crate::say!(
                "secperf: note: each half gives the server {ms} ms to start (--ready delay:{ms}); \
                 --ready tcp:PORT or unix:PATH starts the client as soon as it listens"
            );
        }
        crate::say!("secperf: a trial run of `{label}` (no mechanism) ...");
        let (wall_ms, metrics) = crate::workloads::service::trial(p)?;
        let figures: Vec<String> = metrics
            .iter()
            .take(4)
            .map(|m| format!("{} {}", m.name, m.value))
            .collect();
        crate::say!(
            "secperf: the client took {wall_ms:.1} ms on a trial run{}",
            if figures.is_empty() {
                String::new()
            } else {
                format!(
                    " ({}{})",
                    figures.join(", "),
                    if metrics.len() > 4 { ", ..." } else { "" }
                )
            }
        );
        return Ok(Some(wall_ms));
    }
    let Some(p) = params.get(crate::workloads::command::NAME) else {
        return Ok(None);
    };
    let argv = crate::workloads::command::argv_of(p)?;
    let t = crate::workloads::command::trial(p)?;
    crate::say!(
        "secperf: `{}` took {:.1} ms on a trial run (CPU: user {:.1} ms, sys {:.1} ms)",
        crate::workloads::command::shown(&argv),
        t.wall_ms,
        t.user_ms,
        t.sys_ms
    );
    Ok(Some(t.wall_ms))
}
