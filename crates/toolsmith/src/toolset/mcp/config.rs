//! How an MCP toolset connects: the transport, timeouts and session mode.

use super::redact::Redactor;
use super::*;

/// How long connecting (spawning, or reaching the URL, and the `initialize` handshake) may take
/// by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request (`tools/list`, `tools/call`...) may wait for its answer by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// The largest message (one JSON-RPC message) a server may send by default: 16 MiB, rmcp's own
/// limit.
pub(crate) const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// Whether each run gets its own session or one session serves every run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SessionMode {
    /// A session per run: opened when the run starts, closed when it ends (runs that overlap in
    /// time share one, closed when the last of them ends). As in Pydantic AI, where an agent run
    /// enters its MCP servers.
    #[default]
    PerRun,
    /// One session for every run (and every clone of the toolset), kept open between runs until
    /// [`McpToolset::close`] or until the toolset is dropped, and reopened after a lost
    /// connection. Saves starting a server for every run.
    Shared,
}

/// A reader and a writer: the byte streams of a session made by [`McpToolset::from_io`].
pub(super) type McpIo = (Box<dyn AsyncRead + Send + Unpin>, Box<dyn AsyncWrite + Send + Unpin>);

pub(super) type IoConnector = Arc<dyn Fn() -> BoxFuture<'static, std::io::Result<McpIo>> + Send + Sync>;

#[derive(Clone)]
pub(crate) struct StdioConfig {
    pub(super) command: String,
    pub(super) args: Vec<String>,
    pub(super) env: Vec<(String, String)>,
    pub(super) cwd: Option<PathBuf>,
    pub(super) inherit_stderr: bool,
    /// Whether the server gets this process's whole environment, not only [`INHERITED_ENV`].
    pub(super) inherit_env: bool,
}

/// The variables of this process's environment a stdio server gets: those the MCP Python SDK
/// passes on (`DEFAULT_INHERITED_ENV_VARS`).
pub(crate) const INHERITED_ENV: &[&str] = if cfg!(windows) {
    &[
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
    ]
} else {
    &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]
};

impl StdioConfig {
    pub(crate) fn command_line(&self) -> String {
        let mut parts = vec![self.command.clone()];
        parts.extend(self.args.iter().cloned());
        parts.join(" ")
    }
}

#[derive(Clone)]
pub(crate) struct HttpConfig {
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) bearer_token: Option<String>,
    /// OAuth authorization, shared by the toolset's sessions (and clones).
    pub(crate) auth: Option<Arc<auth::AuthSession>>,
}

#[derive(Clone)]
pub(crate) enum TransportConfig {
    Stdio(StdioConfig),
    Http(HttpConfig),
    Io(IoConnector),
}

/// The toolset's configuration.
#[derive(Clone)]
pub(crate) struct Settings {
    /// How the server is named in messages.
    pub(crate) server: Arc<str>,
    pub(super) label: Arc<str>,
    pub(crate) transport: TransportConfig,
    pub(crate) connect_timeout: Duration,
    pub(super) request_timeout: Duration,
    pub(crate) max_message_size: usize,
    pub(super) tool_timeout: Option<Duration>,
    pub(super) max_retries: Option<u32>,
    pub(super) allowed_tools: Option<Vec<String>>,
    pub(super) session_mode: SessionMode,
    pub(super) cache_tools: bool,
    pub(super) validate_args: bool,
    /// What answers the server's requests and hears its notifications.
    pub(crate) client: super::client::ClientOptions,
    pub(crate) client_name: String,
    pub(crate) client_version: String,
    pub(super) problems: Vec<String>,
}

impl Settings {
    pub(super) fn new(server: String, transport: TransportConfig) -> Self {
        Settings {
            label: Arc::from(format!("McpToolset({server})")),
            server: Arc::from(server),
            transport,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            tool_timeout: None,
            max_retries: None,
            allowed_tools: None,
            session_mode: SessionMode::PerRun,
            cache_tools: true,
            validate_args: true,
            client: Default::default(),
            client_name: "toolsmith".to_string(),
            client_version: env!("CARGO_PKG_VERSION").to_string(),
            problems: Vec::new(),
        }
    }

    /// What is kept out of errors and results: the values of the HTTP headers, the bearer token,
    /// and the OAuth access tokens sent and client secret.
    pub(super) fn redactor(&self) -> Redactor {
        match &self.transport {
            TransportConfig::Http(http) => {
                let oauth = http.auth.as_ref().map(|a| a.secrets()).unwrap_or_default();
                Redactor::new(
                    http.headers
                        .iter()
                        .map(|(_, v)| v.as_str())
                        .chain(http.bearer_token.as_deref())
                        .chain(oauth.iter().map(String::as_str)),
                )
            }
            _ => Redactor::none(),
        }
    }

    /// How much longer than their timeouts connecting and requests may take: the time an
    /// authorization (the user in a browser) may take, for an HTTP server with [`McpAuth`].
    pub(crate) fn auth_allowance(&self) -> Duration {
        match &self.transport {
            TransportConfig::Http(HttpConfig { auth: Some(auth), .. }) => auth.config().authorize_timeout,
            _ => Duration::ZERO,
        }
    }

    pub(super) fn allowed(&self, name: &str) -> bool {
        self.allowed_tools.as_ref().is_none_or(|names| names.iter().any(|n| n == name))
    }
}
