//! Helpers the worker-scope mechanisms share (seccomp, Landlock,
//! credentials): the no_new_privs switch, reading the calling thread's
//! `/proc/thread-self/status`, and a classic-BPF builder ([`bpf`]). Nothing
//! here has policy; every system call is checked and named in its error.

pub use crate::sys::bpf;
pub use crate::sys::query::status_field;

use anyhow::{Context, Result};

use crate::sys::{SysError, check_int};

/// `prctl(PR_SET_NO_NEW_PRIVS, 1)` for the calling thread: required before
/// an unprivileged task may install a seccomp filter or a Landlock domain.
/// The flag is per thread and inherited, never cleared.
pub fn set_no_new_privs() -> Result<(), SysError> {
    // SAFETY: prctl with integer arguments only; no memory is passed.
    let r = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    check_int("prctl(PR_SET_NO_NEW_PRIVS)", r).map(|_| ())
}

/// The calling thread's `/proc/thread-self/status` (credentials, seccomp
/// mode and capability sets are per thread).
pub fn thread_status() -> Result<String> {
    const PATH: &str = "/proc/thread-self/status";
    std::fs::read_to_string(PATH).with_context(|| format!("reading {PATH}"))
}

/// Test helpers: running a closure in a fresh thread (seccomp filters,
/// Landlock domains and credentials applied there stay in that thread),
/// and measuring a workload briefly with a mechanism applied in each task.
#[cfg(test)]
pub mod testing {
    use anyhow::Result;

    use crate::mechanisms::{Treatment, WorkerEnv};
    use crate::model::{Mode, Params, WorkloadResult};
    use crate::runner::{MeasureOpts, measure_with};
    use crate::workloads;

    /// Runs `f` in a new thread and returns its result; a panic there is
    /// re-raised here.
    pub fn in_thread<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        match std::thread::spawn(f).join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    }

    /// Measures `workload` (with `params` overriding its defaults) for a
    /// few short slices with `spec` applied in every task.
    pub fn measure_under(
        spec: &str,
        workload: &str,
        params: &[(&str, &str)],
        mode: Mode,
    ) -> Result<WorkloadResult> {
        Brief::new(spec, workload, mode).params(params).measure()
    }

    /// [`measure_under`]; `with_data_dir: false` hides the workload's data
    /// directory from the mechanism (to see a sandbox deny it).
    pub fn measure_under_env(
        spec: &str,
        workload: &str,
        params: &[(&str, &str)],
        mode: Mode,
        with_data_dir: bool,
    ) -> Result<WorkloadResult> {
        let mut b = Brief::new(spec, workload, mode).params(params);
        b.with_data_dir = with_data_dir;
        b.measure()
    }

    /// One measurement of a workload with a mechanism applied in each task.
    pub struct Brief<'a> {
        pub spec: &'a str,
        pub workload: &'a str,
        pub params: &'a [(&'a str, &'a str)],
        pub mode: Mode,
        pub with_data_dir: bool,
        pub samples: u32,
        pub sample_ms: u64,
    }

    impl<'a> Brief<'a> {
        /// One task, 1 warmup + 3 slices of 30 ms.
        pub fn new(spec: &'a str, workload: &'a str, mode: Mode) -> Brief<'a> {
            Brief {
                spec,
                workload,
                params: &[],
                mode,
                with_data_dir: true,
                samples: 3,
                sample_ms: 30,
            }
        }

        pub fn params(mut self, params: &'a [(&'a str, &'a str)]) -> Brief<'a> {
            self.params = params;
            self
        }

        pub fn measure(&self) -> Result<WorkloadResult> {
            let t = Treatment::parse(self.spec)?;
            let def = workloads::find(self.workload).expect("workload exists");
            let mut given = Params::new();
            for (k, v) in self.params {
                given.insert((*k).to_string(), (*v).to_string());
            }
            let cpus = crate::sys::cpus::allowed_cpus()?;
            let opts = MeasureOpts {
                tasks: 1,
                mode: self.mode,
                cpus: cpus.first().map(|&c| vec![c]).unwrap_or_default(),
                warmup: 1,
                samples: self.samples,
                sample_ms: self.sample_ms,
                scratch_root: std::env::temp_dir(),
                cache_dir: std::env::temp_dir().join("secperf-test-cache"),
                params: def.params_with_defaults(&given),
                count: None,
            };
            let with_data_dir = self.with_data_dir;
            let hook = |ctx: &crate::workloads::TaskCtx| {
                t.mechanism.apply_in_worker(
                    &t,
                    &WorkerEnv {
                        workload: def,
                        scratch: ctx.scratch,
                        data_dir: ctx.setup.data_dir.as_deref().filter(|_| with_data_dir),
                        task: ctx.task,
                    },
                )
            };
            measure_with(def, &opts, &hook, &mut |_| {})
        }
    }

    /// Alternates the specs for `rounds` rounds (so drift hits all alike)
    /// and prints the median ns/op of each; a manual timing aid, for
    /// ignored tests run with `--release --ignored --nocapture`.
    pub fn print_timings(workload: &str, params: &[(&str, &str)], specs: &[&str], rounds: usize) {
        let mut all: Vec<Vec<f64>> = vec![Vec::new(); specs.len()];
        for _ in 0..rounds {
            for (i, spec) in specs.iter().enumerate() {
                let mut b = Brief::new(spec, workload, Mode::Process).params(params);
                b.samples = 5;
                b.sample_ms = 100;
                let r = b.measure().unwrap_or_else(|e| panic!("{spec}: {e:#}"));
                all[i].push(r.ns_per_op.median);
            }
        }
        for (spec, mut v) in specs.iter().zip(all) {
            v.sort_by(f64::total_cmp);
            println!(
                "{workload:>10} {spec:<32} median {:>10.1} ns/op  (rounds: {})",
                v[v.len() / 2],
                v.iter()
                    .map(|x| format!("{x:.1}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::Treatment;

    #[test]
    fn reads_status_fields() {
        let s = "Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t3\nCapEff:\t00000000000000ff\n";
        assert_eq!(status_field(s, "Seccomp"), Some("2"));
        assert_eq!(status_field(s, "Seccomp_filters"), Some("3"));
        assert_eq!(status_field(s, "CapEff"), Some("00000000000000ff"));
        assert_eq!(status_field(s, "Nope"), None);
        let own = thread_status().unwrap();
        assert!(status_field(&own, "Name").is_some());
    }

    #[test]
    fn range_checked_params_are_usage_errors() {
        let mut t = Treatment::parse("seccomp").unwrap();
        t.params.insert("filters".into(), "0".into());
        let e = t.param_in_range("filters", 1..=10).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("filters=0"), "{e}");
        let t = Treatment::parse("seccomp,filters=3").unwrap();
        assert_eq!(t.param_in_range("filters", 1..=10).unwrap(), 3);
    }
}
