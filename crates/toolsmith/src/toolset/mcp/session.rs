//! One connection to an MCP server: opening it over a transport (the client side of the
//! protocol is `client::handler`), and how rmcp's errors are reported.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::{ClientInitializeError, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncBufReadExt;

use super::client::handler::ClientState;
use super::convert::CatalogTool;
use super::limits::{JsonDepth, LimitedReader, MAX_MESSAGE_DEPTH, Unreadable};
use super::{McpError, Settings, TransportConfig};

/// How many of the server's last stderr lines are kept for error messages.
const STDERR_LINES: usize = 20;
/// The longest stderr line kept.
const STDERR_LINE_CHARS: usize = 400;

/// What the client side of a session learns while it runs.
#[derive(Default)]
pub(crate) struct SessionNotes {
    /// Set by `notifications/tools/list_changed`: the cached tool list is stale.
    pub(crate) tools_changed: AtomicBool,
    /// The last lines the server wrote to stderr (stdio servers whose stderr is captured).
    stderr: Mutex<VecDeque<String>>,
    /// Set when the stderr reader has reached the end of the stream.
    stderr_closed: AtomicBool,
    /// Why a message of the server's could not be read, once one could not (the session is
    /// then unusable).
    unreadable: Mutex<Option<Unreadable>>,
    unreadable_notify: tokio::sync::Notify,
    /// Why authorization failed, for the request (or the connection) it failed.
    auth_failure: Mutex<Option<super::McpAuthError>>,
    /// Over HTTP: whether the server gave a session id (the client then opens the standalone
    /// stream, on which the server may send requests of its own), and whether that stream was
    /// tried.
    http_session: AtomicBool,
    standalone_tried: AtomicBool,
    standalone_notify: tokio::sync::Notify,
}

impl SessionNotes {
    pub(super) fn mark_unreadable(&self, why: Unreadable) {
        *self.unreadable.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
        self.unreadable_notify.notify_waiters();
    }

    /// Why a message of the server's could not be read, once one could not.
    pub(crate) fn unreadable(&self) -> Option<Unreadable> {
        *self.unreadable.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the server sends a message that cannot be read, and says why.
    pub(crate) async fn wait_unreadable(&self) -> Unreadable {
        loop {
            let notified = self.unreadable_notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(why) = self.unreadable() {
                return why;
            }
            notified.await;
        }
    }

    fn mark_auth_failure(&self, error: super::McpAuthError) {
        *self.auth_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
    }

    fn take_auth_failure(&self, server: &str) -> Option<McpError> {
        let error = self.auth_failure.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        Some(McpError::Auth { server: server.to_string(), error })
    }

    fn mark_standalone_tried(&self) {
        self.standalone_tried.store(true, Ordering::Release);
        self.standalone_notify.notify_waiters();
    }

    /// Waits until the standalone stream of an HTTP session was tried (opened or refused).
    async fn wait_standalone(&self) {
        loop {
            let notified = self.standalone_notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.standalone_tried.load(Ordering::Acquire) {
                return;
            }
            notified.await;
        }
    }

    fn push_stderr(&self, line: String) {
        let mut lines = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        let line = if line.chars().count() > STDERR_LINE_CHARS {
            let cut: String = line.chars().take(STDERR_LINE_CHARS).collect();
            format!("{cut}...")
        } else {
            line
        };
        lines.push_back(line);
    }

    /// The last stderr lines, formatted to follow an error message (empty when there are none).
    pub(crate) fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        if lines.is_empty() {
            return String::new();
        }
        let mut out = String::from("\nthe server's last lines on stderr:");
        for line in lines.iter() {
            out.push_str("\n  ");
            out.push_str(line);
        }
        out
    }

