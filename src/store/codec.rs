//! Conversions between model values and SQLite column values.
//!
//! SQLite has signed 64-bit integers, IEEE doubles and text; the model has
//! `u64` counters, `DateTime<Utc>` and float vectors. Everything that can go
//! wrong when reading back (negative counters, bad timestamps, corrupt JSON)
//! becomes an error that names the column, never a panic.
//!
//! Two things are done by hand on purpose:
//! - Timestamps are RFC 3339 with exactly nine fractional digits and `Z`,
//!   so they round-trip to the nanosecond *and* sort correctly as text
//!   (`ORDER BY started_at` in SQL).
//! - Float vectors (`per_task_ops_per_sec`) are written as a JSON array with
//!   Rust's shortest round-trip formatting and parsed with Rust's correctly
//!   rounded `f64::from_str`. serde_json's default float parser (without its
//!   `float_roundtrip` feature, which this crate does not enable) is only
//!   best-effort and can be off by one ulp, and stored results must read
//!   back bit for bit.

use anyhow::{Context, Result, anyhow, bail};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::DeserializeOwned;

/// RFC 3339, UTC, nanosecond precision, fixed width: sorts as text.
pub fn time_to_sql(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// Parses a timestamp written by [`time_to_sql`] (any RFC 3339 is accepted).
pub fn time_from_sql(text: &str, column: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .with_context(|| format!("{column} holds '{text}', which is not an RFC 3339 timestamp"))
}

/// SQLite integers are signed; counters above `i64::MAX` cannot be stored.
pub fn u64_to_sql(value: u64, column: &str) -> Result<i64> {
    i64::try_from(value).map_err(|_| anyhow!("{column} = {value} is too large to store"))
}

/// Converts a stored integer back to the model's unsigned type.
pub fn int_from_sql<T: TryFrom<i64>>(value: i64, column: &str) -> Result<T> {
    T::try_from(value).map_err(|_| {
        anyhow!(
            "{column} holds {value}, out of range for {}",
            std::any::type_name::<T>()
        )
    })
}

/// SQLite stores a NaN double as NULL; read NULL back as NaN.
pub fn real_from_sql(value: Option<f64>) -> f64 {
    value.unwrap_or(f64::NAN)
}

/// A JSON array of floats that reads back exactly with [`f64s_from_json`].
/// Non-finite values (not representable as JSON numbers) become the strings
/// `"NaN"`, `"inf"`, `"-inf"`.
pub fn f64s_to_json(values: &[f64]) -> String {
    let mut out = String::with_capacity(2 + values.len() * 20);
    out.push('[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if v.is_nan() {
            out.push_str("\"NaN\"");
        } else if v.is_infinite() {
            out.push_str(if *v > 0.0 { "\"inf\"" } else { "\"-inf\"" });
        } else {
            // Debug is the shortest representation that round-trips and uses
            // exponents for very large/small values: always a JSON number.
            out.push_str(&format!("{v:?}"));
        }
    }
    out.push(']');
    out
}

/// Parses a flat JSON array of numbers (as written by [`f64s_to_json`],
/// also accepting `null` for NaN and any whitespace) without losing bits.
pub fn f64s_from_json(text: &str, column: &str) -> Result<Vec<f64>> {
    let inner = text
        .trim()
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| anyhow!("{column} holds '{text}', which is not a JSON array"))?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|token| {
            let token = token.trim();
            match token {
                "null" | "\"NaN\"" => Ok(f64::NAN),
                "\"inf\"" => Ok(f64::INFINITY),
                "\"-inf\"" => Ok(f64::NEG_INFINITY),
                _ if token.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => token
                    .parse::<f64>()
                    .map_err(|e| anyhow!("{column}: '{token}' is not a number: {e}")),
                _ => bail!("{column}: '{token}' is not a number"),
            }
        })
        .collect()
}

/// Serializes a value that cannot fail to serialize (maps, vectors, strings).
pub fn json_to_sql<T: serde::Serialize + ?Sized>(value: &T, column: &str) -> Result<String> {
    serde_json::to_string(value).with_context(|| format!("cannot encode {column} as JSON"))
}

/// Parses a JSON column, naming the column when it is corrupt.
pub fn json_from_sql<T: DeserializeOwned>(text: &str, column: &str) -> Result<T> {
    serde_json::from_str(text).with_context(|| format!("{column} holds invalid JSON: '{text}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_round_trips_to_the_nanosecond_and_sorts_as_text() {
        let a = DateTime::from_timestamp(1_700_000_000, 0).expect("valid");
        let b = DateTime::from_timestamp(1_700_000_000, 500_000_000).expect("valid");
        let c = DateTime::from_timestamp(1_700_000_000, 123_456_789).expect("valid");
        for t in [a, b, c] {
            assert_eq!(time_from_sql(&time_to_sql(&t), "t").expect("parses"), t);
        }
        assert!(time_to_sql(&a) < time_to_sql(&c));
        assert!(time_to_sql(&c) < time_to_sql(&b));
        assert!(time_from_sql("yesterday", "runs.started_at").is_err());
    }

    #[test]
    fn float_arrays_round_trip_including_odd_values() {
        let values = [
            0.0,
            -0.0,
            0.1,
            1e300,
            -1e-300,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            123_456_789.123_456_78,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let text = f64s_to_json(&values);
        // Valid JSON as far as serde_json is concerned.
        let _: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let back = f64s_from_json(&text, "x").expect("parses");
        assert_eq!(back.len(), values.len());
        for (a, b) in values.iter().zip(&back) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        let nan = f64s_from_json(&f64s_to_json(&[f64::NAN]), "x").expect("parses");
        assert!(nan[0].is_nan());
        assert_eq!(
            f64s_from_json(" [ ] ", "x").expect("parses"),
            Vec::<f64>::new()
        );
        assert!(f64s_from_json("[1,x]", "x").is_err());
        assert!(f64s_from_json("{}", "x").is_err());
    }

    #[test]
    fn integer_range_errors_name_the_column() {
        let err = u64_to_sql(u64::MAX, "samples.ops").expect_err("too large");
        assert!(err.to_string().contains("samples.ops"));
        let err = int_from_sql::<u32>(-1, "results.tasks").expect_err("negative");
        assert!(err.to_string().contains("results.tasks"));
        assert_eq!(int_from_sql::<u64>(42, "x").expect("fits"), 42);
    }
}
