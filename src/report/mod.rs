//! Turning results into text for people: terminal tables and number
//! formatting. Machine formats (JSON, CSV) live with the store's export.

pub mod build;
pub mod formats;
pub mod model;
pub mod table;

/// A rate with an SI suffix and 4 significant digits: 12.35M, 987.6k.
pub fn si(x: f64) -> String {
    let (v, suffix) = match x.abs() {
        a if a >= 1e9 => (x / 1e9, "G"),
        a if a >= 1e6 => (x / 1e6, "M"),
        a if a >= 1e3 => (x / 1e3, "k"),
        _ => (x, ""),
    };
    let digits = match v.abs() {
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        _ => 3,
    };
    format!("{v:.digits$}{suffix}")
}

/// A duration in nanoseconds with a unit that keeps it readable.
pub fn ns(x: f64) -> String {
    match x.abs() {
        a if a >= 1e9 => format!("{:.3} s", x / 1e9),
        a if a >= 1e6 => format!("{:.3} ms", x / 1e6),
        a if a >= 1e4 => format!("{:.2} us", x / 1e3),
        _ => format!("{x:.1} ns"),
    }
}

/// Half-width of an interval as a percentage of its centre: "±0.4%".
pub fn ci_pct(s: &crate::model::Summary) -> String {
    if s.median == 0.0 {
        return "-".into();
    }
    let half = (s.ci_high - s.ci_low) / 2.0 / s.median.abs() * 100.0;
    format!("±{half:.1}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_suffixes() {
        assert_eq!(si(12_345_678.0), "12.35M");
        assert_eq!(si(987_600.0), "987.6k");
        assert_eq!(si(5.0), "5.000");
        assert_eq!(si(2.5e9), "2.500G");
    }

    #[test]
    fn ns_units() {
        assert_eq!(ns(85.04), "85.0 ns");
        assert_eq!(ns(45_000.0), "45.00 us");
        assert_eq!(ns(61_234_000.0), "61.234 ms");
    }

    #[test]
    fn ci_half_width() {
        let s = crate::model::Summary {
            median: 100.0,
            ci_low: 99.0,
            ci_high: 101.0,
        };
        assert_eq!(ci_pct(&s), "±1.0%");
    }
}
