//! Putting a guest's run on the host's clock. A guest stamps what it
//! stores with its own clock, and under QEMU's icount that clock counts
//! instructions (and lets idle time pass in none), so a guest's stamps run
//! minutes ahead of the host's: `results list` and serve's run list would
//! put the run in the future. Every stored time is the host's: the run
//! starts when the host booted the guest and ends when the guest was done,
//! and each time inside it (a result's start and end, a calibration's) is
//! placed in proportion on the host's span from the guest starting
//! secperf to its end, which keeps their order.
//!
//! Runs stored before this are mended by migration 17 ([`mend`]) where
//! their guest facts allow it, and marked where they do not.

use anyhow::{Context, Result};
use chrono::{DateTime, Duration, Utc};
use rusqlite::{Connection, OptionalExtension, params};

use super::codec::{time_from_sql, time_to_sql};
use crate::vm::{GuestClock, Stamps};

/// A run's span by the host's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostSpan {
    /// When the host started booting the guest: the run's start.
    pub started_at: DateTime<Utc>,
    /// When the guest started secperf: where the guest's first stamp goes.
    pub inner_from: DateTime<Utc>,
    /// When the guest was done: the run's end, and where its last stamp goes.
    pub finished_at: DateTime<Utc>,
}

/// A linear map of the guest's span onto the host's, clamped to it.
#[derive(Debug, Clone, Copy)]
struct Placing {
    guest: (DateTime<Utc>, DateTime<Utc>),
    host: (DateTime<Utc>, DateTime<Utc>),
}

impl Placing {
    fn at(&self, t: DateTime<Utc>) -> DateTime<Utc> {
        let guest_ns = (self.guest.1 - self.guest.0).num_nanoseconds().unwrap_or(0);
        let host_ns = (self.host.1 - self.host.0)
            .num_nanoseconds()
            .unwrap_or(0)
            .max(0);
        if guest_ns <= 0 {
            return self.host.0;
        }
        let into = (t - self.guest.0)
            .num_nanoseconds()
            .unwrap_or(0)
            .clamp(0, guest_ns);
        let share = into as f64 / guest_ns as f64;
        self.host.0 + Duration::nanoseconds((share * host_ns as f64).round() as i64)
    }
}

/// The time columns inside a run: (table, column), each keyed by `run_id`.
const INNER: &[(&str, &str)] = &[
    ("results", "started_at"),
    ("results", "finished_at"),
    ("calibrations", "created_at"),
];

