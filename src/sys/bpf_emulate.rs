//! Classic-BPF emulation of seccomp filters, as the kernel runs them:
//! whether the action cache holds a syscall number (the kernel's
//! `seccomp_is_const_allow`, instruction for instruction), and how many
//! instructions a filter executes for a call. Used to price a filter per
//! syscall (`secperf predict`) and to test the filters secperf builds.

use super::bpf::SockFilter;

const LD_W_ABS: u16 = 0x20;
const ALU_AND_K: u16 = 0x54;
const JMP_JA: u16 = 0x05;
const JMP_JEQ_K: u16 = 0x15;
const JMP_JGT_K: u16 = 0x25;
const JMP_JGE_K: u16 = 0x35;
const JMP_JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;

/// How an emulation ended.
enum End {
    /// A `RET` with this value, after this many instructions.
    Ret { steps: usize, value: u32 },
    /// A load of an argument, when arguments are unknown.
    ArgumentLoad,
    /// An instruction seccomp does not take here, a bad load, or running
    /// off the end.
    Invalid,
}

/// Runs `prog` for call `nr` on `arch`. With `args_known`, every argument
/// (and the instruction pointer) reads as 0; without, a load of one ends
/// the run, as in the kernel's cache emulation.
fn emulate(prog: &[SockFilter], arch: u32, nr: u32, args_known: bool) -> End {
    let mut a: u32 = 0;
    let mut pc = 0usize;
    let mut steps = 0usize;
    while let Some(insn) = prog.get(pc) {
        steps += 1;
        match insn.code {
            LD_W_ABS => {
                a = match insn.k {
                    OFF_NR => nr,
                    OFF_ARCH => arch,
                    _ if !args_known => return End::ArgumentLoad,
                    k if k % 4 == 0 && k < 64 => 0,
                    _ => return End::Invalid,
                }
            }
            RET_K => {
                return End::Ret {
                    steps,
                    value: insn.k,
                };
            }
            JMP_JA => pc += insn.k as usize,
            JMP_JEQ_K | JMP_JGE_K | JMP_JGT_K | JMP_JSET_K => {
                let taken = match insn.code {
                    JMP_JEQ_K => a == insn.k,
                    JMP_JGE_K => a >= insn.k,
                    JMP_JGT_K => a > insn.k,
                    _ => a & insn.k != 0,
                };
                pc += usize::from(if taken { insn.jt } else { insn.jf });
            }
            ALU_AND_K => a &= insn.k,
            _ => return End::Invalid,
        }
        pc += 1;
    }
    End::Invalid
}

/// Whether the kernel caches `nr` on `arch` as allowed for this filter
/// (`seccomp_is_const_allow`): true when it returns ALLOW having loaded
/// only the number and the architecture; false when the emulation meets
/// an argument load or another instruction, or a constant other action.
pub fn const_allow(prog: &[SockFilter], arch: u32, nr: u32) -> bool {
    matches!(
        emulate(prog, arch, nr, false),
        End::Ret { value, .. } if value == libc::SECCOMP_RET_ALLOW
    )
}

/// Runs `prog` for call `nr` on `arch` with every argument (and the
/// instruction pointer) 0: the instructions executed up to the `RET`, and
/// its value. `None` for an instruction seccomp does not accept here, a
/// bad load or running off the end.
pub fn run_counted(prog: &[SockFilter], arch: u32, nr: u32) -> Option<(usize, u32)> {
    match emulate(prog, arch, nr, true) {
        End::Ret { steps, value } => Some((steps, value)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arch() -> u32 {
        crate::sys::audit::AUDIT_ARCH_NATIVE.unwrap_or(0xc000_003e)
    }

    #[test]
    fn bad_programs_give_none() {
        let prog = [SockFilter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 2,
        }];
        assert_eq!(run_counted(&prog, arch(), 1), None);
        assert_eq!(run_counted(&[], arch(), 1), None);
        assert!(!const_allow(&[], arch(), 1));
    }
}
