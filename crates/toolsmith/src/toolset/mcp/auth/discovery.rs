//! Discovery: the server's challenge (`WWW-Authenticate`), its protected resource metadata
//! (RFC 9728) and its authorization server's metadata (RFC 8414, OpenID Connect Discovery), in
//! the order of the MCP specification (2025-11-25), with the 2025-03-26 paths for servers that
//! publish no protected resource metadata.

use serde::Deserialize;
use url::Url;

use super::McpAuthError;

/// The largest metadata document read.
const MAX_DOCUMENT: usize = 1024 * 1024;
/// The protocol revision sent with discovery requests, as the specification asks.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// The parameters of a `Bearer` challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) resource_metadata: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) error: Option<String>,
}

impl Challenge {
    /// The parameters of the `Bearer` challenge in a `WWW-Authenticate` value (RFC 6750 §3);
    /// other schemes are skipped.
    pub(crate) fn parse(header: &str) -> Challenge {
        let mut challenge = Challenge::default();
        let mut rest = header;
        let mut in_bearer = false;
        loop {
            rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
            if rest.is_empty() {
                break;
            }
            let name_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || "_-.!#$%&'*+^`|~".contains(c)));
            let name_len = name_len.unwrap_or(rest.len());
            if name_len == 0 {
                // Not a token: skip one character.
                rest = &rest[rest.chars().next().map_or(1, char::len_utf8)..];
                continue;
            }
            let name = &rest[..name_len];
            let after = rest[name_len..].trim_start();
            let Some(value_start) = after.strip_prefix('=') else {
                // A scheme name (or a token68 after one).
                in_bearer = name.eq_ignore_ascii_case("bearer");
                rest = after;
                continue;
            };
            let value_start = value_start.trim_start();
            let (value, remaining) = if let Some(quoted) = value_start.strip_prefix('"') {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, escaped)) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        other => value.push(other),
                    }
                }
                (value, &quoted[end.min(quoted.len())..])
            } else {
                let end = value_start.find(|c: char| c == ',' || c.is_whitespace()).unwrap_or(value_start.len());
                (value_start[..end].to_string(), &value_start[end..])
            };
            if in_bearer {
                let slot = match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => Some(&mut challenge.resource_metadata),
                    "scope" => Some(&mut challenge.scope),
                    "error" => Some(&mut challenge.error),
                    _ => None,
                };
                if let Some(slot) = slot {
                    *slot = Some(value);
                }
            }
            rest = remaining;
        }
        challenge
    }

    /// The scopes the challenge asks for, split on spaces.
    pub(crate) fn scopes(&self) -> Vec<String> {
        self.scope.as_deref().map(split_scopes).unwrap_or_default()
    }
}

pub(crate) fn split_scopes(scope: &str) -> Vec<String> {
    scope.split_whitespace().map(str::to_string).collect()
}

/// Protected resource metadata (RFC 9728), the fields the client uses.
#[derive(Debug, Clone, Deserialize)]
struct ResourceMetadata {
    resource: Option<String>,
    #[serde(default)]
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 / OpenID Connect Discovery), the fields the client
/// uses.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: Option<String>,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    pub(crate) registration_endpoint: Option<String>,
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
}

