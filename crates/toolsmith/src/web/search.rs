//! Web search: the [`SearchBackend`] trait and [`DuckDuckGo`], a backend that needs no API key.
//!
//! Any engine can be a backend: implement [`SearchBackend`] (two methods) and hand it over as a
//! `Box<dyn SearchBackend>` or `Arc<dyn SearchBackend>`.
//!
//! ```
//! use futures::future::BoxFuture;
//! use toolsmith::web::{SearchBackend, SearchError, SearchResult};
//!
//! /// Answers from a fixed list: for tests, or a site's own index.
//! struct InMemory(Vec<SearchResult>);
//!
//! impl SearchBackend for InMemory {
//!     fn name(&self) -> &str {
//!         "in-memory"
//!     }
//!
//!     fn search<'a>(
//!         &'a self,
//!         query: &'a str,
//!         max_results: usize,
//!     ) -> BoxFuture<'a, Result<Vec<SearchResult>, SearchError>> {
//!         Box::pin(async move {
//!             if query.trim().is_empty() {
//!                 return Err(SearchError::InvalidQuery { reason: "the query is empty".into() });
//!             }
//!             let query = query.to_lowercase();
//!             Ok(self
//!                 .0
//!                 .iter()
//!                 .filter(|r| r.title.to_lowercase().contains(&query) || r.snippet.to_lowercase().contains(&query))
//!                 .take(max_results)
//!                 .cloned()
//!                 .collect())
//!         })
//!     }
//! }
//!
//! let backend: Box<dyn SearchBackend> = Box::new(InMemory(vec![
//!     SearchResult::new("Rust", "https://www.rust-lang.org/", "A language empowering everyone."),
//!     SearchResult::new("Tokio", "https://tokio.rs/", "An asynchronous runtime for Rust."),
//! ]));
//! let results = futures::executor::block_on(backend.search("rust", 1))?;
//! assert_eq!(results.len(), 1);
//! assert_eq!(results[0].url, "https://www.rust-lang.org/");
//! assert!(futures::executor::block_on(backend.search(" ", 5)).is_err());
//! # Ok::<(), SearchError>(())
//! ```

use std::fmt;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::{Deserialize, Serialize};
use url::Url;

use super::fetch::{ReadError, client_builder, error_chain, read_capped, shown_str};
use super::html;
use crate::error::UserError;

/// DuckDuckGo's HTML results page, the default [`DuckDuckGoBuilder::base_url`].
pub const DUCKDUCKGO_HTML_URL: &str = "https://html.duckduckgo.com/html/";

/// The longest query sent, in characters (DuckDuckGo refuses longer ones).
const MAX_QUERY_CHARS: usize = 500;

/// The longest a whole search may take when no builder says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest results page read when no builder says otherwise.
const DEFAULT_MAX_BYTES: usize = 2 * 1024 * 1024;
/// The longest timeout handed to timers (about 30 years: `Duration::MAX` would overflow them).
const LONGEST_TIMER: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

/// A web search engine.
///
/// Object safe: a caller holds a `Box<dyn SearchBackend>` or `Arc<dyn SearchBackend>` and never
/// knows which engine is behind it. See the [module documentation](self) for an implementation.
pub trait SearchBackend: Send + Sync {
    /// The engine's name, for messages and logs (`duckduckgo`, `brave`, ...).
    fn name(&self) -> &str;

    /// Searches the web for `query` and returns at most `max_results` results, best first.
    fn search<'a>(
        &'a self,
        query: &'a str,
        max_results: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, SearchError>>;
}

impl<T: SearchBackend + ?Sized> SearchBackend for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn search<'a>(
        &'a self,
        query: &'a str,
        max_results: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, SearchError>> {
        (**self).search(query, max_results)
    }
}

impl<T: SearchBackend + ?Sized> SearchBackend for Box<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn search<'a>(
        &'a self,
        query: &'a str,
        max_results: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, SearchError>> {
        (**self).search(query, max_results)
    }
}

