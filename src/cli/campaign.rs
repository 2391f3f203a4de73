//! `secperf campaign --hosts FILE|a,b,c [--parallel N] -- COMMAND ARGS`:
//! one measuring command on many hosts over OpenSSH, each host's finished
//! run pulled into this store (and pushed to a shared one when `--db` is a
//! `postgresql://` URL). The work is `engine::campaign`; here are the
//! arguments, the progress lines and the closing table.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::engine::campaign::{self, CampaignOutcome, Plan};
use crate::remote::ssh::Ssh;
use crate::store::campaigns::CampaignRecord;
use crate::usage_bail;

#[derive(Debug, clap::Args)]
pub struct CampaignArgs {
    /// The hosts: a file with one per line (`#` comments), or a,b,c. Each
    /// is an ssh destination (host, user@host or an alias of your ssh
    /// config).
    #[arg(long, value_name = "FILE|HOSTS", required_unless_present = "resume")]
    pub hosts: Option<String>,
    /// How many hosts to work on at once (each measures itself; one host
    /// never runs two measurements at once).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub parallel: u32,
    /// Rerun the hosts of campaign ID without a finished run: those with
    /// none in this store yet (its hosts and command are the recorded
    /// ones).
    #[arg(long, value_name = "ID", conflicts_with = "hosts")]
    pub resume: Option<String>,
    /// ssh -F FILE: an ssh configuration file instead of ~/.ssh/config.
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// ssh -o OPTION, for every connection (repeatable).
    #[arg(long = "ssh-option", value_name = "OPTION")]
    pub ssh_options: Vec<String>,
    /// The measuring command to run on every host, after `--` (run,
    /// overhead, suite or calibrate with their arguments, without --db).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn campaign(args: CampaignArgs, db: Option<&Path>, json: bool) -> Result<()> {
    if args.parallel == 0 {
        usage_bail!("--parallel 0 would run nothing: give 1 or more");
    }
    if let Some(config) = &args.ssh_config
        && !config.is_file()
    {
        usage_bail!("--ssh-config {}: no such file", config.display());
    }
    // Runs always land in a results file first; with a URL, the file is
    // the default one (or $SECPERF_DB when that is a file) and each host's
    // runs are pushed on.
    let push_to = super::reading::shared_url(db);
    let local = match &push_to {
        // $SECPERF_DB when it names a file, else the default file.
        Some(_) => match std::env::var(crate::store::DB_ENV_VAR)
            .ok()
            .filter(|v| !v.is_empty() && !crate::remote::conn::is_url(v))
        {
            Some(file) => crate::store::resolve_db_path(Some(Path::new(&file)))?,
            None => crate::store::default_db_path()?,
        },
        None => crate::store::resolve_db_path(db)?,
    };
    if let Some(url) = &push_to {
        crate::say!(
            "secperf: campaign: each host's runs are kept in {} (${} names another file), then \
             pushed to {}",
            local.display(),
            crate::store::DB_ENV_VAR,
            crate::remote::conn::redact(url)
        );
    }
    if let Some(url) = &push_to {
        // Fail before any host is touched when the store cannot be reached.
        drop(crate::remote::conn::connect(url)?);
    }
    let ssh = Ssh {
        config: args.ssh_config.clone(),
        options: args.ssh_options.clone(),
    };
    let start = match &args.resume {
        Some(id) => {
            if !args.command.is_empty() {
                usage_bail!(
                    "--resume reruns the campaign's own command: leave out the command after --"
                );
            }
            campaign::Start::Resume {
                id: id.clone(),
                parallel: args.parallel,
            }
        }
        None => {
            let hosts = campaign::parse_hosts(args.hosts.as_deref().unwrap_or_default())?;
            campaign::check_command(&args.command)?;
            // The hosts run this very binary: its parser says now what
            // they would say about a typo.
            let argv = std::iter::once("secperf".to_string()).chain(args.command.clone());
            if let Err(e) = <super::Cli as clap::Parser>::try_parse_from(argv) {
                usage_bail!(
                    "the command to run on the hosts is not valid: {}",
                    e.render().to_string().trim()
                );
            }
            campaign::refuse_same_machine(&ssh, &hosts, args.parallel)?;
            campaign::Start::New(CampaignRecord {
                id: campaign::new_id(),
                created_at: chrono::Utc::now(),
                command: args.command.clone(),
                hosts,
                parallel: args.parallel,
            })
        }
    };
    let (mut store, record) = campaign::start(&local, start, &ssh)?;
    crate::say!(
        "secperf: campaign {} on {} host(s), {} at a time: secperf {}",
        record.id,
        record.hosts.len(),
        record.parallel.min(record.hosts.len() as u32),
        shell_words::join(&record.command)
    );
    let plan = Plan {
        record,
        ssh,
        push_to: push_to.as_deref(),
    };
    let say = |line: &str| crate::say!("{line}");
    let outcome = campaign::run(&plan, &mut store, &say)?;
    if json {
        super::emit::print_json(&outcome)?;
    } else {
        super::emit::emit_fmt!("{}", summary(&outcome));
    }
    let failed = outcome.failed();
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} host(s) failed (above); what the others finished is stored. Rerun \
             only the rest with `secperf campaign --resume {}`",
            outcome.hosts.len(),
            outcome.campaign.id
        );
    }
    Ok(())
}

/// The closing table: one line per host.
fn summary(o: &CampaignOutcome) -> String {
    let mut t =
        crate::report::table::new_table(&["host", "status", "runs", "seconds", "binary", "note"]);
    for h in &o.hosts {
        t.add_row(vec![
            h.host.clone(),
            h.status.to_string(),
            h.runs
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            format!("{:.1}", h.seconds),
            if h.copied_binary { "copied" } else { "" }.to_string(),
            h.error
                .clone()
                .or_else(|| h.push.clone())
                .unwrap_or_default(),
        ]);
    }
    let total: f64 = o.hosts.iter().map(|h| h.seconds).fold(0.0, f64::max);
    let stored = match &o.pushed_to {
        Some(url) => format!("runs in {} (ids above) and pushed to {url}", o.db.display()),
        None => format!("runs in {}", o.db.display()),
    };
    let db = o.pushed_to.as_ref().map_or_else(
        || format!("--db {} ", shell_words::quote(&o.db.display().to_string())),
        |url| format!("--db '{url}' "),
    );
    format!(
        "Campaign {}: secperf {}; {stored}.\n{t}\nSlowest host: {total:.1} s. Side by side: \
         secperf {db}results show --campaign {} (or report --campaign {}).",
        o.campaign.id,
        shell_words::join(&o.campaign.command),
        o.campaign.id,
        o.campaign.id,
    )
}
