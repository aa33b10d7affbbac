//! Serving tools over MCP (feature `mcp-server`): any [`Toolset`] as an MCP server, over stdio
//! or streamable HTTP, with resources and prompts from functions.
//!
//! Tools keep what makes them toolsmith's: their JSON schemas, arguments validated (with
//! Pydantic's coercions, every error at once) before the tool runs, approval, timeouts. What
//! the model would be shown for a retry — invalid arguments, a [`ModelRetry`](crate::ModelRetry),
//! a timeout — is the text of an `isError` result. A value is a text block (and the structured
//! content, with an `outputSchema` made from the tool's return schema); a
//! [`ToolReturn`](crate::ToolReturn)'s content gives image, audio and embedded-resource blocks,
//! its metadata the result's `_meta`. A tool reaches the client that called it (log messages,
//! progress, elicitation, sampling) through [`McpRequest::current`]. A tool that
//! [requires approval](crate::Tool::requires_approval) is approved by the user through
//! elicitation; a client that cannot elicit gets an error saying so.
//!
//! ```no_run
//! use toolsmith::prelude::*;
//! use toolsmith::mcp_server::{HttpOptions, McpServer};
//!
//! /// Add two integers.
//! #[tool]
//! fn add(x: i64, y: i64) -> i64 {
//!     x + y
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = McpServer::builder(FunctionToolset::new().with_tools([add])).name("calculator").build();
//! // Over stdio, until the client closes it:
//! server.serve_stdio().await?;
//! // Or over HTTP at http://127.0.0.1:8000/mcp:
//! let running = server.serve_http(HttpOptions::new().port(8000)).await?;
//! running.wait().await;
//! # Ok(())
//! # }
//! ```

mod call;
mod convert;
mod error;
mod handler;
mod http;
mod prompts;
mod request;
mod resources;

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

pub use error::{ClientRequestError, McpServerError};
pub use http::{HttpOptions, RunningHttp};
pub use prompts::{Prompt, PromptMessage};
pub use request::{Elicitation, LogLevel, McpRequest, Sampled};
pub use resources::{Resource, ResourceContent, ResourceTemplate};

use crate::toolset::{DynToolset, Toolset};
use handler::Session;

/// What every session of a server shares.
struct Shared<D> {
    toolset: Box<dyn DynToolset<D>>,
    deps: D,
    name: String,
    version: String,
    instructions: Option<String>,
    timeout: Option<Duration>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Prompt>,
    /// The clients whose sessions are open, for the notifications sent to all of them.
    peers: std::sync::Mutex<Vec<rmcp::Peer<rmcp::RoleServer>>>,
}

/// An MCP server for a toolset: build it with [`McpServer::builder`], then serve it over stdio
/// ([`serve_stdio`](Self::serve_stdio)), any byte streams ([`serve_io`](Self::serve_io)) or
/// streamable HTTP ([`serve_http`](Self::serve_http)). Cheap to clone; clones share the
/// toolset.
pub struct McpServer<D = ()> {
    shared: Arc<Shared<D>>,
}

impl<D> Clone for McpServer<D> {
    fn clone(&self) -> Self {
        McpServer { shared: self.shared.clone() }
    }
}

impl<D> std::fmt::Debug for McpServer<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("name", &self.shared.name).finish_non_exhaustive()
    }
}

impl McpServer<()> {
    /// A builder for a server of a toolset without dependencies.
    pub fn builder(toolset: impl Toolset<()>) -> McpServerBuilder<()> {
        McpServerBuilder::with_deps(toolset, ())
    }
}

