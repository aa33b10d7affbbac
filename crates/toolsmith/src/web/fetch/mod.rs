//! [`WebFetcher`]: fetches one URL for a model, guarded against server-side request forgery,
//! and returns the page as Markdown, text or bytes.
//!
//! What it guards:
//!
//! - **Addresses.** Only public addresses are connected to. A host name is resolved by the
//!   fetcher's own resolver, which drops every non-public address it gets (and fails when none
//!   is left), so the connection goes to an address that was checked: a DNS answer cannot change
//!   between the check and the connection. IP-literal hosts (`http://127.0.0.1/`,
//!   `http://[::1]/`, and the decimal, hex and octal IPv4 forms such as `http://2130706433/` or
//!   `http://0x7f000001/`, which URL parsing normalises to dotted form) are checked directly. As a
//!   last guard, the address a response came from is checked again before its body is read.
//! - **Redirects.** Followed by the fetcher itself (301, 302, 303, 307, 308; relative
//!   `Location`s resolved against the current URL), up to
//!   [`max_redirects`](WebFetcherBuilder::max_redirects), each target going through every check
//!   the first URL went through (scheme, domain lists, address).
//! - **Schemes.** `http` and `https` only (no `file:`, `ftp:`, `data:`, ...).
//! - **Size and time.** The body is read as a stream and refused past
//!   [`max_bytes`](WebFetcherBuilder::max_bytes) (a larger `Content-Length` is refused before any
//!   of the body is read); the whole fetch, redirects and body included, has one
//!   [`timeout`](WebFetcherBuilder::timeout), so a server that drips bytes cannot hold it.
//! - **Proxies.** Proxy settings from the environment are ignored: a proxy would connect on the
//!   fetcher's behalf to addresses it never checked.
//!
//! Non-public means: loopback, private (RFC 1918), shared address space (100.64.0.0/10),
//! link-local (169.254.0.0/16, where cloud metadata services such as `169.254.169.254` answer;
//! `fe80::/10`), unique-local IPv6 (`fc00::/7`), site-local IPv6, unspecified, "this network"
//! (0.0.0.0/8), broadcast, multicast, documentation, benchmarking and reserved ranges, IETF
//! protocol assignments, and IPv6 forms that embed any of those (IPv4-mapped `::ffff:a.b.c.d`,
//! IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`). See
//! [`is_public_address`].

use std::error::Error as StdError;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue, LOCATION};
use url::{Host, Url};

use super::html;
use crate::error::UserError;

/// The default [`timeout`](WebFetcherBuilder::timeout) of a whole fetch: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default [`max_bytes`](WebFetcherBuilder::max_bytes) of a body: 5 MB.
pub const DEFAULT_MAX_BYTES: usize = 5 * 1024 * 1024;
/// The default [`max_redirects`](WebFetcherBuilder::max_redirects): 10.
pub const DEFAULT_MAX_REDIRECTS: usize = 10;
/// The default [`user_agent`](WebFetcherBuilder::user_agent).
pub const DEFAULT_USER_AGENT: &str = concat!("toolsmith/", env!("CARGO_PKG_VERSION"), " (web fetch)");