/// One search result.
///
/// Serialised as `{"title", "url", "snippet"}`; read back also from Pydantic AI's DuckDuckGo
/// result shape (`{"title", "href", "body"}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchResult {
    /// The page's title.
    pub title: String,
    /// The page's URL.
    #[serde(alias = "href")]
    pub url: String,
    /// An extract of the page that matches the query (may be empty).
    #[serde(default, alias = "body")]
    pub snippet: String,
}

impl SearchResult {
    /// A result.
    pub fn new(title: impl Into<String>, url: impl Into<String>, snippet: impl Into<String>) -> Self {
        SearchResult { title: title.into(), url: url.into(), snippet: snippet.into() }
    }
}

/// Why a search failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The query cannot be searched (empty, too long, ...).
    #[error("invalid search query: {reason}")]
    InvalidQuery {
        /// What is wrong with it.
        reason: String,
    },
    /// The engine could not be reached, or the exchange failed.
    #[error("the {backend} search failed: {message}")]
    Http {
        /// The backend's [`name`](SearchBackend::name).
        backend: String,
        /// What failed, with its causes.
        message: String,
    },
    /// The engine answered with an error status.
    #[error("the {backend} search answered HTTP {status}; try again later or use another SearchBackend")]
    Status {
        /// The backend's [`name`](SearchBackend::name).
        backend: String,
        /// The HTTP status code.
        status: u16,
    },
    /// The engine refused to answer an automated search (rate limit, bot check).
    #[error("the {backend} search was refused: {message}")]
    Blocked {
        /// The backend's [`name`](SearchBackend::name).
        backend: String,
        /// What the engine did, and what to do.
        message: String,
    },
    /// The search took longer than the backend's timeout.
    #[error(
        "the {backend} search took longer than {after:?}; raise the backend's timeout (DuckDuckGo::builder().timeout(...) for DuckDuckGo)"
    )]
    Timeout {
        /// The backend's [`name`](SearchBackend::name).
        backend: String,
        /// The timeout.
        after: Duration,
    },
    /// The engine's answer is larger than the backend reads.
    #[error(
        "the {backend} answer is larger than {max_bytes} bytes; raise the backend's limit (DuckDuckGo::builder().max_bytes(...) for DuckDuckGo)"
    )]
    TooLarge {
        /// The backend's [`name`](SearchBackend::name).
        backend: String,
        /// The limit.
        max_bytes: usize,
    },
    /// The engine's answer could not be read.
    #[error("could not read the {backend} answer: {message}")]
    Parse {
        /// The backend's [`name`](SearchBackend::name).
        backend: String,
        /// What is wrong with it.
        message: String,
    },
    /// Any other failure of a backend.
    #[error("the {backend} search failed: {message}")]
    Backend {
        /// The backend's [`name`](SearchBackend::name).
        backend: String,
        /// What failed.
        message: String,
    },
}

impl SearchError {
    /// A [`SearchError::Backend`], for a backend's own failures.
    pub fn backend(backend: impl Into<String>, message: impl Into<String>) -> Self {
        SearchError::Backend { backend: backend.into(), message: message.into() }
    }
}

/// Web search through DuckDuckGo, without an API key.
///
/// Posts the query to DuckDuckGo's HTML results page (`https://html.duckduckgo.com/html/`) and
/// reads the results from it: titles, snippets, and the destination URLs (unwrapped from
/// DuckDuckGo's `//duckduckgo.com/l/?uddg=...` redirect links); ads are skipped. One page is
/// read, so at most about ten results come back whatever `max_results` asks. DuckDuckGo limits
/// automated searches: too many in a row are answered with a bot check, reported as
/// [`SearchError::Blocked`]. Redirects are not followed (a `!bang` query is answered with one),
/// and proxy settings from the environment are ignored.
///
/// Cheap to clone: clones share one connection pool.
///
/// ```
/// use std::time::{Duration, Instant};
/// use toolsmith::web::{DuckDuckGo, SearchBackend};
///
/// let ddg = DuckDuckGo::builder().timeout(Duration::from_secs(10)).region("uk-en").build()?;
/// assert_eq!(ddg.name(), "duckduckgo");
/// # Ok::<(), toolsmith::UserError>(())
/// ```
#[derive(Clone)]
pub struct DuckDuckGo {
    inner: Arc<DdgInner>,
}

