//! [`TokenStore`]: where the client's registration and tokens are kept between sessions (and,
//! with [`FileTokenStore`], between processes), keyed by the MCP server's URL.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// How the client authenticates at the token endpoint (RFC 7591 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TokenEndpointAuthMethod {
    /// A public client: the client ID in the body, no secret.
    #[default]
    None,
    /// The client ID and secret in an HTTP Basic `Authorization` header.
    ClientSecretBasic,
    /// The client ID and secret in the form body.
    ClientSecretPost,
}

impl TokenEndpointAuthMethod {
    pub(crate) fn parse(name: &str) -> Option<Self> {
        match name {
            "none" => Some(TokenEndpointAuthMethod::None),
            "client_secret_basic" => Some(TokenEndpointAuthMethod::ClientSecretBasic),
            "client_secret_post" => Some(TokenEndpointAuthMethod::ClientSecretPost),
            _ => None,
        }
    }
}

/// The client's identity at an authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ClientRegistration {
    pub(crate) issuer: String,
    pub(crate) client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_secret: Option<String>,
    #[serde(default)]
    pub(crate) auth_method: TokenEndpointAuthMethod,
}

impl std::fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// An access token, and what renews it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Tokens {
    pub(crate) access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) expires_at: Option<i64>,
    #[serde(default)]
    pub(crate) scopes: Vec<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// What is kept for one MCP server: the client's registration at its authorization server, the
/// token endpoint and resource (enough to refresh without discovering again), and the tokens.
/// Serializable, for stores of the application's own; `Debug` shows no secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StoredAuth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client: Option<ClientRegistration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) token_endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tokens: Option<Tokens>,
}

impl StoredAuth {
    /// A record holding only an access token (e.g. one obtained elsewhere), which the client sends
    /// until the server refuses it.
    pub fn with_access_token(token: impl Into<String>) -> Self {
        StoredAuth {
            tokens: Some(Tokens {
                access_token: token.into(),
                refresh_token: None,
                expires_at: None,
                scopes: Vec::new(),
            }),
            ..StoredAuth::default()
        }
    }

    /// Whether an access token is kept.
    pub fn has_access_token(&self) -> bool {
        self.tokens.is_some()
    }

    /// Whether a refresh token is kept.
    pub fn has_refresh_token(&self) -> bool {
        self.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some())
    }

    /// When the access token expires, in seconds since the Unix epoch, if the server said.
    pub fn expires_at(&self) -> Option<i64> {
        self.tokens.as_ref().and_then(|t| t.expires_at)
    }

    /// The scopes granted (or, when the server did not say, asked for).
    pub fn scopes(&self) -> &[String] {
        self.tokens.as_ref().map(|t| t.scopes.as_slice()).unwrap_or_default()
    }

    /// The client ID this client is registered under, if it is.
    pub fn client_id(&self) -> Option<&str> {
        self.client.as_ref().map(|c| c.client_id.as_str())
    }
}

/// Keeps a [`StoredAuth`] per MCP server (the key is the server's URL). Consulted before any
/// authorization, and written after each (and after each refresh).
///
/// The default is [`InMemoryTokenStore`]; [`FileTokenStore`] keeps them in a JSON file. A store
/// of the application's own (a keychain, a database) implements the two methods.
pub trait TokenStore: Send + Sync + 'static {
    /// The record for `server`, if there is one.
    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, std::io::Result<Option<StoredAuth>>>;
    /// Replaces the record for `server`.
    fn save<'a>(&'a self, server: &'a str, auth: &'a StoredAuth) -> BoxFuture<'a, std::io::Result<()>>;
}

/// Keeps the records in memory, for the life of the toolset (the default store).
#[derive(Debug, Default)]
pub struct InMemoryTokenStore {
    records: Mutex<HashMap<String, StoredAuth>>,
}

