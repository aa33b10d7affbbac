//! [`Authorizer`]: how the user is sent to the authorization server and the code comes back,
//! with [`LoopbackAuthorizer`], the usual way for command-line programs (a listener on
//! 127.0.0.1 receives the browser's redirect).

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::McpAuthError;

/// An authorization request to show the user: open [`url`](Self::url) in a browser; the
/// authorization server then redirects to [`redirect_uri`](Self::redirect_uri) with `code` and
/// `state`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationRequest {
    /// The URL to open.
    pub url: String,
    /// Where the authorization server sends the user back.
    pub redirect_uri: String,
    /// The `state` the answer must carry back.
    pub state: String,
}

/// The answer to an [`AuthorizationRequest`]: the code and the state of the redirect. `Debug`
/// does not show the code.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationResponse {
    /// The authorization code.
    pub code: String,
    /// The `state` the redirect carried (checked against the request's).
    pub state: Option<String>,
}

impl std::fmt::Debug for AuthorizationResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationResponse").field("code", &"<redacted>").field("state", &self.state).finish()
    }
}

impl AuthorizationResponse {
    /// An answer made of its parts.
    pub fn new(code: impl Into<String>, state: Option<String>) -> Self {
        AuthorizationResponse { code: code.into(), state }
    }

    /// The answer in a redirect URL (`...?code=...&state=...`, or a path and query only); an
    /// `error` parameter (the user refused, say) is an [`McpAuthError::Authorizer`].
    pub fn from_redirect(url: &str) -> Result<Self, McpAuthError> {
        let parsed = url::Url::parse(url)
            .or_else(|_| url::Url::parse("http://localhost").and_then(|base| base.join(url)))
            .map_err(|e| McpAuthError::invalid_url(url, e))?;
        let param = |name: &str| parsed.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
        if let Some(error) = param("error") {
            let detail = param("error_description").map(|d| format!(": {d}")).unwrap_or_default();
            return Err(McpAuthError::Authorizer {
                message: format!("the authorization server answered '{error}'{detail}"),
            });
        }
        match param("code") {
            Some(code) => Ok(AuthorizationResponse { code, state: param("state") }),
            None => Err(McpAuthError::Authorizer { message: "the redirect carries no authorization code".into() }),
        }
    }
}

/// Sends the user to the authorization server and hands back the code: opens (or prints) the
/// URL, then receives the redirect. Set with [`McpAuth::authorizer`](super::McpAuth::authorizer),
/// or as a closure with [`McpAuth::authorize_with`](super::McpAuth::authorize_with).
pub trait Authorizer: Send + Sync + 'static {
    /// The redirect URI (registered with the authorization server, sent with each request).
    fn redirect_uri(&self) -> String;
    /// Shows `request` to the user and waits for the answer.
    fn authorize(&self, request: AuthorizationRequest) -> BoxFuture<'_, Result<AuthorizationResponse, McpAuthError>>;
}

/// An [`Authorizer`] made of a redirect URI and a closure.
pub(crate) struct FnAuthorizer<F> {
    pub(crate) redirect_uri: String,
    pub(crate) f: F,
}

impl<F, Fut> Authorizer for FnAuthorizer<F>
where
    F: Fn(AuthorizationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AuthorizationResponse, McpAuthError>> + Send + 'static,
{
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize(&self, request: AuthorizationRequest) -> BoxFuture<'_, Result<AuthorizationResponse, McpAuthError>> {
        Box::pin((self.f)(request))
    }
}

/// The largest request head the loopback listener reads.
const MAX_HEAD: usize = 16 * 1024;

/// Receives the authorization code on `http://127.0.0.1:{port}/callback`: shows the URL (on
/// stderr by default, see [`LoopbackAuthorizer::on_url`]), listens while the user authorizes in a
/// browser, checks the redirect's `state` (a request with another state is answered 400 and the
/// listener goes on waiting) and answers the browser with a page saying it can be closed.
///
/// ```no_run
/// use toolsmith::toolset::{LoopbackAuthorizer, McpAuth, McpToolset};
///
/// let auth = McpAuth::oauth().authorizer(LoopbackAuthorizer::new(33418).on_url(|url| {
///     eprintln!("Open this URL to sign in:\n{url}");
/// }));
/// let toolset: McpToolset = McpToolset::http("https://mcp.example.com/mcp").auth(auth);
/// ```
#[derive(Clone)]
pub struct LoopbackAuthorizer {
    port: u16,
    on_url: Arc<dyn Fn(&str) + Send + Sync>,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackAuthorizer").field("port", &self.port).field("timeout", &self.timeout).finish()
    }
}

