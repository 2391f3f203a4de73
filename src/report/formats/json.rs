//! `--format json`: the whole [`Report`] as serde writes it, pretty-printed,
//! for programs (dashboards, scripts, CI checks) that want every field:
//! every sample, the intervals, p-values and verdicts, the machine and the
//! command. Non-finite numbers come out as `null`.

use crate::report::model::Report;

pub fn render(report: &Report) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(report)?;
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::testing;

    #[test]
    fn round_trips_the_structure() {
        for r in testing::all() {
            let s = render(&r).unwrap();
            let v: serde_json::Value = serde_json::from_str(&s).unwrap();
            assert_eq!(v["title"], r.title.as_str());
            assert_eq!(v["columns"].as_array().unwrap().len(), r.columns.len());
            assert_eq!(v["rows"].as_array().unwrap().len(), r.rows.len());
            assert_eq!(v["command"], r.command.as_str());
        }
        let v: serde_json::Value =
            serde_json::from_str(&render(&testing::small()).unwrap()).unwrap();
        assert_eq!(v["design"], "unpaired");
        assert!(v["rows"][1]["cells"][1].is_null(), "missing cell is null");
        assert_eq!(v["rows"][0]["cells"][1]["verdict"], "slower");
        assert_eq!(v["rows"][0]["cells"][2]["verdict"], "no-change");
        assert_eq!(v["rows"][1]["cells"][2]["verdict"], "faster");
        assert_eq!(
            v["rows"][0]["cells"][0]["samples"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(v["machine"][0], serde_json::json!(["host", "box"]));
    }

    #[test]
    fn non_finite_numbers_are_null() {
        let mut r = testing::small();
        r.rows[0].cells[1].as_mut().unwrap().p_value = Some(f64::NAN);
        let v: serde_json::Value = serde_json::from_str(&render(&r).unwrap()).unwrap();
        assert!(v["rows"][0]["cells"][1]["p_value"].is_null());
    }
}
