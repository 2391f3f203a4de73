//! The memory the parent and its tasks share: a release flag, a stop flag,
//! and one slot per task with its operation counter on a cache line of its
//! own (128 bytes: adjacent-line prefetch pairs 64-byte lines), so counting
//! never makes tasks fight over a line. MAP_SHARED anonymous memory, so
//! the same code serves forked processes and threads.

use std::sync::atomic::{AtomicI32, AtomicU8, AtomicU32, Ordering};

use anyhow::Result;

use crate::sys::{futex_wait, futex_wake_all};
pub use crate::workloads::task::Counter;

/// Task states, in `TaskInfo::state`.
pub const STARTING: u32 = 0;
pub const READY: u32 = 1;
pub const DONE: u32 = 2;
pub const FAILED: u32 = 3;

const ERR_BYTES: usize = 1976;

#[repr(C, align(128))]
pub struct Flags {
    pub go: AtomicU32,
    pub stop: AtomicU32,
}

#[repr(C, align(128))]
pub struct TaskInfo {
    pub state: AtomicU32,
    pub tid: AtomicI32,
    pub err_len: AtomicU32,
    pub err: [AtomicU8; ERR_BYTES],
}

#[repr(C)]
pub struct TaskSlot {
    pub counter: Counter,
    pub info: TaskInfo,
}

/// The shared mapping. Dropping it unmaps it (in the parent; forked tasks
/// never return, so they never drop it).
pub struct Shm {
    base: *mut u8,
    len: usize,
    tasks: usize,
}

// SAFETY: everything in the mapping is an atomic; the pointer is only used
// to hand out shared references to those atomics.
unsafe impl Sync for Shm {}
// SAFETY: as above; the mapping is not tied to a thread.
unsafe impl Send for Shm {}

impl Shm {
    pub fn new(tasks: usize) -> Result<Shm> {
        let len = std::mem::size_of::<Flags>() + tasks * std::mem::size_of::<TaskSlot>();
        // SAFETY: anonymous shared mapping; the kernel zero-fills it, and
        // all-zero bytes are valid atomics.
        let p = crate::sys::query::mmap_shared_anon(len)?;
        Ok(Shm {
            base: p,
            len,
            tasks,
        })
    }

    pub fn flags(&self) -> &Flags {
        // SAFETY: the mapping starts with a Flags, page-aligned, zero-initialised.
        unsafe { &*(self.base as *const Flags) }
    }

    pub fn slot(&self, i: usize) -> &TaskSlot {
        assert!(i < self.tasks, "task slot {i} out of range");
        // SAFETY: slot i lies inside the mapping (checked above); the
        // offset keeps 128-byte alignment because Flags is 128 bytes.
        unsafe {
            &*(self
                .base
                .add(std::mem::size_of::<Flags>() + i * std::mem::size_of::<TaskSlot>())
                as *const TaskSlot)
        }
    }

    pub fn tasks(&self) -> usize {
        self.tasks
    }

    /// Releases every waiting task at once.
    pub fn release(&self) {
        self.flags().go.store(1, Ordering::Release);
        futex_wake_all(&self.flags().go);
    }

    /// Blocks until [`Shm::release`].
    pub fn wait_for_release(&self) {
        let go = &self.flags().go;
        while go.load(Ordering::Acquire) == 0 {
            futex_wait(go, 0);
        }
    }

    pub fn request_stop(&self) {
        self.flags().stop.store(1, Ordering::Relaxed);
        // Tasks still waiting for release must not stay blocked.
        self.release();
    }
}

impl Drop for Shm {
    fn drop(&mut self) {
        // SAFETY: base/len are exactly the mapping created in new().
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

impl TaskInfo {
    /// Records a failure message and marks the task failed. A message too
    /// long for the slot keeps its start and its end (where the errno is).
    pub fn fail(&self, msg: &str) {
        let msg = shorten_middle(msg, ERR_BYTES);
        let bytes = msg.as_bytes();
        let n = bytes.len().min(ERR_BYTES);
        for (dst, &b) in self.err.iter().zip(&bytes[..n]) {
            dst.store(b, Ordering::Relaxed);
        }
        self.err_len.store(n as u32, Ordering::Relaxed);
        self.state.store(FAILED, Ordering::Release);
    }

    pub fn error(&self) -> String {
        let n = (self.err_len.load(Ordering::Acquire) as usize).min(ERR_BYTES);
        let bytes: Vec<u8> = self.err[..n]
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// `msg` cut to at most `max` bytes by replacing its middle with " ... ".
fn shorten_middle(msg: &str, max: usize) -> String {
    if msg.len() <= max {
        return msg.to_string();
    }
    let keep = (max - 5) / 2;
    let mut head = keep;
    while !msg.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = msg.len() - keep;
    while !msg.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{} ... {}", &msg[..head], &msg[tail..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_sit_on_their_own_lines() {
        assert_eq!(std::mem::size_of::<Flags>(), 128);
        assert_eq!(std::mem::size_of::<Counter>(), 128);
        assert_eq!(std::mem::size_of::<TaskSlot>() % 128, 0);
        let shm = Shm::new(3).unwrap();
        for i in 0..3 {
            let a = &shm.slot(i).counter as *const Counter as usize;
            assert_eq!(a % 128, 0);
        }
    }

    #[test]
    fn error_messages_round_trip_and_truncate() {
        let shm = Shm::new(1).unwrap();
        let info = &shm.slot(0).info;
        info.fail("openat: ENOENT");
        assert_eq!(info.state.load(Ordering::Acquire), FAILED);
        assert_eq!(info.error(), "openat: ENOENT");
        let long = format!("openat {}: ENAMETOOLONG", "d/".repeat(2000));
        info.fail(&long);
        let e = info.error();
        assert!(
            e.len() <= ERR_BYTES && e.starts_with("openat d/") && e.ends_with(": ENAMETOOLONG"),
            "{e}"
        );
    }

    #[test]
    fn timed_pair_is_consistent() {
        let shm = Shm::new(1).unwrap();
        let c = &shm.slot(0).counter;
        c.publish_timed(7, 123);
        assert_eq!(c.read_timed(), (7, 123));
    }
}