/// The longest URL accepted, in bytes.
const MAX_URL_LEN: usize = 32 * 1024;
/// The most characters of a URL kept in an error.
const SHOWN_URL_CHARS: usize = 2_000;
/// The longest timeout handed to timers (about 30 years: `Duration::MAX` would overflow them).
const LONGEST_TIMER: Duration = Duration::from_secs(30 * 365 * 24 * 3600);
/// Why a fetch failed, or was refused.
///
/// URLs in errors have their password removed and are cut to 2,000 characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL cannot be parsed, has no host, or is too long.
    #[error("cannot fetch `{url}`: {reason}; give an absolute http:// or https:// URL")]
    InvalidUrl {
        /// The URL (or `Location` header) as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The URL's scheme is not `http` or `https`.
    #[error(
        "refused to fetch `{url}`: the `{scheme}` scheme is not allowed; WebFetcher only fetches http:// and https:// URLs"
    )]
    UnsupportedScheme {
        /// The URL.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// The URL's host is, or resolves only to, a non-public address.
    #[error(
        "refused to fetch `{url}`: {address} is {reason}, and WebFetcher only connects to public addresses (a guard \
         against server-side request forgery); to reach it on purpose, such as a local test server, use \
         WebFetcher::builder().allow_address(\"ip:port\".parse()?) or WebFetcher::builder().allow_private_addresses(true)"
    )]
    Forbidden {
        /// The URL.
        url: String,
        /// The refused address (the first one, when a host name resolved to several).
        address: IpAddr,
        /// What kind of address it is (`a loopback address`, `a private address (RFC 1918)`, ...).
        reason: String,
    },
    /// The URL's domain is not in the allowed domains, or is in the blocked domains.
    #[error("refused to fetch `{url}`: {}", domain_refusal(.domain, .blocked_by.as_deref()))]
    DomainNotAllowed {
        /// The URL.
        url: String,
        /// The URL's host (a domain name or an IP address).
        domain: String,
        /// The [`blocked_domains`](WebFetcherBuilder::blocked_domains) entry that matched, or
        /// `None` when the domain is not in the [`allowed_domains`](WebFetcherBuilder::allowed_domains).
        blocked_by: Option<String>,
    },
    /// The fetch was redirected more times than allowed.
    #[error(
        "fetching `{url}` was redirected more than {max} times; raise the limit with \
         WebFetcher::builder().max_redirects(...)"
    )]
    TooManyRedirects {
        /// The URL that was asked for.
        url: String,
        /// The limit ([`max_redirects`](WebFetcherBuilder::max_redirects)).
        max: usize,
    },
    /// The body is larger than allowed; it was not read past the limit.
    #[error(
        "the response from `{url}` is larger than {max_bytes} bytes{}; raise the limit with \
         WebFetcher::builder().max_bytes(...)",
        content_length.map(|n| format!(" (Content-Length: {n})")).unwrap_or_default()
    )]
    TooLarge {
        /// The URL that answered.
        url: String,
        /// The limit ([`max_bytes`](WebFetcherBuilder::max_bytes)).
        max_bytes: usize,
        /// The length the server announced, when it did.
        content_length: Option<u64>,
    },
    /// The fetch (redirects and body included) took longer than the timeout.
    #[error("fetching `{url}` took longer than {after:?}; raise the limit with WebFetcher::builder().timeout(...)")]
    Timeout {
        /// The URL that was asked for.
        url: String,
        /// The timeout ([`timeout`](WebFetcherBuilder::timeout)).
        after: Duration,
    },
    /// The server answered with an error status (or a redirect without a `Location`).
    #[error("`{url}` answered HTTP {status}{}", status_phrase(*.status))]
    Status {
        /// The URL that answered.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// The connection or the HTTP exchange failed (DNS, TLS, connection refused, malformed
    /// response, ...).
    #[error("could not fetch `{url}`: {message}")]
    Http {
        /// The URL.
        url: String,
        /// What failed, with its causes.
        message: String,
    },
}

fn domain_refusal(domain: &str, blocked_by: Option<&str>) -> String {
    match blocked_by {
        Some(entry) => {
            format!("the domain `{domain}` is blocked by `{entry}` in WebFetcher::builder().blocked_domains(...)")
        }
        None => format!(
            "the domain `{domain}` is not in WebFetcher::builder().allowed_domains(...); add it there to fetch it"
        ),
    }
}

fn status_phrase(status: u16) -> String {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default()
}

/// A fetched page.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FetchedPage {
    /// The final URL, after redirects.
    pub url: String,
    /// The HTTP status of the final response (a 2xx).
    pub status: u16,
    /// The media type, lowercase and without parameters (`text/html`, `application/pdf`, ...):
    /// the server's `Content-Type`, or the type sniffed from the body when the server sent none
    /// or `application/octet-stream`.
    pub content_type: String,
    /// The content.
    pub content: FetchedContent,
}

