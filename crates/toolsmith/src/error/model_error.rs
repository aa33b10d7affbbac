//! [`ModelError`]: what a model or its provider failed with, by [`ModelErrorKind`], with the
//! HTTP details of a provider's error answer ([`ModelHttpError`]) when there is one.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

/// What kind of failure a [`ModelError`] is.
///
/// [`name`](ModelErrorKind::name) gives the kind's Rust name; the kind can be compared with a
/// name directly (`error.kind == "ModelHttpError"`). Made from a string
/// ([`ModelError::new`]), it also accepts Pydantic AI's exception names (`ModelHTTPError`,
/// `ModelAPIError`, `ModelConnectionError`, `ModelTimeoutError`, `ModelRequestTimeout`), so that
/// scripted models written against either read the same.
///
/// A failure to get an answer at all is one of three kinds, so that a caller can tell them
/// apart: [`Connection`](ModelErrorKind::Connection) (the server could not be reached, or cut
/// the answer off), [`Timeout`](ModelErrorKind::Timeout) (a deadline passed) and
/// [`Protocol`](ModelErrorKind::Protocol) (the bytes that came broke the wire format).
/// [`is_transient`](ModelErrorKind::is_transient) says whether trying again, or another model,
/// may succeed.
///
/// ```
/// use toolsmith::model::ModelErrorKind;
///
/// assert_eq!(ModelErrorKind::from("ModelConnectionError"), ModelErrorKind::Connection);
/// assert_eq!(ModelErrorKind::from("ModelRequestTimeout"), ModelErrorKind::Timeout);
/// assert_eq!(ModelErrorKind::Timeout.name(), "ModelTimeoutError");
/// assert!(ModelErrorKind::Timeout.is_transient() && !ModelErrorKind::User.is_transient());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The provider answered with an HTTP error status: [`ModelError::http`] has the status,
    /// the provider's error type and message, the request id and the wait it asked for.
    Http,
    /// The provider reported an error otherwise than by an HTTP status: an error object in an
    /// answer, or in the middle of a streamed one.
    Api,
    /// The provider could not be reached (connection refused, reset, a TLS or DNS failure), or
    /// the connection closed before the answer ended (a body or a stream cut off). Pydantic AI's
    /// `ModelConnectionError`.
    Connection,
    /// A deadline passed: no answer within the idle timeout, an answer that did not end within
    /// the request's total timeout, or a body or stream that stalled. Pydantic AI's
    /// `ModelTimeoutError` (and `ModelRequestTimeout`, read as this kind).
    Timeout,
    /// The bytes the provider sent broke its wire format below the level of an answer: a
    /// server-sent event larger than the limit, an event-stream frame whose checksum or length
    /// is wrong. (An answer in the wrong shape is [`UnexpectedResponse`](Self::UnexpectedResponse).)
    Protocol,
    /// The provider's answer could not be understood (not JSON, not the documented shape, a
    /// stream that ended before its final response).
    UnexpectedResponse,
    /// The request cannot be made as configured (a setting, a part or a tool the provider
    /// cannot take); the run ends with [`AgentRunError::User`](crate::AgentRunError::User).
    User,
    /// Every model of a [`FallbackModel`](crate::model::FallbackModel) failed; the message
    /// lists each failure.
    AllModelsFailed,
    /// Any other failure, by the name the model gave it.
    Other(String),
}

impl ModelErrorKind {
    /// The kind's name: `ModelHttpError`, `ModelApiError`, `ModelConnectionError`,
    /// `ModelTimeoutError`, `ModelProtocolError`, `UnexpectedModelBehavior`, `UserError`,
    /// `AllModelsFailed`, or the name of an [`Other`](ModelErrorKind::Other) kind.
    pub fn name(&self) -> &str {
        match self {
            ModelErrorKind::Http => "ModelHttpError",
            ModelErrorKind::Api => "ModelApiError",
            ModelErrorKind::Connection => "ModelConnectionError",
            ModelErrorKind::Timeout => "ModelTimeoutError",
            ModelErrorKind::Protocol => "ModelProtocolError",
            ModelErrorKind::UnexpectedResponse => "UnexpectedModelBehavior",
            ModelErrorKind::User => "UserError",
            ModelErrorKind::AllModelsFailed => "AllModelsFailed",
            ModelErrorKind::Other(name) => name,
        }
    }