struct DdgInner {
    /// The client, or why it could not be built (by [`DuckDuckGo::new`], which cannot fail:
    /// each search reports it).
    client: Result<reqwest::Client, String>,
    base_url: Url,
    timeout: Duration,
    max_bytes: usize,
    region: Option<String>,
}

impl fmt::Debug for DuckDuckGo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DuckDuckGo")
            .field("base_url", &self.inner.base_url.as_str())
            .field("timeout", &self.inner.timeout)
            .field("max_bytes", &self.inner.max_bytes)
            .field("region", &self.inner.region)
            .finish()
    }
}

/// Builds a [`DuckDuckGo`] backend; every setting has a default.
#[derive(Debug, Clone)]
#[must_use]
pub struct DuckDuckGoBuilder {
    base_url: String,
    timeout: Duration,
    max_bytes: usize,
    user_agent: String,
    region: Option<String>,
}

impl Default for DuckDuckGoBuilder {
    fn default() -> Self {
        DuckDuckGoBuilder {
            base_url: DUCKDUCKGO_HTML_URL.to_string(),
            timeout: DEFAULT_TIMEOUT,
            max_bytes: DEFAULT_MAX_BYTES,
            user_agent: concat!("Mozilla/5.0 (compatible; toolsmith/", env!("CARGO_PKG_VERSION"), ")").to_string(),
            region: None,
        }
    }
}

impl DuckDuckGoBuilder {
    /// The results page the query is posted to. Default [`DUCKDUCKGO_HTML_URL`]; tests point it
    /// at a local server.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// The longest a whole search may take. Default 30 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest results page read, in bytes. Default 2 MB.
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The `User-Agent` header sent.
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// DuckDuckGo's region code (its `kl` parameter: `us-en`, `uk-en`, `de-de`, `wt-wt` for no
    /// region, ...). Default: none sent, DuckDuckGo decides.
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// Builds the backend.
    ///
    /// # Errors
    ///
    /// A [`UserError`] when the base URL is not an http(s) URL, the timeout or `max_bytes` is
    /// zero, the user agent is not a valid header value, or the HTTP client cannot be built.
    pub fn build(self) -> Result<DuckDuckGo, UserError> {
        let base_url = Url::parse(self.base_url.trim())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| {
                UserError::new(format!(
                    "DuckDuckGo::builder().base_url(...) got `{}`, which is not an http:// or https:// URL",
                    shown_str(&self.base_url)
                ))
            })?;
        if self.timeout.is_zero() {
            return Err(UserError::new("DuckDuckGo::builder().timeout(...) must be longer than zero"));
        }
        if self.max_bytes == 0 {
            return Err(UserError::new("DuckDuckGo::builder().max_bytes(...) must be more than zero"));
        }
        let client = client_builder(&self.user_agent, "DuckDuckGo")?
            .build()
            .map_err(|e| UserError::new(format!("could not build the HTTP client: {}", error_chain(&e))))?;
        Ok(self.with_client(base_url, Ok(client)))
    }

    fn with_client(self, base_url: Url, client: Result<reqwest::Client, String>) -> DuckDuckGo {
        DuckDuckGo {
            inner: Arc::new(DdgInner {
                client,
                base_url,
                timeout: self.timeout,
                max_bytes: self.max_bytes,
                region: self.region.filter(|r| !r.trim().is_empty()),
            }),
        }
    }
}

impl Default for DuckDuckGo {
    fn default() -> Self {
        Self::new()
    }
}

impl DuckDuckGo {
    /// The backend's name.
    pub const NAME: &'static str = "duckduckgo";

    /// A builder with the default settings.
    pub fn builder() -> DuckDuckGoBuilder {
        DuckDuckGoBuilder::default()
    }

    /// The backend with the default settings. Cannot fail: if the HTTP client cannot be built
    /// (no TLS support on the platform), each search says so with a [`SearchError::Http`].
    pub fn new() -> Self {
        let builder = Self::builder();
        let client = client_builder(&builder.user_agent, "DuckDuckGo")
            .map_err(|e| e.message)
            .and_then(|b| b.build().map_err(|e| error_chain(&e)));
        let base_url = Url::parse(DUCKDUCKGO_HTML_URL).unwrap_or_else(|_| unreachable!("the URL is valid"));
        builder.with_client(base_url, client)
    }