impl LoopbackAuthorizer {
    /// A listener on `127.0.0.1:{port}` (a fixed port: the redirect URI registered with the
    /// authorization server names it). Waits up to 5 minutes.
    pub fn new(port: u16) -> Self {
        LoopbackAuthorizer {
            port,
            on_url: Arc::new(|url| eprintln!("Open this URL in a browser to authorize:\n{url}")),
            timeout: Duration::from_secs(300),
        }
    }

    /// What is done with the authorization URL (open a browser, print it...); by default it is
    /// printed on stderr.
    pub fn on_url(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_url = Arc::new(f);
        self
    }

    /// How long to wait for the browser's redirect.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn listen(&self, request: AuthorizationRequest) -> Result<AuthorizationResponse, McpAuthError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port)).await.map_err(|e| {
            McpAuthError::Authorizer { message: format!("could not listen on 127.0.0.1:{}: {e}", self.port) }
        })?;
        (self.on_url)(&request.url);
        loop {
            let (mut stream, _) = listener
                .accept()
                .await
                .map_err(|e| McpAuthError::Authorizer { message: format!("the loopback listener failed: {e}") })?;
            let Some(target) = read_target(&mut stream).await else { continue };
            if !target.starts_with("/callback") {
                respond(&mut stream, "404 Not Found", "Not found.").await;
                continue;
            }
            match AuthorizationResponse::from_redirect(&target) {
                Ok(answer) if answer.state.as_deref() == Some(request.state.as_str()) => {
                    respond(&mut stream, "200 OK", "Authorized. You can close this tab.").await;
                    return Ok(answer);
                }
                Ok(_) => respond(&mut stream, "400 Bad Request", "This answer is not for the pending request.").await,
                Err(e) => {
                    respond(&mut stream, "400 Bad Request", "Authorization failed. You can close this tab.").await;
                    return Err(e);
                }
            }
        }
    }
}

impl Default for LoopbackAuthorizer {
    /// Port 33418.
    fn default() -> Self {
        LoopbackAuthorizer::new(33418)
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    fn authorize(&self, request: AuthorizationRequest) -> BoxFuture<'_, Result<AuthorizationResponse, McpAuthError>> {
        Box::pin(async move {
            match tokio::time::timeout(self.timeout, self.listen(request)).await {
                Ok(answer) => answer,
                Err(_) => Err(McpAuthError::Authorizer {
                    message: format!("no answer from the browser within {} s", self.timeout.as_secs()),
                }),
            }
        })
    }
}

/// The request target of an HTTP request (`/callback?code=...`), or `None` for anything else.
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await.ok()?.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split_whitespace();
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_string)
}

async fn respond(stream: &mut tokio::net::TcpStream, status: &str, text: &str) {
    let body = format!("<!doctype html><html><body><p>{text}</p></body></html>");
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_is_read_and_errors_are_typed() {
        let answer = AuthorizationResponse::from_redirect("http://127.0.0.1:1/callback?code=abc&state=xyz").unwrap();
        assert_eq!((answer.code.as_str(), answer.state.as_deref()), ("abc", Some("xyz")));
        assert!(!format!("{answer:?}").contains("abc"));
        let refused = AuthorizationResponse::from_redirect("/callback?error=access_denied&state=x").unwrap_err();
        assert!(refused.to_string().contains("access_denied"), "{refused}");
    }

    #[tokio::test]
    async fn the_loopback_listener_checks_the_state() {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let authorizer = LoopbackAuthorizer::new(port).on_url(|_| {});
        let request = AuthorizationRequest {
            url: "http://as/authorize".into(),
            redirect_uri: authorizer.redirect_uri(),
            state: "good".into(),
        };
        let waiting = tokio::spawn(async move { authorizer.authorize(request).await });
        let get = |query: &'static str| async move {
            for _ in 0..50 {
                if let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
                    s.write_all(format!("GET /callback?{query} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes()).await.unwrap();
                    let mut out = String::new();
                    let _ = s.read_to_string(&mut out).await;
                    return out;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            panic!("the listener never came up");
        };
        assert!(get("code=forged&state=bad").await.starts_with("HTTP/1.1 400"));
        assert!(get("code=real&state=good").await.starts_with("HTTP/1.1 200"));
        let answer = waiting.await.unwrap().unwrap();
        assert_eq!(answer.code, "real");
    }
}
