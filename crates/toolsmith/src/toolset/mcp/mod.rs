//! [`McpToolset`]: the tools of an MCP server (feature `mcp`), through the official Rust SDK
//! `rmcp`.

mod auth;
mod client;
mod config;
mod connection;
mod convert;
mod error;
// The redaction the providers use, compiled here too: the providers and the toolsets do not
// import each other (ARCHITECTURE.md), and no module below both is MCP's or the providers' own.
mod limits;
#[allow(clippy::duplicate_mod)]
#[path = "../../providers/redact.rs"]
mod redact;
mod session;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};

pub use auth::{
    AuthorizationRequest, AuthorizationResponse, Authorizer, FileTokenStore, InMemoryTokenStore, LoopbackAuthorizer,
    McpAuth, McpAuthError, StoredAuth, TokenEndpointAuthMethod, TokenStore,
};
pub use client::{
    Elicitation, ElicitationMode, ElicitationResponse, McpLogLevel, McpNotification, McpPrompt, McpPromptArgument,
    McpPromptMessage, McpResource, McpResourceContents, McpResourceTemplate, McpRoot, SamplingHandler,
};
pub use config::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, SessionMode};
pub(crate) use config::{HttpConfig, Settings, StdioConfig, TransportConfig};
use config::{IoConnector, McpIo};
use connection::{Inner, Slot, handler};
pub use convert::McpCallResult;
pub use error::McpError;

use self::convert::CatalogTool;
use self::session::Session;
use crate::context::RunContext;
use crate::error::UserError;
use crate::tool::{Handler, Invocation, ModelRetry, ToolDefinition, ToolError, ToolResult};
use crate::toolset::{Toolset, ToolsetTool};

/// The tools of an MCP server, as a [`Toolset`] (feature `mcp`), through the official Rust SDK
/// `rmcp`.
///
/// The toolset connects to a server by spawning a command and talking over its stdin/stdout
/// (stdio), over streamable HTTP (a URL, with headers and a bearer token), or over any pair of
/// byte streams ([`McpToolset::from_io`], e.g. an in-process server). The tools the server lists
/// become definitions (the input schema as it is; the title, annotations, output schema and
/// `_meta` in the metadata; a tool listed without an object `inputSchema` gets an empty object
/// schema, and one that cannot be read at all is skipped, each with a warning naming it, where
/// the MCP Python SDK under Pydantic AI fails the whole list); calls are validated against the input schema (every error is sent
/// back to the model as a retry), and results are mapped to tool returns (see
/// [`McpToolset::call_tool`] for the raw result).
///
/// # Sessions
///
/// A session is opened when a run enters the toolset ([`Toolset::enter`], at the start of the
/// run), or lazily by the first request made outside a run (a direct [`McpToolset::list_tools`]
/// or [`McpToolset::call_tool`]), and kept behind a mutex for the next steps and calls; clones of
/// the toolset share it. With [`SessionMode::PerRun`] (the default, as in Pydantic AI) it is
/// closed when the run exits the toolset ([`Toolset::exit`], at the end of the run, also when it
/// fails); runs that overlap in time share one session, closed when the last of them ends. With
/// [`SessionMode::Shared`] it stays open across runs, until [`McpToolset::close`] or until the
/// toolset and its clones are dropped. Closing asks a stdio server to exit (its stdin is closed),
/// then terminates it.
///
/// A session whose connection was lost (the server exited, a request timed out, the server broke
/// the protocol) is dropped, and the next step or call reconnects; the call that saw the failure
/// gets a clear [`McpError`] and is never retried (it may have had effects). Listing tools, which
/// has no effects, is retried once on a new session.
///
/// The tool list is cached for the session and refreshed when the server sends
/// `notifications/tools/list_changed` (or at every step with `.cache_tools(false)`).
///
/// # What the server may ask and say
///
/// A server's sampling requests go to a model ([`McpToolset::sampling_model`]) or a handler
/// ([`McpToolset::sampling_handler`]), its elicitation requests (a form, with the schema's
/// defaults applied, or a URL) to [`McpToolset::elicitation_handler`], and `roots/list` is
/// answered from [`McpToolset::roots`]; the client advertises each capability only when it is
/// given, and refuses the request at once with an error otherwise. A handler that does not answer
/// within the request timeout is answered for with an error. Log messages, progress, resource
/// updates and list changes go to [`McpToolset::on_notification`] (log messages also to the
/// `tracing` log). A call dropped before its answer (the run cancelled, the tool timeout) sends
/// `notifications/cancelled` for it. The server's resources and prompts are on the toolset's API
/// ([`McpToolset::list_resources`], [`McpToolset::read_resource`], [`McpToolset::get_prompt`]...).
///
/// The client speaks protocol revision 2025-11-25 (the newest with the `initialize`
/// handshake) and accepts the older revision a server answers with (2025-06-18...). The
/// 2026-07-28 revision (no handshake; a server's questions come back as input-required results,
/// list changes only on listen streams) is not used yet.
///
/// ```no_run
/// use toolsmith::prelude::*;
/// use toolsmith::toolset::{McpToolset, ToolsetExt};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let files = McpToolset::stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
///     .allowed_tools(["read_text_file", "list_directory"])
///     .prefixed("fs");
/// let agent = Agent::builder(TestModel::default()).toolset(files).build()?;
/// let result = agent.run("What is in /tmp?").await?;
/// # Ok(())
/// # }
/// ```
///
/// Direct use, outside an agent:
///
/// ```no_run
/// use std::time::Duration;
/// use toolsmith::toolset::McpToolset;
///
/// # async fn demo() -> Result<(), toolsmith::toolset::McpError> {
/// let everything: McpToolset = McpToolset::http("http://127.0.0.1:3001/mcp")
///     .bearer_token("secret")
///     .request_timeout(Duration::from_secs(30));
/// for def in everything.list_tools().await? {
///     println!("{}: {}", def.name, def.description.unwrap_or_default());
/// }
/// let result = everything.call_tool("echo", serde_json::json!({"message": "hi"})).await?;
/// assert_eq!(result.text(), "Echo: hi");
/// everything.close().await;
/// # Ok(())
/// # }
/// ```
pub struct McpToolset<D = ()> {
    inner: Arc<Inner>,
    /// The tools made from the last catalogue listed, reused while the catalogue is the same.
    shared: Arc<std::sync::Mutex<Option<SharedTools<D>>>>,
    _deps: PhantomData<fn() -> D>,
}

