//! `secperf serve [--bind ADDR:PORT]`: the results store (a file, or a
//! shared PostgreSQL store) in a browser, read-only (see `serve`). Parses the address, opens the store, says in
//! one line where it listens and what it serves, then serves until
//! stopped (Ctrl-C).

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Result;

use crate::serve::{DEFAULT_PORT, Served};

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The address and port to listen on. The default, 127.0.0.1:8457,
    /// is this machine only; another address lets anyone who reaches it
    /// read the store (secperf warns). Port 0: any free port (the line
    /// printed at start says which).
    #[arg(long, value_name = "ADDR:PORT", default_value_t = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)))]
    pub bind: SocketAddr,

    /// Require a token, held in this file, of every request. The file is
    /// one line, 16 characters or more, readable by its owner only; every
    /// request must then carry it, as
    /// `Authorization: Bearer TOKEN` or, in a browser, by opening a page
    /// once with `?token=TOKEN` (a cookie keeps it).
    #[arg(long, value_name = "FILE")]
    pub token: Option<std::path::PathBuf>,
}

pub fn serve(args: ServeArgs, db: Option<&Path>, json: bool) -> Result<()> {
    let token = args
        .token
        .as_deref()
        .map(crate::serve::read_token)
        .transpose()?;
    let served = match super::reading::shared_url(db) {
        Some(url) => Served::shared(&url)?,
        None => Served::file(&crate::store::resolve_db_path(db)?)?,
    };
    let listener = crate::serve::listen(args.bind)?;
    let at = listener.local_addr()?;
    if !crate::serve::is_local(&at) && token.is_none() {
        crate::say!(
            "secperf: serve: warning: {at} is not this machine's loopback: anyone who can reach it \
             reads every run, command line and host name in {} (--token FILE asks them for a \
             token)",
            served.shown
        );
    }
    let url = format!("http://{at}/");
    if json {
        // One line, so that a script reads it before the server ends.
        println!(
            "{}",
            serde_json::json!({ "url": url, "db": served.shown, "read_only": true })
        );
    } else {
        println!(
            "secperf serve: {url} serves the runs, campaigns, tracks and bisections of {} (read-only; \
             Ctrl-C stops it)",
            served.shown
        );
    }
    use std::io::Write as _;
    std::io::stdout().flush()?;
    crate::serve::http::serve(listener, served, token)
}
