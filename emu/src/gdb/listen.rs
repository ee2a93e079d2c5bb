//! Where `--gdb` listens: a TCP `host:port` (or a bare port, on
//! 127.0.0.1) or a Unix socket path; one connection is accepted.

use gdbstub::conn::ConnectionExt;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;

/// A parsed `--gdb` address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenAddr {
    /// TCP `host:port` (port 0: any free port, announced).
    Tcp(String),
    /// A Unix socket path (created; must not exist).
    Unix(PathBuf),
}

impl std::str::FromStr for ListenAddr {
    type Err = String;

    /// `1234` and `:1234` are 127.0.0.1:1234; `host:port` is TCP; anything
    /// with a `/` is a Unix socket path.
    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("empty address".into());
        }
        if s.contains('/') {
            return Ok(ListenAddr::Unix(PathBuf::from(s)));
        }
        let (host, port) = match s.rsplit_once(':') {
            Some((h, p)) => (h, p),
            None => ("", s),
        };
        let port: u16 = port
            .parse()
            .map_err(|_| format!("`{s}` is neither host:port, a port nor a socket path"))?;
        let host = if host.is_empty() { "127.0.0.1" } else { host };
        Ok(ListenAddr::Tcp(format!("{host}:{port}")))
    }
}

/// A bound listener.
pub enum Listener {
    /// TCP.
    Tcp(TcpListener),
    /// Unix socket (removed when dropped).
    Unix(UnixListener, PathBuf),
}

impl ListenAddr {
    /// Binds the address.
    pub fn bind(&self) -> Result<Listener, String> {
        match self {
            ListenAddr::Tcp(a) => TcpListener::bind(a)
                .map(Listener::Tcp)
                .map_err(|e| format!("cannot listen on {a}: {e}")),
            ListenAddr::Unix(p) => UnixListener::bind(p)
                .map(|l| Listener::Unix(l, p.clone()))
                .map_err(|e| format!("cannot listen on {}: {e}", p.display())),
        }
    }
}

impl Listener {
    /// What gdb's `target remote` takes to reach it.
    pub fn describe(&self) -> String {
        match self {
            Listener::Tcp(l) => l
                .local_addr()
                .map_or_else(|_| "?".into(), |a| a.to_string()),
            Listener::Unix(_, p) => p.display().to_string(),
        }
    }

    /// Waits for gdb; `stop` is asked every 50 ms whether to give up
    /// (lard received a signal): then `Ok(None)`.
    pub fn accept(
        &self,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<Option<Box<dyn ConnectionExt<Error = std::io::Error>>>, String> {
        let nonblocking = match self {
            Listener::Tcp(l) => l.set_nonblocking(true),
            Listener::Unix(l, _) => l.set_nonblocking(true),
        };
        nonblocking.map_err(|e| format!("accept: {e}"))?;
        loop {
            let got: std::io::Result<Box<dyn ConnectionExt<Error = std::io::Error>>> = match self {
                Listener::Tcp(l) => l.accept().and_then(|(s, _)| {
                    s.set_nonblocking(false)?;
                    // Small packets, answered one at a time.
                    let _ = s.set_nodelay(true);
                    Ok(Box::new(s) as Box<dyn ConnectionExt<Error = std::io::Error>>)
                }),
                Listener::Unix(l, _) => l.accept().and_then(|(s, _)| {
                    s.set_nonblocking(false)?;
                    Ok(Box::new(s) as Box<dyn ConnectionExt<Error = std::io::Error>>)
                }),
            };
            match got {
                Ok(c) => return Ok(Some(c)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if stop() {
                        return Ok(None);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("accept: {e}")),
            }
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}