    /// Waits a little for the stderr reader to drain a process that has exited.
    async fn settle_stderr(&self) {
        for _ in 0..20 {
            if self.stderr_closed.load(Ordering::Acquire) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// An open session.
pub(crate) struct Session {
    /// The connection's number (1 for the first connection of a toolset, then 2...).
    pub(crate) id: u64,
    pub(crate) service: RunningService<RoleClient, ClientState>,
    pub(crate) notes: Arc<SessionNotes>,
    /// The server's tools, while the cache is fresh.
    pub(crate) catalog: Mutex<Option<Arc<Vec<CatalogTool>>>>,
    /// Serialises tool list refreshes.
    pub(crate) catalog_refresh: tokio::sync::Mutex<()>,
}

impl Session {
    /// Whether the connection is still up.
    pub(crate) fn is_alive(&self) -> bool {
        !self.service.is_closed() && !self.service.peer().is_transport_closed()
    }

    /// Maps an rmcp error for a request `method` (e.g. `tools/call 'echo'`).
    pub(crate) async fn error(&self, server: &str, method: &str, e: ServiceError) -> McpError {
        if let Some(why) = self.notes.unreadable() {
            // The connection was closed because of a message it could not read: say so, whatever
            // rmcp reports for the requests it cut off.
            return why.error(server, method);
        }
        if let Some(auth) = self.notes.take_auth_failure(server) {
            return auth;
        }
        match e {
            ServiceError::McpError(data) => McpError::Server {
                server: server.to_string(),
                method: method.to_string(),
                code: data.code.0,
                message: data.message.to_string(),
                data: data.data,
            },
            ServiceError::Timeout { timeout } => {
                McpError::Timeout { server: server.to_string(), method: method.to_string(), timeout }
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) | ServiceError::Cancelled { .. } => {
                self.notes.settle_stderr().await;
                let what = match e {
                    ServiceError::TransportClosed => {
                        "the server closed the connection (it exited or crashed)".to_string()
                    }
                    ServiceError::TransportSend(error) => format!("sending failed: {}", error_chain(&*error.error)),
                    other => other.to_string(),
                };
                McpError::ConnectionLost {
                    server: server.to_string(),
                    method: method.to_string(),
                    message: format!("{what}{}", self.notes.stderr_tail()),
                }
            }
            ServiceError::UnexpectedResponse => McpError::ConnectionLost {
                server: server.to_string(),
                method: method.to_string(),
                message: "the server broke the protocol (it sent a response of the wrong type)".to_string(),
            },
            other => McpError::ConnectionLost {
                server: server.to_string(),
                method: method.to_string(),
                message: other.to_string(),
            },
        }
    }
}

/// Closes a session, waiting (up to 5 s) for the transport to shut down: a stdio server is asked
/// to exit, then terminated. When calls still hold the session, it closes as the last one ends.
pub(crate) async fn close(session: Arc<Session>) {
    if let Ok(mut session) = Arc::try_unwrap(session) {
        let _ = session.service.close_with_timeout(Duration::from_secs(5)).await;
    }
}

/// Opens a session.
pub(crate) async fn connect(settings: &Settings, id: u64) -> Result<Session, McpError> {
    let notes = Arc::new(SessionNotes::default());
    let server = settings.server.to_string();
    let state = ClientState::new(settings, notes.clone());
    let connecting = async {
        let started = match &settings.transport {
            TransportConfig::Stdio(stdio) => {
                let mut cmd = tokio::process::Command::new(&stdio.command);
                if !stdio.inherit_env {
                    cmd.env_clear();
                    for key in super::config::INHERITED_ENV {
                        // As the MCP Python SDK: a shell function exported in a variable is not passed on.
                        if let Some(value) = std::env::var_os(key).filter(|v| !v.to_string_lossy().starts_with("()")) {
                            cmd.env(key, value);
                        }
                    }
                }
                cmd.args(&stdio.args).envs(stdio.env.iter().map(|(k, v)| (k, v))).kill_on_drop(true);
                if let Some(dir) = &stdio.cwd {
                    cmd.current_dir(dir);
                }
                let stderr = if stdio.inherit_stderr { Stdio::inherit() } else { Stdio::piped() };
                cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(stderr);
                let mut child = cmd.spawn().map_err(|e| McpError::Spawn {
                    server: server.clone(),
                    command: stdio.command_line(),
                    message: e.to_string(),
                })?;
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(McpError::Spawn {
                        server: server.clone(),
                        command: stdio.command_line(),
                        message: "the child's stdin or stdout could not be taken".into(),
                    });
                };
                if let Some(stderr) = child.stderr.take() {
                    let notes = notes.clone();
                    let label = settings.server.clone();
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::debug!(server = %label, "stderr: {line}");
                            notes.push_stderr(line);
                        }
                        notes.stderr_closed.store(true, Ordering::Release);
                    });
                } else {
                    notes.stderr_closed.store(true, Ordering::Release);
                }
                let reader = LimitedReader::new(stdout, settings.max_message_size, notes.clone());
                let transport = AsyncRwTransport::new_client(reader, stdin).with_max_line_length(usize::MAX);
                state.serve(ChildTransport { child: Some(child), transport }).await
            }
            TransportConfig::Http(http) => {
                notes.stderr_closed.store(true, Ordering::Release);
                let client = http_client(settings.connect_timeout)
                    .map_err(|message| McpError::Connect { server: server.clone(), message })?;
                let mut headers = HashMap::new();
                for (name, value) in &http.headers {
                    let name = http::HeaderName::try_from(name.as_str()).map_err(|e| McpError::Config {
                        server: server.clone(),
                        message: format!("invalid header name '{name}': {e}"),
                    })?;
                    let value = http::HeaderValue::try_from(value.as_str()).map_err(|e| McpError::Config {
                        server: server.clone(),
                        message: format!("invalid value for header '{name}': {e}"),
                    })?;
                    headers.insert(name, value);
                }
                let mut config =
                    StreamableHttpClientTransportConfig::with_uri(http.url.as_str()).custom_headers(headers);
                config.max_sse_event_size = settings.max_message_size;
                if let Some(token) = &http.bearer_token {
                    config = config.auth_header(token.clone());
                }
                let client = LimitedHttp { client, notes: notes.clone(), auth: http.auth.clone() };
                state.serve(StreamableHttpClientTransport::with_client(client, config)).await
            }
            TransportConfig::Io(connector) => {
                notes.stderr_closed.store(true, Ordering::Release);
                let (reader, writer) = connector()
                    .await
                    .map_err(|e| McpError::Connect { server: server.clone(), message: e.to_string() })?;
                let reader = LimitedReader::new(reader, settings.max_message_size, notes.clone());
                state.serve(AsyncRwTransport::new_client(reader, writer).with_max_line_length(usize::MAX)).await
            }
        };
        match started {
            Ok(service) => Ok(service),
            Err(e) => {
                if let Some(auth) = notes.take_auth_failure(&server) {
                    return Err(auth);
                }
                notes.settle_stderr().await;
                let message = match &e {
                    ClientInitializeError::TransportError { error, context } => {
                        format!("{context}: {}", error_chain(&*error.error))
                    }
                    ClientInitializeError::ConnectionClosed(waiting_for) => {
                        format!("the server closed the connection before sending the {waiting_for}")
                    }
                    other => other.to_string(),
                };
                Err(McpError::Connect { server: server.clone(), message: format!("{message}{}", notes.stderr_tail()) })
            }
        }
    };
    let service = match tokio::time::timeout(settings.connect_timeout + settings.auth_allowance(), connecting).await {
        Ok(result) => result?,
        Err(_) => {
            return Err(McpError::ConnectTimeout {
                server,
                timeout: settings.connect_timeout,
                detail: notes.stderr_tail(),
            });
        }
    };
    // A server may send its own requests (elicitation, sampling) on the standalone stream as soon
    // as the session starts, and drops them when that stream is not open yet: wait (a little)
    // until rmcp has opened it.
    if notes.http_session.load(Ordering::Acquire) {
        let _ = tokio::time::timeout(STANDALONE_STREAM_WAIT, notes.wait_standalone()).await;
    }
    if let Some(level) = settings.client.log_level {
        super::client::notifications::set_level(&service, &settings.server, level, settings.request_timeout).await;
    }
    // The toolset keeps its own tool list (refreshed on `list_changed`); rmcp's response cache
    // would also serve stale lists when the server is gone, hiding a dead connection.
    service.peer().set_response_cache_config(rmcp::ClientCacheConfig::disabled()).await;
    if let Some(info) = service.peer().peer_info() {
        tracing::debug!(
            server = %settings.server,
            connection = id,
            protocol = %info.protocol_version,
            "connected to MCP server"
        );
    }
    Ok(Session { id, service, notes, catalog: Mutex::new(None), catalog_refresh: tokio::sync::Mutex::new(()) })
}

