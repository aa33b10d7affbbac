//! [`ProviderRetry`]: a provider request that failed and is about to be tried again, as a
//! provider adapter reports it to its model's observer (the builders' `.on_retry(...)`) and to
//! the run the request belongs to ([`AgentEvent::ProviderRetry`](crate::agent::AgentEvent::ProviderRetry),
//! through the task-local of `run/events.rs`).

use std::sync::Arc;
use std::time::Duration;

use super::ModelErrorKind;

/// A provider request that failed and is about to be tried again.
///
/// The provider adapters retry HTTP 408, 409, 429 and 5xx answers, connection failures and
/// requests that got no answer within the idle timeout (see
/// `toolsmith::providers::RetryConfig`). Before each wait they report the retry: to the model's
/// observer (the provider builders' `.on_retry(...)`), and, within an agent run, as an
/// [`AgentEvent::ProviderRetry`](crate::agent::AgentEvent::ProviderRetry) event of the run.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::model::{ModelErrorKind, ProviderRetry};
///
/// let retry = ProviderRetry::new("openai", "gpt-4o", 1, ModelErrorKind::Http, Duration::from_secs(2))
///     .with_status(429);
/// assert_eq!(retry.to_string(), "openai (model `gpt-4o`): HTTP 429, retry 1 in 2.0 s");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProviderRetry {
    /// The provider (`openai`, `anthropic`, `google`, `bedrock`, a preset's name...).
    pub provider: String,
    /// The model that was asked.
    pub model_name: String,
    /// The retry about to be made: 1 for the first.
    pub retry: u32,
    /// What the failed attempt ended with: [`Http`](ModelErrorKind::Http) (see
    /// [`status`](Self::status)), [`Connection`](ModelErrorKind::Connection) or
    /// [`Timeout`](ModelErrorKind::Timeout).
    pub kind: ModelErrorKind,
    /// The HTTP status of the failed attempt's answer, for [`ModelErrorKind::Http`].
    pub status: Option<u16>,
    /// The wait before the retry.
    pub wait: Duration,
    /// Whether the wait is the one the provider asked for (`Retry-After`, `retry-after-ms`)
    /// rather than the backoff.
    pub asked_by_provider: bool,
    /// What went wrong, without the API key or credential headers.
    pub message: String,
}

impl ProviderRetry {
    /// A retry of a request to `model_name` on `provider`, after an attempt that failed with
    /// `kind`, made after `wait`.
    pub fn new(
        provider: impl Into<String>,
        model_name: impl Into<String>,
        retry: u32,
        kind: ModelErrorKind,
        wait: Duration,
    ) -> Self {
        ProviderRetry {
            provider: provider.into(),
            model_name: model_name.into(),
            retry,
            kind,
            status: None,
            wait,
            asked_by_provider: false,
            message: String::new(),
        }
    }

    /// This retry after an answer of HTTP status `status`.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }
}

impl std::fmt::Display for ProviderRetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (model `{}`): ", self.provider, self.model_name)?;
        match self.status {
            Some(status) => write!(f, "HTTP {status}")?,
            None => f.write_str(match self.kind {
                ModelErrorKind::Connection => "connection failed",
                ModelErrorKind::Timeout => "no answer in time",
                _ => self.kind.name(),
            })?,
        }
        write!(f, ", retry {} in {:.1} s", self.retry, self.wait.as_secs_f64())
    }
}

/// What a provider calls before each retry (see the provider builders' `.on_retry(...)`).
pub type RetryObserver = Arc<dyn Fn(&ProviderRetry) + Send + Sync>;