/// A catalogue and the tools made from it.
type SharedTools<D> = (Arc<Vec<CatalogTool>>, Arc<[ToolsetTool<D>]>);

impl<D> Clone for McpToolset<D> {
    /// A handle on the same toolset: clones share the session.
    fn clone(&self) -> Self {
        McpToolset { inner: self.inner.clone(), shared: self.shared.clone(), _deps: PhantomData }
    }
}

impl<D> std::fmt::Debug for McpToolset<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolset")
            .field("server", &self.inner.settings.server)
            .field("session_mode", &self.inner.settings.session_mode)
            .finish_non_exhaustive()
    }
}

fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}...")
    }
}

impl<D> McpToolset<D> {
    fn from_settings(settings: Settings) -> Self {
        McpToolset {
            inner: Arc::new(Inner {
                settings,
                slot: tokio::sync::Mutex::new(Slot::default()),
                connections: AtomicU64::new(0),
            }),
            shared: Default::default(),
            _deps: PhantomData,
        }
    }

    /// A server started as a child process (`command args...`), spoken to over its stdin and
    /// stdout. Its stderr is captured: the last lines are quoted in connection errors, and every
    /// line is logged at debug level (see [`McpToolset::inherit_stderr`]).
    ///
    /// Of this process's environment the server gets only what the MCP Python SDK passes on
    /// (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM` and `USER`; on Windows its list), so that an API
    /// key in the environment does not reach a third-party server, nor the model through a tool
    /// that prints the environment; add variables with [`env`](McpToolset::env), or pass it all
    /// with [`inherit_env`](McpToolset::inherit_env).
    pub fn stdio<I, S>(command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let stdio = StdioConfig {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
            inherit_stderr: false,
            inherit_env: false,
        };
        let mut settings = Settings::new(short(&stdio.command_line(), 80), TransportConfig::Stdio(stdio.clone()));
        if stdio.command.trim().is_empty() {
            settings.problems.push("the command of an MCP stdio server is empty: give the program to run".into());
        }
        Self::from_settings(settings)
    }

