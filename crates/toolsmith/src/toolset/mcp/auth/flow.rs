//! [`AuthSession`]: the authorization of one MCP server, shared by the toolset's sessions: the
//! token to send, its refresh, and what a challenge (401, or 403 `insufficient_scope`) leads to.

use url::Url;

use super::discovery::{Challenge, Discovered, discover};
use super::registration::register;
use super::store::{StoredAuth, Tokens};
use super::token::{CodeRequest, Pkce, authorization_url, exchange_code, now, random_string, refresh};
use super::{AuthorizationRequest, McpAuth, McpAuthError};

/// A token is renewed this many seconds before it expires.
const EXPIRY_MARGIN: i64 = 30;

/// The state behind the lock.
#[derive(Default)]
struct State {
    loaded: bool,
    stored: StoredAuth,
    discovered: Option<Discovered>,
    /// Bumped at each new token, so that a request that failed with an older one only retries.
    generation: u64,
}

/// The authorization of one server.
pub(crate) struct AuthSession {
    config: McpAuth,
    server: Url,
    /// The store's key: the server's URL as configured.
    key: String,
    http: reqwest::Client,
    state: tokio::sync::Mutex<State>,
    /// The access tokens sent to the server (the last few): kept out of what the server's
    /// answers put in errors and results.
    sent: std::sync::Mutex<Vec<String>>,
}

/// How many of the access tokens sent are remembered for redaction.
const REMEMBERED_TOKENS: usize = 4;

impl std::fmt::Debug for AuthSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthSession").field("server", &self.key).finish_non_exhaustive()
    }
}

/// What a request carries: the token (if any) and its generation.
pub(crate) struct Credential {
    pub(crate) token: Option<String>,
    pub(crate) generation: u64,
}

impl AuthSession {
    /// The authorization of the server at `url` (an http(s) URL).
    pub(crate) fn new(config: McpAuth, url: &str) -> Result<AuthSession, McpAuthError> {
        let server = Url::parse(url).map_err(|e| McpAuthError::invalid_url(url, e))?;
        let http = crate::tls::client_builder()
            .and_then(|builder| {
                // Metadata and tokens are read where they are: no redirects followed.
                builder
                    .redirect(reqwest::redirect::Policy::none())
                    .connect_timeout(std::time::Duration::from_secs(10))
                    .timeout(std::time::Duration::from_secs(30))
                    .build()
                    .map_err(|e| e.to_string())
            })
            .map_err(|message| McpAuthError::Http { url: url.to_string(), message })?;
        Ok(AuthSession {
            config,
            server,
            key: url.to_string(),
            http,
            state: Default::default(),
            sent: Default::default(),
        })
    }

    pub(crate) fn config(&self) -> &McpAuth {
        &self.config
    }

