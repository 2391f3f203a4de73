//! Campaigns: one measuring command run on many hosts (`secperf campaign`).
//! A campaign's record is its command and hosts; each run it pulled from a
//! host carries the campaign's id and the host's name, so what is done (and
//! what `--resume` must still do) is read off the runs themselves.

use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};

use super::codec::{json_from_sql, json_to_sql, time_from_sql, time_to_sql};
use super::{Store, disk_full};
use crate::usage_bail;

/// A campaign as recorded when it started.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CampaignRecord {
    pub id: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The measuring command's words, after `secperf`.
    pub command: Vec<String>,
    pub hosts: Vec<String>,
    pub parallel: u32,
}

/// A campaign in a list: its record and how many of its hosts' runs are
/// stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CampaignSummary {
    pub id: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub command: Vec<String>,
    pub hosts: Vec<String>,
    /// Finished runs of it stored here.
    pub runs: usize,
}

/// A finished run of a campaign: which host, and its id here.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CampaignRun {
    pub host: String,
    pub run_id: i64,
    pub uuid: String,
}

impl Store {
    /// The id `spec` names in `table` (a text `id` column): the id, a
    /// unique prefix of it, or `latest` (the newest by `newest_by`). A
    /// usage error otherwise, naming the `what` and `hint`.
    pub(super) fn id_named(
        &self,
        table: &str,
        newest_by: &str,
        spec: &str,
        what: &str,
        hint: &str,
    ) -> Result<String> {
        let ids: Vec<String> = {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT id FROM {table} WHERE ?1 = 'latest' OR id LIKE ?1 || '%'
                 ORDER BY {newest_by} DESC"
            ))?;
            stmt.query_map([spec], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        match (spec, ids.as_slice()) {
            (_, []) => usage_bail!("no {what} {spec} in {}: {hint}", self.path.display()),
            ("latest", [first, ..]) | (_, [first]) => Ok(first.clone()),
            (_, many) => usage_bail!(
                "{what} id {spec} is ambiguous ({}): give more of it",
                many.join(", ")
            ),
        }
    }

    /// Records a new campaign.
    pub fn add_campaign(&mut self, c: &CampaignRecord) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO campaigns (id, created_at, command_json, hosts_json, parallel)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    c.id,
                    time_to_sql(&c.created_at),
                    json_to_sql(&serde_json::json!(c.command), "campaigns.command_json")?,
                    json_to_sql(&serde_json::json!(c.hosts), "campaigns.hosts_json")?,
                    c.parallel,
                ],
            )
            .with_context(|| format!("cannot record campaign {} in {}", c.id, self.path.display()))
            .map_err(|e| disk_full(e, &self.path))?;
        Ok(())
    }

    /// The campaign `spec` names: its id or a unique prefix of it, or
    /// `latest`.
    pub fn campaign(&self, spec: &str) -> Result<CampaignRecord> {
        let id = self.id_named(
            "campaigns",
            "created_at",
            spec,
            "campaign",
            "`secperf results list` shows the runs of each campaign, or give the --db the \
             campaign stored its runs in",
        )?;
        let row = self
            .conn
            .query_row(
                "SELECT created_at, command_json, hosts_json, parallel FROM campaigns WHERE id = ?1",
                [&id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, u32>(3)?,
                    ))
                },
            )
            .optional()?
            .context("the campaign vanished while reading it")?;
        Ok(CampaignRecord {
            created_at: time_from_sql(&row.0, "campaigns.created_at")?,
            command: json_from_sql(&row.1, "campaigns.command_json")?,
            hosts: json_from_sql(&row.2, "campaigns.hosts_json")?,
            parallel: row.3,
            id,
        })
    }

    /// Every stored campaign, the newest first, with its finished runs
    /// counted.
    pub fn list_campaigns(&self) -> Result<Vec<CampaignSummary>> {
        let mut stmt = self.conn.prepare(
            "SELECT c.id, c.created_at, c.command_json, c.hosts_json,
                    (SELECT COUNT(*) FROM runs r
                     WHERE r.campaign = c.id AND r.finished_at IS NOT NULL)
             FROM campaigns c ORDER BY c.created_at DESC, c.id",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(|(id, at, command, hosts, runs)| {
                Ok(CampaignSummary {
                    created_at: time_from_sql(&at, "campaigns.created_at")?,
                    command: json_from_sql(&command, "campaigns.command_json")?,
                    hosts: json_from_sql(&hosts, "campaigns.hosts_json")?,
                    runs: runs as usize,
                    id,
                })
            })
            .collect()
    }

    /// The finished runs of campaign `id`, in host order of arrival.
    pub fn campaign_runs(&self, id: &str) -> Result<Vec<CampaignRun>> {
        let mut stmt = self.conn.prepare(
            "SELECT campaign_host, id, uuid FROM runs
             WHERE campaign = ?1 AND finished_at IS NOT NULL ORDER BY id",
        )?;
        let runs = stmt
            .query_map([id], |r| {
                Ok(CampaignRun {
                    host: r.get(0)?,
                    run_id: r.get(1)?,
                    uuid: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(runs)
    }

    /// Whether a run with this uuid is stored here.
    pub fn has_run_uuid(&self, uuid: &str) -> Result<bool> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM runs WHERE uuid = ?1", [uuid], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Tags a run as measured by campaign `id` on `host`.
    pub fn tag_campaign_run(&mut self, run_id: i64, id: &str, host: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET campaign = ?1, campaign_host = ?2 WHERE id = ?3",
                params![id, host, run_id],
            )
            .map_err(|e| disk_full(e.into(), &self.path))?;
        Ok(())
    }

    /// The finished runs of the database at `src`: (id, uuid).
    pub fn finished_runs_in(src: &std::path::Path) -> Result<Vec<(i64, String)>> {
        let store = Store::open_read_only(src)?;
        let mut stmt = store
            .conn
            .prepare("SELECT id, uuid FROM runs WHERE finished_at IS NOT NULL ORDER BY id")?;
        let runs = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(runs)
    }
}
