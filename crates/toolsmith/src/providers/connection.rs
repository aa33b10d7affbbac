//! How an adapter connects: the options its builder collects (key, base URL, deadlines, retries,
//! event size, client, headers), the builder methods every adapter shares, and the transport made
//! from them.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::UserError;
use crate::providers::http::{HttpTransport, RetryConfig, default_client};
use crate::providers::redact::Redactor;
use crate::providers::sse::DEFAULT_MAX_EVENT_SIZE;

/// Connection options shared by the provider builders.
#[derive(Clone, Default)]
pub(crate) struct ConnectionOptions {
    pub(crate) api_key: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_event_size: Option<usize>,
    pub(crate) retry: Option<RetryConfig>,
    pub(crate) client: Option<reqwest::Client>,
    pub(crate) headers: Vec<(String, String)>,
    /// Secrets the adapter holds besides the key and the headers (a signing key), redacted too.
    pub(crate) secrets: Vec<String>,
    /// Told of each retry.
    pub(crate) on_retry: Option<crate::model::RetryObserver>,
}

/// Header names whose values are credentials whatever their length.
fn is_credential_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["auth", "key", "token", "secret", "cookie", "password", "signature", "credential", "session"]
        .iter()
        .any(|w| name.contains(w))
}

impl ConnectionOptions {
    /// Builds the transport: `auth` holds the provider's authentication headers. The redactor
    /// takes the key, the sensitive headers of `auth`, and the values of the extra headers (those
    /// named like credentials, and any of eight characters or more).
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
        let mut secrets: Vec<String> = self.api_key.iter().chain(&self.secrets).cloned().collect();
        secrets.extend(auth.values().filter(|v| v.is_sensitive()).filter_map(|v| v.to_str().ok()).map(str::to_string));
        let mut headers = auth;
        for (name, value) in &self.headers {
            if is_credential_header(name) || value.chars().count() >= 8 {
                secrets.push(value.clone());
            }
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| UserError::new(format!("`{name}` is not a valid HTTP header name")))?;
            let mut value = HeaderValue::from_str(value).map_err(|_| {
                UserError::new(format!("the value of the `{name}` header is not a valid HTTP header value"))
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        Ok(HttpTransport {
            client,
            provider: provider.to_string(),
            model_name: model_name.to_string(),
            headers,
            redactor: Redactor::new(secrets),
            retry: self.retry.clone().unwrap_or_default(),
            timeout: self.timeout.unwrap_or(default_timeout),
            idle_timeout: self.idle_timeout,
            max_event_size: self.max_event_size.unwrap_or(DEFAULT_MAX_EVENT_SIZE),
            signer: None,
            on_retry: self.on_retry.clone(),
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

        /// Sets the total timeout of a request (default 600 s): retries and the whole answer,
        /// streamed or not, must fit in it. `ModelSettings::timeout` overrides it per request.
        pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
            self.opts.timeout = Some(timeout);
            self
        }

        /// Sets the idle timeout: the longest wait for the answer's head or, once it has come,
        /// for the next bytes of its body (default: the total timeout). A request that gets no
        /// answer within it is retried (within the total timeout); a body or stream that stalls
        /// for that long is an error.
        pub fn idle_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.opts.idle_timeout = Some(timeout);
            self
        }

        /// Sets the largest server-sent event a streamed answer may send, in bytes (default
        /// 16 MiB); a larger one ends the stream with an error.
        pub fn max_event_size(mut self, bytes: usize) -> Self {
            self.opts.max_event_size = Some(bytes);
            self
        }

        /// Sets how failed requests are retried.
        pub fn retry(mut self, retry: $crate::providers::RetryConfig) -> Self {
            self.opts.retry = Some(retry);
            self
        }

        /// Calls `observer` before each retry of a failed request (an HTTP 408, 409, 429 or 5xx
        /// answer, a connection failure, no answer within the idle timeout): which retry, after
        /// what, and the wait before it. Within an agent run, retries are also the run's
        /// [`AgentEvent::ProviderRetry`](crate::agent::AgentEvent::ProviderRetry) events.
        ///
        /// The observer is called on the task making the request, before the wait: keep it short.
        pub fn on_retry(mut self, observer: impl Fn(&$crate::model::ProviderRetry) + Send + Sync + 'static) -> Self {
            self.opts.on_retry = Some(std::sync::Arc::new(observer));
            self
        }

        /// Uses this HTTP client (proxies, custom TLS...).
        pub fn http_client(mut self, client: reqwest::Client) -> Self {
            self.opts.client = Some(client);
            self
        }

        /// Adds a header to every request. Its value is treated as a secret (kept out of error
        /// messages and logs) when the header is named like a credential (`...key`, `...token`,
        /// `authorization`...) or the value has eight characters or more.
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.opts.headers.push((name.into(), value.into()));
            self
        }
    };
}
pub(crate) use connection_builder_methods;

/// The default request timeout.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
