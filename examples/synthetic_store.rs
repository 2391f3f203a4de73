//! Writes a results file of N synthetic runs for sizing a shared store:
//! copies of one stored run (by default the `survey` run of
//! tests/fixtures/runs/runs.db: 7 comparisons, 109 pairs), each with a new
//! uuid. The figures are real measurements; only their repetition is
//! synthetic. Used by docs/scripts/pg-sizing.sh:
//!
//!   cargo run --release --example synthetic_store -- OUT.db N [SOURCE.db RUN]

use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(out), Some(n)) = (args.first(), args.get(1)) else {
        eprintln!("usage: synthetic_store OUT.db N [SOURCE.db RUN]");
        std::process::exit(2);
    };
    let n: usize = n.parse()?;
    let source = args.get(2).map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/runs/runs.db"
            ))
        },
        PathBuf::from,
    );
    let run: i64 = args.get(3).map_or(Ok(1), |r| r.parse())?;
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("src.db");
    std::fs::copy(&source, &src)?;
    // Brings the copy to this secperf's schema (run uuids included).
    drop(secperf::store::Store::open(&src)?);
    let conn = rusqlite::Connection::open(&src)?;
    let mut store = secperf::store::Store::open(std::path::Path::new(out))?;
    for i in 0..n {
        conn.execute(
            "UPDATE runs SET uuid = ?1 WHERE id = ?2",
            rusqlite::params![uuid::Uuid::new_v4().to_string(), run],
        )?;
        store.import_run(&src, run, None, None, None)?;
        if (i + 1) % 500 == 0 {
            eprintln!("{} of {n} runs", i + 1);
        }
    }
    Ok(())
}