/// What discovery found: where to authorize, for which resource, with which scopes on offer.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The authorization server (its issuer URL, or the server's origin for 2025-03-26 servers).
    pub(crate) issuer: String,
    pub(crate) metadata: ServerMetadata,
    /// The `resource` parameter (RFC 8707) of the authorization and token requests.
    pub(crate) resource: String,
    /// The scopes the protected resource metadata lists, if it lists them.
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// Finds the authorization server of the MCP server at `server`, given the server's challenge.
pub(crate) async fn discover(
    http: &reqwest::Client,
    server: &Url,
    challenge: &Challenge,
) -> Result<Discovered, McpAuthError> {
    let resource_metadata = resource_metadata(http, server, challenge).await?;
    let Some((prm_url, prm)) = resource_metadata else {
        return legacy(http, server).await;
    };
    let resource = match &prm.resource {
        Some(advertised) => {
            let covers = Url::parse(advertised).is_ok_and(|advertised| resource_covers(&advertised, server));
            if !covers {
                return Err(McpAuthError::ResourceMismatch {
                    expected: server.to_string(),
                    advertised: advertised.clone(),
                });
            }
            advertised.clone()
        }
        None => server.to_string(),
    };
    let issuer = prm.authorization_servers.first().cloned().ok_or_else(|| McpAuthError::InvalidMetadata {
        url: prm_url.clone(),
        reason: "it names no authorization server (authorization_servers is empty)".into(),
    })?;
    let issuer_url = Url::parse(&issuer).map_err(|e| McpAuthError::invalid_url(&issuer, e))?;
    let candidates = server_metadata_urls(&issuer_url);
    let Some(metadata) = first_server_metadata(http, &candidates).await? else {
        return Err(McpAuthError::MetadataMissing { issuer, tried: candidates });
    };
    if let Some(advertised) = &metadata.issuer
        && advertised.trim_end_matches('/') != issuer.trim_end_matches('/')
    {
        return Err(McpAuthError::IssuerMismatch { expected: issuer, advertised: advertised.clone() });
    }
    check_pkce(&issuer, &metadata)?;
    Ok(Discovered { issuer, metadata, resource, scopes_supported: prm.scopes_supported })
}

/// A server without protected resource metadata (MCP 2025-03-26): its origin is the
/// authorization server, with metadata at the origin's well-known location or, without it, the
/// default endpoints `/authorize`, `/token` and `/register`.
async fn legacy(http: &reqwest::Client, server: &Url) -> Result<Discovered, McpAuthError> {
    let origin = origin(server);
    let base = Url::parse(&origin).map_err(|e| McpAuthError::invalid_url(&origin, e))?;
    let metadata = match first_server_metadata(http, &server_metadata_urls(&base)).await? {
        Some(metadata) => metadata,
        None => ServerMetadata {
            issuer: None,
            authorization_endpoint: format!("{origin}/authorize"),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            token_endpoint_auth_methods_supported: None,
            client_id_metadata_document_supported: false,
        },
    };
    check_pkce(&origin, &metadata)?;
    Ok(Discovered { issuer: origin, metadata, resource: server.to_string(), scopes_supported: None })
}

fn check_pkce(issuer: &str, metadata: &ServerMetadata) -> Result<(), McpAuthError> {
    let s256 = metadata.code_challenge_methods_supported.as_ref().is_some_and(|m| m.iter().any(|m| m == "S256"));
    if s256 { Ok(()) } else { Err(McpAuthError::PkceUnsupported { issuer: issuer.to_string() }) }
}

/// The protected resource metadata and where it was found: at the challenge's
/// `resource_metadata` URL, else at the path-based well-known location, else at the root one.
async fn resource_metadata(
    http: &reqwest::Client,
    server: &Url,
    challenge: &Challenge,
) -> Result<Option<(String, ResourceMetadata)>, McpAuthError> {
    let mut candidates = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        candidates.push(url.clone());
    }
    let origin = origin(server);
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        candidates.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    for url in candidates {
        if let Some(value) = get_json(http, &url).await? {
            let metadata = serde_json::from_value(value)
                .map_err(|e| McpAuthError::InvalidMetadata { url: url.clone(), reason: e.to_string() })?;
            return Ok(Some((url, metadata)));
        }
    }
    Ok(None)
}

