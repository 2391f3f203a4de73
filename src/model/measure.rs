//! What a comparison's figures measure: a [`Measure`] is a name, a unit, a
//! direction (whether a larger value is better) and what one value is per
//! (an operation or a run). Time and counted instructions are measures
//! per operation, lower better; a load client's figures (requests/s,
//! latency) and a server's CPU per client run are measures per run. All
//! of them go through the same paired statistics, the same decision and
//! the same rendering: a comparison's verdict is on its own measure (the
//! run's `--metric`) and the others are shown beside it, each decided the
//! same way.
//!
//! A comparison stored before measures existed measured time.

use serde::{Deserialize, Serialize};

use super::Metric;

/// What one value of a measure is per.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, strum::Display)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Per {
    /// One operation of the workload (a syscall, a command's run).
    #[default]
    Op,
    /// One run of a load client (`service`).
    Run,
}

/// A measure: what a figure counts, in what unit, which way is better.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredMeasure")]
pub struct Measure {
    /// "time", "instructions", or a client's figure with its unit in its
    /// name ("SET.requests_per_sec", "latency_p99_ms",
    /// "server.cpu_ms_per_run").
    pub name: String,
    /// "ns", "insns", "requests/s", "ms"; empty when the name says none.
    pub unit: String,
    /// A larger value is better (throughput); else worse (time, latency).
    pub higher_is_better: bool,
    pub per: Per,
}

impl Default for Measure {
    fn default() -> Measure {
        Measure::of(Metric::Time)
    }
}

impl Measure {
    /// A run's metric as a measure per operation, lower better.
    pub fn of(metric: Metric) -> Measure {
        let unit = match metric {
            Metric::Time => "ns",
            Metric::Instructions => "insns",
        };
        Measure {
            name: metric.to_string(),
            unit: unit.to_string(),
            higher_is_better: false,
            per: Per::Op,
        }
    }

    /// A figure reported per client run, its unit read from its name.
    pub fn per_run(name: impl Into<String>, higher_is_better: bool) -> Measure {
        let name = name.into();
        Measure {
            unit: unit_of(&name).to_string(),
            name,
            higher_is_better,
            per: Per::Run,
        }
    }

    /// The run metric this measure is, if it is one (time, instructions).
    pub fn metric(&self) -> Option<Metric> {
        match (self.name.as_str(), self.per) {
            ("time", Per::Op) => Some(Metric::Time),
            ("instructions", Per::Op) => Some(Metric::Instructions),
            _ => None,
        }
    }
}

/// A figure's unit from its name's suffix: `_per_sec` is per second,
/// `_ms` or `_ms_per_run` milliseconds.
fn unit_of(name: &str) -> &'static str {
    let leaf = name.rsplit('.').next().unwrap_or(name);
    if leaf.ends_with("_per_sec") {
        "/s"
    } else if leaf.ends_with("_ms") || leaf.contains("_ms_") {
        "ms"
    } else {
        ""
    }
}

/// A [`Measure`] as stored: a client figure stored before measures
/// existed had only its name and direction, and is per run.
#[derive(Deserialize)]
struct StoredMeasure {
    name: String,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    higher_is_better: bool,
    #[serde(default)]
    per: Option<Per>,
}

impl From<StoredMeasure> for Measure {
    fn from(s: StoredMeasure) -> Measure {
        let per = s.per.unwrap_or(Per::Run);
        let unit = s.unit.unwrap_or_else(|| {
            match (s.name.as_str(), per) {
                ("time", Per::Op) => "ns",
                ("instructions", Per::Op) => "insns",
                _ => unit_of(&s.name),
            }
            .to_string()
        });
        Measure {
            name: s.name,
            unit,
            higher_is_better: s.higher_is_better,
            per,
        }
    }
}

/// One value of a measure: what one half measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    #[serde(flatten)]
    pub measure: Measure,
    pub value: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_figure_stored_before_measures_is_per_run_with_its_unit() {
        let m: Measure =
            serde_json::from_str(r#"{"name": "SET.requests_per_sec", "higher_is_better": true}"#)
                .unwrap();
        assert_eq!(m, Measure::per_run("SET.requests_per_sec", true));
        assert_eq!(m.unit, "/s");
        assert_eq!(m.per, Per::Run);
        assert_eq!(Measure::per_run("server.cpu_ms_per_run", false).unit, "ms");
        assert_eq!(Measure::per_run("latency_p99_ms", false).unit, "ms");
    }

    #[test]
    fn metrics_round_trip_as_measures_per_operation() {
        for metric in [Metric::Time, Metric::Instructions] {
            let m = Measure::of(metric);
            let back: Measure = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
            assert_eq!(back, m);
            assert_eq!(back.metric(), Some(metric));
            assert!(!back.higher_is_better);
        }
        assert_eq!(Measure::default().metric(), Some(Metric::Time));
        assert_eq!(Measure::per_run("time", false).metric(), None);
    }
}
