//! The authorization code grant with PKCE (S256) and the resource parameter (RFC 8707): the
//! authorization URL, the code exchange and the refresh, with the client authentication methods
//! of the token endpoint.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use url::Url;

use super::McpAuthError;
use super::discovery::{read_limited, split_scopes};
use super::registration::endpoint_error;
use super::store::{ClientRegistration, TokenEndpointAuthMethod, Tokens};

/// `bytes` random bytes from the operating system, base64url-encoded.
pub(crate) fn random_string(bytes: usize) -> Result<String, McpAuthError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf)
        .map_err(|e| McpAuthError::Authorizer { message: format!("the system's random source failed: {e}") })?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

/// A PKCE verifier (43 characters from 32 random bytes) and its S256 challenge.
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl Pkce {
    pub(crate) fn new() -> Result<Pkce, McpAuthError> {
        let verifier = random_string(32)?;
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        Ok(Pkce { verifier, challenge })
    }
}

/// What an authorization request is made of.
pub(crate) struct CodeRequest<'a> {
    pub(crate) authorization_endpoint: &'a str,
    pub(crate) client: &'a ClientRegistration,
    pub(crate) redirect_uri: &'a str,
    pub(crate) scopes: &'a [String],
    pub(crate) state: &'a str,
    pub(crate) challenge: &'a str,
    pub(crate) resource: &'a str,
}

/// The URL the user opens to authorize the client.
pub(crate) fn authorization_url(request: &CodeRequest<'_>) -> Result<String, McpAuthError> {
    let mut url = Url::parse(request.authorization_endpoint)
        .map_err(|e| McpAuthError::invalid_url(request.authorization_endpoint, e))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &request.client.client_id)
            .append_pair("redirect_uri", request.redirect_uri)
            .append_pair("state", request.state)
            .append_pair("code_challenge", request.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", request.resource);
        if !request.scopes.is_empty() {
            query.append_pair("scope", &request.scopes.join(" "));
        }
    }
    Ok(url.into())
}

/// Exchanges an authorization code for tokens.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn exchange_code(
    http: &reqwest::Client,
    token_endpoint: &str,
    client: &ClientRegistration,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
    resource: &str,
    scopes: &[String],
) -> Result<Tokens, McpAuthError> {
    let params = vec![
        ("grant_type", "authorization_code".to_string()),
        ("code", code.to_string()),
        ("redirect_uri", redirect_uri.to_string()),
        ("code_verifier", verifier.to_string()),
        ("resource", resource.to_string()),
    ];
    token_request(http, token_endpoint, client, params, scopes, None).await
}

/// Renews the access token with a refresh token; the refresh token is kept when the server sends
/// no new one.
pub(crate) async fn refresh(
    http: &reqwest::Client,
    token_endpoint: &str,
    client: &ClientRegistration,
    refresh_token: &str,
    resource: &str,
    scopes: &[String],
) -> Result<Tokens, McpAuthError> {
    let params = vec![
        ("grant_type", "refresh_token".to_string()),
        ("refresh_token", refresh_token.to_string()),
        ("resource", resource.to_string()),
    ];
    token_request(http, token_endpoint, client, params, scopes, Some(refresh_token)).await
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: Option<String>,
    expires_in: Option<serde_json::Value>,
    refresh_token: Option<String>,
    scope: Option<String>,
}

async fn token_request(
    http: &reqwest::Client,
    endpoint: &str,
    client: &ClientRegistration,
    mut params: Vec<(&'static str, String)>,
    scopes: &[String],
    old_refresh: Option<&str>,
) -> Result<Tokens, McpAuthError> {
    let mut request = http.post(endpoint).header("accept", "application/json");
    match (client.auth_method, &client.client_secret) {
        (TokenEndpointAuthMethod::ClientSecretBasic, Some(secret)) => {
            // RFC 6749 §2.3.1: both form-encoded before they are joined.
            let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let credentials = format!("{}:{}", encode(&client.client_id), encode(secret));
            request = request.header(
                "authorization",
                format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials)),
            );
        }
        (TokenEndpointAuthMethod::ClientSecretPost, Some(secret)) => {
            params.push(("client_id", client.client_id.clone()));
            params.push(("client_secret", secret.clone()));
        }
        _ => params.push(("client_id", client.client_id.clone())),
    }
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(params.iter()).finish();
    let response = request
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| McpAuthError::http(endpoint, e))?;
    let status = response.status();
    let bytes = read_limited(response, endpoint).await?;
    if !status.is_success() {
        return Err(endpoint_error("the token endpoint", status.as_u16(), &bytes));
    }
    let answer: TokenResponse = serde_json::from_slice(&bytes).map_err(|_| McpAuthError::InvalidMetadata {
        url: endpoint.to_string(),
        // serde's message could quote the token: say only what is wrong.
        reason: "the token endpoint's answer is not a token response (JSON with access_token)".into(),
    })?;
    if let Some(kind) = &answer.token_type
        && !kind.eq_ignore_ascii_case("bearer")
    {
        return Err(McpAuthError::InvalidMetadata {
            url: endpoint.to_string(),
            reason: format!("the token endpoint issued a '{kind}' token, not a Bearer token"),
        });
    }
    let expires_in = answer.expires_in.as_ref().and_then(|v| match v {
        serde_json::Value::Number(n) => n.as_i64(),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    });
    Ok(Tokens {
        access_token: answer.access_token,
        refresh_token: answer.refresh_token.or_else(|| old_refresh.map(str::to_string)),
        expires_at: expires_in.map(|secs| now().saturating_add(secs.max(0))),
        scopes: answer.scope.as_deref().map(split_scopes).unwrap_or_else(|| scopes.to_vec()),
    })
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_the_sha256_of_the_verifier() {
        let pkce = Pkce::new().unwrap();
        assert_eq!(pkce.verifier.len(), 43);
        let expected = URL_SAFE_NO_PAD.encode(Sha256::digest(pkce.verifier.as_bytes()));
        assert_eq!(pkce.challenge, expected);
        assert_ne!(Pkce::new().unwrap().verifier, pkce.verifier);
    }
}