/// What a fetched page holds.
///
/// Text is decoded from the charset of the `Content-Type` header, else from a byte order mark,
/// else (HTML only) from a `<meta charset>` in the first 1,024 bytes, else as UTF-8; bytes that
/// are not valid in that encoding become U+FFFD.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchedContent {
    /// An HTML page (`text/html`, `application/xhtml+xml`) converted to Markdown: scripts,
    /// styles, forms, embedded objects and the `<head>` are dropped, and links and images point
    /// to absolute URLs. A page nested deeper than 256 elements, or too intricate to parse
    /// before the fetch's deadline, is returned as its plain text (a line per block).
    Markdown(String),
    /// Text (`text/*` other than HTML, JSON, XML, YAML, JavaScript, ...), as the server sent it.
    Text(String),
    /// Anything else (PDF, images, office documents, archives, ...), as bytes.
    Binary {
        /// The body.
        data: Vec<u8>,
        /// Its media type (the same as [`FetchedPage::content_type`]).
        media_type: String,
    },
}

impl FetchedContent {
    /// The text of Markdown or text content; `None` for binary content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            FetchedContent::Markdown(s) | FetchedContent::Text(s) => Some(s),
            FetchedContent::Binary { .. } => None,
        }
    }
}

/// Fetches URLs for a model: redirects, size and time limits, and protection against
/// server-side request forgery (see the [module documentation](self)).
///
/// Cheap to clone: clones share one connection pool.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::web::{FetchError, WebFetcher};
///
/// let fetcher = WebFetcher::builder()
///     .timeout(Duration::from_secs(10))
///     .max_bytes(1024 * 1024)
///     .blocked_domains(["internal.example.com"])
///     .build()?;
/// // Checked without touching the network: the scheme, the domain lists and IP literals.
/// assert!(matches!(fetcher.check_url("file:///etc/passwd"), Err(FetchError::UnsupportedScheme { .. })));
/// assert!(matches!(fetcher.check_url("https://api.internal.example.com/"), Err(FetchError::DomainNotAllowed { .. })));
/// assert!(matches!(fetcher.check_url("http://[::1]:8080/"), Err(FetchError::Forbidden { .. })));
/// assert_eq!(fetcher.check_url("https://example.com/a#b")?, "https://example.com/a");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct WebFetcher {
    inner: Arc<Inner>,
}

struct Inner {
    /// The client for each port that has allowed addresses (see [`GuardedResolver::port`]),
    /// then the one for every other port (`None`); or why they could not be built (by
    /// [`WebFetcher::new`], which cannot fail: each fetch reports it).
    clients: Result<Vec<(Option<u16>, reqwest::Client)>, String>,
    policy: Arc<AddressPolicy>,
    timeout: Duration,
    max_bytes: usize,
    max_redirects: usize,
    allowed_domains: Vec<DomainRule>,
    blocked_domains: Vec<DomainRule>,
    user_agent: String,
}

impl fmt::Debug for WebFetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        f.debug_struct("WebFetcher")
            .field("timeout", &i.timeout)
            .field("max_bytes", &i.max_bytes)
            .field("max_redirects", &i.max_redirects)
            .field("allowed_domains", &i.allowed_domains)
            .field("blocked_domains", &i.blocked_domains)
            .field("user_agent", &i.user_agent)
            .field("allow_private_addresses", &i.policy.allow_private)
            .field("allowed_addresses", &i.policy.allowed)
            .finish()
    }
}

/// Builds a [`WebFetcher`]; every setting has a default.
#[derive(Debug, Clone)]
#[must_use]
pub struct WebFetcherBuilder {
    timeout: Duration,
    max_bytes: usize,
    max_redirects: usize,
    allowed_domains: Vec<String>,
    blocked_domains: Vec<String>,
    user_agent: String,
    allow_private: bool,
    allowed_addresses: Vec<SocketAddr>,
}

