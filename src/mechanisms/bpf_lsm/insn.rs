//! eBPF instructions of the no-op LSM program, encoded by hand.
//!
//! The measured program is the cheapest one the kernel accepts for an LSM
//! hook, `r0 = 0; exit` (allow), so what a measurement shows is the cost of
//! the BPF trampoline and program call on the hook, not of any policy.
//! `struct bpf_insn` is 8 bytes: opcode, a byte holding dst_reg (low nibble
//! on little-endian, as C bitfields lay it out) and src_reg, a 16-bit
//! offset and a 32-bit immediate (include/uapi/linux/bpf.h).
//!
//! This is the crate's one place for eBPF's encoding. libc has none of
//! it (no `struct bpf_insn`, no eBPF-only opcodes), so those are written
//! here by hand; the parts `<linux/bpf_common.h>` shares with classic BPF
//! (`BPF_JMP`, `BPF_K`) are libc's. Classic BPF (`struct sock_filter`,
//! seccomp's) is another encoding, in `crate::sys::bpf`.

/// A libc `BPF_*` opcode part as `bpf_insn.code` holds it; a value that
/// does not fit fails the build.
const fn code(c: u32) -> u8 {
    assert!(c <= u8::MAX as u32, "BPF opcode wider than bpf_insn.code");
    c as u8
}

/// Instruction class: 64-bit ALU (eBPF only; classic BPF's `BPF_MISC`).
pub const BPF_ALU64: u8 = 0x07;
/// Instruction class: jumps (libc's, shared with classic BPF).
pub const BPF_JMP: u8 = code(libc::BPF_JMP);
/// ALU operation: move (eBPF only).
pub const BPF_MOV: u8 = 0xb0;
/// Source operand: the immediate (libc's, shared with classic BPF).
pub const BPF_K: u8 = code(libc::BPF_K);
/// Jump operation: return from the program (eBPF only).
pub const BPF_EXIT: u8 = 0x90;

/// `struct bpf_insn`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BpfInsn {
    pub code: u8,
    /// dst_reg:4 and src_reg:4, in the bitfield order of the target.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

/// Packs two 4-bit register numbers like the C bitfields `dst_reg:4,
/// src_reg:4` do on this target.
const fn regs(dst: u8, src: u8) -> u8 {
    if cfg!(target_endian = "little") {
        (dst & 0x0f) | ((src & 0x0f) << 4)
    } else {
        ((dst & 0x0f) << 4) | (src & 0x0f)
    }
}

impl BpfInsn {
    /// `dst = imm` (64-bit, sign-extended).
    pub const fn mov64_imm(dst: u8, imm: i32) -> BpfInsn {
        BpfInsn {
            code: BPF_ALU64 | BPF_MOV | BPF_K,
            regs: regs(dst, 0),
            off: 0,
            imm,
        }
    }

    /// `exit`: return r0.
    pub const fn exit() -> BpfInsn {
        BpfInsn {
            code: BPF_JMP | BPF_EXIT,
            regs: 0,
            off: 0,
            imm: 0,
        }
    }

    /// The 8 bytes the kernel reads, in native byte order.
    pub fn to_bytes(self) -> [u8; 8] {
        let off = self.off.to_ne_bytes();
        let imm = self.imm.to_ne_bytes();
        [
            self.code, self.regs, off[0], off[1], imm[0], imm[1], imm[2], imm[3],
        ]
    }
}

/// The measured program: `r0 = 0; exit`.
pub const NOOP_PROGRAM: [BpfInsn; 2] = [BpfInsn::mov64_imm(0, 0), BpfInsn::exit()];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<BpfInsn>(), 8);
        assert_eq!(std::mem::align_of::<BpfInsn>(), 4);
        assert_eq!(std::mem::offset_of!(BpfInsn, off), 2);
        assert_eq!(std::mem::offset_of!(BpfInsn, imm), 4);
    }

    #[test]
    fn encodes_the_noop_program() {
        assert_eq!(BPF_ALU64 | BPF_MOV | BPF_K, 0xb7);
        assert_eq!(BPF_JMP | BPF_EXIT, 0x95);
        let bytes: Vec<u8> = NOOP_PROGRAM.iter().flat_map(|i| i.to_bytes()).collect();
        assert_eq!(
            bytes,
            [0xb7, 0, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn registers_and_immediates_land_in_place() {
        // r3 = -1: dst in the low nibble, imm little-endian.
        assert_eq!(
            BpfInsn::mov64_imm(3, -1).to_bytes(),
            [0xb7, 0x03, 0, 0, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(
            BpfInsn::mov64_imm(10, 0x0102_0304).to_bytes(),
            [0xb7, 0x0a, 0, 0, 0x04, 0x03, 0x02, 0x01]
        );
        // The in-memory struct is what to_bytes says (the kernel copies it).
        let insn = BpfInsn::mov64_imm(2, 7);
        // SAFETY: BpfInsn is repr(C), 8 bytes without padding; viewing it
        // as bytes reads only initialised memory.
        let raw: [u8; 8] = unsafe { std::mem::transmute(insn) };
        assert_eq!(raw, insn.to_bytes());
    }
}
