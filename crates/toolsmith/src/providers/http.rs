//! Shared HTTP for the provider adapters: one `reqwest` client per model, retries with
//! exponential backoff that honour `Retry-After`, request timeouts, typed HTTP errors, and
//! streamed responses handed to [`sse`](super::sse) as server-sent events.
//!
//! API keys live only in request headers: they are never part of a URL, an error message or a
//! log line, and an error body that happens to echo the key has it replaced by `[REDACTED]`.

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::error::UserError;
use crate::model::ModelError;
use crate::providers::sse::{SseEvent, SseStream, sse_error_text};

/// How a provider adapter retries failed requests.
///
/// Retried: HTTP 408, 409, 429 and 5xx (including Anthropic's 529 "overloaded"), connection
/// failures (refused, reset) and timeouts. The wait before retry `n` (from 0) is
/// `initial_backoff * 2^n`, capped at `max_backoff`, with ±25 % jitter; when the provider sends
/// `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, that wait is used instead, unless
/// it is longer than `max_retry_after`, in which case the error is returned at once.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::providers::RetryConfig;
/// let retry = RetryConfig::default().max_retries(5).initial_backoff(Duration::from_millis(200));
/// assert_eq!(retry.max_retries, 5);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryConfig {
    /// Retries after the first attempt (0 disables retries). Default 3.
    pub max_retries: u32,
    /// The first backoff. Default 500 ms.
    pub initial_backoff: Duration,
    /// The longest backoff. Default 8 s.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured. Default 60 s.
    pub max_retry_after: Duration,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryConfig {
    /// No retries at all.
    pub fn none() -> Self {
        RetryConfig { max_retries: 0, ..Self::default() }
    }

    /// Sets the number of retries.
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// Sets the first backoff.
    pub fn initial_backoff(mut self, d: Duration) -> Self {
        self.initial_backoff = d;
        self
    }

    /// Sets the longest backoff.
    pub fn max_backoff(mut self, d: Duration) -> Self {
        self.max_backoff = d;
        self
    }

    /// Sets the longest `Retry-After` honoured.
    pub fn max_retry_after(mut self, d: Duration) -> Self {
        self.max_retry_after = d;
        self
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let base = self.initial_backoff.saturating_mul(2u32.saturating_pow(attempt.min(16)));
        let capped = base.min(self.max_backoff);
        // ±25 % jitter from a random byte (uuid v4 is already a dependency).
        let r = uuid::Uuid::new_v4().as_bytes()[0] as f64 / 255.0;
        capped.mul_f64(0.75 + 0.5 * r)
    }
}

/// An HTTP error from a provider: the status, the provider's message and the response body.
///
/// Converted into [`ModelError`] with kind `ModelHTTPError` (the message keeps the status and
/// the provider's message). The body never contains the API key: an echo of it is redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{provider} API returned HTTP {status} for model `{model_name}`: {}{}", self.provider_message(), self.hint())]
#[non_exhaustive]
pub struct ModelHttpError {
    /// The HTTP status code.
    pub status: u16,
    /// The provider (`openai`, `anthropic`, `google`...).
    pub provider: String,
    /// The model that was asked.
    pub model_name: String,
    /// The response body (at most 4,000 characters).
    pub body: String,
    /// How many retries were made before giving up.
    pub retries: u32,
}

