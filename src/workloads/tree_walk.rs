//! `tree_walk`: the `openit` program of the creds-2008 reference experiment. One
//! operation is a whole recursive walk of a generated tree (default 266
//! directories and 19255 files, the post's): fstatat every entry, open and
//! close every file, open and read every directory. With the metadata
//! cached this is pure path lookup and permission work, the shape of
//! credential and LSM cost that a file server or a build sees.
//!
//! The tree is created once under the cache directory and reused; it is
//! only ever read. Each walk checks it saw every entry it expects.

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::util::close;
use super::{ParamDef, Setup, SetupCtx, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::{SysError, cstring};

pub struct TreeWalk {
    root: CString,
    expected_entries: u64,
    entries: u64,
    /// One getdents64 buffer per directory depth, reused across walks.
    bufs: Vec<Vec<u8>>,
    st: libc::stat,
}

const GETDENTS_BUF: usize = 32 * 1024;

impl Workload for TreeWalk {
    const NAME: &'static str = "tree_walk";
    const DESCRIPTION: &'static str =
        "recursive fstatat + open of every file and directory of a tree (openit)";
    const HOOKS: &'static [&'static str] = &[
        "inode_permission",
        "inode_getattr",
        "file_open",
        "file_permission (getdents)",
    ];
    const SYSCALLS: &'static [&'static str] = &["newfstatat", "openat", "close", "getdents64"];
    const PARAMS: &'static [ParamDef] = &[
        ParamDef {
            name: "dirs",
            default: "266",
            help: "directories in the tree (not counting its root)",
        },
        ParamDef {
            name: "files",
            default: "19255",
            help: "regular files in the tree",
        },
    ];
    const UNIT: Option<&'static str> = Some("entries");
    const SLOW: bool = true;
    /// It only reads the tree: nothing to clean up.
    const KILL_AT_STOP: bool = true;

    fn validate(params: &Params) -> Result<()> {
        super::check_range(params, Self::NAME, "dirs", 0..=100_000)?;
        super::check_range(params, Self::NAME, "files", 1..=2_000_000)
    }

    fn setup(ctx: &SetupCtx) -> Result<Setup> {
        let dirs = param_u64(ctx.params, Self::NAME, "dirs")?;
        let files = param_u64(ctx.params, Self::NAME, "files")?;
        let root = ensure_tree(ctx.cache, dirs, files)?;
        // Walk once per process: proves the tree is whole and warms the
        // dentry cache. Later measurements (every half of an A/B pair)
        // skip it: each timed walk checks the entry count anyway.
        static CHECKED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
        let mut checked = CHECKED.lock().unwrap_or_else(|p| p.into_inner());
        if !checked.contains(&root) {
            let mut w = TreeWalk::new(&root, dirs + files);
            w.op()
                .with_context(|| format!("checking the tree at {}", root.display()))?;
            checked.push(root.clone());
        }
        Ok(Setup {
            units_per_op: Some(dirs + files),
            data_dir: Some(root),
        })
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let (Some(root), Some(n)) = (&ctx.setup.data_dir, ctx.setup.units_per_op) else {
            bail!("tree_walk: setup did not run");
        };
        Ok(TreeWalk::new(root, n))
    }

    fn op(&mut self) -> Result<(), SysError> {
        self.entries = 0;
        let root = std::mem::take(&mut self.root);
        let r = self.process(libc::AT_FDCWD, &root, 0);
        self.root = root;
        r?;
        // The root itself is processed too.
        if self.entries != self.expected_entries + 1 {
            return Err(SysError {
                call: "tree_walk: entry count changed (tree modified?)",
                errno: libc::ESTALE,
            });
        }
        Ok(())
    }
}

impl TreeWalk {
    fn new(root: &Path, expected_entries: u64) -> Self {
        TreeWalk {
            root: cstring(root),
            expected_entries,
            entries: 0,
            bufs: Vec::new(),
            // SAFETY: libc::stat is plain data; all-zero is valid.
            st: unsafe { std::mem::zeroed() },
        }
    }

