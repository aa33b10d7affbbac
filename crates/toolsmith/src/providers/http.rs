//! Shared HTTP for the provider adapters: one `reqwest` client per model, retries with
//! exponential backoff that honour `Retry-After`, a total and an idle deadline on every request,
//! typed HTTP errors, and streamed responses parsed as server-sent events
//! ([`SseParser`](super::sse::SseParser)).
//!
//! API keys live only in request headers: they are never part of a URL, an error message or a
//! log line. Every error built from what a server sent passes through the transport's
//! [`Redactor`] (in [`HttpTransport::request_json`] and [`HttpTransport::stream`], the only ways
//! the adapters talk to a server), which replaces the key and the credential headers, in any
//! encoding, by `[REDACTED]`.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::time::Instant;

use crate::error::UserError;
use crate::model::{ModelError, ModelErrorKind, ModelHttpError, ModelStream, ProviderRetry, RetryObserver};
use crate::providers::redact::Redactor;
use crate::providers::sse::{SNIPPET_CHARS, SseEvent, SseParser, SseStream, StreamProcessor, drive, redact_error};

/// How a provider adapter retries failed requests.
///
/// Retried: HTTP 408, 409, 429 and 5xx (including Anthropic's 529 "overloaded"), connection
/// failures (refused, reset) and requests that got no answer within the idle timeout. The wait
/// before retry `n` (from 0) is `initial_backoff * 2^n`, capped at `max_backoff`, with ±25 %
/// jitter; when the provider sends `Retry-After` (seconds or an HTTP date, padded or not) or
/// `retry-after-ms`, that wait is used instead, unless it is longer than `max_retry_after`, in
/// which case the error is returned at once and says so. A value that is not a wait (`inf`,
/// `NaN`, `-5`, `1e3`, `soon`) is ignored: the backoff applies. Retries never outlast the
/// request's total timeout: a wait that would end after it is not taken. Any values are safe (arithmetic saturates; a header
/// too large for a [`Duration`] counts as longer than `max_retry_after`).
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
        Duration::try_from_secs_f64(capped.as_secs_f64() * (0.75 + 0.5 * r)).unwrap_or(capped)
    }
}

/// Builds the default HTTP client.
pub(crate) fn default_client() -> Result<reqwest::Client, UserError> {
    crate::tls::client_builder()
        .map_err(UserError::new)?
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| UserError::new(format!("could not build the HTTP client: {}", error_chain(&e.without_url()))))
}

/// The most a media URL may weigh when an adapter downloads it to send it inline.
#[cfg(any(feature = "openai", feature = "bedrock"))]
pub(crate) const MAX_DOWNLOAD_BYTES: u64 = 32 * 1024 * 1024;

/// The longest timeout handed to timers (about 30 years: `Duration::MAX` would overflow them).
const LONGEST_TIMER: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

#[cfg(any(feature = "openai", feature = "bedrock"))]
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
            crate::model::ModelErrorKind::User,
            format!(
                "could not download {shown} to send it inline to {provider}: {why}; make the URL reachable from this \
                 process, or download the file yourself and pass it as BinaryContent"
            ),
        )
    };
    let request = client.get(url).timeout(timeout.min(LONGEST_TIMER));
    let response = request.send().await.map_err(|e| fail(error_chain(&e.without_url())))?;
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

/// The HTTP side of one model: client, provider, headers, retries, timeouts and redaction.
#[derive(Clone)]
pub(crate) struct HttpTransport {
    pub(crate) client: reqwest::Client,
    pub(crate) provider: String,
    pub(crate) model_name: String,
    pub(crate) headers: HeaderMap,
    pub(crate) redactor: Redactor,
    pub(crate) retry: RetryConfig,
    /// The total timeout of a request (retries and the whole answer, streamed or not).
    pub(crate) timeout: Duration,
    /// The longest wait for the next bytes (the answer's head, or the next chunk of its body);
    /// the total timeout when `None`.
    pub(crate) idle_timeout: Option<Duration>,
    /// The largest server-sent event accepted.
    pub(crate) max_event_size: usize,
    /// Signs each attempt of a request (providers whose signatures cover the time and the body).
    pub(crate) signer: Option<Arc<dyn RequestSigner>>,
    /// Told of each retry (the builders' `.on_retry(...)`).
    pub(crate) on_retry: Option<RetryObserver>,
}

