//! Serving an axum router over rustls or plain HTTP, with the same bounds either way: a cap
//! on connections served at once, a handshake timeout and a header-read timeout (so a
//! slowloris client that sends its request one byte a minute holds one slot for 10 s, not
//! forever), and a bounded read buffer.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

/// Bounds that keep a hostile or broken peer from holding a server's resources.
#[derive(Debug, Clone, Copy)]
pub struct ServeLimits {
    /// Connections served at once; further ones wait in the kernel's backlog.
    pub max_connections: usize,
    /// Time allowed for the TLS handshake.
    pub handshake_timeout: Duration,
    /// Time allowed for a client to send its request head.
    pub header_read_timeout: Duration,
    /// On shutdown, time given to requests in flight to be answered (connections close once
    /// their request is); zero closes every connection at once.
    pub drain: Duration,
}

impl Default for ServeLimits {
    fn default() -> Self {
        Self {
            max_connections: 256,
            handshake_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            drain: Duration::ZERO,
        }
    }
}

/// Serves `router` over TLS on `listener` until `shutdown` completes. Each connection runs in
/// its own task; a failed handshake or a broken connection only ends that connection. When
/// `shutdown` completes, open connections (idle keep-alive ones too) are closed: a stopped
/// server answers nothing, as a stopped process would — unless `limits.drain` is set, which
/// lets requests in flight be answered first (up to that long).
pub async fn serve_tls(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    limits: ServeLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    serve(listener, Some(tls), router, limits, shutdown).await
}

/// [`serve_tls`], or plain HTTP when `tls` is `None` (a server behind a reverse proxy that
/// terminates TLS), under the same limits.
pub async fn serve(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    router: Router,
    limits: ServeLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let acceptor = tls.map(TlsAcceptor::from);
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    // Dropped when this function returns: every connection task sees it and ends.
    let (_serving, stopped) = tokio::sync::watch::channel(());
    // Set on shutdown with a drain: each connection finishes its request, then closes.
    let (draining, drain_seen) = tokio::sync::watch::channel(false);
    tokio::pin!(shutdown);
    let drain = limits.drain;
    let drained = |permits: Arc<Semaphore>| async move {
        if drain.is_zero() {
            return;
        }
        draining.send_replace(true);
        let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(drain, permits.acquire_many(all)).await;
    };
    loop {
        let permit = tokio::select! {
            _ = &mut shutdown => return drained(permits).await,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        let (tcp, _peer) = tokio::select! {
            _ = &mut shutdown => {
                drop(permit);
                return drained(permits).await;
            }
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Running out of file descriptors must not spin the loop hot.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let router = router.clone();
        let mut stopped = stopped.clone();
        let drain_seen = drain_seen.clone();
        tokio::spawn(async move {
            let _permit = permit;
            tokio::select! {
                _ = stopped.changed() => {}
                _ = serve_accepted(tcp, acceptor, router, limits, drain_seen) => {}
            }
        });
    }
}

/// One accepted connection: the TLS handshake (if any), then HTTP.
async fn serve_accepted(
    tcp: tokio::net::TcpStream,
    acceptor: Option<TlsAcceptor>,
    router: Router,
    limits: ServeLimits,
    draining: tokio::sync::watch::Receiver<bool>,
) {
    let Some(acceptor) = acceptor else {
        serve_connection(TokioIo::new(tcp), router, limits, draining).await;
        return;
    };
    let tls = match tokio::time::timeout(limits.handshake_timeout, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(error)) => {
            tracing::debug!(%error, "TLS handshake failed");
            return;
        }
        Err(_) => return,
    };
    serve_connection(TokioIo::new(tls), router, limits, draining).await;
}

/// One HTTP/1 connection, with the header-read timeout and a bounded buffer.
async fn serve_connection<I>(
    io: I,
    router: Router,
    limits: ServeLimits,
    mut draining: tokio::sync::watch::Receiver<bool>,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(64 * 1024);
    let service = TowerToHyperService::new(router);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let ended = tokio::select! {
        ended = connection.as_mut() => Some(ended),
        _ = async { draining.wait_for(|draining| *draining).await.is_ok() } => None,
    };
    let ended = match ended {
        Some(ended) => ended,
        None => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = ended {
        tracing::debug!(%error, "connection ended with an error");
    }
}