    /// Whether the failure is the provider's or the way to it, so that trying again or another
    /// model may succeed: [`Http`](Self::Http), [`Api`](Self::Api),
    /// [`Connection`](Self::Connection), [`Timeout`](Self::Timeout) and
    /// [`Protocol`](Self::Protocol). [`FallbackModel`](crate::model::FallbackModel) falls back
    /// on these.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ModelErrorKind::Http
                | ModelErrorKind::Api
                | ModelErrorKind::Connection
                | ModelErrorKind::Timeout
                | ModelErrorKind::Protocol
        )
    }
}

impl From<&str> for ModelErrorKind {
    fn from(name: &str) -> Self {
        match name {
            "ModelHttpError" | "ModelHTTPError" => ModelErrorKind::Http,
            "ModelApiError" | "ModelAPIError" => ModelErrorKind::Api,
            "ModelConnectionError" => ModelErrorKind::Connection,
            "ModelTimeoutError" | "ModelRequestTimeout" => ModelErrorKind::Timeout,
            "ModelProtocolError" => ModelErrorKind::Protocol,
            "UnexpectedModelBehavior" => ModelErrorKind::UnexpectedResponse,
            "UserError" => ModelErrorKind::User,
            "AllModelsFailed" | "FallbackExceptionGroup" => ModelErrorKind::AllModelsFailed,
            other => ModelErrorKind::Other(other.to_string()),
        }
    }
}

impl From<String> for ModelErrorKind {
    fn from(name: String) -> Self {
        ModelErrorKind::from(name.as_str())
    }
}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<str> for ModelErrorKind {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for ModelErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// An error from a model or its provider.
///
/// Match on [`kind`](ModelError::kind); an HTTP error answer carries its details in
/// [`http`](ModelError::http) (also reachable as the error's
/// [`source`](std::error::Error::source)).
///
/// ```
/// use toolsmith::model::{ModelError, ModelErrorKind};
///
/// let e = ModelError::new("ModelApiError", "the server closed the connection");
/// assert_eq!(e.kind, ModelErrorKind::Api);
/// assert_eq!(e.kind, "ModelApiError");
/// assert!(e.http.is_none() && e.status().is_none());
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ModelError {
    /// What kind of failure this is.
    pub kind: ModelErrorKind,
    /// What went wrong, and what to do about it.
    pub message: String,
    /// The provider's HTTP error answer, for [`ModelErrorKind::Http`].
    pub http: Option<Box<ModelHttpError>>,
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match (&self.http, &self.cause) {
            (Some(http), _) => Some(&**http),
            (None, Some(cause)) => Some(&**cause),
            (None, None) => None,
        }
    }
}

impl fmt::Debug for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ModelError");
        s.field("kind", &self.kind).field("message", &self.message);
        if let Some(http) = &self.http {
            s.field("http", http);
        }
        if let Some(cause) = &self.cause {
            s.field("source", &cause.to_string());
        }
        s.finish()
    }
}

impl ModelError {
    /// An error of a kind (a [`ModelErrorKind`], or its name) with a message.
    pub fn new(kind: impl Into<ModelErrorKind>, message: impl Into<String>) -> Self {
        ModelError { kind: kind.into(), message: message.into(), http: None, cause: None }
    }

    /// This error with the error that caused it, reported by
    /// [`source`](std::error::Error::source).
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.cause = Some(Arc::new(source));
        self
    }

    /// The HTTP status of the provider's error answer.
    pub fn status(&self) -> Option<u16> {
        self.http.as_ref().map(|h| h.status)
    }

    /// The wait the provider asked for before a retry (`Retry-After`, `retry-after-ms`).
    pub fn retry_after(&self) -> Option<Duration> {
        self.http.as_ref().and_then(|h| h.retry_after)
    }

    /// The provider's id of the failed request, for its support.
    pub fn request_id(&self) -> Option<&str> {
        self.http.as_ref().and_then(|h| h.request_id.as_deref())
    }
}

impl std::error::Error for ModelHttpError {}

