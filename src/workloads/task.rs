//! One task of a measurement as a workload sees it, will-it-scale's
//! `testcase()` contract: prepare, report ready, wait for the common
//! release, then do operations and bump a counter until told to stop.
//!
//! The harness (the runner) provides the counter, the stop flag and the
//! start line through [`Harness`], over memory it shares with forked tasks;
//! the workloads never see how. The hot loop holds the operation, the counter
//! store and a read of the stop flag, nothing else: the trait is consulted
//! once before the loop, never inside it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use anyhow::Result;

use super::{TaskCtx, Workload};
use crate::sys::{self, SysError};

/// Written by one task on every operation; read by the parent per sample.
/// One cache-line pair per task so tasks never share a line.
#[repr(C, align(128))]
pub struct Counter {
    pub ops: AtomicU64,
    /// Seqlock generation for (ops, done_ns) of slow workloads; odd while
    /// the pair is being written.
    pub seq: AtomicU64,
    /// Monotonic time the last operation completed (slow workloads only).
    pub done_ns: AtomicU64,
    /// User and system CPU time of the processes the task's operations
    /// started and waited for, so far, nanoseconds (workloads that report
    /// it, such as `command`; 0 otherwise).
    pub child_user_ns: AtomicU64,
    pub child_sys_ns: AtomicU64,
}

/// One consistent reading of a [`Counter`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterReading {
    pub ops: u64,
    pub done_ns: u64,
    pub child_user_ns: u64,
    pub child_sys_ns: u64,
}

impl Counter {
    /// Publishes (ops, done_ns) as a consistent pair (single writer).
    #[inline(always)]
    pub fn publish_timed(&self, ops: u64, done_ns: u64) {
        self.publish(ops, done_ns, None);
    }

    /// Publishes (ops, done_ns) and, when given, the children's CPU times
    /// (user, sys ns) as one consistent reading (single writer).
    #[inline(always)]
    pub fn publish(&self, ops: u64, done_ns: u64, child_cpu_ns: Option<(u64, u64)>) {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        self.ops.store(ops, Ordering::Relaxed);
        self.done_ns.store(done_ns, Ordering::Relaxed);
        if let Some((user, sys)) = child_cpu_ns {
            self.child_user_ns.store(user, Ordering::Relaxed);
            self.child_sys_ns.store(sys, Ordering::Relaxed);
        }
        self.seq.store(s + 2, Ordering::Release);
    }

    /// Reads (ops, done_ns) consistently.
    pub fn read_timed(&self) -> (u64, u64) {
        let r = self.read();
        (r.ops, r.done_ns)
    }

    /// Reads every field consistently.
    pub fn read(&self) -> CounterReading {
        loop {
            let s1 = self.seq.load(Ordering::Acquire);
            let r = CounterReading {
                ops: self.ops.load(Ordering::Relaxed),
                done_ns: self.done_ns.load(Ordering::Relaxed),
                child_user_ns: self.child_user_ns.load(Ordering::Relaxed),
                child_sys_ns: self.child_sys_ns.load(Ordering::Relaxed),
            };
            fence(Ordering::Acquire);
            let s2 = self.seq.load(Ordering::Relaxed);
            if s1 == s2 && s1.is_multiple_of(2) {
                return r;
            }
            std::hint::spin_loop();
        }
    }
}

/// What the harness gives one task.
pub trait Harness {
    /// Where this task counts its operations.
    fn counter(&self) -> &Counter;
    /// Turns non-zero when the loop must end.
    fn stop_flag(&self) -> &AtomicU32;
    /// Marks the task prepared, then blocks until every task is released.
    fn ready_and_wait(&self);
    /// Marks the task finished without error.
    fn done(&self);
    /// Marks the task failed with `msg` (the call and errno).
    fn fail(&self, msg: &str);
}

/// A monomorphised task body ([`task_body`] for one workload).
pub type TaskFn = fn(&TaskCtx, &dyn Harness, &AfterPrepare);

/// Runs in each task after it prepared, before it reports ready (where a
/// worker-scope mechanism is applied).
pub type AfterPrepare<'a> = dyn Fn(&TaskCtx) -> Result<()> + Sync + 'a;

/// The body every task runs, for workload `W`: prepare, the after-prepare
/// hook, wait for release, loop, report.
pub fn task_body<W: Workload>(ctx: &TaskCtx, harness: &dyn Harness, after: &AfterPrepare) {
    let mut w = match W::prepare(ctx) {
        Ok(w) => w,
        Err(e) => return harness.fail(&format!("prepare: {e:#}")),
    };
    if let Err(e) = after(ctx) {
        return harness.fail(&format!("{e:#}"));
    }
    if let Err(e) = w.after_mechanism() {
        return harness.fail(&format!("{e:#}"));
    }
    harness.ready_and_wait();
    match hot_loop(&mut w, harness.counter(), harness.stop_flag()) {
        Ok(()) => harness.done(),
        Err(e) => harness.fail(&w.failure_detail().unwrap_or_else(|| e.to_string())),
    }
}

/// The timed loop. Kept out of line so its code is the same whatever the
/// caller, and small enough to read in `perf annotate`.
#[inline(never)]
fn hot_loop<W: Workload>(w: &mut W, counter: &Counter, stop: &AtomicU32) -> Result<(), SysError> {
    let mut n: u64 = 0;
    while stop.load(Ordering::Relaxed) == 0 {
        w.op()?;
        n += 1;
        if W::SLOW {
            counter.publish(n, sys::monotonic_ns(), w.child_cpu_ns());
        } else {
            counter.ops.store(n, Ordering::Relaxed);
        }
    }
    Ok(())
}
