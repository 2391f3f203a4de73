//! Placeholder: being written (see helper task).
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SystemInfo {}

pub fn probe() -> SystemInfo {
    SystemInfo {}
}

pub fn render(_s: &SystemInfo) -> String {
    String::new()
}