/// An HTTP error answer from a provider: the status, the provider's error type and message,
/// the request id, the wait it asked for, and the body.
///
/// It is the [`http`](ModelError::http) detail (and the source) of a [`ModelError`] of kind
/// [`ModelErrorKind::Http`]; its text is that error's message. The body never holds the API
/// key: an echo of it is redacted.
///
/// ```
/// use toolsmith::model::{ModelError, ModelErrorKind, ModelHttpError};
///
/// let body = r#"{"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}"#;
/// let e = ModelError::from(ModelHttpError::new(429, "openai", "gpt-4o", body));
/// assert_eq!(e.kind, ModelErrorKind::Http);
/// assert_eq!(e.status(), Some(429));
/// let http = e.http.as_deref().unwrap();
/// assert_eq!(http.error_type.as_deref(), Some("rate_limit_error"));
/// assert_eq!(http.provider_message(), "Rate limit reached");
/// assert!(std::error::Error::source(&e).is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// The provider's error type or code, read from the body (`invalid_request_error`,
    /// `overloaded_error`, `RESOURCE_EXHAUSTED`...).
    pub error_type: Option<String>,
    /// The provider's id of the request (`x-request-id`, `request-id`...).
    pub request_id: Option<String>,
    /// How many retries were made before giving up.
    pub retries: u32,
    /// The wait the provider asked for before a retry (`Retry-After`, `retry-after-ms`;
    /// [`Duration::MAX`] for a value too large to represent).
    pub retry_after: Option<Duration>,
    /// The longest `Retry-After` the adapter honours, when the provider asked for a longer wait
    /// and the error was therefore returned at once instead of waiting.
    pub max_retry_after: Option<Duration>,
}

impl ModelHttpError {
    /// An HTTP error answer: its status, provider, model and body; the provider's error type is
    /// read from the body.
    pub fn new(
        status: u16,
        provider: impl Into<String>,
        model_name: impl Into<String>,
        body: impl Into<String>,
    ) -> Self {
        let body = body.into();
        let error_type = error_type(&body);
        ModelHttpError {
            status,
            provider: provider.into(),
            model_name: model_name.into(),
            body,
            error_type,
            request_id: None,
            retries: 0,
            retry_after: None,
            max_retry_after: None,
        }
    }

    /// The provider's error message, read from the usual JSON shapes (`{"error": {"message"}}`,
    /// `{"error": "..."}`, `{"message"}`), or the raw body; `(empty body)` for none.
    pub fn provider_message(&self) -> String {
        let parsed: Option<Value> = serde_json::from_str(&self.body).ok();
        let from_json = parsed.as_ref().and_then(|v| {
            let v = if let Some(arr) = v.as_array() { arr.first()? } else { v };
            v.pointer("/error/message")
                .or_else(|| v.get("error").filter(|e| e.is_string()))
                .or_else(|| v.get("message"))
                .or_else(|| v.get("Message"))
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
        if let (Some(wait), Some(max)) = (self.retry_after, self.max_retry_after) {
            return format!(
                "{retried}. The provider asked to wait {} before retrying, longer than `RetryConfig::max_retry_after` ({}), so the error is returned at once; raise `max_retry_after` to wait",
                show_duration(wait),
                show_duration(max)
            );
        }
        let what = match self.status {
            400 | 422 => "the provider rejected the request; check the model settings and the tool schemas",
            401 | 403 if self.provider == "bedrock" => {
                "check the AWS credentials and region (the builder's `.credentials(...)`, `.api_key(...)` and `.region(...)`, or the AWS_* environment variables), and that the account has access to the model"
            }
            401 | 403 => "check the API key (the provider's environment variable or the builder's `.api_key(...)`)",
            404 => "check the model name and the base URL",
            408 | 409 | 429 => "the provider is rate limiting or busy; slow down or raise `RetryConfig::max_retries`",
            500..=599 => "the provider failed; try again later or add a FallbackModel",
            _ => "see the provider's message above",
        };
        format!("{retried}. {what}")
    }
}

impl fmt::Display for ModelHttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} API returned HTTP {} for model `{}`: {}",
            self.provider,
            self.status,
            self.model_name,
            self.provider_message()
        )?;
        if let Some(t) = &self.error_type {
            write!(f, " ({t})")?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " [request id {id}]")?;
        }
        f.write_str(&self.hint())
    }
}

