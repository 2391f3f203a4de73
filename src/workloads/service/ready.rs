//! When a server started for a half is ready for its client
//! (`--ready tcp:PORT|unix:PATH|delay:MS`), and whether its address is
//! free before it starts. Polls every [`POLL`] on the loopback address
//! only, watching the server: one that exits while it is awaited is an
//! error at once (with what the caller knows of it, e.g. its stderr's
//! tail), one never ready is an error at the timeout.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, Instant};

use thiserror::Error;

/// How often readiness is tried.
pub const POLL: Duration = Duration::from_millis(10);

/// What makes a server ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ready {
    /// It accepts TCP connections on 127.0.0.1:PORT.
    Tcp(u16),
    /// It accepts connections on the Unix socket at PATH.
    Unix(PathBuf),
    /// A fixed wait, for servers with no address to try.
    Delay(Duration),
}

/// Why a server was not ready.
#[derive(Debug, Error)]
pub enum ReadyError {
    #[error(
        "--ready {0:?}: give tcp:PORT (1-65535), unix:PATH or delay:MS (e.g. --ready tcp:6379)"
    )]
    BadSpec(String),
    #[error(
        "the server was not ready ({ready}) after {waited_ms} ms; raise --ready-timeout or check that it listens there"
    )]
    NeverReady { ready: String, waited_ms: u128 },
    #[error("the server exited before it was ready ({ready}): {why}")]
    Exited { ready: String, why: String },
    #[error(
        "{0} is already taken by another process before the server starts; stop that process or give the server another address"
    )]
    Taken(String),
}

impl FromStr for Ready {
    type Err = ReadyError;

    fn from_str(s: &str) -> Result<Ready, ReadyError> {
        let bad = || ReadyError::BadSpec(s.to_string());
        let (kind, value) = s.split_once(':').ok_or_else(bad)?;
        match kind {
            "tcp" => match value.parse::<u16>() {
                Ok(port) if port > 0 => Ok(Ready::Tcp(port)),
                _ => Err(bad()),
            },
            "unix" if !value.is_empty() => Ok(Ready::Unix(PathBuf::from(value))),
            "delay" => value
                .parse::<u64>()
                .map(|ms| Ready::Delay(Duration::from_millis(ms)))
                .map_err(|_| bad()),
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for Ready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ready::Tcp(port) => write!(f, "tcp:{port}"),
            Ready::Unix(path) => write!(f, "unix:{}", path.display()),
            Ready::Delay(d) => write!(f, "delay:{}", d.as_millis()),
        }
    }
}

impl Ready {
    /// Whether something accepts connections there now.
    fn accepts(&self) -> bool {
        match self {
            Ready::Tcp(port) => {
                let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, *port));
                TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok()
            }
            Ready::Unix(path) => UnixStream::connect(path).is_ok(),
            Ready::Delay(_) => false,
        }
    }

    /// Before the server starts: its address must be free, or the client
    /// would measure whatever already listens there.
    pub fn check_free(&self) -> Result<(), ReadyError> {
        if self.accepts() {
            return Err(ReadyError::Taken(match self {
                Ready::Tcp(port) => format!("TCP port {port} on 127.0.0.1"),
                other => other.to_string(),
            }));
        }
        Ok(())
    }

    /// Waits until the server is ready, at most `timeout`; `exited`
    /// returns why the server is gone (None while it runs) and is asked
    /// at every try. Returns how long the wait took.
    pub fn wait(
        &self,
        timeout: Duration,
        exited: &mut dyn FnMut() -> Option<String>,
    ) -> Result<Duration, ReadyError> {
        let start = Instant::now();
        let gone = |why| ReadyError::Exited {
            ready: self.to_string(),
            why,
        };
        if let Ready::Delay(d) = self {
            std::thread::sleep(*d);
            return match exited() {
                Some(why) => Err(gone(why)),
                None => Ok(start.elapsed()),
            };
        }
        loop {
            if let Some(why) = exited() {
                return Err(gone(why));
            }
            if self.accepts() {
                return Ok(start.elapsed());
            }
            if start.elapsed() >= timeout {
                return Err(ReadyError::NeverReady {
                    ready: self.to_string(),
                    waited_ms: start.elapsed().as_millis(),
                });
            }
            std::thread::sleep(POLL);
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A port nothing listens on (bound, then let go).
    pub(in crate::workloads::service) fn free_port() -> u16 {
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn specs_parse_and_bad_ones_say_how_to_fix_them() {
        assert_eq!("tcp:6379".parse::<Ready>().unwrap(), Ready::Tcp(6379));
        assert_eq!(
            "unix:/run/x.sock".parse::<Ready>().unwrap(),
            Ready::Unix("/run/x.sock".into())
        );
        assert_eq!(
            "delay:250".parse::<Ready>().unwrap(),
            Ready::Delay(Duration::from_millis(250))
        );
        for bad in [
            "tcp:0",
            "tcp:70000",
            "tcp:",
            "unix:",
            "delay:x",
            "http:80",
            "6379",
        ] {
            let e = bad.parse::<Ready>().unwrap_err().to_string();
            assert!(e.contains("tcp:PORT"), "{bad}: {e}");
        }
        assert_eq!(Ready::Tcp(80).to_string(), "tcp:80");
    }

    #[test]
    fn a_server_that_starts_listening_late_is_awaited() {
        let port = free_port();
        let server = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(80));
            let l = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).unwrap();
            let _ = l.accept();
        });
        let ready = Ready::Tcp(port);
        let waited = ready.wait(Duration::from_secs(5), &mut || None).unwrap();
        assert!(waited >= Duration::from_millis(50), "{waited:?}");
        server.join().unwrap();
    }

    #[test]
    fn never_ready_and_exited_servers_are_errors() {
        let ready = Ready::Tcp(free_port());
        let e = ready
            .wait(Duration::from_millis(100), &mut || None)
            .unwrap_err();
        assert!(matches!(e, ReadyError::NeverReady { .. }), "{e}");
        assert!(e.to_string().contains("--ready-timeout"), "{e}");
        let mut tries = 0;
        let e = ready
            .wait(Duration::from_secs(5), &mut || {
                tries += 1;
                (tries == 3).then(|| "exit status 1: bind: Address in use".to_string())
            })
            .unwrap_err();
        assert!(e.to_string().contains("exited before it was ready"), "{e}");
        assert!(e.to_string().contains("Address in use"), "{e}");
        let e = Ready::Delay(Duration::from_millis(1))
            .wait(Duration::ZERO, &mut || Some("killed".into()))
            .unwrap_err();
        assert!(matches!(e, ReadyError::Exited { .. }));
    }

    #[test]
    fn a_taken_port_or_socket_is_refused_before_the_server_starts() {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = l.local_addr().unwrap().port();
        let e = Ready::Tcp(port).check_free().unwrap_err();
        assert!(e.to_string().contains(&format!("TCP port {port}")), "{e}");
        drop(l);
        Ready::Tcp(port).check_free().unwrap();

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let ready = Ready::Unix(path.clone());
        ready.check_free().unwrap();
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        assert!(ready.check_free().is_err());
        assert!(ready.wait(Duration::from_secs(1), &mut || None).is_ok());
    }
}
