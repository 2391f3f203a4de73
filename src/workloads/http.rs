//! `http`: ApacheBench against a web server on loopback, the `Apachebench`
//! rows of the avc-2004 reference experiment (a 500 kB document at concurrency 1 to
//! 8, transfer rate in KB/s; SELinux cost 22% there, through the socket
//! and network hooks rather than the AVC lock). Each task is one client,
//! so the concurrency is the task count, as `ab -c`. One operation is one
//! request without keep-alive (as `ab` without `-k`): `socket`, two
//! `setsockopt`s (the receive and send timeouts, so a dead server is an
//! error and never a hang), `connect` to 127.0.0.1, one `write` of
//! `GET /doc HTTP/1.1`, `read`s of 8 KiB (ApacheBench's buffer) until the
//! header and exactly `Content-Length` = `size_kb` KiB of body arrived
//! (status 200 and the length are checked; the connection closing early
//! is EIO), `close`. The client does not wait for the server's FIN.
//!
//! Hooks reached, client and server side: `socket_create`,
//! `socket_post_create`, `socket_setsockopt`, `socket_connect`,
//! `socket_accept`, `socket_sendmsg`, `socket_recvmsg`, `file_permission`
//! (every `read`/`write` on the socket), `file_alloc_security`, and the
//! network hooks of every segment on loopback (`socket_sock_rcv_skb`,
//! SELinux's netfilter hooks when labelled networking is on).
//!
//! The server lives in the measuring process: `setup` binds a listener on
//! 127.0.0.1 port 0 (an ephemeral port), writes the port in decimal to
//! `scratch/http/port` (the `Setup::data_dir` is `scratch/http`; each task
//! reads the port there in `prepare`), and starts one server thread per
//! task, each accepting on the shared listener (a prefork-style pool: no
//! thread is created per request). A server thread reads the request
//! header, writes the prepared response (header with `Content-Length` and
//! `Connection: close`, then the body) and closes. In process mode the
//! tasks are forked after `setup` and connect to the parent's threads
//! (fork copies only the forking thread); in thread mode they share the
//! process. Either way server and clients share the CPUs, as `ab` and
//! `httpd` did in the post.
//!
//! Stopping: the trait has no teardown, so the measurement's end is seen
//! through its scratch directory, which the harness removes when it
//! returns. The listener has a 200 ms accept timeout; on every timeout a
//! server thread exits if `scratch/http/port` is gone, or if no connection
//! came for 30 s (a backstop should the directory outlive the
//! measurement). The last thread out closes the listener. Threads are
//! detached, so each is gone within about 200 ms of the measurement's end.

use std::io::{Read, Write as _};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::eventfd::short_or_errno;
use super::util::close;
use super::{ParamDef, Setup, SetupCtx, TaskCtx, Workload, param_u64};
use crate::model::Params;
use crate::sys::{self, SysError, check_int};

/// The one request a client sends.
const REQUEST: &[u8] = b"GET /doc HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: secperf\r\n\
Accept: */*\r\nConnection: close\r\n\r\n";
/// Client read size.
const READ_SIZE: usize = 8192;
/// Send and receive timeout on every socket, client and server.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How often an idle server thread looks whether the measurement ended.
const ACCEPT_POLL: Duration = Duration::from_millis(200);
/// A server thread with no connection for this long exits regardless.
const IDLE_EXIT: Duration = Duration::from_secs(30);

pub struct Http {
    addr: libc::sockaddr_in,
    body_len: usize,
    buf: Vec<u8>,
    timeout: libc::timeval,
}