/// Where an authorization server's metadata may be, in the specification's order: for an
/// issuer with a path, OAuth then OpenID with the path inserted after the well-known prefix, then
/// OpenID with the path before it; for one without, OAuth then OpenID at the root.
pub(crate) fn server_metadata_urls(issuer: &Url) -> Vec<String> {
    let origin = origin(issuer);
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

async fn first_server_metadata(
    http: &reqwest::Client,
    candidates: &[String],
) -> Result<Option<ServerMetadata>, McpAuthError> {
    for url in candidates {
        if let Some(value) = get_json(http, url).await? {
            let metadata: ServerMetadata = serde_json::from_value(value)
                .map_err(|e| McpAuthError::InvalidMetadata { url: url.clone(), reason: e.to_string() })?;
            for endpoint in [&metadata.authorization_endpoint, &metadata.token_endpoint] {
                check_http_url(endpoint)?;
            }
            if let Some(endpoint) = &metadata.registration_endpoint {
                check_http_url(endpoint)?;
            }
            return Ok(Some(metadata));
        }
    }
    Ok(None)
}

pub(crate) fn check_http_url(url: &str) -> Result<Url, McpAuthError> {
    let parsed = Url::parse(url).map_err(|e| McpAuthError::invalid_url(url, e))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(McpAuthError::invalid_url(url, "not an http(s) URL"));
    }
    Ok(parsed)
}

/// A JSON document, or `None` when the server has none there (any answer but a success).
async fn get_json(http: &reqwest::Client, url: &str) -> Result<Option<serde_json::Value>, McpAuthError> {
    let response = http
        .get(url)
        .header("accept", "application/json")
        .header("mcp-protocol-version", PROTOCOL_VERSION)
        .send()
        .await
        .map_err(|e| McpAuthError::http(url, e))?;
    if !response.status().is_success() {
        tracing::debug!(url, status = response.status().as_u16(), "no metadata here");
        return Ok(None);
    }
    let body = read_limited(response, url).await?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| McpAuthError::InvalidMetadata { url: url.to_string(), reason: format!("not JSON: {e}") })
}

/// A response's body, refused past [`MAX_DOCUMENT`] bytes.
pub(crate) async fn read_limited(mut response: reqwest::Response, url: &str) -> Result<Vec<u8>, McpAuthError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| McpAuthError::http(url, e))? {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(McpAuthError::InvalidMetadata {
                url: url.to_string(),
                reason: format!("the answer is larger than {MAX_DOCUMENT} bytes"),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `scheme://host[:port]`.
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Whether the resource a metadata document names covers the server's URL: the same origin, and
/// a path that is the server's or one of its parent folders (as the MCP SDKs check).
pub(crate) fn resource_covers(advertised: &Url, server: &Url) -> bool {
    if advertised.origin() != server.origin() || advertised.fragment().is_some() {
        return false;
    }
    let prefix = advertised.path().trim_end_matches('/');
    let path = server.path().trim_end_matches('/');
    path == prefix || path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_is_read_among_others() {
        let c = Challenge::parse(
            r#"Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="https://r/.well-known/oauth-protected-resource/mcp", error_description="say \"no\"""#,
        );
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scopes(), ["a", "b"]);
        assert_eq!(c.resource_metadata.as_deref(), Some("https://r/.well-known/oauth-protected-resource/mcp"));
        let basic_only = Challenge::parse(r#"Basic scope="a""#);
        assert_eq!(basic_only, Challenge::default());
        assert_eq!(Challenge::parse("Bearer scope=plain, error=x").scope.as_deref(), Some("plain"));
    }

    #[test]
    fn a_resource_covers_its_paths_on_the_same_origin_only() {
        let url = |s: &str| Url::parse(s).unwrap();
        let server = url("https://a.example/mcp/v1");
        assert!(resource_covers(&url("https://a.example/mcp/v1"), &server));
        assert!(resource_covers(&url("https://a.example/mcp"), &server));
        assert!(resource_covers(&url("https://a.example"), &server));
        assert!(!resource_covers(&url("https://a.example/mc"), &server));
        assert!(!resource_covers(&url("https://a.example/other"), &server));
        assert!(!resource_covers(&url("https://evil.example/mcp/v1"), &server));
        assert!(!resource_covers(&url("http://a.example/mcp/v1"), &server));
    }

    #[test]
    fn server_metadata_is_looked_for_in_the_specified_order() {
        let with_path = server_metadata_urls(&Url::parse("https://as.example/tenant1").unwrap());
        assert_eq!(
            with_path,
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        let root = server_metadata_urls(&Url::parse("https://as.example/").unwrap());
        assert_eq!(
            root,
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
    }
}
