//! What every secperf does before its command, and `secperf restore`:
//! a guest prepared, scratch directories recorded, and what a killed
//! secperf left changed put back from its journal.

use anyhow::Result;

/// What every secperf does first, before its command: in a VM guest the
/// host booted, record the kernel (and give SELinux a policy when it has
/// none); record scratch directories in the state directory, so that the
/// next start can remove those of a run that was killed; and, unless the
/// command is `restore` (which does it itself and reports it), put back
/// what a secperf killed while it had changed system state left in its
/// journal. An error (the guest could not be prepared) has been printed.
pub fn at_start(restoring: bool) -> Result<()> {
    if let Err(e) = super::boots::vm::prepare_guest() {
        crate::say!("secperf: error: preparing the VM guest: {e:#}");
        return Err(e);
    }
    crate::runner::scratch::set_records_dir(
        crate::safety::state_dir().join(crate::runner::scratch::RECORDS),
    );
    let recovered = if restoring {
        Ok(Vec::new())
    } else {
        crate::safety::recover_at_start()
    };
    match recovered {
        Ok(restored) => {
            for r in restored {
                crate::say!("secperf: restored after an earlier interrupted run: {r}");
            }
            for d in crate::safety::sweep_scratch_at_start() {
                crate::say!(
                    "secperf: removed {}, the scratch directory of an earlier run that was killed",
                    d.display()
                );
            }
        }
        Err(e) => crate::say!(
            "secperf: warning: could not restore state left by an earlier run: {e:#} (try `secperf restore`)"
        ),
    }
    Ok(())
}

/// `secperf restore`: undoes what a killed secperf left in the journal,
/// saying what (`json`: as one JSON document).
pub fn restore(json: bool) -> Result<()> {
    crate::safety::restore_command(json)
}
