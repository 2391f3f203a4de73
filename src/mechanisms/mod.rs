//! Security mechanisms that can be switched on a live kernel, one file
//! each, registered in one table ([`MECHANISMS`]) that drives `list`, the
//! default `overhead` survey and the parser of `NAME[:VARIANT][,K=V...]`.
//!
//! Two scopes:
//! - [`Scope::Worker`]: applied inside each freshly started task after it
//!   prepared and before it is released (seccomp, Landlock, credentials).
//!   Nothing outside the task changes; the task exits afterwards.
//! - [`Scope::System`]: a machine-wide switch (audit, BPF LSM, SELinux,
//!   AppArmor) applied in the parent before the tasks start. The framework
//!   (`safety`) takes the state lock, asks the mechanism for a
//!   snapshot, writes it to the journal, applies, and restores from the
//!   snapshot afterwards, also after Ctrl-C, a panic, or (on the next start)
//!   a SIGKILL.

pub mod apparmor;
pub mod audit;
pub mod bpf_lsm;
pub mod cred;
pub mod landlock;
mod mechanism;
pub mod none;
pub mod seccomp;
pub mod selinux;
pub mod selinux_policy;
#[cfg(test)]
mod test_fixtures;
pub mod worker_util;

use std::fmt;

use anyhow::Result;

use crate::model::Params;
use crate::params::ParamDef;

pub use mechanism::{Arm, Availability, Mechanism, Scope, SystemEnv, VariantDef, WorkerEnv};

/// The registry, in the order `list` and the survey use.
pub static MECHANISMS: &[&dyn Mechanism] = &[
    &none::NONE,
    &seccomp::SECCOMP,
    &landlock::LANDLOCK,
    &audit::AUDIT,
    &cred::CRED,
    &bpf_lsm::BPF_LSM,
    &selinux::SELINUX,
    &apparmor::APPARMOR,
];

/// Looks a mechanism up by name.
pub fn find(name: &str) -> Option<&'static dyn Mechanism> {
    MECHANISMS.iter().copied().find(|m| m.name() == name)
}

pub fn names() -> String {
    MECHANISMS
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A mechanism with a chosen variant and parameters: the "B" of an A/B.
#[derive(Clone)]
pub struct Treatment {
    pub mechanism: &'static dyn Mechanism,
    pub variant: &'static str,
    /// Effective parameters (defaults filled in).
    pub params: Params,
}

impl fmt::Debug for Treatment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Treatment({self})")
    }
}

impl fmt::Display for Treatment {
    /// `seccomp:args,filters=4` (parameters shown only when not default).
    /// A variant selected by a parameter is written the way it is typed:
    /// `seccomp:profile=PATH`, `landlock:ro=/usr,rw=/tmp`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.mechanism;
        let given = |p: &&ParamDef| {
            self.params
                .get(p.name)
                .is_some_and(|v| v.as_str() != p.default)
        };
        let leading = m
            .params()
            .iter()
            .filter(given)
            .find(|p| m.variant_of_param(p.name) == Some(self.variant));
        match leading {
            Some(p) => write!(f, "{}:{}={}", m.name(), p.name, self.params[p.name])?,
            None => write!(f, "{}:{}", m.name(), self.variant)?,
        }
        for p in m.params().iter().filter(given) {
            if leading.is_some_and(|l| l.name == p.name) {
                continue;
            }
            write!(f, ",{}={}", p.name, self.params[p.name])?;
        }
        Ok(())
    }
}

/// How a stored comparison's treatment is named in tables, reports and
/// `compare` rows: the treatment's own spelling (`seccomp:args,filters=4`,
/// parameters only where not default), or, for a mechanism this secperf
/// no longer knows, every stored parameter.
pub fn label_of(c: &crate::model::Comparison) -> String {
    let known = find(&c.mechanism).and_then(|mechanism| {
        let variant = mechanism.variants().iter().find(|v| v.name == c.variant)?;
        Some(Treatment {
            mechanism,
            variant: variant.name,
            params: c.params.clone(),
        })
    });
    match known {
        Some(t) => t.to_string(),
        None => std::iter::once(format!("{}:{}", c.mechanism, c.variant))
            .chain(c.params.iter().map(|(k, v)| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(","),
    }
}

impl Treatment {
    /// Parses `NAME[:VARIANT][,KEY=VALUE...]`, or `NAME:KEY=VALUE[,...]`
    /// where the mechanism names the variant a key selects
    /// ([`Mechanism::variant_of_param`]). Unknown names, variants or keys
    /// are usage errors listing what is valid.
    pub fn parse(spec: &str) -> Result<Treatment> {
        let (head, rest) = match spec.split_once(',') {
            Some((h, r)) => (h, Some(r)),
            None => (spec, None),
        };
        let (name, variant) = match head.split_once(':') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (head.trim(), None),
        };
        let Some(mechanism) = find(name) else {
            crate::usage_bail!(
                "unknown mechanism '{name}'{} (valid: {})",
                crate::params::did_you_mean(name, MECHANISMS.iter().map(|m| m.name())),
                names()
            );
        };
        let variants = mechanism.variants();
        // `seccomp:profile=PATH`: the parameter in the variant's place.
        let (variant, leading) = match variant.and_then(|v| v.split_once('=')) {
            Some((k, _)) => match mechanism.variant_of_param(k.trim()) {
                Some(v) => (Some(v), variant),
                None => crate::usage_bail!(
                    "mechanism {name}: '{}' is not a variant (write {name}:VARIANT,KEY=VALUE; \
                     variants: {})",
                    variant.unwrap_or_default(),
                    variants
                        .iter()
                        .map(|d| d.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            None => (variant, None),
        };
        let variant = match variant.filter(|v| !v.is_empty()) {
            None => variants[0].name,
            Some(v) => match variants.iter().find(|d| d.name == v) {
                Some(d) => d.name,
                None => crate::usage_bail!(
                    "mechanism {name} has no variant '{v}' (valid: {})",
                    variants
                        .iter()
                        .map(|d| d.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        };
        let owner = format!("mechanism {name}");
        let mut given = Params::new();
        for kv in leading
            .into_iter()
            .chain(rest.into_iter().flat_map(|r| r.split(',')))
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let Some((k, v)) = kv.split_once('=') else {
                crate::usage_bail!(
                    "mechanism {name}: '{kv}' is not KEY=VALUE (e.g. {name}:{variant},KEY=VALUE)"
                );
            };
            let def = crate::params::find(mechanism.params(), &owner, k.trim())?;
            given.insert(def.name.to_string(), v.trim().to_string());
        }
        crate::params::check_numbers(mechanism.params(), &owner, &given)?;
        let params = crate::params::with_defaults(mechanism.params(), &given);
        let t = Treatment {
            mechanism,
            variant,
            params,
        };
        mechanism.validate(&t)?;
        Ok(t)
    }

    /// A numeric parameter (validated as a number when parsed).
    pub fn param_u64(&self, key: &str) -> Result<u64> {
        crate::params::u64_of(&self.params, &self.owner(), key)
    }

    /// A numeric parameter that must lie in `range`; otherwise a usage
    /// error naming the mechanism, the key and the valid range.
    pub fn param_in_range(&self, key: &str, range: std::ops::RangeInclusive<u64>) -> Result<u64> {
        crate::params::in_range(&self.params, &self.owner(), key, range)
    }

    /// "mechanism seccomp": who owns the parameters, in error messages.
    fn owner(&self) -> String {
        format!("mechanism {}", self.mechanism.name())
    }
}
