//! Reaching other machines and a shared store: a PostgreSQL database that
//! holds the runs of many hosts (`conn` connects as libpq would, `schema`
//! keeps its tables in step with the SQLite schema, `push` and `pull` copy
//! runs each way) and OpenSSH hosts that measure themselves (`ssh`).
pub mod conn;
pub mod pull;
pub mod push;
pub mod schema;
pub mod ssh;
pub mod value;
