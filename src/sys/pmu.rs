//! Whether this machine's PMU counts retired instructions: the host side
//! of `--metric instructions`. Virtual machines often have no PMU (this
//! project's development VM has none), and `perf_event_open` of the
//! hardware instructions event then fails with ENOENT or EOPNOTSUPP.

use perf_event::Builder;
use perf_event::events::Hardware;

/// Ok when a counter of the calling thread's retired instructions (user
/// and kernel, as the measuring tasks' counters are opened) opens; else
/// why not, in words.
pub fn instructions_counter() -> Result<(), String> {
    match Builder::new(Hardware::INSTRUCTIONS)
        .observe_self()
        .any_cpu()
        .include_kernel()
        .exclude_hv(true)
        .build()
    {
        Ok(_) => Ok(()),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => format!(
                "there is no hardware PMU here (perf_event_open of the instructions event: \
                 {e}), as in most virtual machines"
            ),
            Some(libc::EACCES) | Some(libc::EPERM) => format!(
                "the kernel refused a counter of instructions ({e}): run as root or lower \
                 /proc/sys/kernel/perf_event_paranoid"
            ),
            _ => format!("a counter of instructions did not open: {e}"),
        }),
    }
}