    fn process(&mut self, dirfd: libc::c_int, name: &CStr, depth: usize) -> Result<(), SysError> {
        // SAFETY: name is NUL-terminated; st is a valid buffer.
        let r = unsafe {
            libc::fstatat(
                dirfd,
                name.as_ptr(),
                &mut self.st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r < 0 {
            return Err(SysError::last("fstatat"));
        }
        self.entries += 1;
        let fmt = self.st.st_mode & libc::S_IFMT;
        if fmt == libc::S_IFREG {
            // SAFETY: as above.
            let fd =
                unsafe { libc::openat(dirfd, name.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(SysError::last("openat"));
            }
            close(fd)?;
        } else if fmt == libc::S_IFDIR {
            // SAFETY: as above.
            let fd = unsafe {
                libc::openat(
                    dirfd,
                    name.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                )
            };
            if fd < 0 {
                return Err(SysError::last("openat"));
            }
            let r = self.walk_dir(fd, depth + 1);
            close(fd)?;
            r?;
        }
        Ok(())
    }

    fn walk_dir(&mut self, fd: libc::c_int, depth: usize) -> Result<(), SysError> {
        while self.bufs.len() <= depth {
            self.bufs.push(vec![0u8; GETDENTS_BUF]);
        }
        let mut buf = std::mem::take(&mut self.bufs[depth]);
        let r = self.read_entries(fd, depth, &mut buf);
        self.bufs[depth] = buf;
        r
    }

    fn read_entries(
        &mut self,
        fd: libc::c_int,
        depth: usize,
        buf: &mut [u8],
    ) -> Result<(), SysError> {
        loop {
            let n = crate::sys::calls::getdents64(fd, buf)?;
            if n == 0 {
                return Ok(());
            }
            let mut off = 0usize;
            while off < n {
                // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                let name =
                    CStr::from_bytes_until_nul(&buf[off + 19..off + reclen]).map_err(|_| {
                        SysError {
                            call: "getdents64 (malformed record)",
                            errno: libc::EIO,
                        }
                    })?;
                let bytes = name.to_bytes();
                if bytes != b"." && bytes != b".." {
                    // `name` borrows this depth's buffer, which deeper
                    // levels never touch: no copy needed.
                    self.process(fd, name, depth)?;
                }
                off += reclen;
            }
        }
    }
}

/// The tree's path under `cache`, created (once, atomically by rename) if
/// it is not there yet.
pub fn ensure_tree(cache: &Path, dirs: u64, files: u64) -> Result<PathBuf> {
    let root = cache.join("trees").join(format!("d{dirs}-f{files}"));
    if root.is_dir() {
        return Ok(root);
    }
    let parent = root.parent().expect("tree path has a parent");
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let tmp = parent.join(format!(".d{dirs}-f{files}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    build_tree(&tmp, dirs, files)
        .with_context(|| format!("creating the walk tree in {}", tmp.display()))?;
    match std::fs::rename(&tmp, &root) {
        Ok(()) => Ok(root),
        // Another secperf built it at the same time: use theirs.
        Err(_) if root.is_dir() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(root)
        }
        Err(e) => {
            Err(e).with_context(|| format!("renaming {} to {}", tmp.display(), root.display()))
        }
    }
}

/// The directories of the tree, relative to its root: about sqrt(dirs)
/// top-level directories, the rest spread beneath them.
pub fn tree_dirs(dirs: u64) -> Vec<PathBuf> {
    let top = (dirs as f64).sqrt().ceil() as u64;
    let top = top.min(dirs);
    let mut out: Vec<PathBuf> = (0..top).map(|i| PathBuf::from(format!("d{i}"))).collect();
    for j in 0..dirs - top {
        out.push(PathBuf::from(format!("d{}", j % top)).join(format!("s{j}")));
    }
    out
}

fn build_tree(root: &Path, dirs: u64, files: u64) -> Result<()> {
    std::fs::create_dir_all(root)?;
    let all = tree_dirs(dirs);
    for d in &all {
        std::fs::create_dir(root.join(d))?;
    }
    for f in 0..files {
        // Files go round-robin into the root and every directory.
        let slot = (f % (all.len() as u64 + 1)) as usize;
        let dir = if slot == 0 {
            root.to_path_buf()
        } else {
            root.join(&all[slot - 1])
        };
        std::fs::File::create(dir.join(format!("f{f}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_has_the_requested_shape() {
        assert_eq!(tree_dirs(266).len(), 266);
        assert_eq!(tree_dirs(1).len(), 1);
        assert_eq!(tree_dirs(0).len(), 0);
    }

    #[test]
    fn walk_counts_every_entry_and_detects_changes() {
        let cache = tempfile::tempdir().unwrap();
        let root = ensure_tree(cache.path(), 12, 100).unwrap();
        let mut w = TreeWalk::new(&root, 112);
        w.op().unwrap();
        assert_eq!(w.entries, 113);
        // Reused, not rebuilt.
        assert_eq!(ensure_tree(cache.path(), 12, 100).unwrap(), root);
        std::fs::File::create(root.join("extra")).unwrap();
        let e = w.op().unwrap_err();
        assert_eq!(e.errno, libc::ESTALE);
    }

    #[test]
    fn walk_reports_the_failing_call() {
        let mut w = TreeWalk::new(Path::new("/nonexistent/secperf-tree"), 1);
        let e = w.op().unwrap_err();
        assert_eq!((e.call, e.errno), ("fstatat", libc::ENOENT));
    }
}
