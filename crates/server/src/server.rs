//! The server thread: its listeners, bound before it starts so that their
//! errors and addresses are known at once, and a small tokio runtime.

use crate::api::Control;
use crate::hub::StreamHub;
use crate::routes::{router, AppState, Listening, RateLimiter, CLOSE_GOING_AWAY};
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::watch;

/// How long connections may take to finish once the server stops.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// How the server listens and what it allows.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// TCP address; port 0 picks a free one. `None`: the Unix socket only.
    pub listen: Option<SocketAddr>,
    /// A Unix socket to serve on too, created with mode 0600.
    pub unix_socket: Option<PathBuf>,
    /// The bearer token every `/v1` request must carry, if any.
    pub token: Option<String>,
    /// Concurrent stream clients.
    pub max_clients: usize,
    /// Largest request body (bytes).
    pub max_request_bytes: usize,
    /// Requests per second per peer address, in bursts of as many.
    pub requests_per_second: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: Some(SocketAddr::from(([127, 0, 0, 1], 7878))),
            unix_socket: None,
            token: None,
            max_clients: 32,
            max_request_bytes: 65536,
            requests_per_second: 100,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("binding {address}: {source}")]
    Bind {
        address: String,
        source: std::io::Error,
    },
    #[error("{0} is not loopback: a token is required (server.token)")]
    TokenRequired(SocketAddr),
    #[error("the server listens nowhere: set server.listen or server.unix_socket")]
    NoListener,
    #[error("starting the server thread: {0}")]
    Thread(std::io::Error),
}

/// The running server; stopped and joined when dropped.
pub struct Server {
    local_addr: Option<SocketAddr>,
    unix_socket: Option<PathBuf>,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
}

/// Creates a Unix socket at `path` with mode 0600 from the start: bound in
/// a private directory beside it, then renamed into place. A stale socket
/// at `path` is replaced; any other file is refused.
fn bind_unix(path: &Path) -> std::io::Result<std::os::unix::net::UnixListener> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path)?,
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists and is not a socket",
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    static BOUND: AtomicU64 = AtomicU64::new(0);
    let private = parent.join(format!(
        ".hapticd-socket-{}-{}",
        std::process::id(),
        BOUND.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&private)?;
    let inner = private.join("socket");
    let bound = std::os::unix::net::UnixListener::bind(&inner).and_then(|listener| {
        std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(&inner, path)?;
        Ok(listener)
    });
    let _ = std::fs::remove_file(&inner);
    std::fs::remove_dir(&private)?;
    bound
}

impl Server {
    /// Binds the listeners and starts the server thread, serving `control`
    /// and the stream of `hub`.
    pub fn start(
        config: &ServerConfig,
        control: Arc<dyn Control>,
        hub: StreamHub,
    ) -> Result<Server, StartError> {
        if let Some(address) = config.listen {
            if !address.ip().is_loopback() && config.token.is_none() {
                return Err(StartError::TokenRequired(address));
            }
        }
        if config.listen.is_none() && config.unix_socket.is_none() {
            return Err(StartError::NoListener);
        }
        let tcp = config
            .listen
            .map(|address| {
                std::net::TcpListener::bind(address)
                    .and_then(|l| l.set_nonblocking(true).map(|()| l))
                    .map_err(|source| StartError::Bind {
                        address: address.to_string(),
                        source,
                    })
            })
            .transpose()?;
        let local_addr = tcp.as_ref().and_then(|l| l.local_addr().ok());
        let unix = config
            .unix_socket
            .as_ref()
            .map(|path| {
                bind_unix(path)
                    .and_then(|l| l.set_nonblocking(true).map(|()| l))
                    .map_err(|source| StartError::Bind {
                        address: path.display().to_string(),
                        source,
                    })
            })
            .transpose()?;
        let state = AppState {
            control,
            hub: hub.clone(),
            token: config.token.as_deref().map(Arc::from),
            max_clients: config.max_clients,
            limiter: Arc::new(RateLimiter::new(config.requests_per_second)),
            listening: Arc::new(Listening {
                listen: local_addr.map(|a| a.to_string()),
                unix_socket: config.unix_socket.as_ref().map(|p| p.display().to_string()),
            }),
        };
        let app = router(state, config.max_request_bytes);
        let (stop, stopped) = watch::channel(false);
        let thread = std::thread::Builder::new()
            .name("server".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .max_blocking_threads(4)
                    .build()
                    .expect("a tokio runtime");
                runtime.block_on(serve(app, tcp, unix, hub, stopped));
            })
            .map_err(StartError::Thread)?;
        Ok(Server {
            local_addr,
            unix_socket: config.unix_socket.clone(),
            stop,
            thread: Some(thread),
        })
    }

    /// The TCP address bound, with port 0 resolved.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    pub fn unix_socket(&self) -> Option<&Path> {
        self.unix_socket.as_deref()
    }

    /// Closes the stream clients, lets requests finish (for at most 2 s)
    /// and joins the thread.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(path) = &self.unix_socket {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// Serves `app` on the listeners until `stopped` turns true.
async fn serve(
    app: axum::Router,
    tcp: Option<std::net::TcpListener>,
    unix: Option<std::os::unix::net::UnixListener>,
    hub: StreamHub,
    stopped: watch::Receiver<bool>,
) {
    let until_stopped = |mut stopped: watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|s| *s).await;
    };
    let mut tasks = tokio::task::JoinSet::new();
    if let Some(listener) = tcp {
        match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => {
                let service = app
                    .clone()
                    .into_make_service_with_connect_info::<SocketAddr>();
                let stop = until_stopped(stopped.clone());
                tasks.spawn(async move {
                    axum::serve(listener, service)
                        .with_graceful_shutdown(stop)
                        .await
                });
            }
            Err(error) => tracing::error!(%error, "the TCP listener cannot be served"),
        }
    }
    if let Some(listener) = unix {
        match tokio::net::UnixListener::from_std(listener) {
            Ok(listener) => {
                let stop = until_stopped(stopped.clone());
                tasks.spawn(async move {
                    axum::serve(listener, app.into_make_service())
                        .with_graceful_shutdown(stop)
                        .await
                });
            }
            Err(error) => tracing::error!(%error, "the Unix socket cannot be served"),
        }
    }
    until_stopped(stopped).await;
    hub.close_all(CLOSE_GOING_AWAY);
    let _ = tokio::time::timeout(STOP_GRACE, async {
        while tasks.join_next().await.is_some() {}
        while !hub.clients().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}