impl<D: Clone + Send + Sync + 'static> McpServer<D> {
    /// Serves one client over stdin and stdout until it closes them.
    pub async fn serve_stdio(&self) -> Result<(), McpServerError> {
        let (stdin, stdout) = rmcp::transport::io::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// Serves one client over a pair of byte streams (newline-delimited JSON-RPC) until it
    /// closes them. The toolset is entered first and exited at the end.
    pub async fn serve_io<R, W>(&self, read: R, write: W) -> Result<(), McpServerError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.enter().await?;
        let result = async {
            let running = Session::new(self.shared.clone())
                .serve((read, write))
                .await
                .map_err(|e| McpServerError::Session { message: e.to_string() })?;
            running.waiting().await.map_err(|e| McpServerError::Session { message: e.to_string() })?;
            Ok(())
        }
        .await;
        self.shared.toolset.exit_boxed().await;
        result
    }

    /// Serves over streamable HTTP (see [`HttpOptions`]: 127.0.0.1, `/mcp`, Host and Origin
    /// checks on); returns once listening. The toolset is entered first and exited when the
    /// server is shut down.
    pub async fn serve_http(&self, options: HttpOptions) -> Result<RunningHttp, McpServerError> {
        self.enter().await?;
        let shared = self.shared.clone();
        let exit = {
            let shared = self.shared.clone();
            async move { shared.toolset.exit_boxed().await }
        };
        match http::serve(options, move || Session::new(shared.clone()), exit).await {
            Ok(running) => Ok(running),
            Err(e) => {
                self.shared.toolset.exit_boxed().await;
                Err(e)
            }
        }
    }

    /// Tells every connected client that the tool list changed
    /// (`notifications/tools/list_changed`), so that it lists the tools again: call it when
    /// what the toolset lists changes (a [`DynamicToolset`](crate::toolset::DynamicToolset), a
    /// gateway whose upstream changed).
    pub async fn notify_tools_changed(&self) {
        let peers: Vec<_> = {
            let mut peers = self.shared.peers.lock().unwrap_or_else(|p| p.into_inner());
            peers.retain(|peer| !peer.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!(error = %e, "could not send tools/list_changed");
            }
        }
    }

    async fn enter(&self) -> Result<(), McpServerError> {
        self.shared.toolset.enter_boxed().await.map_err(|e| McpServerError::Toolset { message: e.to_string() })
    }
}

/// Builds an [`McpServer`].
#[must_use]
pub struct McpServerBuilder<D> {
    shared: Shared<D>,
}

impl<D> std::fmt::Debug for McpServerBuilder<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerBuilder").field("name", &self.shared.name).finish_non_exhaustive()
    }
}

impl<D: Clone + Send + Sync + 'static> McpServerBuilder<D> {
    /// A builder for a server of a toolset whose tools read dependencies: every call gets a
    /// clone of `deps` in its [`RunContext`](crate::RunContext).
    pub fn with_deps(toolset: impl Toolset<D>, deps: D) -> Self {
        McpServerBuilder {
            shared: Shared {
                toolset: Box::new(toolset),
                deps,
                name: "toolsmith".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                instructions: None,
                timeout: None,
                resources: Vec::new(),
                templates: Vec::new(),
                prompts: Vec::new(),
                peers: Default::default(),
            },
        }
    }

    /// The server's name, given to clients at initialisation (default `toolsmith`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.shared.name = name.into();
        self
    }

    /// The server's version (default toolsmith's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.shared.version = version.into();
        self
    }

    /// Instructions for the client's model, given at initialisation.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.shared.instructions = Some(instructions.into());
        self
    }

    /// A timeout for tools that set none themselves (nor their toolset); a call past it is
    /// answered with the run's timeout text as an `isError` result.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.shared.timeout = Some(timeout);
        self
    }

    /// Serves a resource.
    pub fn resource(mut self, resource: Resource) -> Self {
        self.shared.resources.push(resource);
        self
    }

    /// Serves the resources of a URI template.
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.shared.templates.push(template);
        self
    }

    /// Serves a prompt.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.shared.prompts.push(prompt);
        self
    }

    /// The server.
    pub fn build(self) -> McpServer<D> {
        McpServer { shared: Arc::new(self.shared) }
    }
}
