//! The CLI's side of `engine::revision_ab`: a bisection step or a track
//! test is typed in the engine, and each guest is given it as `overhead`
//! words. The tests here check that those words, parsed as the guest
//! parses them, plan the very comparison the host typed: the arms, the
//! design, the decision, the workload and mechanisms.

use std::time::Duration;

use crate::engine::revision_ab::RevisionAb;
use crate::model::Metric;
use crate::vm::accel::AccelChoice;

/// A series' tests (bisect, track), with the guests' defaults of
/// `--vm-accel` and `--vm-timeout`.
#[allow(clippy::too_many_arguments)]
pub fn revision_ab(
    source: std::path::PathBuf,
    workload: Option<String>,
    command: Vec<String>,
    mechanisms: Vec<String>,
    append: String,
    config: Option<std::path::PathBuf>,
    threshold: f64,
    max_pairs: u32,
    metric: Metric,
    seed: u64,
    db: std::path::PathBuf,
) -> RevisionAb {
    RevisionAb {
        source,
        workload,
        command,
        mechanisms,
        append,
        config,
        threshold,
        max_pairs,
        metric,
        seed,
        accel: AccelChoice::Auto,
        timeout: crate::vm::process::Timeouts::total(Duration::from_secs(
            super::vm::DEFAULT_TIMEOUT_S,
        )),
        db,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bisect::Revision;

    fn rev(c: char) -> Revision {
        Revision {
            commit: c.to_string().repeat(40),
            subject: "s".into(),
        }
    }

    /// The host's `overhead --kernel` line of a test: the two arms, then
    /// the guests' words.
    fn host_argv(ab: &RevisionAb, alpha: f64) -> Vec<String> {
        let mut argv: Vec<String> =
            vec!["secperf".into(), "--db".into(), ab.db.display().to_string()];
        let words = ab.guest_words(alpha);
        argv.push(words[0].clone());
        for (name, r) in [("good", rev('a')), (&RevisionAb::name(&rev('b')), rev('b'))] {
            argv.push("--kernel".into());
            argv.push(ab.arm_spec(name, &r.commit));
        }
        argv.extend(words[1..].iter().cloned());
        argv
    }

    fn parsed(argv: &[String]) -> super::super::overhead::OverheadArgs {
        let cli = super::super::parse_args(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        let super::super::Command::Overhead(o) = cli.command else {
            panic!("not overhead: {argv:?}")
        };
        *o
    }

    fn cases(tree: &std::path::Path) -> Vec<(RevisionAb, f64)> {
        std::fs::write(tree.join("frag"), "CONFIG_AUDIT=y\n").unwrap();
        let base = revision_ab(
            std::fs::canonicalize(tree).unwrap(),
            Some("getppid".into()),
            Vec::new(),
            Vec::new(),
            "audit=1 lsm=landlock,bpf".into(),
            Some(std::fs::canonicalize(tree).unwrap().join("frag")),
            4.0,
            16,
            Metric::Instructions,
            1234,
            "/tmp/t.db".into(),
        );
        let mut timed = base.clone();
        timed.metric = Metric::Time;
        timed.config = None;
        timed.append = String::new();
        timed.threshold = 5.0;
        let mut command = base.clone();
        command.workload = None;
        command.command = vec!["sh".into(), "-c".into(), "echo 'a b' >/dev/null".into()];
        command.mechanisms = vec!["seccomp:filters=4".into(), "audit".into()];
        vec![
            (base, 0.05 * 0.07 / 3.0),
            (timed, 0.05),
            (command, 1.2345678e-5),
        ]
    }

    #[test]
    fn the_guests_words_plan_the_comparison_the_host_typed() {
        let tree = tempfile::tempdir().unwrap();
        for (ab, alpha) in cases(tree.path()) {
            let argv = host_argv(&ab, alpha);
            let typed = format!("{:?}", ab.request(alpha).unwrap());
            // The host's line, parsed as `overhead --kernel` parses it.
            let host = parsed(&argv);
            assert_eq!(
                format!("{:?}", host.boot_request().unwrap()),
                typed,
                "{argv:?}"
            );
            assert_eq!(host.metric.metric(), ab.metric, "{argv:?}");
            // What a guest is given is the typed words, and parsed there
            // it is the same comparison.
            let words = super::super::vm::guest_args(&argv, true);
            assert_eq!(words, ab.guest_words(alpha));
            let mut guest = vec!["secperf".to_string()];
            guest.extend(words);
            let g = parsed(&guest);
            assert_eq!(
                format!("{:?}", g.boot_request().unwrap()),
                typed,
                "{guest:?}"
            );
            assert_eq!(g.metric.metric(), ab.metric);
            // The arms: the host's --kernel values, as the engine makes them.
            let from_argv = crate::engine::kernels::requests(
                &host.kernels,
                host.kernel_config.as_deref(),
                host.layout_control,
            )
            .unwrap();
            let typed_arms = ab.arms("good", &rev('a'), &rev('b')).unwrap();
            assert_eq!(format!("{from_argv:?}"), format!("{typed_arms:?}"));
        }
    }
}