/// Signs one attempt of a request: adds its authentication headers (marked sensitive) to
/// `headers`, which hold every header the transport sends, over the exact `body` bytes.
/// Called again for each retry, so that a signature that covers the time stays fresh.
pub(crate) trait RequestSigner: Send + Sync {
    /// Adds the signature's headers for a POST of `body` to `url`; returns the values to keep
    /// out of what the answer to this attempt is quoted in (the signature).
    fn sign(&self, url: &str, headers: &mut HeaderMap, body: &[u8]) -> Result<Vec<String>, ModelError>;
}

/// Turns the bytes of a streamed answer into events, whatever their chunking (server-sent
/// events, or another framing a provider streams in).
pub(crate) trait EventDecoder: Send + 'static {
    /// Reads a chunk, pushing the events it completes; an error says what was wrong with the
    /// stream ("sent a frame whose checksum does not match"), which ends it.
    fn feed(&mut self, chunk: &[u8], out: &mut VecDeque<SseEvent>) -> Result<(), String>;
}

impl EventDecoder for SseParser {
    fn feed(&mut self, chunk: &[u8], out: &mut VecDeque<SseEvent>) -> Result<(), String> {
        SseParser::feed(self, chunk, out).map_err(|too_large| {
            format!(
                "sent an event larger than {} bytes, the limit (the builder's `.max_event_size(...)`)",
                too_large.max
            )
        })
    }
}

impl std::fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTransport")
            .field("provider", &self.provider)
            .field("model_name", &self.model_name)
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_event_size", &self.max_event_size)
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

/// The wait a response asks for before a retry: `retry-after-ms`, else `Retry-After`. `None`
/// when absent or not a wait; a wait too large to represent is [`Duration::MAX`]. Never panics.
///
/// What counts as a wait, whitespace around it aside (RFC 9110 lets a field value be padded):
/// - `retry-after-ms` (OpenAI, Anthropic): milliseconds, digits with an optional fraction;
/// - `Retry-After`: seconds, digits (RFC 9110's delay-seconds) with an optional fraction (some
///   servers send one), or an HTTP date in any of the three formats RFC 9110 has recipients read
///   (IMF-fixdate, RFC 850, asctime); a date in the past is no wait.
///
/// Anything else (`inf`, `NaN`, `-5`, `1e3`, `soon`) is not a wait: the normal backoff applies.
/// An unusable `retry-after-ms` leaves `Retry-After` to decide.
fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(wait) = text("retry-after-ms").and_then(|raw| decimal_seconds(raw, 1000.0)) {
        return Some(wait);
    }
    retry_after_value(text(reqwest::header::RETRY_AFTER.as_str())?, chrono::Utc::now())
}

/// A `Retry-After` value read at `now`: seconds, or the time until an HTTP date.
fn retry_after_value(raw: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let raw = trim_ows(raw);
    if let Some(wait) = decimal_seconds(raw, 1.0) {
        return Some(wait);
    }
    let date = http_date(raw)?;
    Some(date.signed_duration_since(now).to_std().unwrap_or(Duration::ZERO))
}

/// The value without the spaces and tabs a field value may be padded with.
fn trim_ows(raw: &str) -> &str {
    raw.trim_matches([' ', '\t'])
}