/// An error and its sources, joined with `: ` (without the repeats some errors make by quoting
/// their source).
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// The HTTP client of streamable HTTP sessions: rustls with the ring provider, the connect
/// timeout, no idle connection pooling and only same-origin 307/308 redirects (as rmcp's own
/// default client).
fn http_client(connect_timeout: Duration) -> Result<reqwest::Client, String> {
    crate::tls::client_builder()?
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > 10 {
                attempt.error("more than 10 redirects")
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map_err(|e| format!("could not build the HTTP client: {e}"))
}

/// How long opening a session waits for the standalone stream of a streamable HTTP session.
const STANDALONE_STREAM_WAIT: Duration = Duration::from_secs(2);

/// How long a stdio server may take to exit once asked (its stdin closed, then SIGTERM).
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// A stdio server: its process and the transport over its stdin and stdout (through a
/// [`LimitedReader`]). Closing follows the MCP specification's shutdown: stdin closed, then
/// SIGTERM, then SIGKILL, each after a wait; dropping kills the process.
pub(crate) struct ChildTransport {
    child: Option<tokio::process::Child>,
    transport: AsyncRwTransport<RoleClient, LimitedReader<tokio::process::ChildStdout>, tokio::process::ChildStdin>,
}

impl ChildTransport {
    async fn shutdown(&mut self) -> std::io::Result<()> {
        let _ = rmcp::transport::Transport::close(&mut self.transport).await;
        let Some(child) = self.child.as_mut() else { return Ok(()) };
        if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_ok() {
            self.child = None;
            return Ok(());
        }
        #[cfg(unix)]
        {
            use process_wrap::tokio::ChildWrapper;
            // SIGTERM is 15 on every Unix.
            if ChildWrapper::signal(&*child, 15).is_ok() && tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_ok()
            {
                self.child = None;
                return Ok(());
            }
        }
        let result = child.kill().await;
        self.child = None;
        result
    }
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shutdown()
    }
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        // `kill_on_drop` ends the process; reap it so that it does not linger as a zombie.
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = child.wait().await;
                });
            }
        }
    }
}

