//! A small classic-BPF (`struct sock_filter`) builder for seccomp filters.
//!
//! Programs are written with symbolic forward jumps ([`Label`]) and
//! assembled into the kernel's encoding, which checks what the kernel's
//! own checker would reject: backward jumps, conditional jumps further
//! than 255 instructions, unbound labels, and lengths outside
//! 1..=[`BPF_MAXINSNS`]. Only the instructions seccomp filters need are
//! offered (32-bit absolute loads, `JEQ`/`JA`, `RET`).
//!
//! The kernel's definitions are libc's, not redefined: [`SockFilter`] and
//! [`SockFprog`] are `libc::sock_filter` and `libc::sock_fprog`, and the
//! opcodes below are libc's `BPF_*`. libc types those `__u32` (C's macros
//! are untyped) where `sock_filter.code` is `__u16`, so they are converted
//! here, once, for every user of classic BPF in the crate. (The eBPF
//! instructions of the BPF LSM are another encoding, `struct bpf_insn`:
//! see `mechanisms::bpf_lsm::insn`.)

use thiserror::Error;

/// `struct sock_filter` from `<linux/filter.h>`: one instruction.
pub use libc::sock_filter as SockFilter;
/// `struct sock_fprog`: a program as the kernel takes it (see [`fprog`]).
pub use libc::sock_fprog as SockFprog;

/// A libc `BPF_*` opcode part as `sock_filter.code` holds it; a value that
/// does not fit fails the build.
const fn code(c: u32) -> u16 {
    assert!(
        c <= u16::MAX as u32,
        "BPF opcode wider than sock_filter.code"
    );
    c as u16
}

// Instruction classes.
pub const BPF_LD: u16 = code(libc::BPF_LD);
pub const BPF_JMP: u16 = code(libc::BPF_JMP);
pub const BPF_RET: u16 = code(libc::BPF_RET);
// Load size and mode.
pub const BPF_W: u16 = code(libc::BPF_W);
pub const BPF_ABS: u16 = code(libc::BPF_ABS);
// Jump operations and operand source.
pub const BPF_JA: u16 = code(libc::BPF_JA);
pub const BPF_JEQ: u16 = code(libc::BPF_JEQ);
pub const BPF_JGE: u16 = code(libc::BPF_JGE);
pub const BPF_K: u16 = code(libc::BPF_K);

/// The most instructions one classic-BPF program may have.
pub const BPF_MAXINSNS: usize = libc::BPF_MAXINSNS as usize;

/// The `struct sock_fprog` seccomp(2) takes for `prog`. It points into
/// `prog`, so it is only valid while `prog` lives. The kernel only reads
/// the program (libc's field is `*mut` as the C struct's is not `const`).
/// A program longer than `len` can say gets `u16::MAX`, which the kernel
/// refuses (it takes at most [`BPF_MAXINSNS`]) instead of running a
/// truncated filter.
pub fn fprog(prog: &[SockFilter]) -> SockFprog {
    SockFprog {
        len: libc::c_ushort::try_from(prog.len()).unwrap_or(libc::c_ushort::MAX),
        filter: prog.as_ptr().cast_mut(),
    }
}

/// A forward jump target, bound to a position with [`Program::bind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label(usize);

/// Where a conditional jump goes on one outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The following instruction (offset 0).
    Next,
    To(Label),
}

#[derive(Debug, Clone, Copy)]
enum Item {
    Plain(SockFilter),
    Cond {
        code: u16,
        k: u32,
        jt: Target,
        jf: Target,
    },
    Ja(Label),
}

/// Why a program could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BuildError {
    #[error("BPF label {0} is used but never bound")]
    Unbound(usize),
    #[error("BPF instruction {at}: jump to {to} is not forward")]
    Backward { at: usize, to: usize },
    #[error("BPF instruction {at}: conditional jump over {off} instructions (at most 255)")]
    TooFar { at: usize, off: usize },
    #[error("BPF program of {0} instructions (the kernel accepts 1 to 4096)")]
    Length(usize),
}

/// A program being written.
#[derive(Debug, Default)]
pub struct Program {
    items: Vec<Item>,
    labels: Vec<Option<usize>>,
}

impl Program {
    pub fn new() -> Program {
        Program::default()
    }

    /// Instructions so far.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// A new, unbound label.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `l` to the next instruction to be added.
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.items.len());
    }

    /// `A = *(u32 *)(data + off)`.
    pub fn load_abs(&mut self, off: u32) {
        self.items
            .push(Item::Plain(stmt(BPF_LD | BPF_W | BPF_ABS, off)));
    }

    /// `if A == k goto jt else goto jf`.
    pub fn jeq(&mut self, k: u32, jt: Target, jf: Target) {
        self.items.push(Item::Cond {
            code: BPF_JMP | BPF_JEQ | BPF_K,
            k,
            jt,
            jf,
        });
    }

    /// `goto l` (32-bit offset).
    pub fn ja(&mut self, l: Label) {
        self.items.push(Item::Ja(l));
    }

    /// `return k`.
    pub fn ret(&mut self, k: u32) {
        self.items.push(Item::Plain(stmt(BPF_RET | BPF_K, k)));
    }

    /// Resolves the labels into the kernel's encoding.
    pub fn assemble(&self) -> Result<Vec<SockFilter>, BuildError> {
        if self.items.is_empty() || self.items.len() > BPF_MAXINSNS {
            return Err(BuildError::Length(self.items.len()));
        }
        let offset = |at: usize, l: Label| -> Result<usize, BuildError> {
            let to = self.labels[l.0].ok_or(BuildError::Unbound(l.0))?;
            if to <= at {
                return Err(BuildError::Backward { at, to });
            }
            Ok(to - at - 1)
        };
        let short = |at: usize, t: Target| -> Result<u8, BuildError> {
            match t {
                Target::Next => Ok(0),
                Target::To(l) => {
                    let off = offset(at, l)?;
                    u8::try_from(off).map_err(|_| BuildError::TooFar { at, off })
                }
            }
        };
        self.items
            .iter()
            .enumerate()
            .map(|(at, item)| match *item {
                Item::Plain(f) => Ok(f),
                Item::Cond { code, k, jt, jf } => Ok(SockFilter {
                    code,
                    jt: short(at, jt)?,
                    jf: short(at, jf)?,
                    k,
                }),
                Item::Ja(l) => Ok(stmt(BPF_JMP | BPF_JA, offset(at, l)? as u32)),
            })
            .collect()
    }
}