    /// A server reached over streamable HTTP at `url` (e.g. `http://127.0.0.1:3001/mcp`).
    pub fn http(url: impl Into<String>) -> Self {
        let url = url.into();
        let mut settings = Settings::new(
            short(&url, 80),
            TransportConfig::Http(HttpConfig { url: url.clone(), headers: Vec::new(), bearer_token: None, auth: None }),
        );
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            settings
                .problems
                .push(format!("the URL of an MCP server must start with http:// or https://, got '{url}'"));
        }
        Self::from_settings(settings)
    }

    /// A server reached over a pair of byte streams opened by `connect` for each session (an
    /// in-process server over `tokio::io::duplex`, a socket...). Messages are newline-delimited
    /// JSON-RPC, as over stdio.
    pub fn from_io<F, Fut, R, W>(name: impl Into<String>, connect: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::io::Result<(R, W)>> + Send + 'static,
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let connector: IoConnector = Arc::new(move || {
            let fut = connect();
            Box::pin(async move {
                let (r, w) = fut.await?;
                let io: McpIo = (Box::new(r), Box::new(w));
                Ok(io)
            })
        });
        Self::from_settings(Settings::new(name.into(), TransportConfig::Io(connector)))
    }

    /// Applies a configuration change: in place while the toolset is not shared, else on a
    /// copy that gets its own session.
    fn configure(mut self, f: impl FnOnce(&mut Settings)) -> Self {
        match Arc::get_mut(&mut self.inner) {
            Some(inner) => {
                f(&mut inner.settings);
                self
            }
            None => {
                let mut settings = self.inner.settings.clone();
                f(&mut settings);
                Self::from_settings(settings)
            }
        }
    }

    /// Names the server in messages and in the label (`McpToolset({name})`); the default is the
    /// command line or the URL.
    pub fn name(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.configure(|s| {
            s.label = Arc::from(format!("McpToolset({name})"));
            s.server = Arc::from(name);
        })
    }

    fn stdio_option(self, option: &str, f: impl FnOnce(&mut StdioConfig)) -> Self {
        self.configure(|s| match &mut s.transport {
            TransportConfig::Stdio(stdio) => f(stdio),
            _ => s.problems.push(format!("`{option}` applies only to stdio servers (made with `McpToolset::stdio`)")),
        })
    }

    fn http_option(self, option: &str, f: impl FnOnce(&mut HttpConfig, &mut Vec<String>)) -> Self {
        self.configure(|s| match &mut s.transport {
            TransportConfig::Http(http) => f(http, &mut s.problems),
            _ => s.problems.push(format!("`{option}` applies only to HTTP servers (made with `McpToolset::http`)")),
        })
    }

    /// Sets an environment variable of a stdio server (beside the few it inherits, see
    /// [`McpToolset::stdio`]).
    pub fn env(self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let (key, value) = (key.into(), value.into());
        self.stdio_option("env", |stdio| stdio.env.push((key, value)))
    }

    /// Passes this process's whole environment to a stdio server (API keys and other secrets
    /// included), not only the variables the MCP Python SDK passes on.
    pub fn inherit_env(self, inherit: bool) -> Self {
        self.stdio_option("inherit_env", |stdio| stdio.inherit_env = inherit)
    }

    /// Sets the working directory of a stdio server.
    pub fn current_dir(self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.stdio_option("current_dir", |stdio| stdio.cwd = Some(dir))
    }

    /// Lets a stdio server write to this process's stderr instead of capturing it.
    pub fn inherit_stderr(self, inherit: bool) -> Self {
        self.stdio_option("inherit_stderr", |stdio| stdio.inherit_stderr = inherit)
    }

    /// Adds an HTTP header sent with every request to an HTTP server.
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let (name, value) = (name.into(), value.into());
        self.http_option("header", |http, problems| {
            if let Err(e) = http::HeaderName::try_from(name.as_str()) {
                problems.push(format!("invalid header name '{name}': {e}"));
            } else if let Err(e) = http::HeaderValue::try_from(value.as_str()) {
                problems.push(format!("invalid value for header '{name}': {e}"));
            } else {
                http.headers.push((name, value));
            }
        })
    }

    /// Sends `Authorization: Bearer {token}` with every request to an HTTP server. The token, like
    /// the values of the headers, is kept out of every error.
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        let token = token.into();
        self.http_option("bearer_token", |http, _| http.bearer_token = Some(token))
    }

    /// Authorizes with the HTTP server by OAuth when it asks (see [`McpAuth`]); the token then
    /// replaces any [`bearer_token`](Self::bearer_token).
    pub fn auth(self, auth: McpAuth) -> Self {
        self.http_option("auth", |http, problems| match auth::AuthSession::new(auth, &http.url) {
            Ok(session) => http.auth = Some(Arc::new(session)),
            Err(e) => problems.push(e.to_string()),
        })
    }

    /// How long connecting may take (spawning or reaching the server, and the `initialize`
    /// handshake); 30 s by default.
    pub fn connect_timeout(self, timeout: Duration) -> Self {
        self.configure(|s| {
            if timeout.is_zero() {
                s.problems.push("the connect timeout of an MCP server must be greater than 0".into());
            }
            s.connect_timeout = timeout;
        })
    }

    /// How long one request (`tools/list`, `tools/call`...) may wait for its answer; 300 s by
    /// default. A request that takes longer fails with [`McpError::Timeout`] and the session is
    /// reopened. For a limit that the model is told about and may retry, use
    /// [`McpToolset::timeout`].
    pub fn request_timeout(self, timeout: Duration) -> Self {
        self.configure(|s| {
            if timeout.is_zero() {
                s.problems.push("the request timeout of an MCP server must be greater than 0".into());
            }
            s.request_timeout = timeout;
        })
    }

    /// The largest message the server may send, in bytes (one JSON-RPC message: a line over
    /// stdio or [`McpToolset::from_io`], an event over HTTP); 16 MiB by default. A larger one
    /// fails the requests waiting on the session at once with [`McpError::MessageTooLarge`]
    /// (over streamable HTTP, rmcp enforces the limit and its error names it) and the session
    /// is reopened.
    pub fn max_message_size(self, bytes: usize) -> Self {
        self.configure(|s| {
            if bytes == 0 {
                s.problems.push("the largest message of an MCP server must be more than 0 bytes".into());
            }
            s.max_message_size = bytes;
        })
    }

    /// The tool timeout, as for a function toolset: a call that takes longer is a retry for the
    /// model ("Timed out after ... seconds.").
    pub fn timeout(self, timeout: Duration) -> Self {
        self.configure(|s| {
            if timeout.is_zero() {
                s.problems.push("the toolset timeout must be greater than 0".to_string());
            }
            s.tool_timeout = Some(timeout);
        })
    }

    /// The retry budget of the server's tools (else the agent's applies).
    pub fn max_retries(self, retries: u32) -> Self {
        self.configure(|s| s.max_retries = Some(retries))
    }

    /// Offers only these tools of the server (the others are neither shown nor callable).
    pub fn allowed_tools<I, S>(self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self.configure(|s| s.allowed_tools = Some(names))
    }

    /// One session for every run (the default) or one per run.
    pub fn session_mode(self, mode: SessionMode) -> Self {
        self.configure(|s| s.session_mode = mode)
    }

    /// Whether the tool list is cached for the session until the server says it changed (the
    /// default), or listed again before every model request.
    pub fn cache_tools(self, cache: bool) -> Self {
        self.configure(|s| s.cache_tools = cache)
    }

    /// Whether arguments are validated against the tools' input schemas before they are sent
    /// (the default; every error is sent back to the model at once, as a retry). A schema the
    /// validator cannot compile leaves its tool unvalidated, with a warning in the log.
    pub fn validate_args(self, validate: bool) -> Self {
        self.configure(|s| s.validate_args = validate)
    }

    /// The client name and version sent in the `initialize` handshake (`toolsmith` and the
    /// crate's version by default).
    pub fn client_info(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let (name, version) = (name.into(), version.into());
        self.configure(|s| {
            s.client_name = name;
            s.client_version = version;
        })
    }

    /// How the server is named in messages.
    pub fn server_name(&self) -> &str {
        &self.inner.settings.server
    }

    /// How many sessions have been opened so far (a reconnection opens one more).
    pub fn connection_count(&self) -> u64 {
        self.inner.connections.load(Ordering::Relaxed)
    }

    /// Configuration problems (also reported by the agent builder).
    pub fn check(&self) -> Result<(), UserError> {
        match self.inner.settings.problems.first() {
            Some(p) => Err(UserError::new(format!("McpToolset '{}': {p}", self.inner.settings.server))),
            None => Ok(()),
        }
    }

    fn config_error(&self) -> Result<(), McpError> {
        match self.inner.settings.problems.first() {
            Some(p) => Err(McpError::Config { server: self.inner.settings.server.to_string(), message: p.clone() }),
            None => Ok(()),
        }
    }

    /// The server's tools (those allowed by [`McpToolset::allowed_tools`]) as definitions,
    /// connecting first if needed.
    pub async fn list_tools(&self) -> Result<Vec<ToolDefinition>, McpError> {
        self.config_error()?;
        let (_, catalog) = self.inner.catalog().await?;
        Ok(catalog.iter().map(|t| t.def.clone()).collect())
    }

    /// Calls a tool (arguments as a JSON object, or `null` for none) without validating the
    /// arguments, and returns the server's result as it is: a result with `is_error` is not an
    /// `Err` here.
    ///
    /// Arguments nested deeper than [`MAX_NESTING`](crate::validation::MAX_NESTING) levels (as
    /// deep as tool arguments may be) are refused before anything walks them.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<McpCallResult, McpError> {
        self.config_error()?;
        if crate::validation::depth::too_deep(&arguments, crate::validation::MAX_NESTING).is_some() {
            crate::validation::depth::dispose(arguments);
            return Err(McpError::Config {
                server: self.inner.settings.server.to_string(),
                message: format!(
                    "the arguments of tool '{name}' nest arrays and objects more than {} levels deep",
                    crate::validation::MAX_NESTING
                ),
            });
        }
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(McpError::Config {
                    server: self.inner.settings.server.to_string(),
                    message: format!("the arguments of tool '{name}' must be a JSON object, got {other}"),
                });
            }
        };
        let (_, result) = self.inner.call(name, arguments).await?;
        Ok(result)
    }

    /// What the server said about itself in the handshake, connecting first if needed.
    pub async fn server_info(&self) -> Result<McpServerInfo, McpError> {
        self.config_error()?;
        let session = self.inner.session().await?;
        let info = session.service.peer().peer_info();
        let value = info.as_deref().and_then(|i| serde_json::to_value(i).ok()).unwrap_or(Value::Null);
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        Ok(McpServerInfo {
            name: text(value.pointer("/serverInfo/name")),
            version: text(value.pointer("/serverInfo/version")),
            protocol_version: text(value.get("protocolVersion")).unwrap_or_default(),
            instructions: text(value.get("instructions")),
            capabilities: value.get("capabilities").cloned().unwrap_or(Value::Null),
        })
    }

    /// Closes the session now (the next use opens a new one). Calls still running keep the
    /// session open until they finish.
    pub async fn close(&self) {
        let session = self.inner.slot.lock().await.session.take();
        if let Some(session) = session {
            session::close(session).await;
        }
    }
}

