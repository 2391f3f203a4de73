//! Error kinds that decide the exit code.
//!
//! Everything is an `anyhow::Error` with context; a [`UsageError`] anywhere in
//! the chain means the user asked for something invalid (exit code 2), any
//! other error is a failure of the measurement or the system (exit code 1).

/// Invalid input from the user: exit code 2. The message says how to fix it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    pub fn new(msg: impl Into<String>) -> Self {
        UsageError(msg.into())
    }
}

/// Invalid input found below the command line, where no flag is known:
/// its words name the item and the field (an arm and its `patch=`), and
/// the command line adds the flag the item came from. Exit code 2, as a
/// [`UsageError`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FieldError(pub String);

/// A server that was given (a shared store's PostgreSQL) and cannot be
/// reached, or refuses: exit code 2, as any input that cannot be used; a
/// kind of its own so that a server can answer "try again later" (serve's
/// 503) where a usage error cannot work at all.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unreachable(pub String);

/// Whether an error chain holds an [`Unreachable`].
pub fn is_unreachable(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| e.downcast_ref::<Unreachable>().is_some())
}

/// Returns a usage error (exit code 2) from the current function.
#[macro_export]
macro_rules! usage_bail {
    ($($arg:tt)*) => {
        return Err($crate::error::UsageError::new(format!($($arg)*)).into())
    };
}

/// The user stopped the run (SIGINT/SIGTERM): exit code 130, like a shell.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// A command that ran as asked and ends with a status of its own (`track
/// --once`: 3 for a new alarm of a slowdown): not an error, and nothing is
/// printed for it.
#[derive(Debug, thiserror::Error)]
#[error("exit status {0}")]
pub struct Exit(pub i32);

/// Exit code for an error chain: 2 when any link is a [`UsageError`] (or
/// an [`Unreachable`] server), 130
/// when the run was interrupted, 1 otherwise.
pub fn exit_code(err: &anyhow::Error) -> i32 {
    if let Some(Exit(code)) = err.downcast_ref::<Exit>() {
        *code
    } else if err.chain().any(|e| {
        e.downcast_ref::<UsageError>().is_some() || e.downcast_ref::<FieldError>().is_some()
    }) || is_unreachable(err)
    {
        2
    } else if err
        .chain()
        .any(|e| e.downcast_ref::<Interrupted>().is_some())
    {
        130
    } else {
        1
    }
}