impl Default for WebFetcherBuilder {
    fn default() -> Self {
        WebFetcherBuilder {
            timeout: DEFAULT_TIMEOUT,
            max_bytes: DEFAULT_MAX_BYTES,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            allowed_domains: Vec::new(),
            blocked_domains: Vec::new(),
            user_agent: DEFAULT_USER_AGENT.to_string(),
            allow_private: false,
            allowed_addresses: Vec::new(),
        }
    }
}

impl WebFetcherBuilder {
    /// The longest a whole fetch may take: connection, redirects and body. Default 30 s.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The largest body read, in bytes; a larger one is refused with [`FetchError::TooLarge`].
    /// Default 5 MB.
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The most redirects followed (0: none). Default 10.
    pub fn max_redirects(mut self, max_redirects: usize) -> Self {
        self.max_redirects = max_redirects;
        self
    }

    /// Only these domains may be fetched (the first URL and every redirect target): a domain
    /// matches itself and its subdomains (`example.com` matches `docs.example.com`, not
    /// `badexample.com`). An entry may also be an IP address, which matches only itself. Adds to
    /// the entries given before; with none (the default), every domain is allowed.
    pub fn allowed_domains<I, S>(mut self, domains: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_domains.extend(domains.into_iter().map(Into::into));
        self
    }

    /// These domains (and their subdomains) are never fetched, whatever
    /// [`allowed_domains`](Self::allowed_domains) says. Adds to the entries given before.
    pub fn blocked_domains<I, S>(mut self, domains: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.blocked_domains.extend(domains.into_iter().map(Into::into));
        self
    }

    /// The `User-Agent` header sent. Default [`DEFAULT_USER_AGENT`].
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Allows every address, non-public ones included: turns the protection against
    /// server-side request forgery off. For tests and trusted setups only; prefer
    /// [`allow_address`](Self::allow_address). Default `false`.
    pub fn allow_private_addresses(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }

    /// Allows exactly this address and port, even when it is not public: a test can reach its
    /// own server on `127.0.0.1:PORT` (by IP or by a host name that resolves to it) while
    /// `127.0.0.1` on any other port, and every other non-public address, stay refused. Adds to
    /// the addresses given before.
    pub fn allow_address(mut self, address: SocketAddr) -> Self {
        self.allowed_addresses.push(address);
        self
    }

    /// Builds the fetcher.
    ///
    /// # Errors
    ///
    /// A [`UserError`] when the timeout or `max_bytes` is zero, a domain entry is not a domain
    /// name or an IP address, the user agent is not a valid header value, or the HTTP client
    /// cannot be built.
    pub fn build(self) -> Result<WebFetcher, UserError> {
        if self.timeout.is_zero() {
            return Err(UserError::new("WebFetcher::builder().timeout(...) must be longer than zero"));
        }
        if self.max_bytes == 0 {
            return Err(UserError::new("WebFetcher::builder().max_bytes(...) must be more than zero"));
        }
        let allowed_domains = parse_rules(&self.allowed_domains, "allowed_domains")?;
        let blocked_domains = parse_rules(&self.blocked_domains, "blocked_domains")?;
        let policy =
            Arc::new(AddressPolicy { allow_private: self.allow_private, allowed: self.allowed_addresses.clone() });
        let clients = make_clients(&self.user_agent, &policy)?;
        Ok(self.assemble(policy, Ok(clients), allowed_domains, blocked_domains))
    }

    fn assemble(
        self,
        policy: Arc<AddressPolicy>,
        clients: Result<Vec<(Option<u16>, reqwest::Client)>, String>,
        allowed_domains: Vec<DomainRule>,
        blocked_domains: Vec<DomainRule>,
    ) -> WebFetcher {
        WebFetcher {
            inner: Arc::new(Inner {
                clients,
                policy,
                timeout: self.timeout,
                max_bytes: self.max_bytes,
                max_redirects: self.max_redirects,
                allowed_domains,
                blocked_domains,
                user_agent: self.user_agent,
            }),
        }
    }
}

