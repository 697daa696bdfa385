//! The transports an [`McpService`] serves on: any rmcp transport, stdin/stdout (ending every
//! call at once when stdin closes), and streamable HTTP in the background ([`HttpServer`]).

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::ServiceExt;
use rmcp::service::{RoleServer, RunningService};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio_util::sync::CancellationToken;

use super::McpService;
use crate::mcp::McpError;

impl McpService {
    /// Serves one client over any rmcp transport (a `(reader, writer)` pair, a stream, ...)
    /// and returns the running session once `initialize` is done.
    pub async fn serve<T, E, A>(
        self,
        transport: T,
    ) -> Result<RunningService<RoleServer, Self>, McpError>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A> + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        ServiceExt::serve(self, transport)
            .await
            .map_err(|e| McpError::Serve(e.to_string()))
    }

    /// Serves one client over this process's stdin and stdout until it disconnects. When
    /// stdin closes, every call still in flight ends at once (one waiting for a person is
    /// cancelled; the tool is not run again), so the process exits without a drain delay.
    pub async fn serve_stdio(mut self) -> Result<(), McpError> {
        let closed = CancellationToken::new();
        self.closed = closed.clone();
        let stdin = EofSignal {
            inner: tokio::io::stdin(),
            closed,
        };
        let running = self.serve((stdin, tokio::io::stdout())).await?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        Ok(())
    }

    /// Serves streamable HTTP on `addr` (`127.0.0.1:0` picks a free port) in the background,
    /// each client in its own session. Only loopback `Host` headers are accepted (DNS
    /// rebinding protection).
    pub async fn serve_http(
        self,
        addr: impl tokio::net::ToSocketAddrs,
    ) -> Result<HttpServer, McpError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| McpError::Serve(format!("cannot bind the MCP HTTP server: {e}")))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| McpError::Serve(e.to_string()))?;
        let shutdown = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default();
        config.cancellation_token = shutdown.child_token();
        let service = TowerToHyperService::new(StreamableHttpService::new(
            move || Ok(self.for_session()),
            Arc::new(LocalSessionManager::default()),
            config,
        ));
        let stop = shutdown.clone();
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    () = stop.cancelled() => break,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => {
                            // small JSON-RPC messages: no Nagle delay
                            let _ = stream.set_nodelay(true);
                            stream
                        }
                        Err(_) => continue,
                    },
                };
                let service = service.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    let mut conn = std::pin::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        () = stop.cancelled() => conn.as_mut().graceful_shutdown(),
                    }
                });
            }
        });
        Ok(HttpServer {
            addr: local_addr,
            shutdown,
        })
    }
}

/// A running streamable HTTP server (see [`McpService::serve_http`]). Dropping it leaves the
/// server running; [`shutdown`](Self::shutdown) stops it.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    shutdown: CancellationToken,
}

impl HttpServer {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL a client connects to, `http://<addr>/mcp` (any path is served).
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops accepting connections and ends every session.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }
}

/// A reader that cancels `closed` when it reaches its end (or fails): how `serve_stdio` learns
/// at once that stdin closed, while rmcp would let in-flight calls drain for seconds.
struct EofSignal<R> {
    inner: R,
    closed: CancellationToken,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let had_room = buf.remaining() > 0;
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            std::task::Poll::Ready(Ok(())) if had_room && buf.filled().len() == before => {
                self.closed.cancel();
            }
            std::task::Poll::Ready(Err(_)) => self.closed.cancel(),
            _ => {}
        }
        polled
    }
}
