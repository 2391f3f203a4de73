//! `Probed<T>`: a value the probe read, or the reason it could not.
//!
//! Every item of the system snapshot can be missing for an ordinary reason
//! (securityfs not mounted, not root, kernel built without the feature), and
//! the snapshot is more useful when it says *why*. `Probed` carries that
//! reason instead of an error, so `probe()` never fails.
//!
//! Serde shape (JSON): a readable item is the value itself (`"6.18.4"`,
//! `{"mode": "integrity", ...}`); an unreadable one is the object
//! `{"unavailable": "<reason>"}`. Deserialising tries the `unavailable`
//! object first (and only accepts an object with exactly that one key), so a
//! value never turns into a reason by accident.

use serde::{Deserialize, Serialize};

/// A probed value, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum Probed<T> {
    /// The item could not be read; the reason says why and, where there is
    /// one, how to make it readable. Declared first so serde tries it first.
    Unavailable {
        #[serde(rename = "unavailable")]
        reason: String,
    },
    /// The value as read.
    Ok(T),
}

impl<T> Probed<T> {
    /// An unavailable item with the given reason.
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Probed::Unavailable {
            reason: reason.into(),
        }
    }

    /// The value, if it was read.
    pub fn value(&self) -> Option<&T> {
        match self {
            Probed::Ok(v) => Some(v),
            Probed::Unavailable { .. } => None,
        }
    }

    /// The reason, if the item was not read.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Probed::Ok(_) => None,
            Probed::Unavailable { reason } => Some(reason),
        }
    }

    /// Applies `f` to a read value; a reason is kept as it is.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Probed<U> {
        match self {
            Probed::Ok(v) => Probed::Ok(f(v)),
            Probed::Unavailable { reason } => Probed::Unavailable { reason },
        }
    }

    /// Borrows the value: `&Probed<T>` to `Probed<&T>`.
    pub fn as_ref(&self) -> Probed<&T> {
        match self {
            Probed::Ok(v) => Probed::Ok(v),
            Probed::Unavailable { reason } => Probed::Unavailable {
                reason: reason.clone(),
            },
        }
    }
}

impl<T> From<Result<T, String>> for Probed<T> {
    fn from(r: Result<T, String>) -> Self {
        match r {
            Ok(v) => Probed::Ok(v),
            Err(reason) => Probed::Unavailable { reason },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn serialises_value_as_itself() {
        let p: Probed<u32> = Probed::Ok(7);
        assert_eq!(serde_json::to_string(&p).unwrap(), "7");
        let p: Probed<String> = Probed::unavailable("securityfs not mounted");
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"unavailable":"securityfs not mounted"}"#
        );
    }

    #[test]
    fn round_trips_both_variants() {
        for p in [Probed::Ok("x".to_string()), Probed::unavailable("why")] {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<Probed<String>>(&json).unwrap(), p);
        }
    }

    #[test]
    fn a_map_value_is_not_mistaken_for_a_reason() {
        let mut m = BTreeMap::new();
        m.insert("unavailable".to_string(), "a".to_string());
        m.insert("other".to_string(), "b".to_string());
        let p = Probed::Ok(m);
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            serde_json::from_str::<Probed<BTreeMap<String, String>>>(&json).unwrap(),
            p
        );
        let reason: Probed<BTreeMap<String, String>> = Probed::unavailable("r");
        let json = serde_json::to_string(&reason).unwrap();
        assert_eq!(
            serde_json::from_str::<Probed<BTreeMap<String, String>>>(&json).unwrap(),
            reason
        );
    }

    #[test]
    fn from_result_keeps_the_reason() {
        let p: Probed<u8> = Err("no".to_string()).into();
        assert_eq!(p.reason(), Some("no"));
        assert_eq!(p.map(|v| v + 1).reason(), Some("no"));
        let p: Probed<u8> = Ok(1).into();
        assert_eq!(p.map(|v| v + 1).value(), Some(&2));
    }
}
