//! Parameters of workloads and mechanisms (`open.depth=8`,
//! `seccomp:args,filters=4`): their declarations, defaults and checks, with
//! one wording for every error. The ground floor: workloads and mechanisms
//! both import it, it imports nothing of secperf's but the usage error.

use std::collections::BTreeMap;

use anyhow::Result;

use crate::error::UsageError;

/// "; did you mean 'getppid'?" when one of `candidates` is close to
/// `input` (Jaro-Winkler similarity above 0.8, as clap suggests
/// subcommands), else "".
pub fn did_you_mean<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(input, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(String::new(), |(_, c)| format!("; did you mean '{c}'?"))
}

/// Parameter values as given on the command line (`depth=4`), after
/// defaults are filled in. Ordered so they print and hash the same way.
pub type Params = BTreeMap<String, String>;

/// A parameter a workload or mechanism accepts.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct ParamDef {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

impl ParamDef {
    /// Whether the parameter takes whole numbers (its default is one).
    pub fn is_numeric(&self) -> bool {
        self.default.parse::<u64>().is_ok()
    }
}

/// The effective parameters: every declared one, `given` overlaid on the
/// defaults. Unknown keys in `given` are the caller's to reject.
pub fn with_defaults(defs: &[ParamDef], given: &Params) -> Params {
    defs.iter()
        .map(|p| {
            let v = given
                .get(p.name)
                .cloned()
                .unwrap_or_else(|| p.default.to_string());
            (p.name.to_string(), v)
        })
        .collect()
}

/// The declaration of `key`, or a usage error naming `owner` ("workload
/// open", "mechanism seccomp") and the valid keys.
pub fn find<'a>(defs: &'a [ParamDef], owner: &str, key: &str) -> Result<&'a ParamDef> {
    defs.iter().find(|p| p.name == key).ok_or_else(|| {
        let valid: Vec<&str> = defs.iter().map(|p| p.name).collect();
        UsageError::new(format!(
            "{owner} has no parameter '{key}' (valid: {})",
            if valid.is_empty() {
                "none".to_string()
            } else {
                valid.join(", ")
            }
        ))
        .into()
    })
}

/// Checks that every numeric parameter of `params` is a whole number. A
/// negative one is left to the owner's range check ([`in_range`]), which
/// says what range is valid.
pub fn check_numbers(defs: &[ParamDef], owner: &str, params: &Params) -> Result<()> {
    for d in defs.iter().filter(|d| d.is_numeric()) {
        if let Some(v) = params.get(d.name) {
            if v.trim().parse::<i64>().is_ok_and(|n| n < 0) {
                continue;
            }
            u64_of(params, owner, d.name).map_err(|_| {
                UsageError::new(format!("{owner}: {}={v} is not a whole number", d.name))
            })?;
        }
    }
    Ok(())
}

/// Reads a numeric parameter, with an error naming the owner and key.
pub fn u64_of(params: &Params, owner: &str, key: &str) -> Result<u64> {
    let raw = params
        .get(key)
        .ok_or_else(|| anyhow::anyhow!("{owner}: parameter {key} missing"))?;
    raw.trim()
        .parse()
        .map_err(|_| UsageError::new(format!("{owner}: {key}={raw} is not a whole number")).into())
}

/// A numeric parameter that must lie in `range`; otherwise a usage error
/// naming the owner, the key and the valid range.
pub fn in_range(
    params: &Params,
    owner: &str,
    key: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64> {
    let v = u64_of(params, owner, key).map_err(|e| match params.get(key) {
        Some(raw) => UsageError::new(format!(
            "{owner}: {key}={raw} is not a whole number from {} to {}",
            range.start(),
            range.end()
        ))
        .into(),
        None => e,
    })?;
    if !range.contains(&v) {
        crate::usage_bail!(
            "{owner}: {key}={v} is out of range (valid: {} to {})",
            range.start(),
            range.end()
        );
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::exit_code;

    const DEFS: &[ParamDef] = &[
        ParamDef {
            name: "depth",
            default: "4",
            help: "",
        },
        ParamDef {
            name: "path",
            default: "/tmp",
            help: "",
        },
    ];

    #[test]
    fn defaults_fill_in_and_given_values_win() {
        let mut given = Params::new();
        given.insert("depth".into(), "8".into());
        let p = with_defaults(DEFS, &given);
        assert_eq!((p["depth"].as_str(), p["path"].as_str()), ("8", "/tmp"));
    }

    #[test]
    fn one_wording_for_every_error() {
        let e = find(DEFS, "workload open", "colour").unwrap_err();
        assert_eq!(exit_code(&e), 2);
        assert_eq!(
            e.to_string(),
            "workload open has no parameter 'colour' (valid: depth, path)"
        );
        let mut p = with_defaults(DEFS, &Params::new());
        p.insert("depth".into(), "x".into());
        let e = check_numbers(DEFS, "mechanism seccomp", &p).unwrap_err();
        assert_eq!(
            e.to_string(),
            "mechanism seccomp: depth=x is not a whole number"
        );
        p.insert("depth".into(), "300".into());
        let e = in_range(&p, "workload open", "depth", 1..=256).unwrap_err();
        assert_eq!(exit_code(&e), 2);
        assert_eq!(
            e.to_string(),
            "workload open: depth=300 is out of range (valid: 1 to 256)"
        );
        assert_eq!(in_range(&p, "w", "depth", 1..=1024).unwrap(), 300);
    }

    #[test]
    fn a_negative_or_garbled_value_of_a_ranged_parameter_names_its_range() {
        // Issue 44: `-m seccomp:args,filters=-4` said only "-4 is not a
        // whole number".
        let mut p = with_defaults(DEFS, &Params::new());
        p.insert("depth".into(), "-4".into());
        check_numbers(DEFS, "mechanism seccomp", &p).unwrap();
        let e = in_range(&p, "mechanism seccomp", "depth", 1..=1024).unwrap_err();
        assert_eq!(exit_code(&e), 2);
        assert_eq!(
            e.to_string(),
            "mechanism seccomp: depth=-4 is not a whole number from 1 to 1024"
        );
        p.insert("depth".into(), "4x".into());
        let e = in_range(&p, "mechanism seccomp", "depth", 1..=1024).unwrap_err();
        assert!(e.to_string().ends_with("from 1 to 1024"), "{e}");
    }
}
