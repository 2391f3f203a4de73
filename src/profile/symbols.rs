//! Names for sampled addresses. Kernel addresses are looked up in a
//! `kallsyms` file (the running kernel's `/proc/kallsyms` by default),
//! user addresses in secperf's own process (forked tasks share its
//! mapping) through `blazesym`.
//!
//! The kernel side is a small table of our own rather than blazesym's
//! kallsyms resolver, because attribution needs what that resolver drops:
//! each symbol's type (only text counts) and module (`[bpf]`, a real
//! module, ftrace's trampolines). With it, an address in the kernel image
//! resolves to the function below it; outside the image, to a module
//! function, or to a JIT-compiled BPF program. eBPF programs (BPF LSM)
//! are listed as `bpf_prog_<tag>_<name> [bpf]` only while loaded, so
//! their lines are read from `/proc/kallsyms` while the tasks are alive
//! ([`BpfSymbols::snapshot`]). Classic BPF programs, which is what a
//! seccomp filter is, are JIT-compiled too but never listed: an executable
//! address outside every listed symbol is one of those ([`CBPF_JIT`]).
//!
//! When `kptr_restrict` or lockdown hide kernel addresses, `kallsyms`
//! shows zeros; every kernel sample then lands in one unsymbolised bucket
//! and the profile says why.

use std::path::Path;

use anyhow::{Context, Result};
use blazesym::symbolize::source::{Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};

/// The name given to a JIT-compiled classic BPF program (a seccomp filter).
pub const CBPF_JIT: &str = "[jit classic BPF]";

/// How far past a `[bpf]` or ftrace symbol an address may lie and still
/// belong to it (JIT images and trampolines are small; kallsyms has no
/// sizes).
const JIT_SYMBOL_REACH: u64 = 4096;

/// One text symbol of a kallsyms table.
#[derive(Debug, Clone, PartialEq)]
struct Ksym {
    addr: u64,
    name: String,
    /// The `[module]` column, empty for the kernel image.
    module: String,
}

/// The text symbols of a kallsyms file and the bounds of the kernel image.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelTable {
    syms: Vec<Ksym>,
    image: (u64, u64),
}

impl KernelTable {
    /// Text symbols (types t, T, w, W) of a kallsyms text.
    pub fn parse(kallsyms: &str) -> KernelTable {
        let mut syms: Vec<Ksym> = kallsyms
            .lines()
            .filter_map(|l| {
                let mut f = l.split_ascii_whitespace();
                let addr = u64::from_str_radix(f.next()?, 16).ok()?;
                let kind = f.next()?;
                let name = f.next()?;
                let module = f
                    .next()
                    .unwrap_or("")
                    .trim_matches(|c| c == '[' || c == ']');
                (addr != 0 && matches!(kind, "t" | "T" | "w" | "W")).then(|| Ksym {
                    addr,
                    name: name.to_string(),
                    module: module.to_string(),
                })
            })
            .collect();
        syms.sort_by_key(|s| s.addr);
        let find = |n: &str| {
            syms.iter()
                .find(|s| s.name == n && s.module.is_empty())
                .map(|s| s.addr)
        };
        let image = match (find("_stext"), find("_etext")) {
            (Some(a), Some(b)) if a < b => (a, b),
            // No bounds listed: the core symbols' span.
            _ => {
                let core = syms.iter().filter(|s| s.module.is_empty());
                (
                    core.clone().map(|s| s.addr).min().unwrap_or(0),
                    core.map(|s| s.addr).max().unwrap_or(0),
                )
            }
        };
        KernelTable { syms, image }
    }

    fn below(&self, addr: u64) -> Option<&Ksym> {
        let i = self.syms.partition_point(|s| s.addr <= addr);
        i.checked_sub(1).map(|i| &self.syms[i])
    }

    /// The name of kernel address `addr`, live BPF programs in `bpf` laid over.
    fn name(&self, addr: u64, bpf: &BpfSymbols) -> String {
        let in_image = addr >= self.image.0 && addr < self.image.1;
        if in_image {
            return match self.below(addr) {
                Some(s) => s.name.clone(),
                None => format!("[unknown {addr:#x}]"),
            };
        }
        let listed = self.below(addr).filter(|s| !s.module.is_empty());
        let live = bpf.below(addr);
        let near = |start: u64| addr - start < JIT_SYMBOL_REACH;
        match (listed, live) {
            (_, Some((start, name))) if near(start) && listed.is_none_or(|s| s.addr <= start) => {
                name.to_string()
            }
            (Some(s), _) if s.module != "bpf" && !s.module.starts_with("__builtin") => {
                s.name.clone()
            }
            (Some(s), _) if near(s.addr) => s.name.clone(),
            _ => CBPF_JIT.to_string(),
        }
    }
}

