//! TEMPORARY integration stub; replaced by the safety helper's module.
use crate::mechanisms::{Arm, SystemEnv, Treatment};
use std::path::PathBuf;
pub fn state_dir() -> PathBuf {
    PathBuf::from("/run/secperf")
}
pub struct StateLock;
impl StateLock {
    pub fn acquire(_wait: std::time::Duration) -> anyhow::Result<StateLock> {
        Ok(StateLock)
    }
    pub fn apply<'a>(
        &'a self,
        t: &Treatment,
        arm: Arm,
        env: &SystemEnv,
    ) -> anyhow::Result<Applied<'a>> {
        let snapshot = t.mechanism.snapshot()?;
        t.mechanism.apply_system(t, arm, env)?;
        Ok(Applied {
            _lock: self,
            t: t.clone(),
            snapshot: Some(snapshot),
        })
    }
}
pub struct Applied<'a> {
    _lock: &'a StateLock,
    t: Treatment,
    snapshot: Option<serde_json::Value>,
}
impl Applied<'_> {
    pub fn restore(mut self) -> anyhow::Result<()> {
        let s = self.snapshot.take().unwrap();
        self.t.mechanism.restore(&s)
    }
}
impl Drop for Applied<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.snapshot.take() {
            let _ = self.t.mechanism.restore(&s);
        }
    }
}
pub fn recover_at_start() -> anyhow::Result<Vec<String>> {
    Ok(vec![])
}
pub fn restore_command(_json: bool) -> anyhow::Result<()> {
    Ok(())
}