    /// The token to send: the one held or stored, refreshed first when it is about to expire.
    pub(crate) async fn credential(&self) -> Result<Credential, McpAuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state).await?;
        let expiring = state
            .stored
            .tokens
            .as_ref()
            .and_then(|t| t.expires_at)
            .is_some_and(|at| now() >= at.saturating_sub(EXPIRY_MARGIN));
        if expiring && let Err(e) = self.refresh(&mut state).await {
            // The expired token would be refused: send none, and let the server's challenge
            // lead to a new authorization.
            tracing::info!(server = %self.key, error = %e, "could not refresh the expired MCP access token");
            state.stored.tokens = None;
            state.generation += 1;
        }
        let token = state.stored.tokens.as_ref().map(|t| t.access_token.clone());
        if let Some(token) = &token {
            let mut sent = self.sent.lock().unwrap_or_else(|p| p.into_inner());
            if !sent.contains(token) {
                if sent.len() == REMEMBERED_TOKENS {
                    sent.remove(0);
                }
                sent.push(token.clone());
            }
        }
        Ok(Credential { token, generation: state.generation })
    }

    /// The secrets of this authorization that a server could echo: the access tokens sent to
    /// it and the client secret.
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut secrets = self.sent.lock().unwrap_or_else(|p| p.into_inner()).clone();
        secrets.extend(self.config.identity.client_secret.clone());
        secrets
    }

    /// Answers the server's challenge to a request sent with the credential of `generation`:
    /// `forbidden` for a 403 (a step-up), else a 401. `attempts` counts the authorizations made
    /// for the request. `Ok` means: send the request again.
    pub(crate) async fn challenged(
        &self,
        header: &str,
        forbidden: bool,
        generation: u64,
        attempts: &mut u32,
    ) -> Result<(), McpAuthError> {
        let mut state = self.state.lock().await;
        if state.generation != generation {
            // Another request renewed the token meanwhile.
            return Ok(());
        }
        let challenge = Challenge::parse(header);
        let held: Vec<String> = state.stored.tokens.as_ref().map(|t| t.scopes.clone()).unwrap_or_default();
        let scopes = if forbidden {
            let wanted = challenge.scopes();
            if wanted.iter().all(|s| held.contains(s)) {
                // The token already has what the server asks for: authorizing again cannot help.
                return Err(McpAuthError::InsufficientScope { attempts: *attempts, scope: challenge.scope.clone() });
            }
            dedup(held.into_iter().chain(wanted).collect())
        } else {
            if state.stored.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some()) {
                match self.refresh(&mut state).await {
                    Ok(()) => return Ok(()),
                    Err(e) => {
                        tracing::info!(server = %self.key, error = %e, "refreshing the refused MCP access token failed")
                    }
                }
            }
            Vec::new()
        };
        if *attempts >= self.config.max_authorizations {
            return Err(if forbidden {
                McpAuthError::InsufficientScope { attempts: *attempts, scope: challenge.scope.clone() }
            } else {
                McpAuthError::Refused { attempts: *attempts }
            });
        }
        *attempts += 1;
        self.authorize(&mut state, &challenge, scopes).await
    }

    async fn load(&self, state: &mut State) -> Result<(), McpAuthError> {
        if !state.loaded {
            let stored = self.config.store.load(&self.key).await.map_err(store_error)?;
            state.stored = stored.unwrap_or_default();
            state.loaded = true;
        }
        Ok(())
    }

    async fn save(&self, state: &mut State, tokens: Tokens) -> Result<(), McpAuthError> {
        state.stored.tokens = Some(tokens);
        state.generation += 1;
        self.config.store.save(&self.key, &state.stored).await.map_err(store_error)
    }

    async fn refresh(&self, state: &mut State) -> Result<(), McpAuthError> {
        let stored = &state.stored;
        let (Some(tokens), Some(client), Some(endpoint)) = (&stored.tokens, &stored.client, &stored.token_endpoint)
        else {
            return Err(McpAuthError::InteractionRequired);
        };
        let Some(refresh_token) = &tokens.refresh_token else { return Err(McpAuthError::InteractionRequired) };
        let resource = stored.resource.clone().unwrap_or_else(|| self.server.to_string());
        let renewed = refresh(&self.http, endpoint, client, refresh_token, &resource, &tokens.scopes).await?;
        tracing::debug!(server = %self.key, "refreshed the MCP access token");
        self.save(state, renewed).await
    }

    /// The whole authorization: discovery, registration, the user's consent, the code exchange.
    async fn authorize(
        &self,
        state: &mut State,
        challenge: &Challenge,
        scopes: Vec<String>,
    ) -> Result<(), McpAuthError> {
        let authorizer = self.config.authorizer.clone().ok_or(McpAuthError::InteractionRequired)?;
        let discovered = match (&state.discovered, challenge.resource_metadata.is_some()) {
            (Some(known), false) => known.clone(),
            _ => discover(&self.http, &self.server, challenge).await?,
        };
        state.discovered = Some(discovered.clone());
        let scopes = match (&self.config.scopes, scopes.is_empty()) {
            (Some(configured), _) => configured.clone(),
            (None, false) => scopes,
            (None, true) if !challenge.scopes().is_empty() => challenge.scopes(),
            (None, true) => discovered.scopes_supported.clone().unwrap_or_default(),
        };
        let redirect_uri = authorizer.redirect_uri();
        let client =
            register(&self.http, &self.config.identity, &discovered, &redirect_uri, state.stored.client.as_ref())
                .await?;
        state.stored.client = Some(client.clone());
        state.stored.token_endpoint = Some(discovered.metadata.token_endpoint.clone());
        state.stored.resource = Some(discovered.resource.clone());
        let pkce = Pkce::new()?;
        let csrf = random_string(24)?;
        let url = authorization_url(&CodeRequest {
            authorization_endpoint: &discovered.metadata.authorization_endpoint,
            client: &client,
            redirect_uri: &redirect_uri,
            scopes: &scopes,
            state: &csrf,
            challenge: &pkce.challenge,
            resource: &discovered.resource,
        })?;
        tracing::info!(server = %self.key, issuer = %discovered.issuer, scopes = %scopes.join(" "), "authorizing with the MCP server's authorization server");
        let request = AuthorizationRequest { url, redirect_uri: redirect_uri.clone(), state: csrf.clone() };
        let answer = tokio::time::timeout(self.config.authorize_timeout, authorizer.authorize(request))
            .await
            .map_err(|_| McpAuthError::Authorizer {
                message: format!("no answer within {} s", self.config.authorize_timeout.as_secs()),
            })??;
        if answer.state.as_deref() != Some(csrf.as_str()) {
            return Err(McpAuthError::StateMismatch);
        }
        let tokens = exchange_code(
            &self.http,
            &discovered.metadata.token_endpoint,
            &client,
            &answer.code,
            &pkce.verifier,
            &redirect_uri,
            &discovered.resource,
            &scopes,
        )
        .await?;
        self.save(state, tokens).await
    }
}

fn dedup(scopes: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(scopes.len());
    for scope in scopes {
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    out
}

fn store_error(e: std::io::Error) -> McpAuthError {
    McpAuthError::Store { message: e.to_string() }
}