impl ModelHttpError {
    /// The provider's error message, read from the usual JSON shapes (`{"error": {"message"}}`,
    /// `{"error": "..."}`, `{"message"}`), or the raw body.
    pub fn provider_message(&self) -> String {
        let parsed: Option<Value> = serde_json::from_str(&self.body).ok();
        let from_json = parsed.as_ref().and_then(|v| {
            let v = if let Some(arr) = v.as_array() { arr.first()? } else { v };
            v.pointer("/error/message")
                .or_else(|| v.get("error").filter(|e| e.is_string()))
                .or_else(|| v.get("message"))
                .or_else(|| v.get("detail"))
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        match from_json {
            Some(m) => m,
            None if self.body.trim().is_empty() => "(empty body)".to_string(),
            None => self.body.clone(),
        }
    }

    fn hint(&self) -> String {
        let retried = if self.retries > 0 { format!(" (after {} retries)", self.retries) } else { String::new() };
        let what = match self.status {
            400 | 422 => "the provider rejected the request; check the model settings and the tool schemas",
            401 | 403 => "check the API key (the provider's environment variable or the builder's `.api_key(...)`)",
            404 => "check the model name and the base URL",
            408 | 409 | 429 => "the provider is rate limiting or busy; slow down or raise `RetryConfig::max_retries`",
            500..=599 => "the provider failed; try again later or add a FallbackModel",
            _ => "see the provider's message above",
        };
        format!("{retried}. {what}")
    }
}

impl From<ModelHttpError> for ModelError {
    fn from(e: ModelHttpError) -> Self {
        ModelError::new("ModelHTTPError", e.to_string())
    }
}

/// Installs the `ring` crypto provider for rustls, unless the application installed one.
fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race with another installer is fine: some provider is installed either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// Builds the default HTTP client.
pub(crate) fn default_client() -> Result<reqwest::Client, UserError> {
    ensure_crypto_provider();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| UserError::new(format!("could not build the HTTP client: {}", error_chain(&e.without_url()))))
}

/// The most a media URL may weigh when an adapter downloads it to send it inline.
pub(crate) const MAX_DOWNLOAD_BYTES: u64 = 32 * 1024 * 1024;

/// Downloads a file a prompt links to, for a provider that only takes files inline: its bytes
/// and the media type the server gave (without parameters). The provider's credentials are not
/// sent; the error names the URL (without its query) and what to do instead.
pub(crate) async fn download(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
    provider: &str,
) -> Result<(Vec<u8>, Option<String>), ModelError> {
    let shown = url.split(['?', '#']).next().unwrap_or(url);
    let fail = |why: String| {
        ModelError::new(
            "UserError",
            format!(
                "could not download {shown} to send it inline to {provider}: {why}; make the URL reachable from this \
                 process, or download the file yourself and pass it as BinaryContent"
            ),
        )
    };
    let response = client.get(url).timeout(timeout).send().await.map_err(|e| fail(error_chain(&e.without_url())))?;
    let status = response.status();
    if !status.is_success() {
        return Err(fail(format!("HTTP {status}")));
    }
    let too_big = |n: u64| fail(format!("it is {n} bytes, more than the {MAX_DOWNLOAD_BYTES} bytes sent inline"));
    if let Some(n) = response.content_length().filter(|&n| n > MAX_DOWNLOAD_BYTES) {
        return Err(too_big(n));
    }
    let media_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty() && v != "application/octet-stream");
    let mut bytes = Vec::new();
    let mut response = response;
    while let Some(chunk) = response.chunk().await.map_err(|e| fail(error_chain(&e.without_url())))? {
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > MAX_DOWNLOAD_BYTES {
            return Err(too_big(bytes.len() as u64));
        }
    }
    Ok((bytes, media_type))
}

