//! `file_copy`: UnixBench's "File Copy" test. One operation copies a
//! per-task source file of `size` bytes to a per-task destination file
//! with read()/write() through a `buf`-byte buffer: lseek both descriptors
//! to 0, ftruncate the destination to 0, then read and write until EOF,
//! checking every transfer is whole and the total is exactly `size`.
//!
//! Every read and write passes `rw_verify_area()` and so the
//! `file_permission` hook, once per buffer: a small buffer (UnixBench runs
//! 256, 1024 and 4096 bytes) makes the hook's share large, a big one makes
//! it small, which is why `buf` is a parameter. The truncate reaches
//! `file_truncate` (Landlock's truncate right). It is in the catalog
//! because UnixBench's file tests are in the index of avc-2004, and
//! because it is the plainest data path a security hook sits on.
//!
//! The files live in the task's scratch directory, so the page cache of
//! that filesystem (often tmpfs) does the work: this measures system call
//! and copy cost, not a disk. Rates are also given in bytes per second.

use std::os::fd::{AsRawFd, OwnedFd};

use anyhow::{Context, Result};

use super::eventfd::short_or_errno;
use super::util::{open_file, task_dir};
use super::{ParamDef, Setup, SetupCtx, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::SysError;

pub struct FileCopy {
    src: OwnedFd,
    dst: OwnedFd,
    buf: Vec<u8>,
    size: u64,
}

impl Workload for FileCopy {
    const NAME: &'static str = "file_copy";
    const DESCRIPTION: &'static str =
        "copy of a per-task file with read()/write() through a small buffer (UnixBench File Copy)";
    const HOOKS: &'static [&'static str] =
        &["file_permission (every read and write)", "file_truncate"];
    const SYSCALLS: &'static [&'static str] = &["lseek", "ftruncate", "read", "write"];
    const PARAMS: &'static [ParamDef] = &[
        ParamDef {
            name: "size",
            default: "262144",
            help: "bytes per copy (the source file's size)",
        },
        ParamDef {
            name: "buf",
            default: "1024",
            help: "bytes per read() and write() (UnixBench uses 256, 1024 and 4096)",
        },
    ];
    const UNIT: Option<&'static str> = Some("bytes");
    /// About a millisecond per copy at the defaults, more with a bigger
    /// `size` or a smaller `buf`: slices are measured between completions.
    const SLOW: bool = true;

    fn validate(params: &Params) -> Result<()> {
        super::check_range(params, Self::NAME, "size", 1..=1 << 30)?;
        super::check_range(params, Self::NAME, "buf", 1..=1 << 20)
    }

    fn setup(ctx: &SetupCtx) -> Result<Setup> {
        Ok(Setup {
            units_per_op: Some(param_u64(ctx.params, Self::NAME, "size")?),
            data_dir: None,
        })
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let size = param_u64(ctx.params, Self::NAME, "size")?;
        let buf = param_u64(ctx.params, Self::NAME, "buf")? as usize;
        let dir = task_dir(ctx.scratch, ctx.task)?;
        let src_path = dir.join("copy.src");
        write_source(&src_path, size)
            .with_context(|| format!("file_copy: creating {}", src_path.display()))?;
        Ok(FileCopy {
            src: open_file(&src_path, libc::O_RDONLY)?,
            dst: open_file(
                &dir.join("copy.dst"),
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
            )?,
            buf: vec![0u8; buf],
            size,
        })
    }

    #[inline(always)]
    fn op(&mut self) -> Result<(), SysError> {
        let (src, dst) = (self.src.as_raw_fd(), self.dst.as_raw_fd());
        // SAFETY: lseek and ftruncate take plain integers on our own fds.
        let r = unsafe { libc::lseek(src, 0, libc::SEEK_SET) };
        if r != 0 {
            return Err(short_or_errno("lseek", r as isize));
        }
        // SAFETY: as above.
        if unsafe { libc::ftruncate(dst, 0) } != 0 {
            return Err(SysError::last("ftruncate"));
        }
        // SAFETY: as above.
        let r = unsafe { libc::lseek(dst, 0, libc::SEEK_SET) };
        if r != 0 {
            return Err(short_or_errno("lseek", r as isize));
        }
        let mut copied: u64 = 0;
        loop {
            // SAFETY: buf is valid for buf.len() bytes of writes.
            let n = unsafe { libc::read(src, self.buf.as_mut_ptr().cast(), self.buf.len()) };
            if n < 0 {
                return Err(SysError::last("read"));
            }
            if n == 0 {
                break;
            }
            // SAFETY: the first n bytes of buf were just filled by read.
            let w = unsafe { libc::write(dst, self.buf.as_ptr().cast(), n as usize) };
            if w != n {
                return Err(short_or_errno("write", w));
            }
            copied += n as u64;
            // A source that grew (someone else writing it) would make the
            // loop longer every time: stop at once.
            if copied > self.size {
                break;
            }
        }
        if copied != self.size {
            return Err(SysError {
                call: "read (copied byte count differs from size: source changed?)",
                errno: libc::EIO,
            });
        }
        Ok(())
    }
}

/// Writes `size` bytes of a non-zero pattern to `path` (truncating it).
fn write_source(path: &std::path::Path, size: u64) -> Result<()> {
    use std::io::Write as _;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let chunk: Vec<u8> = (0..65536u32).map(|i| (i % 251) as u8 + 1).collect();
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::workloads::def;

    fn params(size: &str, buf: &str) -> Params {
        let mut p = Params::new();
        p.insert("size".into(), size.into());
        p.insert("buf".into(), buf.into());
        p
    }

    #[test]
    fn file_copy_measures_and_reports_bytes() {
        let r = crate::runner::testing::measure_briefly(
            &def::<FileCopy>(),
            Mode::Process,
            50,
            &params("262144", "1024"),
        );
        assert!(r.ops_per_sec.median > 0.0);
        let u = r.unit_rate.expect("bytes rate");
        assert_eq!((u.unit.as_str(), u.per_op), ("bytes", 262144));
    }

    #[test]
    fn copy_is_exact_even_with_an_odd_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::default();
        let p = params("10007", "256");
        let ctx = TaskCtx {
            task: 0,
            tasks: 1,
            scratch: dir.path(),
            params: &p,
            setup: &setup,
            stop: None,
        };
        let mut w = FileCopy::prepare(&ctx).unwrap();
        for _ in 0..3 {
            w.op().unwrap();
        }
        let t = dir.path().join("task0");
        let src = std::fs::read(t.join("copy.src")).unwrap();
        assert_eq!(src.len(), 10007);
        assert_eq!(std::fs::read(t.join("copy.dst")).unwrap(), src);
        // A source that changed size is an error, not a faster figure.
        std::fs::write(t.join("copy.src"), b"short").unwrap();
        let e = w.op().unwrap_err();
        assert_eq!(e.errno, libc::EIO);
    }

    #[test]
    fn validate_checks_ranges() {
        assert!(FileCopy::validate(&params("1", "1")).is_ok());
        assert!(FileCopy::validate(&params("0", "1024")).is_err());
        assert!(FileCopy::validate(&params("1024", "0")).is_err());
        assert!(FileCopy::validate(&params("1024", "2097152")).is_err());
    }
}
