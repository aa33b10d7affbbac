//! [`McpAuthError`]: what can go wrong authorizing with an MCP server.
//!
//! No variant holds a token, a client secret or an authorization code: the texts come from the
//! servers' metadata and error codes, and from this crate.

/// What went wrong authorizing with an MCP server (OAuth 2.1 as the MCP specification profiles
/// it). Reported inside [`McpError::Auth`](crate::toolset::McpError::Auth).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpAuthError {
    /// The server asked for authorization (HTTP 401) but no way to obtain a token without the
    /// user is left (no stored token, no refresh token that works) and the configuration has no
    /// [`Authorizer`](super::Authorizer) to ask the user.
    #[error(
        "the MCP server requires authorization and no authorizer was configured: give `McpAuth::authorizer` (e.g. a `LoopbackAuthorizer`) or a token store holding a token"
    )]
    InteractionRequired,
    /// No authorization server metadata was found at any of the well-known locations.
    #[error("no authorization server metadata for {issuer}: tried {}", tried.join(", "))]
    MetadataMissing {
        /// The authorization server (issuer URL) named by the protected resource metadata.
        issuer: String,
        /// Every URL asked, in order.
        tried: Vec<String>,
    },
    /// A metadata document (protected resource or authorization server) could not be read.
    #[error("invalid metadata at {url}: {reason}")]
    InvalidMetadata {
        /// Where the document was read.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The protected resource metadata is for another resource than the server's URL: using it
    /// would send the user's token to the wrong place, so it is refused.
    #[error(
        "the protected resource metadata names resource '{advertised}', which does not cover the MCP server's URL '{expected}': refusing to authorize"
    )]
    ResourceMismatch {
        /// The resource the client connects to.
        expected: String,
        /// The resource the metadata names.
        advertised: String,
    },
    /// The authorization server metadata names another issuer than the one it was fetched for.
    #[error("the authorization server metadata of {expected} names issuer '{advertised}': refusing to use it")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The issuer the metadata names.
        advertised: String,
    },
    /// The authorization server does not support PKCE with S256, which MCP requires.
    #[error("authorization server {issuer} does not advertise PKCE with S256 (code_challenge_methods_supported)")]
    PkceUnsupported {
        /// The authorization server.
        issuer: String,
    },
    /// No way to identify this client to the authorization server: no pre-registered client ID,
    /// no client ID metadata document it accepts, and no dynamic registration endpoint.
    #[error(
        "authorization server {issuer} offers no way to register this client: give `McpAuth::client_id` (pre-registration) or `McpAuth::client_metadata_url`"
    )]
    RegistrationUnavailable {
        /// The authorization server.
        issuer: String,
    },
    /// A request to an OAuth endpoint (registration, token) was answered with an error.
    #[error("{endpoint} answered HTTP {status}{}{}", code.as_ref().map(|c| format!(" with OAuth error '{c}'")).unwrap_or_default(), description.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    Endpoint {
        /// Which endpoint: `the token endpoint`, `the registration endpoint`...
        endpoint: &'static str,
        /// The HTTP status.
        status: u16,
        /// The OAuth `error` code (`invalid_grant`, `invalid_client`...), when the answer had one.
        code: Option<String>,
        /// The server's `error_description`, when it gave one.
        description: Option<String>,
    },
    /// The authorization response carried another `state` than the request: it was not the
    /// answer to this request (a forged or stale redirect), so it is refused.
    #[error("the authorization response's state does not match the request's: refusing the code")]
    StateMismatch,
    /// The authorizer (the user's browser, the loopback listener...) failed.
    #[error("authorization failed: {message}")]
    Authorizer {
        /// What happened.
        message: String,
    },
    /// The server kept answering 403 `insufficient_scope` after the client was authorized for
    /// the scopes it asked for, as many times as allowed.
    #[error(
        "the MCP server still answers 403 insufficient_scope after {attempts} authorization(s){}",
        scope.as_ref().map(|s| format!(" (it asks for scope '{s}')")).unwrap_or_default()
    )]
    InsufficientScope {
        /// The authorizations made for the request.
        attempts: u32,
        /// The scope the server asked for last.
        scope: Option<String>,
    },
    /// The server kept answering 401 to the tokens it was given, as many times as allowed.
    #[error("the MCP server still refuses the token (HTTP 401) after {attempts} authorization(s)")]
    Refused {
        /// The authorizations made for the request.
        attempts: u32,
    },
    /// An OAuth endpoint could not be reached.
    #[error("could not reach {url}: {message}")]
    Http {
        /// The URL.
        url: String,
        /// The transport's error.
        message: String,
    },
    /// The token store failed to load or save.
    #[error("the token store failed: {message}")]
    Store {
        /// What happened.
        message: String,
    },
    /// A URL (the server's, or one the metadata gave) is not usable.
    #[error("invalid URL '{url}': {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
}

impl McpAuthError {
    pub(crate) fn http(url: &str, error: reqwest::Error) -> Self {
        // reqwest's error text can quote the URL, never a body or header.
        McpAuthError::Http { url: url.to_string(), message: error.without_url().to_string() }
    }

    pub(crate) fn invalid_url(url: &str, reason: impl ToString) -> Self {
        McpAuthError::InvalidUrl { url: url.to_string(), reason: reason.to_string() }
    }
}
