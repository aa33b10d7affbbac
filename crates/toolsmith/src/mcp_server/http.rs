//! Streamable HTTP: rmcp's streamable HTTP service behind an HTTP/1 listener, with the path,
//! the optional bearer token and (inside rmcp's service) the Host and Origin checks against DNS
//! rebinding.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::McpServerError;

/// Where and how to serve over HTTP.
///
/// By default: `127.0.0.1` on a free port, at `/mcp`; requests whose `Host` is not a loopback
/// name, or whose `Origin` is not a loopback origin, are refused with 403 (DNS-rebinding
/// protection); no authentication.
///
/// ```
/// use toolsmith::mcp_server::HttpOptions;
///
/// let options = HttpOptions::new().port(8000).bearer_token("s3cret").allow_origin("https://app.example.com");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The address to listen on.
    pub addr: SocketAddr,
    /// The path of the MCP endpoint.
    pub path: String,
    /// A token every request must present as `Authorization: Bearer <token>`.
    pub bearer_token: Option<String>,
    /// The `Host` values accepted (names, or `name:port`); empty accepts any.
    pub allowed_hosts: Vec<String>,
    /// The `Origin` values accepted (`scheme://host[:port|:*]`); a request without an `Origin`
    /// passes.
    pub allowed_origins: Vec<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            path: "/mcp".into(),
            bearer_token: None,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into(), "[::1]".into()],
            allowed_origins: ["http", "https"]
                .iter()
                .flat_map(|s| ["localhost", "127.0.0.1", "[::1]"].map(|h| format!("{s}://{h}:*")))
                .collect(),
        }
    }
}

impl HttpOptions {
    /// The defaults.
    pub fn new() -> Self {
        HttpOptions::default()
    }

    /// Listens on this port (of 127.0.0.1 unless [`addr`](Self::addr) changed it).
    pub fn port(mut self, port: u16) -> Self {
        self.addr.set_port(port);
        self
    }

    /// Listens on this address. Bind to a public address only behind the checks you need:
    /// add the names clients reach it by with [`allow_host`](Self::allow_host).
    pub fn addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    /// The path of the MCP endpoint (default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Requires `Authorization: Bearer <token>` on every request (401 otherwise).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Accepts one more `Host` value.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Accepts one more browser `Origin`.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Turns the `Host` and `Origin` checks off (a server behind a proxy that does them).
    pub fn disable_origin_checks(mut self) -> Self {
        self.allowed_hosts.clear();
        self.allowed_origins.clear();
        self
    }
}

/// A server listening over HTTP. Dropping it leaves the server running until the runtime ends;
/// [`shutdown`](Self::shutdown) stops it.
#[derive(Debug)]
pub struct RunningHttp {
    addr: SocketAddr,
    path: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl RunningHttp {
    /// The address listened on (with the port chosen, when it was 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL of the MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// Stops accepting connections, ends the sessions and exits the toolset.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }

    /// Waits until the server stops (it does not stop by itself).
    pub async fn wait(self) {
        let _ = self.task.await;
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

/// Whether the request carries the token (compared without stopping at the first difference).
fn authorized(req: &Request<Incoming>, token: &str) -> bool {
    let Some(given) = req.headers().get(hyper::header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some(given) = given.strip_prefix("Bearer ").or_else(|| given.strip_prefix("bearer ")) else {
        return false;
    };
    given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

pub(super) async fn serve<S, F, E>(options: HttpOptions, factory: F, on_exit: E) -> Result<RunningHttp, McpServerError>
where
    S: ServerHandler + Send + 'static,
    F: Fn() -> S + Send + Sync + 'static,
    E: Future<Output = ()> + Send + 'static,
{
    let listener =
        TcpListener::bind(options.addr).await.map_err(|source| McpServerError::Bind { addr: options.addr, source })?;
    let addr = listener.local_addr().map_err(|source| McpServerError::Bind { addr: options.addr, source })?;
    let stop = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    config = if options.allowed_hosts.is_empty() {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(options.allowed_hosts.clone())
    };
    config = if options.allowed_origins.is_empty() {
        config.disable_allowed_origins()
    } else {
        config.with_allowed_origins(options.allowed_origins.clone()).enforce_origin_validation()
    };
    let service = StreamableHttpService::new(move || Ok(factory()), Arc::new(LocalSessionManager::default()), config);
    let path: Arc<str> = options.path.clone().into();
    let token: Option<Arc<str>> = options.bearer_token.clone().map(Into::into);
    let stopping = stop.clone();
    let task = tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                () = stopping.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
            };
            let (service, path, token, stopping) = (service.clone(), path.clone(), token.clone(), stopping.clone());
            let answer = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (service, path, token) = (service.clone(), path.clone(), token.clone());
                async move {
                    if req.uri().path() != &*path {
                        return Ok::<_, Infallible>(plain(StatusCode::NOT_FOUND, "Not Found"));
                    }
                    if let Some(token) = &token
                        && !authorized(&req, token)
                    {
                        let mut response = plain(StatusCode::UNAUTHORIZED, "Unauthorized");
                        response
                            .headers_mut()
                            .insert(hyper::header::WWW_AUTHENTICATE, hyper::header::HeaderValue::from_static("Bearer"));
                        return Ok(response);
                    }
                    Ok(service.handle(req).await)
                }
            });
            tokio::spawn(async move {
                let connection =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), answer);
                tokio::select! {
                    _ = connection => {}
                    () = stopping.cancelled() => {}
                }
            });
        }
        on_exit.await;
    });
    Ok(RunningHttp { addr, path: options.path, stop, task })
}