/// The HTTP side of one model: client, provider, headers, retries and timeout.
#[derive(Clone)]
pub(crate) struct HttpTransport {
    pub(crate) client: reqwest::Client,
    pub(crate) provider: String,
    pub(crate) model_name: String,
    pub(crate) headers: HeaderMap,
    pub(crate) secret: Option<String>,
    pub(crate) retry: RetryConfig,
    pub(crate) timeout: Duration,
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("provider", &self.provider)
            .field("model_name", &self.model_name)
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A header value, marked sensitive when it carries a secret.
pub(crate) fn header(
    headers: &mut HeaderMap,
    name: &'static str,
    value: &str,
    sensitive: bool,
) -> Result<(), UserError> {
    let mut v = HeaderValue::from_str(value).map_err(|_| {
        UserError::new(format!(
            "the value for the `{name}` header contains characters not allowed in HTTP headers{}",
            if sensitive { " (check the API key for stray whitespace or quotes)" } else { "" }
        ))
    })?;
    v.set_sensitive(sensitive);
    headers.insert(HeaderName::from_static(name), v);
    Ok(())
}

/// Every error in a source chain, joined.
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) =
        headers.get("retry-after-ms").and_then(|v| v.to_str().ok()).and_then(|s| s.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let raw = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = raw.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let date = chrono::DateTime::parse_from_rfc2822(raw).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

impl HttpTransport {
    fn redact(&self, text: &str) -> String {
        match &self.secret {
            Some(secret) if secret.len() >= 4 && text.contains(secret.as_str()) => {
                text.replace(secret.as_str(), "[REDACTED]")
            }
            _ => text.to_string(),
        }
    }

    fn api_error(&self, what: String) -> ModelError {
        ModelError::new("ModelAPIError", self.redact(&what))
    }

    fn timeout_error(&self, timeout: Duration, url: &str) -> ModelError {
        self.api_error(format!(
            "the {} API did not answer within {:.1} s (model `{}`, {}). Raise the timeout (`ModelSettings::timeout` or the builder's `.timeout(...)`) or check the server",
            self.provider,
            timeout.as_secs_f64(),
            self.model_name,
            url
        ))
    }

    /// Sends a JSON POST with retries and returns the successful response.
    pub(crate) async fn send(
        &self,
        url: &str,
        body: &Value,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, ModelError> {
        let timeout = timeout.unwrap_or(self.timeout);
        let bytes = serde_json::to_vec(body)
            .map_err(|e| ModelError::new("UserError", format!("could not serialise the request body: {e}")))?;
        let mut attempt: u32 = 0;
        loop {
            let request = self
                .client
                .post(url)
                .headers(self.headers.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone());
            let can_retry = attempt < self.retry.max_retries;
            match tokio::time::timeout(timeout, request.send()).await {
                Err(_) => {
                    if can_retry {
                        tracing::warn!(provider = %self.provider, attempt, "request timed out; retrying");
                        tokio::time::sleep(self.retry.backoff(attempt)).await;
                        attempt += 1;
                        continue;
                    }
                    return Err(self.timeout_error(timeout, url));
                }
                Ok(Err(e)) => {
                    let e = e.without_url();
                    if can_retry && !e.is_builder() {
                        tracing::warn!(provider = %self.provider, attempt, error = %self.redact(&error_chain(&e)), "request failed; retrying");
                        tokio::time::sleep(self.retry.backoff(attempt)).await;
                        attempt += 1;
                        continue;
                    }
                    return Err(self.api_error(format!(
                        "could not reach the {} API at {url}: {}. Check the base URL, the network, and that the server is running",
                        self.provider,
                        error_chain(&e)
                    )));
                }
                Ok(Ok(response)) => {
                    let status = response.status();
                    if status.is_success() {
                        return Ok(response);
                    }
                    let retry_after = parse_retry_after(response.headers());
                    let text = match tokio::time::timeout(timeout, response.text()).await {
                        Ok(Ok(t)) => t,
                        _ => String::new(),
                    };
                    let code = status.as_u16();
                    let retryable = matches!(code, 408 | 409 | 429) || status.is_server_error();
                    if retryable && can_retry {
                        let wait = match retry_after {
                            Some(d) if d > self.retry.max_retry_after => None,
                            Some(d) => Some(d),
                            None => Some(self.retry.backoff(attempt)),
                        };
                        if let Some(wait) = wait {
                            tracing::warn!(provider = %self.provider, status = code, attempt, wait_ms = wait.as_millis() as u64, "retrying");
                            tokio::time::sleep(wait).await;
                            attempt += 1;
                            continue;
                        }
                    }
                    let mut body = self.redact(&text);
                    if body.chars().count() > 4000 {
                        body = body.chars().take(4000).collect::<String>() + "…";
                    }
                    let error = ModelHttpError {
                        status: code,
                        provider: self.provider.clone(),
                        model_name: self.model_name.clone(),
                        body,
                        retries: attempt,
                    };
                    tracing::debug!(status = code, provider = %self.provider, "provider returned an HTTP error");
                    return Err(error.into());
                }
            }
        }
    }

    /// Sends a JSON POST and parses the JSON answer.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        body: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, ModelError> {
        let timeout_d = timeout.unwrap_or(self.timeout);
        let response = self.send(url, body, timeout).await?;
        let text = match tokio::time::timeout(timeout_d, response.text()).await {
            Err(_) => return Err(self.timeout_error(timeout_d, url)),
            Ok(Err(e)) => {
                return Err(self.api_error(format!(
                    "the {} API's answer was cut off: {}. Try again",
                    self.provider,
                    error_chain(&e.without_url())
                )));
            }
            Ok(Ok(t)) => t,
        };
        serde_json::from_str(&text).map_err(|e| {
            let mut snippet: String = self.redact(&text).chars().take(300).collect();
            if snippet.is_empty() {
                snippet = "(empty body)".into();
            }
            ModelError::new(
                "UnexpectedModelBehavior",
                format!(
                    "the {} API answered with something that is not JSON ({e}): {snippet}. Check that the base URL points at the API itself",
                    self.provider
                ),
            )
        })
    }

    /// Sends a JSON POST and returns its server-sent events. `idle` bounds the wait between two
    /// chunks of the stream.
    pub(crate) async fn post_sse(
        &self,
        url: &str,
        body: &Value,
        timeout: Option<Duration>,
    ) -> Result<SseStream, ModelError> {
        let idle = timeout.unwrap_or(self.timeout);
        let response = self.send(url, body, timeout).await?;
        let provider = self.provider.clone();
        let events = response.bytes_stream().eventsource();
        let stream = futures::stream::unfold((events, false), move |(mut events, done)| {
            let provider = provider.clone();
            async move {
                if done {
                    return None;
                }
                match tokio::time::timeout(idle, events.next()).await {
                    Err(_) => Some((
                        Err(ModelError::new(
                            "ModelAPIError",
                            format!(
                                "the {provider} stream stalled: nothing arrived for {:.1} s. Raise the timeout or try again",
                                idle.as_secs_f64()
                            ),
                        )),
                        (events, true),
                    )),
                    Ok(None) => None,
                    Ok(Some(Err(e))) => Some((
                        Err(ModelError::new(
                            "ModelAPIError",
                            format!("the {provider} stream broke off: {}. Try again", sse_error_text(&e)),
                        )),
                        (events, true),
                    )),
                    Ok(Some(Ok(event))) => {
                        Some((Ok(SseEvent { event: event.event, data: event.data }), (events, false)))
                    }
                }
            }
        });
        Ok(stream.boxed())
    }
}

/// Joins a base URL and a path with exactly one slash.
pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// The `timeout` of [`ModelSettings`](crate::model::ModelSettings), when set and not zero.
pub(crate) fn settings_timeout(settings: Option<&crate::model::ModelSettings>) -> Option<Duration> {
    settings.and_then(|s| s.timeout).filter(|t| !t.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_ms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(150)));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let r = RetryConfig::default();
        assert!(r.backoff(0) <= Duration::from_millis(625));
        assert!(r.backoff(10) <= Duration::from_secs(10));
    }

    #[test]
    fn http_error_reads_provider_message() {
        let e = ModelHttpError {
            status: 401,
            provider: "openai".into(),
            model_name: "gpt-4o".into(),
            body: r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#.into(),
            retries: 0,
        };
        let m: ModelError = e.into();
        assert_eq!(m.kind, "ModelHTTPError");
        assert!(m.message.contains("HTTP 401"), "{}", m.message);
        assert!(m.message.contains("Incorrect API key provided"), "{}", m.message);
    }
}

