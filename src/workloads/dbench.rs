//! `dbench`: a file-server client's mix, the `dbench` rows of reference
//! the avc-2004 experiment (throughput in MB/s by number of clients, where SELinux's
//! global AVC lock cost 6% at one client and 15% at eight). Each task is
//! one client working in its own directory (`scratch/task<N>`); one
//! operation is this fixed sequence, all relative to the client directory:
//!
//! 1. `openat("f", O_WRONLY|O_CREAT|O_TRUNC)`, `file_kb` KiB written in
//!    4 KiB `write`s (the last one shorter if `file_kb` is not a multiple
//!    of 4), `close`;
//! 2. `fstatat("f")` (the size must be `file_kb` KiB);
//! 3. a listing of the directory: `openat(".", O_DIRECTORY)`, one
//!    `getdents64` (it must hold exactly `.`, `..` and `f`), `close`;
//! 4. `openat("f", O_RDONLY)`, read back in 4 KiB `read`s (every read must
//!    return what was asked; the total is `file_kb` KiB), `close`;
//! 5. `renameat("f", "g")`, `unlinkat("g")`: the directory is empty again.
//!
//! The hooks reached: `inode_create`, `file_alloc_security`, `file_open`
//! (three opens), `file_permission` (every read, write and getdents64),
//! `inode_getattr`, `inode_rename`, `inode_unlink`, and `inode_permission`
//! on each name lookup. The rate of bytes (written + read) is reported as
//! the post reported dbench, in MB/s.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};

use anyhow::{Context, Result};

use super::eventfd::short_or_errno;
use super::util::{close, open_dir, task_dir};
use super::{ParamDef, Setup, SetupCtx, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::SysError;

/// The size of every write and read, and of the listing buffer.
const IO_SIZE: usize = 4096;

pub struct Dbench {
    /// The client's directory, for the `*at()` calls.
    dir: OwnedFd,
    first: CString,
    second: CString,
    dot: CString,
    file_bytes: usize,
    wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    dents: Vec<u8>,
    st: libc::stat,
}

impl Workload for Dbench {
    const NAME: &'static str = "dbench";
    const DESCRIPTION: &'static str = "file-server mix per client: create + write, stat, list, \
         read back, rename, unlink a file (dbench)";
    const HOOKS: &'static [&'static str] = &[
        "inode_create",
        "file_alloc_security",
        "file_open",
        "file_permission",
        "inode_getattr",
        "inode_rename",
        "inode_unlink",
        "inode_permission",
    ];
    const SYSCALLS: &'static [&'static str] = &[
        "openat",
        "write",
        "close",
        "newfstatat",
        "getdents64",
        "read",
        "renameat",
        "unlinkat",
    ];
    const PARAMS: &'static [ParamDef] = &[ParamDef {
        name: "file_kb",
        default: "64",
        help: "KiB written and read back per operation (4 KiB per call)",
    }];
    const UNIT: Option<&'static str> = Some("bytes");

    fn validate(params: &Params) -> Result<()> {
        super::check_range(params, Self::NAME, "file_kb", 4..=16384)
    }

    fn setup(ctx: &SetupCtx) -> Result<Setup> {
        let kb = param_u64(ctx.params, Self::NAME, "file_kb")?;
        Ok(Setup {
            // Written once and read once.
            units_per_op: Some(2 * kb * 1024),
            data_dir: None,
        })
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let kb = param_u64(ctx.params, Self::NAME, "file_kb")?;
        let base = task_dir(ctx.scratch, ctx.task)?;
        let dir = open_dir(&base)?;
        let mut w = Dbench {
            dir,
            first: CString::new("f").expect("no NUL"),
            second: CString::new("g").expect("no NUL"),
            dot: CString::new(".").expect("no NUL"),
            file_bytes: kb as usize * 1024,
            wbuf: (0..IO_SIZE).map(|i| (i % 251) as u8).collect(),
            rbuf: vec![0; IO_SIZE],
            dents: vec![0; IO_SIZE],
            // SAFETY: libc::stat is plain data; all-zero is valid.
            st: unsafe { std::mem::zeroed() },
        };
        // One operation outside the timed loop: proves the sequence works
        // here and allocates what the file system allocates on first use.
        w.op()
            .with_context(|| format!("dbench: first operation in {}", base.display()))?;
        Ok(w)
    }

    fn op(&mut self) -> Result<(), SysError> {
        let dir = self.dir.as_raw_fd();

        // 1. Create and write.
        let fd = openat(
            dir,
            &self.first,
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
        )?;
        let mut left = self.file_bytes;
        while left > 0 {
            let n = left.min(IO_SIZE);
            // SAFETY: wbuf holds IO_SIZE >= n readable bytes.
            let w = unsafe { libc::write(fd.as_raw_fd(), self.wbuf.as_ptr().cast(), n) };
            if w != n as isize {
                return Err(short_or_errno("write", w));
            }
            left -= n;
        }
        close(fd.into_raw_fd())?;

        // 2. Stat.
        // SAFETY: the name is NUL-terminated; st is a valid buffer.
        let r = unsafe { libc::fstatat(dir, self.first.as_ptr(), &mut self.st, 0) };
        if r < 0 {
            return Err(SysError::last("fstatat"));
        }
        if self.st.st_size != self.file_bytes as libc::off_t {
            return Err(SysError {
                call: "fstatat (size differs from what was written)",
                errno: libc::EIO,
            });
        }

        // 3. List the directory.
        let dfd = openat(dir, &self.dot, libc::O_RDONLY | libc::O_DIRECTORY)?;
        let n = crate::sys::calls::getdents64(dfd.as_raw_fd(), &mut self.dents)?;
        if count_entries(&self.dents[..n]) != 3 {
            return Err(SysError {
                call: "getdents64 (client directory does not hold exactly ., .. and f)",
                errno: libc::EIO,
            });
        }
        close(dfd.into_raw_fd())?;

        // 4. Read back.
        let fd = openat(dir, &self.first, libc::O_RDONLY)?;
        let mut left = self.file_bytes;
        while left > 0 {
            let n = left.min(IO_SIZE);
            // SAFETY: rbuf is valid for IO_SIZE >= n bytes of writes.
            let r = unsafe { libc::read(fd.as_raw_fd(), self.rbuf.as_mut_ptr().cast(), n) };
            if r != n as isize {
                return Err(short_or_errno("read", r));
            }
            left -= n;
        }
        close(fd.into_raw_fd())?;

        // 5. Rename, then remove.
        // SAFETY: both names are NUL-terminated; dir is an open directory.
        let r = unsafe { libc::renameat(dir, self.first.as_ptr(), dir, self.second.as_ptr()) };
        if r < 0 {
            return Err(SysError::last("renameat"));
        }
        // SAFETY: as above.
        let r = unsafe { libc::unlinkat(dir, self.second.as_ptr(), 0) };
        if r < 0 {
            return Err(SysError::last("unlinkat"));
        }
        Ok(())
    }
}