/// What a server said about itself in the `initialize` handshake.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct McpServerInfo {
    /// The server's name.
    pub name: Option<String>,
    /// The server's version.
    pub version: Option<String>,
    /// The protocol version agreed on.
    pub protocol_version: String,
    /// The server's instructions for the model, if any.
    pub instructions: Option<String>,
    /// The server's capabilities, as MCP JSON.
    pub capabilities: Value,
}

impl<D: Clone + Send + Sync + 'static> Toolset<D> for McpToolset<D> {
    fn label(&self) -> String {
        self.inner.settings.label.to_string()
    }

    fn check(&self) -> Result<(), UserError> {
        McpToolset::check(self)
    }

    /// Opens the session (per-run mode), or makes sure the shared one is open, so that a server
    /// that cannot be reached fails the run at its start.
    async fn enter(&self) -> Result<(), UserError> {
        McpToolset::check(self)?;
        self.inner.enter().await.map_err(UserError::from)
    }

    /// Closes the session when the last run using it ends (per-run mode).
    async fn exit(&self) {
        self.inner.exit().await
    }

    async fn get_tools(&self, _ctx: &RunContext<D>) -> Result<Vec<ToolsetTool<D>>, UserError> {
        McpToolset::check(self)?;
        let (_, catalog) = self.inner.catalog().await?;
        Ok(self.tools_of(&catalog))
    }

    /// The tools are made once per catalogue listed (with `cache_tools`, once per session and
    /// list change), so a large MCP catalogue costs nothing per step.
    async fn get_tools_shared(&self, _ctx: &RunContext<D>) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        McpToolset::check(self)?;
        let (_, catalog) = self.inner.catalog().await?;
        let mut shared = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((listed, tools)) = shared.as_ref()
            && Arc::ptr_eq(listed, &catalog)
        {
            return Ok(tools.clone());
        }
        let tools: Arc<[ToolsetTool<D>]> = self.tools_of(&catalog).into();
        *shared = Some((catalog, tools.clone()));
        Ok(tools)
    }
}

impl<D: Clone + Send + Sync + 'static> McpToolset<D> {
    fn tools_of(&self, catalog: &[CatalogTool]) -> Vec<ToolsetTool<D>> {
        let settings = &self.inner.settings;
        catalog
            .iter()
            .map(|tool| ToolsetTool {
                def: tool.def.clone().into(),
                max_retries: settings.max_retries,
                requires_approval: false,
                toolset_timeout: settings.tool_timeout,
                toolset_label: settings.label.clone(),
                validator: tool.validator.clone(),
                args_validator: None,
                handler: handler(&self.inner, tool),
            })
            .collect()
    }
}
