//! Each alarm of a track that covers several commits (a batch, or
//! commits that did not build before it) bisected inside them, with the
//! bisection engine and the track's alpha as its error rate, stored after
//! every step (`results show --bisection ID`), and its first commit named
//! in the track. Killed half-way, the next start goes on from the steps
//! stored.

use std::path::Path;

use anyhow::Result;

use crate::engine::series::revision_ab::RevisionAb;
use crate::model::bisect::{Revision, Tested};
use crate::model::track::{Direction, TrackRecord};

/// A bisection step inside an alarm's commits: a commit against the
/// alarm's baseline.
struct BatchSteps<'a> {
    ab: &'a mut RevisionAb,
    good: Revision,
}

impl crate::engine::series::bisect::StepTester for BatchSteps<'_> {
    fn test(&mut self, revision: &Revision, alpha: f64) -> Result<Tested> {
        crate::say!(
            "secperf: track: bisecting: testing {} against {}",
            revision.short(),
            self.good.abbrev()
        );
        self.ab
            .test("good", &self.good, revision, alpha, "track bisection")
    }
}

/// Bisects each alarm over several commits that has no bisection yet (a
/// batch, or commits that did not build before it), with the bisection
/// engine and the track's alpha as its error rate; stores the bisection
/// (`results show --bisection ID`) and names its first commit in the
/// track. Killed half-way, the next start goes on from its steps.
pub fn bisect_alarms(
    rec: &mut TrackRecord,
    branch: &[Revision],
    ab: &mut RevisionAb,
    db_path: &Path,
) -> Result<()> {
    use crate::model::bisect::{BisectionRecord, Outcome, Status, Step};
    for i in 0..rec.points.len() {
        let p = &rec.points[i];
        if p.alarm().is_none() || p.culprit.is_some() || p.bisection.is_some() {
            continue;
        }
        let id = crate::engine::series::key(&format!("track {} {}", rec.id, p.position));
        // Killed half-way, it goes on from the steps stored.
        let stored = crate::store::Store::open(db_path)?.bisection(&id).ok();
        let before = BisectionRecord::resumed_steps(stored.as_ref());
        let (done, undecided) = crate::engine::series::bisect::split_steps(&before);
        let suspects = super::suspects(rec, i, branch);
        crate::say!(
            "secperf: track: bisecting the {} commits since {} for the alarm at {} (bisection \
             {id})",
            suspects.len(),
            p.baseline.abbrev(),
            p.revision.short()
        );
        let mut steps = BatchSteps {
            ab,
            good: p.baseline.clone(),
        };
        let q = &rec.question;
        let speed_up = p.alarm() == Some(Direction::Faster);
        let created_at = stored.map_or_else(chrono::Utc::now, |b| b.created_at);
        let record = |status: Status, outcome: Outcome, attempts: &[Step]| BisectionRecord {
            id: id.clone(),
            created_at,
            updated_at: chrono::Utc::now(),
            command: std::env::args().skip(1).collect(),
            source: q.source.clone(),
            workload: if speed_up {
                format!(
                    "{} (a speed-up: its sign turned, so that it reads as a slowdown)",
                    q.workload
                )
            } else {
                q.workload.clone()
            },
            append: q.append.clone(),
            mechanisms: q.mechanisms.clone(),
            threshold_pct: q.threshold_pct,
            alpha: q.alpha,
            metric: q.metric,
            status,
            outcome,
            attempts: attempts.to_vec(),
        };
        let mut finished = before.clone();
        let outcome = super::bisect_alarm(
            rec,
            i,
            branch,
            &mut steps,
            &done,
            undecided,
            &mut |s, progress, left| {
                finished.push(s.clone());
                crate::store::Store::open(db_path)?.put_bisection(&record(
                    Status::InProgress,
                    progress,
                    &finished,
                ))?;
                crate::say!(
                    "secperf: track: bisecting: {} is {}; {left} revision(s) left",
                    s.revision.short(),
                    s.class.word()
                );
                Ok(())
            },
        )?;
        let now = chrono::Utc::now();
        let mut store = crate::store::Store::open(db_path)?;
        store.put_bisection(&record(Status::Finished, outcome.clone(), &finished))?;
        let p = &mut rec.points[i];
        p.bisection = Some(id.clone());
        match outcome.first_bad {
            Some(c) => {
                crate::say!(
                    "secperf: track: the alarm at {} came with {}",
                    p.revision.abbrev(),
                    c.short()
                );
                p.culprit = Some(c);
                p.culprit_note = None;
            }
            None => {
                p.culprit_note = Some(format!("bisection {id}: {}", outcome.verdict));
            }
        }
        rec.updated_at = now;
        store.put_track(rec)?;
    }
    Ok(())
}
