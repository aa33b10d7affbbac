//! Client registration, in the MCP specification's order: a pre-registered client, a client ID
//! metadata document (the client ID is a URL the authorization server fetches), dynamic client
//! registration (RFC 7591).

use serde::Deserialize;
use serde_json::json;

use super::McpAuthError;
use super::discovery::{Discovered, ServerMetadata, read_limited};
use super::store::{ClientRegistration, TokenEndpointAuthMethod};

/// How the application identifies its client.
#[derive(Clone, Default)]
pub(crate) struct ClientIdentity {
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) auth_method: Option<TokenEndpointAuthMethod>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) client_name: String,
}

/// The client's registration at the discovered authorization server: pre-registered, else the
/// one kept from before (same server), else a client ID metadata document the server accepts,
/// else a dynamic registration.
pub(crate) async fn register(
    http: &reqwest::Client,
    identity: &ClientIdentity,
    discovered: &Discovered,
    redirect_uri: &str,
    kept: Option<&ClientRegistration>,
) -> Result<ClientRegistration, McpAuthError> {
    let metadata = &discovered.metadata;
    if let Some(client_id) = &identity.client_id {
        let auth_method =
            identity.auth_method.unwrap_or_else(|| secret_method(identity.client_secret.is_some(), metadata, None));
        return Ok(ClientRegistration {
            issuer: discovered.issuer.clone(),
            client_id: client_id.clone(),
            client_secret: identity.client_secret.clone(),
            auth_method,
        });
    }
    if let Some(kept) = kept.filter(|k| k.issuer == discovered.issuer) {
        return Ok(kept.clone());
    }
    if let Some(url) = &identity.metadata_url
        && metadata.client_id_metadata_document_supported
    {
        return Ok(ClientRegistration {
            issuer: discovered.issuer.clone(),
            client_id: url.clone(),
            client_secret: None,
            auth_method: TokenEndpointAuthMethod::None,
        });
    }
    let Some(endpoint) = &metadata.registration_endpoint else {
        return Err(McpAuthError::RegistrationUnavailable { issuer: discovered.issuer.clone() });
    };
    dynamic(http, endpoint, identity, discovered, redirect_uri).await
}

/// The method for a client: what the registration said; else `none` without a secret; with one,
/// Basic when the server supports it, else the form body, else `none` if that is all it supports,
/// else Basic (RFC 7591's default).
fn secret_method(has_secret: bool, metadata: &ServerMetadata, registered: Option<&str>) -> TokenEndpointAuthMethod {
    if let Some(method) = registered.and_then(TokenEndpointAuthMethod::parse) {
        return method;
    }
    if !has_secret {
        return TokenEndpointAuthMethod::None;
    }
    let supported = metadata.token_endpoint_auth_methods_supported.as_deref().unwrap_or_default();
    if supported.iter().any(|m| m == "client_secret_basic") {
        TokenEndpointAuthMethod::ClientSecretBasic
    } else if supported.iter().any(|m| m == "client_secret_post") {
        TokenEndpointAuthMethod::ClientSecretPost
    } else if supported.iter().any(|m| m == "none") {
        TokenEndpointAuthMethod::None
    } else {
        TokenEndpointAuthMethod::ClientSecretBasic
    }
}

/// The method asked for in a dynamic registration: public (`none`) when the server accepts
/// public clients or does not say, else a secret method it supports.
fn requested_method(metadata: &ServerMetadata) -> &'static str {
    match metadata.token_endpoint_auth_methods_supported.as_deref() {
        None => "none",
        Some(methods) if methods.iter().any(|m| m == "none") => "none",
        Some(methods) if methods.iter().any(|m| m == "client_secret_basic") => "client_secret_basic",
        Some(methods) if methods.iter().any(|m| m == "client_secret_post") => "client_secret_post",
        Some(_) => "none",
    }
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    client_secret: Option<String>,
    token_endpoint_auth_method: Option<String>,
}

async fn dynamic(
    http: &reqwest::Client,
    endpoint: &str,
    identity: &ClientIdentity,
    discovered: &Discovered,
    redirect_uri: &str,
) -> Result<ClientRegistration, McpAuthError> {
    let body = json!({
        "client_name": identity.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": requested_method(&discovered.metadata),
    });
    let response = http.post(endpoint).json(&body).send().await.map_err(|e| McpAuthError::http(endpoint, e))?;
    let status = response.status();
    let bytes = read_limited(response, endpoint).await?;
    if !status.is_success() {
        return Err(endpoint_error("the registration endpoint", status.as_u16(), &bytes));
    }
    let registered: RegistrationResponse =
        serde_json::from_slice(&bytes).map_err(|_| McpAuthError::InvalidMetadata {
            url: endpoint.to_string(),
            // serde's message could quote the secret: say only what is wrong.
            reason: "the answer is not a client registration (JSON with a string client_id)".into(),
        })?;
    let auth_method = secret_method(
        registered.client_secret.is_some(),
        &discovered.metadata,
        registered.token_endpoint_auth_method.as_deref(),
    );
    tracing::debug!(issuer = %discovered.issuer, ?auth_method, "registered the MCP client dynamically");
    Ok(ClientRegistration {
        issuer: discovered.issuer.clone(),
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        auth_method,
    })
}

/// An OAuth endpoint's error answer: the status, and the `error` code and description if the
/// body is OAuth's JSON error (the body itself is never quoted).
pub(crate) fn endpoint_error(endpoint: &'static str, status: u16, body: &[u8]) -> McpAuthError {
    #[derive(Deserialize)]
    struct OAuthError {
        error: Option<String>,
        error_description: Option<String>,
    }
    let parsed = serde_json::from_slice::<OAuthError>(body).ok();
    let short = |s: String| if s.chars().count() > 300 { s.chars().take(300).collect::<String>() + "..." } else { s };
    McpAuthError::Endpoint {
        endpoint,
        status,
        code: parsed.as_ref().and_then(|p| p.error.clone()).map(short),
        description: parsed.and_then(|p| p.error_description).map(short),
    }
}