/// `raw` (padded or not) as a number of `per_second` units: digits with an optional fraction
/// (`2`, `1.5`), nothing else. Too large a number is [`Duration::MAX`].
fn decimal_seconds(raw: &str, per_second: f64) -> Option<Duration> {
    let raw = trim_ows(raw);
    let (whole, fraction) = raw.split_once('.').unwrap_or((raw, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || raw.ends_with('.') {
        return None;
    }
    // Digits alone always parse; a number too long for an f64 is infinite, a wait too long.
    let n: f64 = raw.parse().ok()?;
    Some(Duration::try_from_secs_f64(n / per_second).unwrap_or(Duration::MAX))
}

/// An HTTP date (RFC 9110 section 5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the
/// obsolete RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`)
/// formats, all in UTC.
fn http_date(raw: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    if let Ok(date) = chrono::DateTime::parse_from_rfc2822(raw) {
        return Some(date.with_timezone(&chrono::Utc));
    }
    let naive = chrono::NaiveDateTime::parse_from_str(raw, "%A, %d-%b-%y %H:%M:%S GMT")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(raw, "%a %b %e %H:%M:%S %Y"))
        .ok()?;
    Some(naive.and_utc())
}

/// What a retryable error answer leads to: `Ok` with the wait before the retry (the one the
/// provider asked for, else the backoff), or `Err` with the wait asked for when it is longer
/// than `max_retry_after` (the error is returned at once).
fn wait_before_retry(
    retry_after: Option<Duration>,
    backoff: Duration,
    max_retry_after: Duration,
) -> Result<Duration, Duration> {
    match retry_after {
        Some(wait) if wait > max_retry_after => Err(wait),
        Some(wait) => Ok(wait),
        None => Ok(backoff),
    }
}

/// The provider's id of a request, from the headers the providers send it in.
fn request_id(headers: &HeaderMap) -> Option<String> {
    ["x-request-id", "request-id", "x-amzn-requestid", "x-goog-request-id", "apim-request-id", "cf-ray"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::trim)
        .filter(|id| !id.is_empty() && id.len() <= 200)
        .map(str::to_string)
}

/// Which deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expired {
    /// Nothing arrived within the idle timeout.
    Idle,
    /// The request's total timeout passed.
    Total,
}

/// What a request was waiting for when a deadline passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The response's head.
    Head,
    /// The rest of a JSON (or error) body.
    Body,
    /// The next bytes of a stream.
    Stream,
}

/// The deadlines of one request: a total one, from the start, and an idle one, for each wait.
#[derive(Debug, Clone, Copy)]
struct Deadline {
    total: Duration,
    idle: Duration,
    /// `None` when the total timeout is too large to matter.
    end: Option<Instant>,
}

impl Deadline {
    fn new(total: Duration, idle: Option<Duration>) -> Self {
        let idle = idle.unwrap_or(total).min(total);
        Deadline { total, idle, end: Instant::now().checked_add(total) }
    }

    fn remaining(&self) -> Duration {
        self.end.map_or(Duration::MAX, |end| end.saturating_duration_since(Instant::now()))
    }

    /// Waits for `fut`, at most the idle timeout and what is left of the total one.
    async fn wait<F: Future>(&self, fut: F) -> Result<F::Output, Expired> {
        let remaining = self.remaining();
        let (limit, expired) =
            if self.idle < remaining { (self.idle, Expired::Idle) } else { (remaining, Expired::Total) };
        tokio::time::timeout(limit.min(LONGEST_TIMER), fut).await.map_err(|_| expired)
    }

    /// Whether a wait of `d` would still end before the total deadline.
    fn allows(&self, d: Duration) -> bool {
        d < self.remaining()
    }
}

/// A URL for a message: without its query, fragment or user info.
fn shown_url(url: &str) -> &str {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    match url.find("://").map(|i| i + 3) {
        Some(host) if url[host..].split('/').next().is_some_and(|authority| authority.contains('@')) => {
            // Credentials in the URL: show the scheme only.
            &url[..host]
        }
        _ => url,
    }
}

/// How much of an error body is read (the message quotes at most 4,000 characters of it).
const MAX_ERROR_BODY_BYTES: usize = 1024 * 1024;