/// rmcp's reqwest client for streamable HTTP, reporting a message past the size limit to the
/// session (rmcp ends the stream, and the transport, without saying why).
#[derive(Clone)]
struct LimitedHttp {
    client: reqwest::Client,
    notes: Arc<SessionNotes>,
    /// OAuth: the token each request carries, and what a 401 or 403 leads to.
    auth: Option<Arc<super::auth::AuthSession>>,
}

type SseEvents = futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;
type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;

impl LimitedHttp {
    /// Watches a stream for rmcp's "event too large" error.
    fn watch(&self, events: SseEvents, max: usize) -> SseEvents {
        use futures::StreamExt;
        let notes = self.notes.clone();
        events
            .inspect(move |event| {
                if let Err(e) = event
                    && error_chain(e).contains("exceeded the maximum size")
                {
                    notes.mark_unreadable(Unreadable::TooLarge(max));
                }
                if let Ok(event) = event
                    && event.data.as_deref().is_some_and(|data| JsonDepth::exceeds(data.as_bytes()))
                {
                    // rmcp would drop the message and leave its request waiting.
                    notes.mark_unreadable(Unreadable::TooDeep(MAX_MESSAGE_DEPTH));
                }
            })
            .boxed()
    }

    fn check<T>(&self, result: Result<T, HttpError>) -> Result<T, HttpError> {
        if let Err(HttpError::ResponseBodyTooLarge { max_size }) = &result {
            self.notes.mark_unreadable(Unreadable::TooLarge(*max_size));
        }
        result
    }
}

impl rmcp::transport::streamable_http_client::StreamableHttpClient for LimitedHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
    ) -> Result<rmcp::transport::streamable_http_client::StreamableHttpPostResponse, HttpError> {
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            super::config::DEFAULT_MAX_MESSAGE_SIZE,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<rmcp::transport::streamable_http_client::StreamableHttpPostResponse, HttpError> {
        use rmcp::transport::streamable_http_client::StreamableHttpPostResponse;
        let response = match &self.auth {
            Some(auth) => {
                let failed = |e| self.notes.mark_auth_failure(e);
                super::auth::send(auth, failed, |token| {
                    self.client.post_message_with_max_sse_event_size(
                        uri.clone(),
                        message.clone(),
                        session_id.clone(),
                        token,
                        custom_headers.clone(),
                        max_sse_event_size,
                    )
                })
                .await
            }
            None => {
                self.client
                    .post_message_with_max_sse_event_size(
                        uri,
                        message,
                        session_id,
                        auth_header,
                        custom_headers,
                        max_sse_event_size,
                    )
                    .await
            }
        };
        let response = self.check(response)?;
        if let StreamableHttpPostResponse::Json(_, Some(_)) | StreamableHttpPostResponse::Sse(_, Some(_)) = &response {
            self.notes.http_session.store(true, Ordering::Release);
        }
        match response {
            StreamableHttpPostResponse::Sse(events, session) => {
                Ok(StreamableHttpPostResponse::Sse(self.watch(events, max_sse_event_size), session))
            }
            other => Ok(other),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
    ) -> Result<(), HttpError> {
        let auth_header = super::auth::token(self.auth.as_deref(), auth_header).await;
        self.client.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
    ) -> Result<SseEvents, HttpError> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            super::config::DEFAULT_MAX_MESSAGE_SIZE,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseEvents, HttpError> {
        let auth_header = super::auth::token(self.auth.as_deref(), auth_header).await;
        let events = self
            .client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.notes.mark_standalone_tried();
        Ok(self.watch(self.check(events)?, max_sse_event_size))
    }
}