impl InMemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store holding `auth` for `server` (e.g. a token obtained elsewhere).
    pub fn with(server: impl Into<String>, auth: StoredAuth) -> Self {
        let store = Self::default();
        store.records.lock().unwrap_or_else(|p| p.into_inner()).insert(server.into(), auth);
        store
    }
}

impl TokenStore for InMemoryTokenStore {
    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, std::io::Result<Option<StoredAuth>>> {
        let found = self.records.lock().unwrap_or_else(|p| p.into_inner()).get(server).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn save<'a>(&'a self, server: &'a str, auth: &'a StoredAuth) -> BoxFuture<'a, std::io::Result<()>> {
        self.records.lock().unwrap_or_else(|p| p.into_inner()).insert(server.to_string(), auth.clone());
        Box::pin(async { Ok(()) })
    }
}

/// Keeps the records in one JSON file (an object keyed by server URL), written whole to a
/// temporary file then renamed over the old one, readable by its owner only on Unix.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    lock: tokio::sync::Mutex<()>,
}

impl FileTokenStore {
    /// A store in the file at `path` (created on the first save, with its folder).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore { path: path.into(), lock: tokio::sync::Mutex::new(()) }
    }

    /// The file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    async fn read_all(&self) -> std::io::Result<HashMap<String, StoredAuth>> {
        match tokio::fs::read(&self.path).await {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{} is not a token file: {e}", self.path.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashMap::new()),
            Err(e) => Err(std::io::Error::new(e.kind(), format!("could not read {}: {e}", self.path.display()))),
        }
    }

    async fn write_all(&self, records: &HashMap<String, StoredAuth>) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            tokio::fs::create_dir_all(dir).await?;
        }
        let bytes = serde_json::to_vec_pretty(records).map_err(std::io::Error::other)?;
        let tmp = self.path.with_extension("tmp");
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options.open(&tmp).await?;
        tokio::io::AsyncWriteExt::write_all(&mut file, &bytes).await?;
        file.sync_all().await?;
        drop(file);
        tokio::fs::rename(&tmp, &self.path).await
    }
}

impl TokenStore for FileTokenStore {
    fn load<'a>(&'a self, server: &'a str) -> BoxFuture<'a, std::io::Result<Option<StoredAuth>>> {
        Box::pin(async move {
            let _guard = self.lock.lock().await;
            Ok(self.read_all().await?.remove(server))
        })
    }

    fn save<'a>(&'a self, server: &'a str, auth: &'a StoredAuth) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move {
            let _guard = self.lock.lock().await;
            let mut records = self.read_all().await?;
            records.insert(server.to_string(), auth.clone());
            self.write_all(&records).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_secret() {
        let auth = StoredAuth {
            client: Some(ClientRegistration {
                issuer: "https://as".into(),
                client_id: "id".into(),
                client_secret: Some("very-secret".into()),
                auth_method: TokenEndpointAuthMethod::ClientSecretBasic,
            }),
            token_endpoint: None,
            resource: None,
            tokens: Some(Tokens {
                access_token: "access-xyz".into(),
                refresh_token: Some("refresh-xyz".into()),
                expires_at: Some(1),
                scopes: vec![],
            }),
        };
        let text = format!("{auth:?}");
        for secret in ["very-secret", "access-xyz", "refresh-xyz"] {
            assert!(!text.contains(secret), "{text}");
        }
    }

    #[tokio::test]
    async fn the_file_store_round_trips() {
        let dir = std::env::temp_dir().join(format!("toolsmith-token-store-{}", std::process::id()));
        let store = FileTokenStore::new(dir.join("tokens.json"));
        assert_eq!(store.load("http://a/mcp").await.unwrap(), None);
        let auth = StoredAuth::with_access_token("t");
        store.save("http://a/mcp", &auth).await.unwrap();
        store.save("http://b/mcp", &StoredAuth::default()).await.unwrap();
        assert_eq!(store.load("http://a/mcp").await.unwrap(), Some(auth));
        let _ = std::fs::remove_dir_all(dir);
    }
}
