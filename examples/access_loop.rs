//! A plain access(R_OK) loop, for checking secperf's attribution against
//! `perf record` + `perf diff` (tests/profile.rs): with `--fsuid`, the
//! thread first sets its fsuid to 65534 so that every access() takes the
//! credential override path, as `-m cred:fsuid` does in secperf's tasks.
//!
//! Usage: access_loop [--fsuid] [--seconds N]

use std::ffi::CString;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fsuid = args.iter().any(|a| a == "--fsuid");
    let seconds: u64 = args
        .iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let dir = std::env::temp_dir().join(format!("secperf-access-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("creating a scratch directory");
    let file = dir.join("f");
    std::fs::write(&file, b"x").expect("creating the file");
    let path = CString::new(file.to_str().expect("utf-8 path")).expect("no NUL");
    if fsuid {
        // SAFETY: setfsuid takes one integer argument; raw, so per thread.
        unsafe { libc::syscall(libc::SYS_setfsuid, 65534u32) };
    }
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut n: u64 = 0;
    while Instant::now() < end {
        for _ in 0..1000 {
            // SAFETY: path is a valid NUL-terminated string.
            if unsafe { libc::access(path.as_ptr(), libc::R_OK) } != 0 {
                eprintln!("access_loop: access: {}", std::io::Error::last_os_error());
                std::process::exit(1);
            }
            n += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{n}");
}