impl Workload for Http {
    const NAME: &'static str = "http";
    const DESCRIPTION: &'static str = "HTTP/1.1 GET of a document from an in-process server on loopback, \
         one connection per request (ApacheBench)";
    const HOOKS: &'static [&'static str] = &[
        "socket_create",
        "socket_setsockopt",
        "socket_connect",
        "socket_accept",
        "socket_sendmsg",
        "socket_recvmsg",
        "file_permission",
        "file_alloc_security",
        "socket_sock_rcv_skb",
    ];
    const SYSCALLS: &'static [&'static str] =
        &["socket", "setsockopt", "connect", "write", "read", "close"];
    const PARAMS: &'static [ParamDef] = &[ParamDef {
        name: "size_kb",
        default: "500",
        help: "size of the document in KiB (the body of every response)",
    }];
    const UNIT: Option<&'static str> = Some("bytes");

    fn validate(params: &Params) -> Result<()> {
        super::check_range(params, Self::NAME, "size_kb", 1..=65536)
    }

    fn setup(ctx: &SetupCtx) -> Result<Setup> {
        let body_len = param_u64(ctx.params, Self::NAME, "size_kb")? * 1024;
        let dir = ctx.scratch.join("http");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .context("http: binding the server to 127.0.0.1")?;
        let port = listener
            .local_addr()
            .context("http: server address")?
            .port();
        set_timeout(listener.as_raw_fd(), libc::SO_RCVTIMEO, ACCEPT_POLL)
            .context("http: accept timeout on the server")?;
        let token = dir.join("port");
        std::fs::write(&token, format!("{port}\n"))
            .with_context(|| format!("writing {}", token.display()))?;

        let mut response = format!(
            "HTTP/1.1 200 OK\r\nServer: secperf\r\nContent-Type: application/octet-stream\r\n\
             Content-Length: {body_len}\r\nConnection: close\r\n\r\n"
        )
        .into_bytes();
        response.extend((0..body_len).map(|i| (i % 251) as u8));
        let server = Arc::new(Server {
            listener,
            response,
            token,
            last_accept_ns: AtomicU64::new(sys::monotonic_ns()),
        });
        for i in 0..ctx.tasks.clamp(1, 64) {
            let s = Arc::clone(&server);
            std::thread::Builder::new()
                .name(format!("http-server-{i}"))
                .spawn(move || s.serve())
                .context("http: starting a server thread")?;
        }
        Ok(Setup {
            units_per_op: Some(body_len),
            data_dir: Some(dir),
        })
    }

    fn prepare(ctx: &TaskCtx) -> Result<Self> {
        let (Some(dir), Some(body_len)) = (&ctx.setup.data_dir, ctx.setup.units_per_op) else {
            bail!("http: setup did not run");
        };
        let token = dir.join("port");
        let text = std::fs::read_to_string(&token)
            .with_context(|| format!("reading the server port from {}", token.display()))?;
        let port: u16 = text
            .trim()
            .parse()
            .with_context(|| format!("{}: not a port: {text:?}", token.display()))?;
        // SAFETY: sockaddr_in is plain data; all-zero is valid.
        let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_port = port.to_be();
        addr.sin_addr.s_addr = u32::from(Ipv4Addr::LOCALHOST).to_be();
        let mut w = Http {
            addr,
            body_len: body_len as usize,
            buf: vec![0; READ_SIZE],
            timeout: libc::timeval {
                tv_sec: IO_TIMEOUT.as_secs() as libc::time_t,
                tv_usec: 0,
            },
        };
        // One request outside the timed loop: the server answers.
        w.op()
            .with_context(|| format!("http: first request to 127.0.0.1:{port}"))?;
        Ok(w)
    }

    fn op(&mut self) -> Result<(), SysError> {
        // SAFETY: socket takes plain integers.
        let fd = check_int("socket", unsafe {
            libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0)
        })?;
        // SAFETY: fd was just created and is owned only here; dropping the
        // OwnedFd on an error path closes it.
        let sock = unsafe { OwnedFd::from_raw_fd(fd) };
        for opt in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
            // SAFETY: timeout is a valid timeval of the length passed.
            let r = unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    (&raw const self.timeout).cast(),
                    size_of::<libc::timeval>() as libc::socklen_t,
                )
            };
            check_int("setsockopt", r)?;
        }
        // SAFETY: addr is a valid sockaddr_in of the length passed.
        let r = unsafe {
            libc::connect(
                fd,
                (&raw const self.addr).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        check_int("connect", r)?;
        // SAFETY: REQUEST is valid for its length.
        let w = unsafe { libc::write(fd, REQUEST.as_ptr().cast(), REQUEST.len()) };
        if w != REQUEST.len() as isize {
            return Err(short_or_errno("write", w));
        }

        // The header, and whatever body came with it.
        let mut filled = 0usize;
        let header_end = loop {
            if filled == self.buf.len() {
                return Err(proto("read (response header longer than 8 KiB)"));
            }
            let n = self.read(fd, filled)?;
            if n == 0 {
                return Err(proto("read (connection closed before the whole header)"));
            }
            filled += n;
            if let Some(i) = find(&self.buf[..filled], b"\r\n\r\n") {
                break i + 4;
            }
        };
        check_header(&self.buf[..header_end], self.body_len)?;
        let mut body = filled - header_end;
        while body < self.body_len {
            let n = self.read(fd, 0)?;
            if n == 0 {
                return Err(proto("read (connection closed before the whole body)"));
            }
            body += n;
        }
        if body != self.body_len {
            return Err(proto("read (more body bytes than Content-Length)"));
        }
        close(sock.into_raw_fd())
    }
}

impl Http {
    /// One `read` into `buf[at..]`, returning the byte count.
    #[inline(always)]
    fn read(&mut self, fd: libc::c_int, at: usize) -> Result<usize, SysError> {
        let space = &mut self.buf[at..];
        // SAFETY: space is valid for space.len() bytes of writes.
        let r = unsafe { libc::read(fd, space.as_mut_ptr().cast(), space.len()) };
        if r < 0 {
            return Err(SysError::last("read"));
        }
        Ok(r as usize)
    }
}

/// A response that breaks the protocol or ends early.
#[cold]
fn proto(call: &'static str) -> SysError {
    SysError {
        call,
        errno: libc::EIO,
    }
}

