//! OAuth authorization of MCP servers reached over streamable HTTP ([`McpAuth`]), as the MCP
//! specification (2025-11-25, with the 2025-03-26 paths) lays it out: discovery
//! (`discovery.rs`), client registration (`registration.rs`), the code grant with PKCE and the
//! refresh (`token.rs`), the token store (`store.rs`), the user's side (`authorizer.rs`), the
//! state of one server's authorization (`flow.rs`) and the hook into the HTTP transport
//! (`transport.rs`).

mod authorizer;
mod discovery;
mod error;
mod flow;
mod registration;
mod store;
mod token;
mod transport;

use std::sync::Arc;
use std::time::Duration;

pub use authorizer::{AuthorizationRequest, AuthorizationResponse, Authorizer, LoopbackAuthorizer};
pub use error::McpAuthError;
pub(crate) use flow::AuthSession;
pub use store::{FileTokenStore, InMemoryTokenStore, StoredAuth, TokenEndpointAuthMethod, TokenStore};
pub(crate) use transport::{send, token};

use registration::ClientIdentity;

/// How many times one request may lead to an authorization (the first, then step-ups on 403
/// `insufficient_scope`) by default.
const DEFAULT_MAX_AUTHORIZATIONS: u32 = 3;

/// OAuth authorization for an MCP server reached over HTTP
/// ([`McpToolset::auth`](crate::toolset::McpToolset::auth)).
///
/// When the server answers 401, the client reads its protected resource metadata (from the
/// `WWW-Authenticate` challenge's `resource_metadata`, else the well-known locations), checks
/// that it is for this server, finds the authorization server's metadata (OAuth, then OpenID
/// discovery), identifies itself (a pre-registered client, a client ID metadata document, or
/// dynamic registration), has the user authorize through the [`Authorizer`] (PKCE with S256, the
/// `resource` parameter, the scopes of the challenge, else those the server lists, else none),
/// exchanges the code and retries the request with the token. Tokens are kept in the
/// [`TokenStore`] (in memory by default), consulted before anything else, and refreshed when they
/// expire or are refused. A 403 `insufficient_scope` asks for the scopes the server names (a
/// step-up), at most [`max_authorizations`](Self::max_authorizations) times per request. Servers
/// of the 2025-03-26 revision (no protected resource metadata) are authorized at their origin,
/// through its metadata or the default `/authorize`, `/token` and `/register` endpoints.
///
/// Failures are [`McpError::Auth`](crate::toolset::McpError::Auth) with an [`McpAuthError`];
/// no token, secret or code is ever in an error or in `Debug` output.
///
/// ```no_run
/// use toolsmith::toolset::{FileTokenStore, LoopbackAuthorizer, McpAuth, McpToolset};
///
/// # async fn demo() -> Result<(), toolsmith::toolset::McpError> {
/// let auth = McpAuth::oauth()
///     .client_name("my-agent")
///     .authorizer(LoopbackAuthorizer::new(33418))
///     .token_store(FileTokenStore::new("/home/me/.config/my-agent/tokens.json"));
/// let mcp: McpToolset = McpToolset::http("https://mcp.example.com/mcp").auth(auth);
/// let tools = mcp.list_tools().await?; // prints the URL to open the first time
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpAuth {
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) identity: ClientIdentity,
    pub(crate) scopes: Option<Vec<String>>,
    pub(crate) max_authorizations: u32,
    pub(crate) authorize_timeout: Duration,
}

impl std::fmt::Debug for McpAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpAuth")
            .field("client_name", &self.identity.client_name)
            .field("client_id", &self.identity.client_id)
            .field("client_secret", &self.identity.client_secret.as_ref().map(|_| "<redacted>"))
            .field("client_metadata_url", &self.identity.metadata_url)
            .field("scopes", &self.scopes)
            .field("authorizer", &self.authorizer.is_some())
            .field("max_authorizations", &self.max_authorizations)
            .finish_non_exhaustive()
    }
}

impl McpAuth {
    /// OAuth 2.1 authorization as MCP profiles it: a public client registered dynamically unless
    /// told otherwise, tokens kept in memory, and no authorizer (set one, or requests that need the
    /// user fail with [`McpAuthError::InteractionRequired`]).
    pub fn oauth() -> Self {
        McpAuth {
            authorizer: None,
            store: Arc::new(InMemoryTokenStore::new()),
            identity: ClientIdentity { client_name: "toolsmith".into(), ..ClientIdentity::default() },
            scopes: None,
            max_authorizations: DEFAULT_MAX_AUTHORIZATIONS,
            authorize_timeout: Duration::from_secs(300),
        }
    }

    /// How the user authorizes: see [`Authorizer`] and [`LoopbackAuthorizer`].
    pub fn authorizer(mut self, authorizer: impl Authorizer) -> Self {
        self.authorizer = Some(Arc::new(authorizer));
        self
    }

    /// How the user authorizes, as a closure that receives the request (the URL to open) and
    /// returns the code and state of the redirect to `redirect_uri`.
    pub fn authorize_with<F, Fut>(self, redirect_uri: impl Into<String>, f: F) -> Self
    where
        F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<AuthorizationResponse, McpAuthError>> + Send + 'static,
    {
        self.authorizer(authorizer::FnAuthorizer { redirect_uri: redirect_uri.into(), f })
    }

    /// Where tokens and the client's registration are kept ([`InMemoryTokenStore`] by default).
    pub fn token_store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// A shared store (e.g. one the application also reads).
    pub fn token_store_arc(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// A client registered beforehand with the authorization server (no registration is made).
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.identity.client_id = Some(client_id.into());
        self
    }

    /// The pre-registered client's secret (a confidential client); sent as the authorization
    /// server supports (Basic, else the form body) unless
    /// [`token_endpoint_auth_method`](Self::token_endpoint_auth_method) says.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.identity.client_secret = Some(secret.into());
        self
    }

    /// How the pre-registered client authenticates at the token endpoint.
    pub fn token_endpoint_auth_method(mut self, method: TokenEndpointAuthMethod) -> Self {
        self.identity.auth_method = Some(method);
        self
    }

    /// The HTTPS URL of this client's metadata document (a Client ID Metadata Document): used as
    /// the client ID with authorization servers that accept them, instead of registering.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.identity.metadata_url = Some(url.into());
        self
    }

    /// The name registered dynamically (`toolsmith` by default).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.identity.client_name = name.into();
        self
    }

    /// The scopes to ask for, instead of the server's challenge or metadata.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// How many authorizations one request may lead to (the first, then step-ups); 3 by default,
    /// at least 1.
    pub fn max_authorizations(mut self, max: u32) -> Self {
        self.max_authorizations = max.max(1);
        self
    }

    /// How long an authorization (the user in the browser) may take; 5 minutes by default. The
    /// connect and request timeouts of a toolset with authorization are longer by as much.
    pub fn authorize_timeout(mut self, timeout: Duration) -> Self {
        self.authorize_timeout = timeout;
        self
    }
}