/// Puts run `run_id` on the host's clock (see the module's header) and
/// returns what the guest's clock said of it. Runs inside the caller's
/// transaction.
pub(crate) fn put_on_host_clock(
    conn: &Connection,
    run_id: i64,
    host: HostSpan,
) -> Result<GuestClock> {
    let (started, finished): (String, Option<String>) = conn.query_row(
        "SELECT started_at, finished_at FROM main.runs WHERE id = ?1",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let guest = GuestClock {
        started_at: time_from_sql(&started, "runs.started_at")?,
        finished_at: finished
            .as_deref()
            .map(|f| time_from_sql(f, "runs.finished_at"))
            .transpose()?,
    };
    let mut inner = Vec::new();
    for (table, column) in INNER {
        let mut stmt = conn.prepare(&format!(
            "SELECT id, {column} FROM main.{table} WHERE run_id = ?1"
        ))?;
        let rows = stmt
            .query_map([run_id], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for (id, t) in rows {
            let at = time_from_sql(&t, &format!("{table}.{column}"))?;
            inner.push((*table, *column, id, at));
        }
    }
    let last = inner
        .iter()
        .map(|(.., t)| *t)
        .chain(guest.finished_at)
        .fold(guest.started_at, DateTime::max);
    let placing = Placing {
        guest: (guest.started_at, guest.finished_at.unwrap_or(last)),
        host: (host.inner_from.max(host.started_at), host.finished_at),
    };
    conn.execute(
        "UPDATE main.runs SET started_at = ?1, finished_at = ?2 WHERE id = ?3",
        params![
            time_to_sql(&host.started_at),
            guest.finished_at.map(|_| time_to_sql(&host.finished_at)),
            run_id
        ],
    )?;
    for (table, column, id, at) in inner {
        conn.execute(
            &format!("UPDATE main.{table} SET {column} = ?1 WHERE id = ?2"),
            params![time_to_sql(&placing.at(at)), id],
        )?;
    }
    // The guest's probe of its configuration, stamped when it was taken.
    conn.execute(
        "UPDATE main.runs SET system_json = json_set(system_json, '$.probed_at', ?1)
         WHERE id = ?2 AND json_valid(system_json)
           AND json_type(system_json, '$.probed_at') = 'text'",
        params![
            time_to_sql(&placing.at(probed_at(conn, run_id)?.unwrap_or(guest.started_at))),
            run_id
        ],
    )?;
    Ok(guest)
}

/// The `probed_at` of run `run_id`'s system facts, if it has one.
fn probed_at(conn: &Connection, run_id: i64) -> Result<Option<DateTime<Utc>>> {
    let text: Option<String> = conn.query_row(
        "SELECT CASE WHEN json_valid(system_json) THEN json_extract(system_json, '$.probed_at') END
         FROM main.runs WHERE id = ?1",
        [run_id],
        |r| r.get(0),
    )?;
    text.map(|t| time_from_sql(&t, "runs.system_json probed_at"))
        .transpose()
}

/// Migration 17's step: every run measured in a `--vm` guest before the
/// host stamped them gets `vm.stamps` saying whose clock its times are,
/// and those whose guest counted instructions are mended from the guest's
/// facts where they allow it. Returns one sentence naming the runs that
/// could not be mended (None when every run could).
pub(crate) fn mend(conn: &Connection) -> Result<Option<String>> {
    let runs: Vec<(i64, String)> = {
        let mut stmt = conn.prepare(
            "SELECT id, system_json FROM main.runs
             WHERE json_valid(system_json) AND json_type(system_json, '$.vm') = 'object'
               AND json_type(system_json, '$.vm.stamps') IS NULL
             ORDER BY id",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut unmended = Vec::new();
    for (id, text) in runs {
        let system: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("run {id}'s system_json is not JSON"))?;
        let kernel_ab = conn
            .query_row(
                "SELECT 1 FROM main.run_notes WHERE run_id = ?1 AND name = ?2",
                params![id, crate::vm::arms::NOTE],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        let vm = &system["vm"];
        let stamps = if kernel_ab {
            Stamps::Host { guest: None }
        } else if vm.get("icount").is_none_or(serde_json::Value::is_null) {
            Stamps::GuestKeptTime
        } else {
            match mended_span(conn, id, vm)? {
                Ok((span, within_s)) => Stamps::Mended {
                    guest: put_on_host_clock(conn, id, span)?,
                    within_s,
                },
                Err(why) => {
                    unmended.push(id);
                    Stamps::Unmended { why }
                }
            }
        };
        conn.execute(
            "UPDATE main.runs SET system_json = json_set(system_json, '$.vm.stamps', json(?1))
             WHERE id = ?2",
            params![serde_json::to_string(&stamps)?, id],
        )?;
    }
    Ok((!unmended.is_empty()).then(|| {
        let ids: Vec<String> = unmended.iter().map(i64::to_string).collect();
        format!(
            "run{} {} {} measured in a guest whose clock counted instructions, and {} facts lack \
             what it takes to put {} on the host's clock (the guest's uptime, the boot's and the \
             guest's seconds): {} stored times are the guest's, ahead of the host's, and `results \
             show` says so",
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", "),
            if ids.len() == 1 { "was" } else { "were" },
            if ids.len() == 1 { "its" } else { "their" },
            if ids.len() == 1 { "it" } else { "them" },
            if ids.len() == 1 { "its" } else { "their" },
        )
    }))
}

/// The host's span of a run stored with an instruction-counting guest's
/// clock, from its facts, and how far its start may be off; or why it
/// cannot be had. The guest kernel read the host's clock (QEMU's RTC
/// follows the host's) while it booted, so the guest's start less its
/// uptime is the host's clock at that reading, which came at most the
/// boot's host seconds after the host started the guest.
fn mended_span(
    conn: &Connection,
    run_id: i64,
    vm: &serde_json::Value,
) -> Result<std::result::Result<(HostSpan, f64), String>> {
    let number = |v: &serde_json::Value| v.as_f64().filter(|x| x.is_finite() && *x >= 0.0);
    let (Some(uptime_s), Some(boot_s), Some(wall_s)) = (
        number(&vm["guest"]["uptime_s"]),
        number(&vm["boot_s"]),
        number(&vm["wall_s"]),
    ) else {
        let missing: Vec<&str> = [
            ("the guest's uptime", &vm["guest"]["uptime_s"]),
            ("the boot's seconds", &vm["boot_s"]),
            ("the guest's seconds", &vm["wall_s"]),
        ]
        .into_iter()
        .filter(|(_, v)| number(v).is_none())
        .map(|(what, _)| what)
        .collect();
        return Ok(Err(format!(
            "its guest facts lack {}",
            missing.join(" and ")
        )));
    };
    let started: String = conn.query_row(
        "SELECT started_at FROM main.runs WHERE id = ?1",
        [run_id],
        |r| r.get(0),
    )?;
    let seconds = |s: f64| Duration::nanoseconds((s * 1e9).round() as i64);
    let read_at = time_from_sql(&started, "runs.started_at")? - seconds(uptime_s);
    let started_at = read_at - seconds(boot_s);
    Ok(Ok((
        HostSpan {
            started_at,
            inner_from: started_at + seconds(boot_s),
            finished_at: started_at + seconds(wall_s.max(boot_s)),
        },
        boot_s,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    #[test]
    fn a_guest_span_is_placed_in_proportion_and_clamped() {
        let p = Placing {
            guest: (t(100), t(200)),
            host: (t(10), t(20)),
        };
        assert_eq!(p.at(t(100)), t(10));
        assert_eq!(p.at(t(150)), t(15));
        assert_eq!(p.at(t(200)), t(20));
        assert_eq!(p.at(t(50)), t(10), "before the span: its start");
        assert_eq!(p.at(t(900)), t(20), "after it: its end");
        let empty = Placing {
            guest: (t(5), t(5)),
            host: (t(10), t(20)),
        };
        assert_eq!(empty.at(t(5)), t(10));
    }
}