impl From<ModelHttpError> for ModelError {
    fn from(e: ModelHttpError) -> Self {
        ModelError { kind: ModelErrorKind::Http, message: e.to_string(), http: Some(Box::new(e)), cause: None }
    }
}

/// The provider's error type or code in an error body: `error.type` (OpenAI, Anthropic),
/// `error.status` (Gemini), `error.code` (OpenAI-compatible servers), or a top-level `type` /
/// `__type` / `code`.
fn error_type(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let v = if let Some(arr) = v.as_array() { arr.first()? } else { &v };
    let error = v.get("error").filter(|e| e.is_object());
    let text = |v: &Value| match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let found = match error {
        Some(e) => ["type", "status", "code"].iter().find_map(|k| e.get(*k).and_then(text)),
        None => ["type", "__type", "code"].iter().find_map(|k| v.get(*k).and_then(text)),
    };
    // Anthropic wraps errors in `{"type": "error", "error": {...}}`: the outer `type` says nothing.
    found.filter(|t| t != "error")
}

/// A duration for a message: seconds with one decimal, or "longer than a century".
fn show_duration(d: Duration) -> String {
    if d >= Duration::from_secs(u64::from(u32::MAX)) {
        "longer than a century".to_string()
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_rust_and_reference_names() {
        for (name, kind) in [
            ("ModelHTTPError", ModelErrorKind::Http),
            ("ModelHttpError", ModelErrorKind::Http),
            ("ModelAPIError", ModelErrorKind::Api),
            ("ModelConnectionError", ModelErrorKind::Connection),
            ("ModelTimeoutError", ModelErrorKind::Timeout),
            ("ModelRequestTimeout", ModelErrorKind::Timeout),
            ("ModelProtocolError", ModelErrorKind::Protocol),
            ("UnexpectedModelBehavior", ModelErrorKind::UnexpectedResponse),
            ("UserError", ModelErrorKind::User),
            ("ScriptExhausted", ModelErrorKind::Other("ScriptExhausted".into())),
        ] {
            assert_eq!(ModelErrorKind::from(name), kind, "{name}");
        }
        assert_eq!(ModelErrorKind::from("ModelHTTPError").name(), "ModelHttpError");
        for kind in [ModelErrorKind::Connection, ModelErrorKind::Timeout, ModelErrorKind::Protocol] {
            assert_eq!(ModelErrorKind::from(kind.name()), kind);
        }
        assert_eq!(ModelErrorKind::Other("X".into()), "X");
    }

    #[test]
    fn error_types_of_each_provider() {
        for (body, expected) in [
            (
                r#"{"error": {"message": "m", "type": "invalid_request_error", "code": "x"}}"#,
                Some("invalid_request_error"),
            ),
            (
                r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
                Some("overloaded_error"),
            ),
            (r#"{"error": {"code": 429, "message": "m", "status": "RESOURCE_EXHAUSTED"}}"#, Some("RESOURCE_EXHAUSTED")),
            (r#"[{"error": {"code": 400, "message": "m", "status": "INVALID_ARGUMENT"}}]"#, Some("INVALID_ARGUMENT")),
            (r#"{"error": {"message": "m", "code": 500}}"#, Some("500")),
            (r#"{"message": "m", "__type": "ValidationException"}"#, Some("ValidationException")),
            (r#"{"error": "plain"}"#, None),
            ("", None),
            ("<html>", None),
        ] {
            assert_eq!(error_type(body).as_deref(), expected, "{body}");
        }
    }

    #[test]
    fn http_errors_say_what_they_hold() {
        let mut e = ModelHttpError::new(
            401,
            "openai",
            "gpt-4o",
            r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#,
        );
        e.request_id = Some("req_123".into());
        let m: ModelError = e.into();
        assert_eq!(m.kind, "ModelHttpError");
        assert_eq!(m.status(), Some(401));
        assert_eq!(m.request_id(), Some("req_123"));
        for part in ["HTTP 401", "Incorrect API key provided", "(invalid_request_error)", "req_123", "`.api_key(...)`"]
        {
            assert!(m.message.contains(part), "{part}: {}", m.message);
        }
        let source = std::error::Error::source(&m).unwrap();
        assert_eq!(source.to_string(), m.message);
        assert!(ModelHttpError::new(502, "x", "m", " ").to_string().contains("(empty body)"));
    }
}