impl HttpTransport {
    /// `text` with the key and credential headers redacted.
    pub(crate) fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        self.redactor.redact(text)
    }

    /// At most `max_chars` of a server's text, redacted, for an error message.
    pub(crate) fn snippet(&self, text: &str, max_chars: usize) -> String {
        self.redactor.snippet(text, max_chars)
    }

    fn deadline(&self, timeout: Option<Duration>) -> Deadline {
        Deadline::new(timeout.unwrap_or(self.timeout), self.idle_timeout)
    }

    fn error(&self, kind: ModelErrorKind, what: String) -> ModelError {
        ModelError::new(kind, what)
    }

    /// The kind of a failure `reqwest` reports: its own timeouts (the connect timeout) are
    /// timeouts, anything else a connection failure.
    fn transport_kind(e: &reqwest::Error) -> ModelErrorKind {
        if e.is_timeout() { ModelErrorKind::Timeout } else { ModelErrorKind::Connection }
    }

    /// Logs a retry and reports it to the model's observer and to the run polling the request.
    fn report_retry(&self, retry: ProviderRetry) {
        tracing::warn!(
            provider = %self.provider,
            retry = retry.retry,
            kind = %retry.kind,
            status = retry.status,
            wait_ms = u64::try_from(retry.wait.as_millis()).unwrap_or(u64::MAX),
            message = %retry.message,
            "retrying a failed request"
        );
        if let Some(observer) = &self.on_retry {
            observer(&retry);
        }
        crate::run::report_provider_retry(&retry);
    }

    /// A retry of this transport's model.
    fn retry_event(&self, attempt: u32, kind: ModelErrorKind, wait: Duration, message: String) -> ProviderRetry {
        let mut retry = ProviderRetry::new(&self.provider, &self.model_name, attempt.saturating_add(1), kind, wait);
        retry.message = message;
        retry
    }

    /// The error for a deadline that passed while waiting for the answer's head, the rest of a
    /// JSON answer, or the next bytes of a stream.
    fn expired_error(&self, expired: Expired, deadline: &Deadline, url: &str, phase: Phase) -> ModelError {
        let url = shown_url(url);
        let (provider, model) = (&self.provider, &self.model_name);
        let (total, idle) = (deadline.total.as_secs_f64(), deadline.idle.as_secs_f64());
        self.error(ModelErrorKind::Timeout, match (expired, phase) {
            (Expired::Total, Phase::Head) => format!(
                "the {provider} API did not answer within {total:.1} s (model `{model}`, {url}). Raise the timeout (`ModelSettings::timeout` or the builder's `.timeout(...)`) or check the server"
            ),
            (Expired::Total, _) => format!(
                "the {provider} API's answer did not end within the request's total timeout of {total:.1} s (model `{model}`, {url}). Raise the timeout (`ModelSettings::timeout` or the builder's `.timeout(...)`) or check the server"
            ),
            (Expired::Idle, Phase::Head) => format!(
                "the {provider} API did not answer within {idle:.1} s, the idle timeout (model `{model}`, {url}). Raise it (the builder's `.idle_timeout(...)`) or check the server"
            ),
            (Expired::Idle, phase) => format!(
                "the {provider} {} stalled: nothing arrived for {idle:.1} s, the idle timeout (model `{model}`, {url}). Raise it (the builder's `.idle_timeout(...)`) or try again",
                if phase == Phase::Stream { "stream" } else { "API's answer" }
            ),
        })
    }

    /// Sends a JSON POST with retries, within the deadline, and returns the successful response.
    async fn send(&self, url: &str, body: &Value, deadline: &Deadline) -> Result<reqwest::Response, ModelError> {
        let bytes = serde_json::to_vec(body).map_err(|e| {
            ModelError::new(crate::model::ModelErrorKind::User, format!("could not serialise the request body: {e}"))
        })?;
        let mut attempt: u32 = 0;
        loop {
            let mut headers = self.headers.clone();
            headers.insert(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            // This attempt's signature is kept out of what the server's answer is quoted in.
            let mut signed = Redactor::none();
            if let Some(signer) = &self.signer {
                signed = Redactor::new(signer.sign(url, &mut headers, &bytes)?);
            }
            let request = self.client.post(url).headers(headers).body(bytes.clone());
            let can_retry = attempt < self.retry.max_retries;
            let backoff = self.retry.backoff(attempt);
            match deadline.wait(request.send()).await {
                Err(expired) => {
                    let error = self.expired_error(expired, deadline, url, Phase::Head);
                    if expired == Expired::Idle && can_retry && deadline.allows(backoff) {
                        self.report_retry(self.retry_event(attempt, error.kind, backoff, error.message));
                        tokio::time::sleep(backoff).await;
                        attempt += 1;
                        continue;
                    }
                    return Err(error);
                }
                Ok(Err(e)) => {
                    let e = e.without_url();
                    let kind = Self::transport_kind(&e);
                    let what = error_chain(&e);
                    if can_retry && deadline.allows(backoff) {
                        let message = format!("could not reach the {} API: {}", self.provider, self.redact(&what));
                        self.report_retry(self.retry_event(attempt, kind, backoff, message));
                        tokio::time::sleep(backoff).await;
                        attempt += 1;
                        continue;
                    }
                    return Err(self.error(kind, format!(
                        "could not reach the {} API at {}: {what}. Check the base URL, the network, and that the server is running",
                        self.provider,
                        shown_url(url),
                    )));
                }
                Ok(Ok(response)) => {
                    let status = response.status();
                    if status.is_success() {
                        return Ok(response);
                    }
                    let retry_after = parse_retry_after(response.headers());
                    let headers = response.headers().clone();
                    // AWS names the error in a header (`ValidationException:http://...`).
                    let error_type = response
                        .headers()
                        .get("x-amzn-errortype")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.split(':').next())
                        .map(|v| self.snippet(&signed.redact(v.trim()), 100))
                        .filter(|v| !v.is_empty());
                    // An error body is read within the deadline, up to a bound; what could not
                    // be read is left out.
                    let text = self.read_text(response, deadline, MAX_ERROR_BODY_BYTES).await.unwrap_or_default();
                    let code = status.as_u16();
                    let retryable = matches!(code, 408 | 409 | 429) || status.is_server_error();
                    let wait = wait_before_retry(retry_after, backoff, self.retry.max_retry_after);
                    let body = self.snippet(&signed.redact(&text), 4000);
                    let mut error = ModelHttpError::new(code, &self.provider, &self.model_name, body);
                    if retryable
                        && can_retry
                        && let Ok(wait) = wait
                        && deadline.allows(wait)
                    {
                        let message = format!("HTTP {code}: {}", self.snippet(&error.provider_message(), 500));
                        let mut retry =
                            self.retry_event(attempt, ModelErrorKind::Http, wait, message).with_status(code);
                        retry.asked_by_provider = retry_after.is_some();
                        self.report_retry(retry);
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                        continue;
                    }
                    if error_type.is_some() {
                        error.error_type = error_type;
                    }
                    error.request_id = request_id(&headers);
                    error.retries = attempt;
                    error.retry_after = retry_after;
                    if retryable && can_retry && wait.is_err() {
                        error.max_retry_after = Some(self.retry.max_retry_after);
                    }
                    tracing::debug!(status = code, provider = %self.provider, "provider returned an HTTP error");
                    return Err(error.into());
                }
            }
        }
    }

    /// Reads a response body as text within the deadline: at most `max_bytes` (the rest is left
    /// unread), decoded as UTF-8 with replacement characters.
    async fn read_text(
        &self,
        mut response: reqwest::Response,
        deadline: &Deadline,
        max_bytes: usize,
    ) -> Result<String, ModelError> {
        let url = response.url().to_string();
        let mut bytes: Vec<u8> = Vec::new();
        loop {
            match deadline.wait(response.chunk()).await {
                Err(expired) => return Err(self.expired_error(expired, deadline, &url, Phase::Body)),
                Ok(Err(e)) => {
                    let e = e.without_url();
                    return Err(self.error(
                        Self::transport_kind(&e),
                        format!("the {} API's answer was cut off: {}. Try again", self.provider, error_chain(&e)),
                    ));
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => {
                    let room = max_bytes.saturating_sub(bytes.len());
                    bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if chunk.len() >= room {
                        break;
                    }
                }
            }
        }
        Ok(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Sends a JSON POST and hands the JSON answer to `parse`. The whole request (retries and the
    /// body) keeps to the total and idle timeouts; every error, `parse`'s included, has the
    /// secrets redacted.
    #[cfg_attr(not(any(feature = "openai", feature = "anthropic", feature = "gemini")), allow(dead_code))]
    pub(crate) async fn request_json<T>(
        &self,
        url: &str,
        body: &Value,
        timeout: Option<Duration>,
        parse: impl FnOnce(&Value) -> Result<T, ModelError>,
    ) -> Result<T, ModelError> {
        self.request_json_with_headers(url, body, timeout, |v, _| parse(v)).await
    }

    /// [`request_json`](Self::request_json) whose `parse` also reads the response's headers.
    pub(crate) async fn request_json_with_headers<T>(
        &self,
        url: &str,
        body: &Value,
        timeout: Option<Duration>,
        parse: impl FnOnce(&Value, &HeaderMap) -> Result<T, ModelError>,
    ) -> Result<T, ModelError> {
        let result = async {
            let deadline = self.deadline(timeout);
            let response = self.send(url, body, &deadline).await?;
            let headers = response.headers().clone();
            let text = self.read_text(response, &deadline, usize::MAX).await?;
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                let mut snippet = self.snippet(&text, SNIPPET_CHARS);
                if snippet.is_empty() {
                    snippet = "(empty body)".into();
                }
                ModelError::new(
                    crate::model::ModelErrorKind::UnexpectedResponse,
                    format!(
                        "the {} API answered with something that is not JSON ({e}): {snippet}. Check that the base URL points at the API itself",
                        self.provider
                    ),
                )
            })?;
            parse(&value, &headers)
        }
        .await;
        result.map_err(|e| redact_error(&self.redactor, e))
    }

    /// Sends a JSON POST and runs `processor` over the server-sent events of the answer. The
    /// whole request keeps to the total timeout, each wait for the next bytes to the idle one;
    /// an event larger than the limit is an error; every error has the secrets redacted.
    #[cfg_attr(not(any(feature = "openai", feature = "anthropic", feature = "gemini")), allow(dead_code))]
    pub(crate) async fn stream<P: StreamProcessor>(
        &self,
        url: &str,
        body: &Value,
        timeout: Option<Duration>,
        processor: P,
    ) -> Result<ModelStream, ModelError> {
        self.stream_with(url, body, timeout, SseParser::new(self.max_event_size), |_| processor).await
    }

    /// [`stream`](Self::stream) for an answer framed otherwise than as server-sent events: the
    /// `decoder` turns its bytes into the events read by the processor, which is made from the
    /// response's headers.
    pub(crate) async fn stream_with<D: EventDecoder, P: StreamProcessor>(
        &self,
        url: &str,
        body: &Value,
        timeout: Option<Duration>,
        decoder: D,
        processor: impl FnOnce(&HeaderMap) -> P,
    ) -> Result<ModelStream, ModelError> {
        let deadline = self.deadline(timeout);
        let response = self.send(url, body, &deadline).await.map_err(|e| redact_error(&self.redactor, e))?;
        let processor = processor(response.headers());
        Ok(drive(self.events(response, deadline, url, decoder), processor, self.redactor.clone()))
    }

    /// The events of a response, as `parser` decodes them.
    fn events<D: EventDecoder>(
        &self,
        response: reqwest::Response,
        deadline: Deadline,
        url: &str,
        parser: D,
    ) -> SseStream {
        struct State<D> {
            response: reqwest::Response,
            parser: D,
            events: VecDeque<SseEvent>,
            failure: Option<ModelError>,
            http: HttpTransport,
            deadline: Deadline,
            url: String,
            done: bool,
        }
        let state = State {
            response,
            parser,
            events: VecDeque::new(),
            failure: None,
            http: self.clone(),
            deadline,
            url: url.to_string(),
            done: false,
        };
        futures::stream::unfold(state, |mut s| async move {
            loop {
                // The events completed before a failure still go out, then the failure.
                if let Some(event) = s.events.pop_front() {
                    return Some((Ok(event), s));
                }
                if let Some(failure) = s.failure.take() {
                    return Some((Err(failure), s));
                }
                if s.done {
                    return None;
                }
                let failure = match s.deadline.wait(s.response.chunk()).await {
                    Err(expired) => s.http.expired_error(expired, &s.deadline, &s.url, Phase::Stream),
                    Ok(Ok(None)) => return None,
                    Ok(Err(e)) => {
                        let e = e.without_url();
                        s.http.error(
                            HttpTransport::transport_kind(&e),
                            format!("the {} stream broke off: {}. Try again", s.http.provider, error_chain(&e)),
                        )
                    }
                    Ok(Ok(Some(chunk))) => match s.parser.feed(&chunk, &mut s.events) {
                        Ok(()) => continue,
                        Err(problem) => s.http.error(
                            ModelErrorKind::Protocol,
                            format!("the {} stream {problem}; the stream was abandoned", s.http.provider),
                        ),
                    },
                };
                s.done = true;
                s.failure = Some(failure);
            }
        })
        .boxed()
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
mod tests;