/// The first index of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Checks the status is 200 and `Content-Length` is `body_len`.
fn check_header(header: &[u8], body_len: usize) -> Result<(), SysError> {
    if !header.starts_with(b"HTTP/1.1 200 ") {
        return Err(proto("read (response status is not HTTP/1.1 200)"));
    }
    const CL: &[u8] = b"content-length:";
    let length = header
        .split(|&b| b == b'\n')
        .find(|line| line.len() > CL.len() && line[..CL.len()].eq_ignore_ascii_case(CL))
        .and_then(|line| std::str::from_utf8(&line[CL.len()..]).ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    match length {
        Some(n) if n == body_len => Ok(()),
        Some(_) => Err(proto(
            "read (Content-Length differs from the document size)",
        )),
        None => Err(proto("read (response has no Content-Length)")),
    }
}

/// Sets `SO_RCVTIMEO` or `SO_SNDTIMEO` on a socket.
fn set_timeout(fd: libc::c_int, opt: libc::c_int, t: Duration) -> Result<(), SysError> {
    let tv = libc::timeval {
        tv_sec: t.as_secs() as libc::time_t,
        tv_usec: t.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: tv is a valid timeval of the length passed.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&raw const tv).cast(),
            size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    check_int("setsockopt", r).map(|_| ())
}

/// The server of one measurement, shared by its threads.
struct Server {
    listener: TcpListener,
    /// Header and body, written as one.
    response: Vec<u8>,
    /// `scratch/http/port`: the server runs while it exists.
    token: PathBuf,
    last_accept_ns: AtomicU64,
}

impl Server {
    /// One server thread: accept, answer, repeat, until the measurement
    /// ended (see the module header).
    fn serve(&self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    self.last_accept_ns
                        .store(sys::monotonic_ns(), Ordering::Relaxed);
                    // A failed exchange shows on the client side (EIO or a
                    // timeout), which names it; the server goes on.
                    let _ = self.answer(stream);
                }
                Err(e) => {
                    let idle_ns = sys::monotonic_ns()
                        .saturating_sub(self.last_accept_ns.load(Ordering::Relaxed));
                    if !self.token.exists() || idle_ns > IDLE_EXIT.as_nanos() as u64 {
                        return;
                    }
                    if e.kind() != std::io::ErrorKind::WouldBlock
                        && e.kind() != std::io::ErrorKind::Interrupted
                    {
                        // EMFILE and the like: do not spin.
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        }
    }

    /// Reads the request header and writes the response (or a 404).
    fn answer(&self, mut s: TcpStream) -> std::io::Result<()> {
        s.set_read_timeout(Some(IO_TIMEOUT))?;
        s.set_write_timeout(Some(IO_TIMEOUT))?;
        let mut req = [0u8; 4096];
        let mut have = 0;
        while find(&req[..have], b"\r\n\r\n").is_none() {
            if have == req.len() {
                return Err(std::io::ErrorKind::InvalidData.into());
            }
            let n = s.read(&mut req[have..])?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            have += n;
        }
        if req.starts_with(b"GET /doc HTTP/1.1\r\n") {
            s.write_all(&self.response)
        } else {
            s.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::workloads::def;

    #[test]
    fn header_checks() {
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n";
        assert!(check_header(ok, 1024).is_ok());
        assert!(check_header(b"HTTP/1.1 200 OK\r\ncontent-length:1024\r\n\r\n", 1024).is_ok());
        assert!(check_header(ok, 2048).is_err());
        assert!(
            check_header(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 1024\r\n\r\n",
                1024
            )
            .is_err()
        );
        assert!(check_header(b"HTTP/1.1 200 OK\r\n\r\n", 1024).is_err());
    }

    #[test]
    fn serves_then_stops_when_the_scratch_directory_goes() {
        let scratch = tempfile::tempdir().unwrap();
        let mut params = Params::new();
        params.insert("size_kb".into(), "3".into());
        let cache = scratch.path().join("cache");
        let setup = Http::setup(&SetupCtx {
            scratch: scratch.path(),
            cache: &cache,
            params: &params,
            tasks: 1,
        })
        .unwrap();
        let ctx = TaskCtx {
            task: 0,
            tasks: 1,
            scratch: scratch.path(),
            params: &params,
            setup: &setup,
            stop: None,
        };
        let mut w = Http::prepare(&ctx).unwrap();
        for _ in 0..10 {
            w.op().unwrap();
        }
        // A client expecting another size notices.
        w.body_len = 4096;
        let e = w.op().unwrap_err();
        assert_eq!(e.errno, libc::EIO, "{e}");
        w.body_len = 3072;
        drop(scratch);
        // The server notices within its accept poll, then refuses.
        std::thread::sleep(ACCEPT_POLL * 3);
        // (A process forked meanwhile by another test may hold the listener
        // open a moment longer: then the request times out instead.)
        let e = w.op().unwrap_err();
        assert!(
            matches!(
                (e.call, e.errno),
                ("connect", libc::ECONNREFUSED) | ("read", libc::EAGAIN)
            ),
            "{e}"
        );
    }

    #[test]
    fn measures_briefly() {
        let d = def::<Http>();
        let r = crate::runner::testing::measure_briefly(&d, Mode::Process, 100, &Params::new());
        assert!(r.ops_per_sec.median > 0.0);
        let u = r.unit_rate.unwrap();
        assert_eq!((u.unit.as_str(), u.per_op), ("bytes", 500 * 1024));
    }
}