    /// The backend with the default settings, posting to another results page (a local server
    /// in tests).
    ///
    /// # Errors
    ///
    /// A [`UserError`] when `url` is not an http(s) URL or the HTTP client cannot be built.
    pub fn with_base_url(url: impl Into<String>) -> Result<Self, UserError> {
        Self::builder().base_url(url).build()
    }

    async fn run(&self, query: &str, max_results: usize) -> Result<Vec<SearchResult>, SearchError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(SearchError::InvalidQuery { reason: "the query is empty".into() });
        }
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(SearchError::InvalidQuery {
                reason: format!(
                    "the query is {chars} characters long, more than the {MAX_QUERY_CHARS} DuckDuckGo takes"
                ),
            });
        }
        if max_results == 0 {
            return Ok(Vec::new());
        }
        let inner = &*self.inner;
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("q", query).append_pair("b", "");
            if let Some(region) = &inner.region {
                form.append_pair("kl", region);
            }
            form.finish()
        };
        let client = inner.client.as_ref().map_err(|message| SearchError::Http {
            backend: Self::NAME.into(),
            message: format!("could not build the HTTP client: {message}"),
        })?;
        let http = |e: reqwest::Error| SearchError::Http {
            backend: Self::NAME.into(),
            message: error_chain(&e.without_url()),
        };
        let exchange = async {
            let response = client
                .post(inner.base_url.clone())
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(ACCEPT, "text/html")
                .body(body)
                .send()
                .await
                .map_err(http)?;
            let status = response.status().as_u16();
            if matches!(status, 202 | 429) {
                return Err(blocked());
            }
            if !(200..300).contains(&status) {
                return Err(SearchError::Status { backend: Self::NAME.into(), status });
            }
            read_capped(response, inner.max_bytes).await.map_err(|e| match e {
                ReadError::TooLarge { .. } => {
                    SearchError::TooLarge { backend: Self::NAME.into(), max_bytes: inner.max_bytes }
                }
                ReadError::Http(e) => http(e),
            })
        };
        let after = inner.timeout.min(LONGEST_TIMER);
        let deadline = Instant::now().checked_add(after).unwrap_or_else(|| Instant::now() + LONGEST_TIMER / 2);
        let timeout = || SearchError::Timeout { backend: Self::NAME.into(), after: inner.timeout };
        let search = async {
            let page = exchange.await?;
            let page = String::from_utf8_lossy(&page).into_owned();
            // Parsed off the async threads, with the search's deadline.
            tokio::task::spawn_blocking(move || parse_results(&page, max_results, html::parse_deadline(deadline)))
                .await
                .unwrap_or_else(|e| Err(SearchError::Parse { backend: Self::NAME.into(), message: e.to_string() }))
        };
        match tokio::time::timeout(after, search).await {
            Ok(Err(SearchError::Timeout { .. })) | Err(_) => Err(timeout()),
            Ok(result) => result,
        }
    }
}

impl SearchBackend for DuckDuckGo {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn search<'a>(
        &'a self,
        query: &'a str,
        max_results: usize,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, SearchError>> {
        Box::pin(self.run(query, max_results))
    }
}

fn blocked() -> SearchError {
    SearchError::Blocked {
        backend: DuckDuckGo::NAME.into(),
        message: "DuckDuckGo answered with a bot check, as it does after many automated searches in a row; wait \
                  before searching again, or use another SearchBackend"
            .into(),
    }
}