/// Connection options shared by the provider builders.
#[derive(Clone, Default)]
pub(crate) struct ConnectionOptions {
    pub(crate) api_key: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) retry: Option<RetryConfig>,
    pub(crate) client: Option<reqwest::Client>,
    pub(crate) headers: Vec<(String, String)>,
}

impl ConnectionOptions {
    /// Builds the transport: `auth` holds the provider's authentication headers.
    pub(crate) fn transport(
        &self,
        provider: &str,
        model_name: &str,
        auth: HeaderMap,
        default_timeout: Duration,
    ) -> Result<HttpTransport, UserError> {
        let client = match &self.client {
            Some(c) => c.clone(),
            None => default_client()?,
        };
        let mut headers = auth;
        for (name, value) in &self.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| UserError::new(format!("`{name}` is not a valid HTTP header name")))?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                UserError::new(format!("the value of the `{name}` header is not a valid HTTP header value"))
            })?;
            headers.insert(name, value);
        }
        Ok(HttpTransport {
            client,
            provider: provider.to_string(),
            model_name: model_name.to_string(),
            headers,
            secret: self.api_key.clone().filter(|k| !k.is_empty()),
            retry: self.retry.clone().unwrap_or_default(),
            timeout: self.timeout.unwrap_or(default_timeout),
        })
    }
}

/// The builder methods every provider builder shares.
macro_rules! connection_builder_methods {
    () => {
        /// Sets the API key (instead of the provider's environment variable).
        pub fn api_key(mut self, key: impl Into<String>) -> Self {
            self.opts.api_key = Some(key.into());
            self
        }

        /// Sets the base URL (instead of the provider's environment variable or default).
        pub fn base_url(mut self, url: impl Into<String>) -> Self {
            self.opts.base_url = Some(url.into());
            self
        }

        /// Sets the request timeout (default 600 s); `ModelSettings::timeout` overrides it per request.
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.opts.timeout = Some(timeout);
            self
        }

        /// Sets how failed requests are retried.
        pub fn retry(mut self, retry: $crate::providers::RetryConfig) -> Self {
            self.opts.retry = Some(retry);
            self
        }

        /// Uses this HTTP client (proxies, custom TLS...).
        pub fn http_client(mut self, client: reqwest::Client) -> Self {
            self.opts.client = Some(client);
            self
        }

        /// Adds a header to every request.
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.opts.headers.push((name.into(), value.into()));
            self
        }
    };
}
pub(crate) use connection_builder_methods;

/// The default request timeout.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