/// The clients of a fetcher: one for each port that has allowed addresses (its resolver lets
/// those addresses through), then one for every other port.
fn make_clients(
    user_agent: &str,
    policy: &Arc<AddressPolicy>,
) -> Result<Vec<(Option<u16>, reqwest::Client)>, UserError> {
    let mut ports: Vec<u16> = if policy.allow_private { Vec::new() } else { policy.allowed_ports() };
    ports.dedup();
    let mut clients = Vec::with_capacity(ports.len() + 1);
    for port in ports.into_iter().map(Some).chain([None]) {
        let resolver = GuardedResolver { policy: Arc::clone(policy), port };
        let client = client_builder(user_agent, "WebFetcher")?
            .dns_resolver(resolver)
            .build()
            .map_err(|e| UserError::new(format!("could not build the HTTP client: {}", error_chain(&e))))?;
        clients.push((port, client));
    }
    Ok(clients)
}

impl Default for WebFetcher {
    fn default() -> Self {
        Self::new()
    }
}

impl WebFetcher {
    /// A builder with the default settings.
    pub fn builder() -> WebFetcherBuilder {
        WebFetcherBuilder::default()
    }

    /// A fetcher with the default settings. Cannot fail: if the HTTP client cannot be built (no
    /// TLS support on the platform), each fetch says so with a [`FetchError::Http`].
    pub fn new() -> Self {
        let builder = Self::builder();
        let policy = Arc::new(AddressPolicy { allow_private: false, allowed: Vec::new() });
        let clients = make_clients(&builder.user_agent, &policy).map_err(|e| e.message);
        builder.assemble(policy, clients, Vec::new(), Vec::new())
    }

    /// The timeout of a whole fetch.
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// The largest body read, in bytes.
    pub fn max_bytes(&self) -> usize {
        self.inner.max_bytes
    }

    /// The most redirects followed.
    pub fn max_redirects(&self) -> usize {
        self.inner.max_redirects
    }

    /// Checks a URL without touching the network, as [`fetch`](Self::fetch) checks it before
    /// connecting: parses it, checks its scheme and the domain lists, and checks the address of
    /// an IP-literal host. Returns the URL as it would be requested (normalised, without its
    /// fragment). A host name passing here may still be refused once resolved.
    ///
    /// # Errors
    ///
    /// [`FetchError::InvalidUrl`], [`FetchError::UnsupportedScheme`],
    /// [`FetchError::DomainNotAllowed`] or [`FetchError::Forbidden`].
    pub fn check_url(&self, url: &str) -> Result<String, FetchError> {
        self.parse_and_check(url).map(String::from)
    }

    /// Fetches a URL, following redirects, and returns the page as Markdown (HTML), text, or
    /// bytes (see [`FetchedContent`]). Must run inside a Tokio runtime.
    ///
    /// # Errors
    ///
    /// A [`FetchError`]: a refusal (scheme, domain, address), a limit (redirects, size, time),
    /// an error status (4xx, 5xx), or a transport failure.
    pub async fn fetch(&self, url: &str) -> Result<FetchedPage, FetchError> {
        let after = self.inner.timeout.min(LONGEST_TIMER);
        let deadline = Instant::now().checked_add(after).unwrap_or_else(|| Instant::now() + LONGEST_TIMER / 2);
        match tokio::time::timeout(after, self.fetch_inner(url, deadline)).await {
            Ok(result) => result,
            Err(_) => {
                let url = Url::parse(url.trim()).map_or_else(|_| shown_str(url.trim()), |u| shown(&u));
                Err(FetchError::Timeout { url, after: self.inner.timeout })
            }
        }
    }