/// `kallsyms` lines of JIT-compiled BPF programs, sorted by address.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BpfSymbols {
    syms: Vec<(u64, String)>,
}

impl BpfSymbols {
    /// The `[bpf]` lines of a `kallsyms` text.
    pub fn parse(kallsyms: &str) -> BpfSymbols {
        let mut syms: Vec<(u64, String)> = kallsyms
            .lines()
            .filter(|l| l.trim_end().ends_with("[bpf]"))
            .filter_map(|l| {
                let mut f = l.split_ascii_whitespace();
                let addr = u64::from_str_radix(f.next()?, 16).ok()?;
                let _kind = f.next()?;
                let name = f.next()?;
                (addr != 0).then(|| (addr, name.to_string()))
            })
            .collect();
        syms.sort();
        BpfSymbols { syms }
    }

    /// The BPF programs loaded now (empty when `/proc/kallsyms` cannot be read).
    pub fn snapshot() -> BpfSymbols {
        std::fs::read_to_string("/proc/kallsyms")
            .map(|t| BpfSymbols::parse(&t))
            .unwrap_or_default()
    }

    /// The program starting closest at or below `addr`.
    fn below(&self, addr: u64) -> Option<(u64, &str)> {
        let i = self.syms.partition_point(|(a, _)| *a <= addr);
        i.checked_sub(1)
            .map(|i| (self.syms[i].0, self.syms[i].1.as_str()))
    }

    pub fn len(&self) -> usize {
        self.syms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
}

/// Whether a `kallsyms` text hides addresses (every address zero).
pub fn addresses_hidden(kallsyms: &str) -> bool {
    let mut lines = kallsyms
        .lines()
        .filter_map(|l| l.split_ascii_whitespace().next())
        .take(1000)
        .peekable();
    lines.peek().is_some() && lines.all(|a| a.bytes().all(|b| b == b'0'))
}

/// Looks up kernel and user addresses.
pub struct Symbols {
    symbolizer: Symbolizer,
    kernel: KernelTable,
    /// Kernel addresses are hidden: every kernel sample is unsymbolised.
    pub kernel_hidden: bool,
}

/// Symbol names never contain `;` in folded stacks (it separates frames).
fn clean(name: &str) -> String {
    name.replace(';', ":")
}

impl Symbols {
    /// Symbols from `kallsyms` (`/proc/kallsyms` for the running kernel).
    pub fn new(kallsyms: &Path) -> Result<Symbols> {
        let text = std::fs::read_to_string(kallsyms)
            .with_context(|| format!("reading {}", kallsyms.display()))?;
        Ok(Symbols {
            symbolizer: Symbolizer::new(),
            kernel: KernelTable::parse(&text),
            kernel_hidden: addresses_hidden(&text),
        })
    }

    /// Names of kernel addresses (None when addresses are hidden), live
    /// JIT-ed BPF programs from `bpf` laid over the table.
    pub fn kernel(&self, addrs: &[u64], bpf: &BpfSymbols) -> Vec<Option<String>> {
        if self.kernel_hidden {
            return vec![None; addrs.len()];
        }
        addrs
            .iter()
            .map(|&a| Some(clean(&self.kernel.name(a, bpf))))
            .collect()
    }

