//! The hook into the streamable HTTP transport: every request carries the current token, and a
//! 401 or a 403 with a challenge is answered (a refresh, an authorization, a step-up) before the
//! request is sent again, so that rmcp's session never sees it.

use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::{AuthSession, McpAuthError};

type HttpError = StreamableHttpError<reqwest::Error>;

/// Sends a request through `send` (given the token to carry) until it is not refused, or until
/// authorization fails: then `failed` receives the typed error, and the transport an error
/// quoting it.
pub(crate) async fn send<T, F, Fut>(
    auth: &AuthSession,
    failed: impl Fn(McpAuthError),
    mut send: F,
) -> Result<T, HttpError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<T, HttpError>>,
{
    let fail = |e: McpAuthError| {
        let text = e.to_string();
        failed(e);
        StreamableHttpError::UnexpectedServerResponse(text.into())
    };
    let mut attempts = 0;
    // Refreshes and renewals by other requests do not count as authorizations: bound the rounds.
    let max_rounds = 2 * auth.config().max_authorizations + 2;
    for _ in 0..max_rounds {
        let credential = auth.credential().await.map_err(fail)?;
        let (header, forbidden) = match send(credential.token).await {
            Err(StreamableHttpError::AuthRequired(e)) => (e.www_authenticate_header, false),
            Err(StreamableHttpError::InsufficientScope(e)) => (e.www_authenticate_header, true),
            other => return other,
        };
        auth.challenged(&header, forbidden, credential.generation, &mut attempts).await.map_err(fail)?;
    }
    Err(fail(McpAuthError::Refused { attempts }))
}

/// The token for requests that are not retried (the event stream, closing the session).
pub(crate) async fn token(auth: Option<&AuthSession>, fallback: Option<String>) -> Option<String> {
    match auth {
        Some(auth) => auth.credential().await.ok().and_then(|c| c.token),
        None => fallback,
    }
}