/// Reads the results of a DuckDuckGo HTML results page: each `div.result` that is not an ad
/// (`result--ad`), its title and link from `a.result__a`, its snippet from `.result__snippet`.
fn parse_results(page: &str, max_results: usize, deadline: Instant) -> Result<Vec<SearchResult>, SearchError> {
    let Some(document) = html::parse(page, deadline) else {
        return Err(SearchError::Timeout { backend: DuckDuckGo::NAME.into(), after: Duration::ZERO });
    };
    let mut results: Vec<SearchResult> = Vec::new();
    let mut bot_check = false;
    for node in html::descendants(&document) {
        if results.len() >= max_results {
            break;
        }
        let Some(tag) = html::tag(&node) else { continue };
        bot_check |= html::has_class(&node, "anomaly-modal__modal")
            || html::attr(&node, "id").as_deref() == Some("challenge-form");
        if tag != "div" || !(html::has_class(&node, "result") || html::has_class(&node, "web-result")) {
            continue;
        }
        if html::has_class(&node, "result--ad") || html::has_class(&node, "result--ad--small") {
            continue;
        }
        let mut anchor = None;
        let mut snippet = None;
        for inner in html::descendants(&node).skip(1) {
            if anchor.is_none() && html::tag(&inner) == Some("a") && html::has_class(&inner, "result__a") {
                anchor = Some(inner);
            } else if snippet.is_none() && html::has_class(&inner, "result__snippet") {
                snippet = Some(html::text(&inner));
            }
        }
        let Some(anchor) = anchor else { continue };
        let Some(url) = html::attr(&anchor, "href").as_deref().and_then(destination) else { continue };
        let title = html::text(&anchor);
        if title.is_empty() || results.iter().any(|r| r.url == url) {
            continue;
        }
        results.push(SearchResult { title, url, snippet: snippet.unwrap_or_default() });
    }
    if results.is_empty() && bot_check {
        return Err(blocked());
    }
    Ok(results)
}

/// The destination of a result link: the `uddg` parameter of a DuckDuckGo redirect link
/// (`//duckduckgo.com/l/?uddg=https%3A%2F%2F...`), or the link itself when it goes elsewhere;
/// `None` for DuckDuckGo's own links (ads go through `duckduckgo.com/y.js`) and anything not
/// http(s).
fn destination(href: &str) -> Option<String> {
    static BASE: LazyLock<Option<Url>> = LazyLock::new(|| Url::parse("https://html.duckduckgo.com/html/").ok());
    let link = BASE.as_ref()?.join(href.trim()).ok()?;
    let http = |u: &Url| matches!(u.scheme(), "http" | "https") && u.host().is_some();
    if let Some((_, target)) = link.query_pairs().find(|(k, _)| k == "uddg") {
        let target = target.trim().to_string();
        return Url::parse(&target).ok().filter(http).map(|_| target);
    }
    let own = link.host_str().is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"));
    (http(&link) && !own).then(|| link.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations() {
        assert_eq!(
            destination("//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2Flearn%3Fa%3D1%26b%3D2&rut=abc")
                .as_deref(),
            Some("https://www.rust-lang.org/learn?a=1&b=2")
        );
        assert_eq!(destination("https://docs.rs/tokio").as_deref(), Some("https://docs.rs/tokio"));
        assert_eq!(destination("https://duckduckgo.com/y.js?ad_domain=x.com&u3=abc"), None);
        assert_eq!(destination("//duckduckgo.com/l/?uddg=javascript%3Aalert(1)"), None);
        assert_eq!(destination("javascript:alert(1)"), None);
        assert_eq!(destination("/html/?q=next"), None);
        assert_eq!(destination(""), None);
    }

    #[test]
    fn bot_checks_are_blocked_errors() {
        let page =
            r#"<html><body><div class="anomaly-modal__modal"><form id="challenge-form"></form></div></body></html>"#;
        let soon = Instant::now() + Duration::from_secs(30);
        assert!(matches!(parse_results(page, 5, soon), Err(SearchError::Blocked { .. })));
        assert_eq!(parse_results("<html><div class=\"no-results\">No results.</div></html>", 5, soon), Ok(vec![]));
        assert_eq!(parse_results("", 5, soon), Ok(vec![]));
        assert!(matches!(parse_results("<div class=result>", 5, Instant::now()), Err(SearchError::Timeout { .. })));
    }

    #[test]
    fn results_read_pydantic_ai_shapes() {
        let r: SearchResult = serde_json::from_str(r#"{"title": "T", "href": "https://a.b/", "body": "s"}"#).unwrap();
        assert_eq!(r, SearchResult::new("T", "https://a.b/", "s"));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"title": "T", "url": "https://a.b/", "snippet": "s"})
        );
    }
}