/// `openat(dir, name, flags | O_CLOEXEC, 0644)` as an owned descriptor, so
/// an error later in the operation still closes it.
#[inline(always)]
fn openat(dir: libc::c_int, name: &CString, flags: libc::c_int) -> Result<OwnedFd, SysError> {
    // SAFETY: name is NUL-terminated; the mode is passed for O_CREAT.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(SysError::last("openat"));
    }
    // SAFETY: fd was just returned by openat and nobody else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The number of `linux_dirent64` records in `buf` (0 if malformed).
fn count_entries(buf: &[u8]) -> usize {
    let mut off = 0usize;
    let mut count = 0;
    while off + 19 <= buf.len() {
        // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
        let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
        if reclen == 0 {
            return 0;
        }
        off += reclen;
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::workloads::def;

    #[test]
    fn op_leaves_the_client_directory_empty_and_checks_the_listing() {
        let scratch = tempfile::tempdir().unwrap();
        let mut params = Params::new();
        params.insert("file_kb".into(), "10".into());
        let setup = Setup::default();
        let ctx = TaskCtx {
            task: 0,
            tasks: 1,
            scratch: scratch.path(),
            params: &params,
            setup: &setup,
            stop: None,
        };
        let mut w = Dbench::prepare(&ctx).unwrap();
        w.op().unwrap();
        let dir = scratch.path().join("task0");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        // A stray file breaks the expected listing: reported, not ignored.
        std::fs::write(dir.join("stray"), b"x").unwrap();
        let e = w.op().unwrap_err();
        assert!(e.call.starts_with("getdents64"), "{e}");
        assert_eq!(e.errno, libc::EIO);
    }

    #[test]
    fn measures_briefly() {
        let d = def::<Dbench>();
        let r = crate::runner::testing::measure_briefly(&d, Mode::Process, 100, &Params::new());
        assert!(r.ops_per_sec.median > 0.0);
        let u = r.unit_rate.unwrap();
        assert_eq!((u.unit.as_str(), u.per_op), ("bytes", 2 * 64 * 1024));
    }
}