/// An instruction without jump offsets.
pub const fn stmt(code: u16, k: u32) -> SockFilter {
    SockFilter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// A classic-BPF interpreter for the instructions [`Program`] emits, over
/// `data` (loads are native-endian, as seccomp's). Returns the value of
/// the `RET` reached; `None` for an instruction it does not know, a load
/// out of bounds or running off the end.
#[cfg(test)]
pub fn run(prog: &[SockFilter], data: &[u8]) -> Option<u32> {
    let mut a: u32 = 0;
    let mut pc = 0usize;
    while let Some(insn) = prog.get(pc) {
        pc += 1;
        match insn.code {
            c if c == BPF_LD | BPF_W | BPF_ABS => {
                let off = insn.k as usize;
                let bytes = data.get(off..off + 4)?;
                a = u32::from_ne_bytes(bytes.try_into().ok()?);
            }
            c if c == BPF_JMP | BPF_JA => pc += insn.k as usize,
            c if c == BPF_JMP | BPF_JEQ | BPF_K => {
                pc += usize::from(if a == insn.k { insn.jt } else { insn.jf });
            }
            c if c == BPF_RET | BPF_K => return Some(insn.k),
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_linux_filter_h() {
        assert_eq!(BPF_LD | BPF_W | BPF_ABS, 0x20);
        assert_eq!(BPF_JMP | BPF_JEQ | BPF_K, 0x15);
        assert_eq!(BPF_JMP | BPF_JA, 0x05);
        assert_eq!(BPF_RET | BPF_K, 0x06);
        assert_eq!(BPF_JMP | BPF_JGE | BPF_K, 0x35);
        assert_eq!(BPF_MAXINSNS, 4096);
        assert_eq!(std::mem::size_of::<SockFilter>(), 8);
        let mut p = Program::new();
        let yes = p.label();
        p.load_abs(4);
        p.jeq(0xc000_003e, Target::To(yes), Target::Next);
        p.ret(0);
        p.bind(yes);
        p.ret(0x7fff_0000);
        let code = p.assemble().unwrap();
        assert_eq!(
            code,
            vec![
                SockFilter {
                    code: 0x20,
                    jt: 0,
                    jf: 0,
                    k: 4
                },
                SockFilter {
                    code: 0x15,
                    jt: 1,
                    jf: 0,
                    k: 0xc000_003e
                },
                SockFilter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0
                },
                SockFilter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x7fff_0000
                },
            ]
        );
        let mut data = [0u8; 8];
        data[4..8].copy_from_slice(&0xc000_003eu32.to_ne_bytes());
        assert_eq!(run(&code, &data), Some(0x7fff_0000));
        data[4] ^= 1;
        assert_eq!(run(&code, &data), Some(0));
    }

    #[test]
    fn long_jumps_use_ja_and_short_ones_are_checked() {
        let mut p = Program::new();
        let end = p.label();
        p.load_abs(0);
        p.ja(end);
        for _ in 0..300 {
            p.ret(1);
        }
        p.bind(end);
        p.ret(2);
        let code = p.assemble().unwrap();
        assert_eq!(code[1], stmt(0x05, 300));
        assert_eq!(run(&code, &[0; 4]), Some(2));

        let mut p = Program::new();
        let far = p.label();
        p.load_abs(0);
        p.jeq(7, Target::To(far), Target::Next);
        for _ in 0..256 {
            p.ret(1);
        }
        p.bind(far);
        p.ret(2);
        assert_eq!(p.assemble(), Err(BuildError::TooFar { at: 1, off: 256 }));
    }

    #[test]
    fn rejects_unbound_backward_and_bad_lengths() {
        let mut p = Program::new();
        let l = p.label();
        p.ja(l);
        assert_eq!(p.assemble(), Err(BuildError::Unbound(0)));

        let mut p = Program::new();
        let l = p.label();
        p.bind(l);
        p.ja(l);
        assert_eq!(p.assemble(), Err(BuildError::Backward { at: 0, to: 0 }));

        assert_eq!(Program::new().assemble(), Err(BuildError::Length(0)));
        let mut p = Program::new();
        for _ in 0..=BPF_MAXINSNS {
            p.ret(0);
        }
        assert_eq!(p.assemble(), Err(BuildError::Length(BPF_MAXINSNS + 1)));
    }

    #[test]
    fn fprog_points_at_the_program() {
        let code = vec![stmt(BPF_RET | BPF_K, 0); 3];
        let f = fprog(&code);
        assert_eq!(usize::from(f.len), 3);
        assert_eq!(f.filter.cast_const(), code.as_ptr());
        let long = vec![stmt(BPF_RET | BPF_K, 0); 70_000];
        assert_eq!(fprog(&long).len, u16::MAX);
    }
}