    /// Names of user addresses in secperf's own process.
    pub fn user(&self, addrs: &[u64]) -> Vec<Option<String>> {
        if addrs.is_empty() {
            return Vec::new();
        }
        let mut process = Process::new(blazesym::Pid::Slf);
        process.debug_syms = false;
        process.perf_map = false;
        let src = Source::Process(process);
        match self.symbolizer.symbolize(&src, Input::AbsAddr(addrs)) {
            Ok(syms) => syms
                .into_iter()
                .map(|s| match s {
                    Symbolized::Sym(sym) => Some(clean(&sym.name)),
                    Symbolized::Unknown(_) => None,
                })
                .collect(),
            Err(_) => vec![None; addrs.len()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
ffffffff81000000 T _stext
ffffffff81001000 T entry_SYSCALL_64
ffffffff81002000 T do_syscall_64
ffffffff81003000 t __audit_syscall_exit
ffffffff81004000 T prepare_creds
ffffffff81004800 D some_data
ffffffff81005000 T _etext
ffffffff83b256f0 R __stop_runtime_ptr_USER_PTR_MAX
ffffffffc0100000 t nft_do_chain\t[nf_tables]
ffffffffc0200000 t bpf_prog_3a8ab9d2b7a1e6c4_\t[bpf]
ffffffffc0201000 t bpf_prog_7cc47bbf07148bfe_restrict_open\t[bpf]
";

    fn symbols_from(text: &str) -> (tempfile::TempDir, Symbols) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("kallsyms");
        std::fs::write(&path, text).expect("write fixture");
        let s = Symbols::new(&path).expect("fixture loads");
        (dir, s)
    }

    #[test]
    fn kernel_addresses_resolve_to_the_symbol_below() {
        let (_dir, s) = symbols_from(FIXTURE);
        let names = s.kernel(
            &[
                0xffffffff81001010,
                0xffffffff81003fff,
                0xffffffff81004000,
                0xffffffffc0100020,
                // Past a data symbol inside the image: still the function.
                0xffffffff81004810,
            ],
            &BpfSymbols::default(),
        );
        let names: Vec<&str> = names.iter().map(|n| n.as_deref().unwrap_or("")).collect();
        assert_eq!(
            names,
            [
                "entry_SYSCALL_64",
                "__audit_syscall_exit",
                "prepare_creds",
                "nft_do_chain",
                "prepare_creds"
            ]
        );
    }

    #[test]
    fn bpf_programs_from_a_live_snapshot_win_where_they_start_closer() {
        let (_dir, s) = symbols_from(FIXTURE);
        // The snapshot taken while the task lived has a program the
        // static table never saw.
        let live = BpfSymbols::parse(
            "ffffffffc0300000 t bpf_prog_aaaaaaaaaaaaaaaa_\t[bpf]\nffffffff81001000 T entry_SYSCALL_64\n",
        );
        assert_eq!(live.len(), 1);
        let names = s.kernel(&[0xffffffffc0300040, 0xffffffff81002004], &live);
        assert_eq!(names[0].as_deref(), Some("bpf_prog_aaaaaaaaaaaaaaaa_"));
        assert_eq!(names[1].as_deref(), Some("do_syscall_64"));
        // Programs in the static table itself resolve as any symbol.
        let names = s.kernel(&[0xffffffffc0201010], &BpfSymbols::default());
        assert_eq!(
            names[0].as_deref(),
            Some("bpf_prog_7cc47bbf07148bfe_restrict_open")
        );
    }

    #[test]
    fn unlisted_jit_code_is_classic_bpf() {
        let (_dir, s) = symbols_from(FIXTURE);
        // Above every symbol (never the last data symbol), and far past
        // the last listed BPF program: a seccomp filter's JIT image.
        let names = s.kernel(
            &[0xffffffffc0400000, 0xffffffffc0203000],
            &BpfSymbols::default(),
        );
        assert_eq!(names[0].as_deref(), Some(CBPF_JIT));
        assert_eq!(names[1].as_deref(), Some(CBPF_JIT));
        // A real module's function may be long.
        let names = s.kernel(&[0xffffffffc0180000], &BpfSymbols::default());
        assert_eq!(names[0].as_deref(), Some("nft_do_chain"));
    }

    #[test]
    fn hidden_addresses_are_detected() {
        let hidden = FIXTURE
            .lines()
            .map(|l| format!("0000000000000000{}\n", &l[16..]))
            .collect::<String>();
        assert!(addresses_hidden(&hidden));
        assert!(!addresses_hidden(FIXTURE));
        assert!(!addresses_hidden(""));
        let (_dir, s) = symbols_from(&hidden);
        assert!(s.kernel_hidden);
        assert_eq!(
            s.kernel(&[0xffffffff81001010], &BpfSymbols::default()),
            vec![None]
        );
    }

    #[test]
    fn own_user_addresses_resolve() {
        let (_dir, s) = symbols_from(FIXTURE);
        let addr = own_user_addresses_resolve as fn() as usize as u64;
        let names = s.user(&[addr]);
        let name = names[0].as_deref().unwrap_or("");
        assert!(name.contains("own_user_addresses_resolve"), "{name:?}");
    }

    #[test]
    fn names_never_contain_the_frame_separator() {
        assert_eq!(
            clean("core::array::<impl [u8; 4]>::fmt"),
            "core::array::<impl [u8: 4]>::fmt"
        );
    }
}