    async fn fetch_inner(&self, url: &str, deadline: Instant) -> Result<FetchedPage, FetchError> {
        let inner = &*self.inner;
        let first = self.parse_and_check(url)?;
        let mut current = first.clone();
        let mut redirects = 0usize;
        loop {
            let port = current.port_or_known_default();
            let clients = inner.clients.as_ref().map_err(|message| FetchError::Http {
                url: shown(&current),
                message: format!("could not build the HTTP client: {message}"),
            })?;
            let Some((_, client)) = clients.iter().find(|(p, _)| p.is_none() || *p == port) else {
                return Err(FetchError::Http { url: shown(&current), message: "no HTTP client".into() });
            };
            let response = client
                .get(current.clone())
                .header(ACCEPT, ACCEPT_VALUE)
                .send()
                .await
                .map_err(|e| request_error(e, &current))?;
            if let Some(remote) = response.remote_addr()
                && let Err(reason) = inner.policy.check(remote.ip(), Some(remote.port()))
            {
                return Err(FetchError::Forbidden { url: shown(&current), address: remote.ip(), reason });
            }
            let status = response.status().as_u16();
            if matches!(status, 301 | 302 | 303 | 307 | 308)
                && let Some(location) = response.headers().get(LOCATION)
            {
                if redirects >= inner.max_redirects {
                    return Err(FetchError::TooManyRedirects { url: shown(&first), max: inner.max_redirects });
                }
                redirects += 1;
                let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
                drop(response);
                let next = current.join(location.trim()).map_err(|e| FetchError::InvalidUrl {
                    url: shown_str(&location),
                    reason: format!("the redirect from `{}` has an invalid Location: {e}", shown(&current)),
                })?;
                current = self.check_parsed(next)?;
                continue;
            }
            if !(200..300).contains(&status) {
                return Err(FetchError::Status { url: shown(&current), status });
            }
            let header =
                response.headers().get(CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            let body = read_capped(response, inner.max_bytes).await.map_err(|e| match e {
                ReadError::TooLarge { content_length } => {
                    FetchError::TooLarge { url: shown(&current), max_bytes: inner.max_bytes, content_length }
                }
                ReadError::Http(e) => request_error(e, &current),
            })?;
            let (content_type, content) = into_content(header.as_deref(), body, &current, deadline).await;
            return Ok(FetchedPage { url: current.to_string(), status, content_type, content });
        }
    }

    fn parse_and_check(&self, input: &str) -> Result<Url, FetchError> {
        let input = input.trim();
        if input.len() > MAX_URL_LEN {
            return Err(FetchError::InvalidUrl {
                url: shown_str(input),
                reason: format!("the URL is {} bytes long, more than the {MAX_URL_LEN} accepted", input.len()),
            });
        }
        let url =
            Url::parse(input).map_err(|e| FetchError::InvalidUrl { url: shown_str(input), reason: e.to_string() })?;
        self.check_parsed(url)
    }

    /// Every check a URL goes through before a request: scheme, host, domain lists, and the
    /// address of an IP-literal host.
    fn check_parsed(&self, mut url: Url) -> Result<Url, FetchError> {
        let inner = &*self.inner;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::UnsupportedScheme { url: shown(&url), scheme: url.scheme().to_string() });
        }
        url.set_fragment(None);
        let port = url.port_or_known_default();
        let Some(host) = host_kind(&url) else {
            return Err(FetchError::InvalidUrl { url: shown(&url), reason: "the URL has no host".into() });
        };
        let domain = match &host {
            HostKind::Domain(d) => d.clone(),
            HostKind::Ip(ip) => ip.to_string(),
        };
        if let Some(rule) = inner.blocked_domains.iter().find(|r| r.matches(&host)) {
            return Err(FetchError::DomainNotAllowed { url: shown(&url), domain, blocked_by: Some(rule.to_string()) });
        }
        if !inner.allowed_domains.is_empty() && !inner.allowed_domains.iter().any(|r| r.matches(&host)) {
            return Err(FetchError::DomainNotAllowed { url: shown(&url), domain, blocked_by: None });
        }
        if let HostKind::Ip(ip) = host
            && let Err(reason) = inner.policy.check(ip, port)
        {
            return Err(FetchError::Forbidden { url: shown(&url), address: ip, reason });
        }
        Ok(url)
    }
}

const ACCEPT_VALUE: &str =
    "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.8";

mod content;
mod guard;
#[cfg(test)]
mod tests;
mod transport;

use content::*;
pub use guard::is_public_address;
pub(crate) use guard::*;
use transport::*;
pub(super) use transport::{ReadError, client_builder, error_chain, read_capped, shown_str};
