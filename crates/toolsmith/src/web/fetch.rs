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

/// A URL's host, for the domain lists.
#[derive(Debug)]
enum HostKind {
    Domain(String),
    Ip(IpAddr),
}

/// A URL's host for the domain lists: a lowercase domain without its trailing dot, or an IP
/// address; `None` for a URL without a host.
fn host_kind(url: &Url) -> Option<HostKind> {
    match url.host()? {
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d.is_empty() {
                return None;
            }
            Some(match d.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
                Ok(ip) => HostKind::Ip(ip),
                Err(_) => HostKind::Domain(d),
            })
        }
        Host::Ipv4(ip) => Some(HostKind::Ip(IpAddr::V4(ip))),
        Host::Ipv6(ip) => Some(HostKind::Ip(IpAddr::V6(ip))),
    }
}

/// Allowed and blocked domains applied to URLs by the fetcher's rule (a domain matches itself
/// and its subdomains, an IP address itself), for the other local web tools. An entry that is
/// neither a domain nor an address matches nothing.
#[derive(Debug, Clone)]
pub(crate) struct DomainLists {
    allowed: Option<Vec<DomainRule>>,
    blocked: Vec<DomainRule>,
}

impl DomainLists {
    /// The lists, from their entries.
    pub(crate) fn new(allowed: Option<&[String]>, blocked: &[String]) -> Self {
        let rules = |entries: &[String]| -> Vec<DomainRule> {
            entries.iter().filter_map(|e| parse_rules(std::slice::from_ref(e), "domains").ok()).flatten().collect()
        };
        DomainLists { allowed: allowed.map(rules), blocked: rules(blocked) }
    }

    /// Whether `url` may be used: it has a host, inside the allowed domains (when there are
    /// any) and outside the blocked ones.
    pub(crate) fn admits(&self, url: &str) -> bool {
        let Some(host) = Url::parse(url).ok().as_ref().and_then(host_kind) else { return false };
        self.allowed.as_ref().is_none_or(|a| a.iter().any(|r| r.matches(&host)))
            && !self.blocked.iter().any(|r| r.matches(&host))
    }
}

/// An entry of the allowed or blocked domains.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DomainRule {
    /// A domain, ASCII lowercase without a trailing dot: matches itself and its subdomains.
    Domain(String),
    /// An IP address: matches itself.
    Ip(IpAddr),
}

impl DomainRule {
    fn matches(&self, host: &HostKind) -> bool {
        match (self, host) {
            (DomainRule::Domain(rule), HostKind::Domain(d)) => {
                d == rule
                    || (d.len() > rule.len() && d.ends_with(rule.as_str()) && d[..d.len() - rule.len()].ends_with('.'))
            }
            (DomainRule::Ip(rule), HostKind::Ip(ip)) => canonical(*rule) == canonical(*ip),
            _ => false,
        }
    }
}

impl fmt::Display for DomainRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DomainRule::Domain(d) => f.write_str(d),
            DomainRule::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

fn parse_rules(entries: &[String], setting: &str) -> Result<Vec<DomainRule>, UserError> {
    entries
        .iter()
        .map(|entry| {
            let e = entry.trim().trim_start_matches("*.").trim_matches('.');
            if let Ok(ip) = e.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
                return Ok(DomainRule::Ip(ip));
            }
            match Host::parse(e) {
                Ok(Host::Domain(d)) if !d.is_empty() => Ok(DomainRule::Domain(d.to_ascii_lowercase())),
                Ok(Host::Ipv4(ip)) => Ok(DomainRule::Ip(IpAddr::V4(ip))),
                Ok(Host::Ipv6(ip)) => Ok(DomainRule::Ip(IpAddr::V6(ip))),
                _ => Err(UserError::new(format!(
                    "WebFetcher::builder().{setting}(...) got `{entry}`, which is not a domain name or an IP \
                     address; give a domain such as `example.com` (it also matches its subdomains), not a URL"
                ))),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Addresses

/// Which non-public addresses may be connected to.
#[derive(Debug)]
struct AddressPolicy {
    /// Every address may.
    allow_private: bool,
    /// These exact addresses and ports may.
    allowed: Vec<SocketAddr>,
}

impl AddressPolicy {
    /// `Ok` when `ip` may be connected to on `port` (`None`: the port is not known, and only
    /// public addresses pass); else why not.
    fn check(&self, ip: IpAddr, port: Option<u16>) -> Result<(), String> {
        if self.allow_private {
            return Ok(());
        }
        let Some(reason) = forbidden_reason(ip) else { return Ok(()) };
        let ip = canonical(ip);
        if let Some(port) = port
            && self.allowed.iter().any(|a| a.port() == port && canonical(a.ip()) == ip)
        {
            return Ok(());
        }
        Err(reason)
    }

    /// The ports of the allowed addresses, sorted.
    fn allowed_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self.allowed.iter().map(SocketAddr::port).collect();
        ports.sort_unstable();
        ports
    }
}

/// An IPv4-mapped IPv6 address as IPv4, anything else unchanged.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether an address is public, that is one [`WebFetcher`] connects to by default. Not public:
/// loopback, private (RFC 1918), shared address space (100.64.0.0/10), link-local (including
/// cloud metadata services at `169.254.169.254`), unique-local and site-local IPv6,
/// unspecified, "this network" (0.0.0.0/8), broadcast, multicast, documentation, benchmarking
/// and reserved ranges, IETF protocol assignments (192.0.0.0/24, 2001::/23, including Teredo),
/// discard-only and local-use NAT64 prefixes, every IPv6 address outside the global unicast
/// range `2000::/3`, and the IPv4-mapped, IPv4-compatible, NAT64 (`64:ff9b::/96`) and 6to4
/// (`2002::/16`) forms of non-public IPv4 addresses (IPv4-compatible forms are all refused).
///
/// ```
/// use toolsmith::web::is_public_address;
///
/// assert!(is_public_address("93.184.215.14".parse().unwrap()));
/// assert!(!is_public_address("169.254.169.254".parse().unwrap()));
/// assert!(!is_public_address("::ffff:10.0.0.1".parse().unwrap()));
/// assert!(!is_public_address("64:ff9b::7f00:1".parse().unwrap()));
/// ```
pub fn is_public_address(ip: IpAddr) -> bool {
    forbidden_reason(ip).is_none()
}

/// What kind of non-public address `ip` is, or `None` when it is public.
fn forbidden_reason(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4).map(str::to_string),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

/// The non-public IPv4 ranges: network, prefix length, what they are. The first match names the
/// address.
const V4_RANGES: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 32, "the unspecified address"),
    ([0, 0, 0, 0], 8, "a \"this network\" address (0.0.0.0/8)"),
    ([10, 0, 0, 0], 8, "a private address (RFC 1918)"),
    ([100, 64, 0, 0], 10, "a shared address space address (carrier-grade NAT, 100.64.0.0/10)"),
    ([127, 0, 0, 0], 8, "a loopback address"),
    ([169, 254, 0, 0], 16, "a link-local address (cloud metadata services such as 169.254.169.254 answer there)"),
    ([172, 16, 0, 0], 12, "a private address (RFC 1918)"),
    ([192, 0, 0, 0], 24, "an IETF protocol assignment (192.0.0.0/24)"),
    ([192, 0, 2, 0], 24, "a documentation address (192.0.2.0/24)"),
    ([192, 88, 99, 0], 24, "a 6to4 relay anycast address (192.88.99.0/24)"),
    ([192, 168, 0, 0], 16, "a private address (RFC 1918)"),
    ([198, 18, 0, 0], 15, "a benchmarking address (198.18.0.0/15)"),
    ([198, 51, 100, 0], 24, "a documentation address (198.51.100.0/24)"),
    ([203, 0, 113, 0], 24, "a documentation address (203.0.113.0/24)"),
    ([224, 0, 0, 0], 4, "a multicast address"),
    ([255, 255, 255, 255], 32, "the broadcast address"),
    ([240, 0, 0, 0], 4, "a reserved address (240.0.0.0/4)"),
];

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let n = u32::from(ip);
    V4_RANGES.iter().find_map(|&(net, prefix, reason)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
        (n & mask == u32::from_be_bytes(net) & mask).then_some(reason)
    })
}

fn in_v6(ip: Ipv6Addr, net: u128, prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == net & mask
}

fn v6_reason(ip: Ipv6Addr) -> Option<String> {
    let n = u128::from(ip);
    let embedded = |v4: Ipv4Addr, form: &str| v4_reason(v4).map(|r| format!("{r} ({v4}) in {form} form"));
    if ip.is_unspecified() {
        return Some("the unspecified address".into());
    }
    if ip.is_loopback() {
        return Some("a loopback address".into());
    }
    // ::ffff:0:0/96, IPv4-mapped: the embedded IPv4 address decides.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return embedded(v4, "IPv4-mapped IPv6");
    }
    // ::/96, IPv4-compatible (deprecated): always refused.
    if n >> 32 == 0 {
        let v4 = Ipv4Addr::from((n & 0xffff_ffff) as u32);
        return Some(
            embedded(v4, "IPv4-compatible IPv6")
                .unwrap_or_else(|| "an IPv4-compatible IPv6 address (::/96, deprecated)".into()),
        );
    }
    // 64:ff9b::/96, the NAT64 well-known prefix: the embedded IPv4 address decides.
    if in_v6(ip, 0x0064_ff9b << 96, 96) {
        return embedded(Ipv4Addr::from((n & 0xffff_ffff) as u32), "NAT64 (64:ff9b::/96)");
    }
    let ranges: &[(u128, u32, &str)] = &[
        (0x0064_ff9b_0001 << 80, 48, "a local-use NAT64 address (64:ff9b:1::/48)"),
        (0x0100 << 112, 64, "a discard-only address (100::/64)"),
        (0xfc00 << 112, 7, "a unique-local address (fc00::/7)"),
        (0xfe80 << 112, 10, "a link-local address (fe80::/10)"),
        (0xfec0 << 112, 10, "a site-local address (fec0::/10, deprecated)"),
        (0xff00 << 112, 8, "a multicast address"),
        (0x2001_0db8 << 96, 32, "a documentation address (2001:db8::/32)"),
        (0x3fff << 112, 20, "a documentation address (3fff::/20)"),
        (0x2001_0000 << 96, 32, "a Teredo address (2001::/32)"),
        (0x2001_0000 << 96, 23, "an IETF protocol assignment (2001::/23)"),
    ];
    if let Some(&(_, _, reason)) = ranges.iter().find(|&&(net, prefix, _)| in_v6(ip, net, prefix)) {
        return Some(reason.into());
    }
    // 2002::/16, 6to4: the embedded IPv4 address decides.
    if in_v6(ip, 0x2002 << 112, 16) {
        return embedded(Ipv4Addr::from(((n >> 80) & 0xffff_ffff) as u32), "6to4 (2002::/16)");
    }
    if !in_v6(ip, 0x2000 << 112, 3) {
        return Some("a reserved address (outside the global unicast range 2000::/3)".into());
    }
    None
}

/// The fetcher's DNS resolver: resolves with Tokio and keeps only the addresses the policy
/// allows, so that the connection goes to a checked address.
struct GuardedResolver {
    policy: Arc<AddressPolicy>,
    /// The port this resolver's client connects to, when the client is used for one port only:
    /// then the allowed addresses with that port pass too.
    port: Option<u16>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        let port = self.port;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let mut allowed = Vec::new();
            let mut refused = None;
            for addr in found {
                match policy.check(addr.ip(), port) {
                    Ok(()) => allowed.push(addr),
                    Err(reason) => {
                        refused.get_or_insert((addr.ip(), reason));
                    }
                }
            }
            match refused {
                Some((address, reason)) if allowed.is_empty() => {
                    Err(Box::new(RefusedAddress { host, address, reason }) as Box<dyn StdError + Send + Sync>)
                }
                _ => Ok(Box::new(allowed.into_iter()) as Addrs),
            }
        })
    }
}

/// A host name resolved only to refused addresses.
#[derive(Debug)]
struct RefusedAddress {
    host: String,
    address: IpAddr,
    reason: String,
}

impl fmt::Display for RefusedAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} resolves to {}, {}", self.host, self.address, self.reason)
    }
}

impl StdError for RefusedAddress {}

// ---------------------------------------------------------------------------------------------
// HTTP

/// A client builder for the web back ends: the user agent, no automatic redirects, no proxies
/// from the environment.
pub(super) fn client_builder(user_agent: &str, owner: &str) -> Result<reqwest::ClientBuilder, UserError> {
    let user_agent = HeaderValue::from_str(user_agent).map_err(|_| {
        UserError::new(format!("{owner}::builder().user_agent(...) contains characters not allowed in an HTTP header"))
    })?;
    Ok(crate::tls::client_builder()
        .map_err(UserError::new)?
        .user_agent(user_agent)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(Duration::from_secs(30)))
}

/// Why a body was not read.
#[derive(Debug)]
pub(super) enum ReadError {
    /// It is larger than the limit.
    TooLarge {
        /// The length the server announced.
        content_length: Option<u64>,
    },
    /// The transfer failed.
    Http(reqwest::Error),
}

/// Reads a body, chunk by chunk, refusing it once it passes `max_bytes` (or at once when its
/// `Content-Length` does).
pub(super) async fn read_capped(mut response: reqwest::Response, max_bytes: usize) -> Result<Vec<u8>, ReadError> {
    let content_length = response.content_length();
    if content_length.is_some_and(|n| n > max_bytes as u64) {
        return Err(ReadError::TooLarge { content_length });
    }
    let capacity = content_length.map_or(0, |n| n.min(max_bytes as u64).min(1 << 20) as usize);
    let mut body = Vec::with_capacity(capacity);
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Http)? {
        if chunk.len() > max_bytes - body.len() {
            return Err(ReadError::TooLarge { content_length });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn request_error(e: reqwest::Error, url: &Url) -> FetchError {
    let mut source: Option<&(dyn StdError + 'static)> = Some(&e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<RefusedAddress>() {
            return FetchError::Forbidden { url: shown(url), address: r.address, reason: r.reason.clone() };
        }
        source = s.source();
    }
    FetchError::Http { url: shown(url), message: error_chain(&e.without_url()) }
}

/// Every error in a source chain, joined.
pub(super) fn error_chain(e: &dyn StdError) -> String {
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

/// A URL for an error: without its password, cut to [`SHOWN_URL_CHARS`].
fn shown(url: &Url) -> String {
    let mut url = url.clone();
    if url.password().is_some() {
        let _ = url.set_password(None);
    }
    shown_str(url.as_str())
}

/// A string for an error, cut to [`SHOWN_URL_CHARS`].
pub(super) fn shown_str(s: &str) -> String {
    match s.char_indices().nth(SHOWN_URL_CHARS) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Content

/// What a body becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

fn kind_of(media_type: &str) -> Kind {
    match media_type {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        t if t.starts_with("text/") => Kind::Text,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/x-ndjson"
        | "application/ndjson"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql"
        | "application/x-www-form-urlencoded" => Kind::Text,
        t if t.ends_with("+json") || t.ends_with("+xml") => Kind::Text,
        _ => Kind::Binary,
    }
}

/// The media type and content of a body.
async fn into_content(header: Option<&str>, body: Vec<u8>, url: &Url, deadline: Instant) -> (String, FetchedContent) {
    let (mut media_type, charset) = parse_content_type(header.unwrap_or(""));
    if media_type.is_empty() || media_type == "application/octet-stream" || media_type == "binary/octet-stream" {
        media_type = sniff(&body).to_string();
    }
    let content = match kind_of(&media_type) {
        Kind::Binary => FetchedContent::Binary { data: body, media_type: media_type.clone() },
        Kind::Text => FetchedContent::Text(decode(&body, charset.as_deref(), false)),
        Kind::Html => {
            let html = decode(&body, charset.as_deref(), true);
            drop(body);
            let base = url.clone();
            // A large page takes a while to parse: off the async threads.
            let convert = move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| html::to_markdown(&html, &base, deadline)))
                    .unwrap_or_else(|_| html::to_text(&html))
            };
            FetchedContent::Markdown(tokio::task::spawn_blocking(convert).await.unwrap_or_default())
        }
    };
    (media_type, content)
}

/// The media type (lowercase, without parameters) and the charset of a `Content-Type`.
fn parse_content_type(header: &str) -> (String, Option<String>) {
    let mut parts = header.split(';');
    let media_type = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches(['"', '\'']).to_string())
    });
    (media_type, charset)
}

/// The media type of a body without a (useful) `Content-Type`, from its first bytes.
fn sniff(body: &[u8]) -> &'static str {
    let head = &body[..body.len().min(1024)];
    let trimmed: &[u8] = {
        let t = head.strip_prefix(b"\xef\xbb\xbf".as_slice()).unwrap_or(head);
        let start = t.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(t.len());
        &t[start..]
    };
    let starts_ci =
        |prefix: &[u8]| trimmed.len() >= prefix.len() && trimmed[..prefix.len()].eq_ignore_ascii_case(prefix);
    if [b"<!doctype html".as_slice(), b"<html", b"<head", b"<body", b"<!--"].iter().any(|p| starts_ci(p)) {
        return "text/html";
    }
    const SIGNATURES: &[(&[u8], &str)] = &[
        (b"%PDF-", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"),
    ];
    if let Some((_, t)) = SIGNATURES.iter().find(|(sig, _)| body.starts_with(sig)) {
        return t;
    }
    if body.len() >= 12 && &body[..4] == b"RIFF" && &body[8..12] == b"WEBP" {
        return "image/webp";
    }
    let sample = &body[..body.len().min(8192)];
    let text_like = !sample.contains(&0)
        && match std::str::from_utf8(sample) {
            Ok(_) => true,
            // A multi-byte character cut at the end of the sample.
            Err(e) => e.error_len().is_none(),
        };
    if text_like { "text/plain" } else { "application/octet-stream" }
}

/// Decodes text: a byte order mark, else the charset given, else (HTML) a `<meta charset>` in
/// the first 1,024 bytes, else UTF-8; invalid bytes become U+FFFD.
fn decode(body: &[u8], charset: Option<&str>, html: bool) -> String {
    if let Some((encoding, bom_len)) = encoding_rs::Encoding::for_bom(body) {
        return encoding.decode_without_bom_handling(&body[bom_len..]).0.into_owned();
    }
    let from_meta = || {
        static META: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
            regex::bytes::Regex::new(r#"(?i)<meta[^>]{0,512}?charset\s*=\s*["']?\s*([a-z0-9_:.\-]{1,40})"#)
                .unwrap_or_else(|_| unreachable!("the pattern is valid"))
        });
        let head = &body[..body.len().min(1024)];
        META.captures(head).and_then(|c| c.get(1)).map(|m| m.as_bytes().to_vec())
    };
    let label: Option<Vec<u8>> =
        charset.map(|c| c.as_bytes().to_vec()).or_else(|| if html { from_meta() } else { None });
    let encoding = label.and_then(|l| encoding_rs::Encoding::for_label(&l)).unwrap_or(encoding_rs::UTF_8);
    // A page declaring UTF-16 in ASCII-compatible bytes is not UTF-16 (as the HTML standard says).
    let encoding = if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
        if html { encoding_rs::UTF_8 } else { encoding }
    } else {
        encoding
    };
    encoding.decode_without_bom_handling(body).0.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reason(s: &str) -> Option<String> {
        forbidden_reason(s.parse().unwrap())
    }

    fn fetcher(b: WebFetcherBuilder) -> WebFetcher {
        b.build().unwrap()
    }

    #[test]
    fn classifies_well_known_addresses() {
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.215.14",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "198.20.0.1",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2a00:1450:4001:81c::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(reason(public), None, "{public}");
        }
        for (private, expected) in [
            ("127.0.0.1", "loopback"),
            ("127.255.255.254", "loopback"),
            ("10.1.2.3", "RFC 1918"),
            ("172.16.0.1", "RFC 1918"),
            ("172.31.255.255", "RFC 1918"),
            ("192.168.1.1", "RFC 1918"),
            ("169.254.169.254", "link-local"),
            ("100.64.0.1", "shared address space"),
            ("100.127.255.255", "shared address space"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "this network"),
            ("255.255.255.255", "broadcast"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.9", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("192.0.0.8", "IETF"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("fc00::1", "unique-local"),
            ("fd12:3456::1", "unique-local"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001::1", "Teredo"),
            ("2001:10::1", "IETF"),
            ("100::1", "discard"),
            ("64:ff9b:1::1", "local-use NAT64"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("::ffff:10.0.0.1", "RFC 1918"),
            ("::127.0.0.1", "IPv4-compatible"),
            ("::8.8.8.8", "IPv4-compatible"),
            ("64:ff9b::127.0.0.1", "NAT64"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("2002:7f00:1::", "6to4"),
            ("2002:c0a8:101::1", "RFC 1918"),
            ("4000::1", "reserved"),
            ("::2:0:0:1", "reserved"),
        ] {
            let r = reason(private).unwrap_or_else(|| panic!("{private} passed"));
            assert!(r.contains(expected), "{private}: {r}");
        }
    }

    fn embeds(v4: Ipv4Addr) -> [Ipv6Addr; 3] {
        let n = u32::from(v4);
        [
            v4.to_ipv6_mapped(),
            Ipv6Addr::from((0x0064_ff9b_u128 << 96) | u128::from(n)),
            Ipv6Addr::from((0x2002_u128 << 112) | (u128::from(n) << 80) | 1),
        ]
    }

    /// An independent oracle for IPv4: the standard library's predicates plus the ranges they
    /// do not cover.
    fn v4_public_oracle(ip: Ipv4Addr) -> bool {
        let o = ip.octets();
        !(ip.is_private()
            || ip.is_loopback()
            || ip.is_link_local()
            || ip.is_broadcast()
            || ip.is_documentation()
            || ip.is_unspecified()
            || ip.is_multicast()
            || o[0] == 0
            || o[0] >= 240
            || (o[0] == 100 && (64..128).contains(&o[1]))
            || (o[0] == 192 && o[1] == 0 && o[2] == 0)
            || (o[0] == 192 && o[1] == 88 && o[2] == 99)
            || (o[0] == 198 && (o[1] == 18 || o[1] == 19)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn ipv4_matches_the_oracle(n in any::<u32>()) {
            let ip = Ipv4Addr::from(n);
            prop_assert_eq!(is_public_address(IpAddr::V4(ip)), v4_public_oracle(ip), "{}", ip);
        }

        #[test]
        fn embedded_ipv4_forms_follow_the_ipv4_address(n in any::<u32>()) {
            let v4 = Ipv4Addr::from(n);
            let public = is_public_address(IpAddr::V4(v4));
            for v6 in embeds(v4) {
                prop_assert_eq!(is_public_address(IpAddr::V6(v6)), public, "{} embedding {}", v6, v4);
            }
            // IPv4-compatible forms are refused whatever they embed.
            prop_assert!(!is_public_address(IpAddr::V6(v4.to_ipv6_compatible())));
        }

        #[test]
        fn special_ipv6_ranges_are_refused(n in any::<u128>()) {
            let ip = Ipv6Addr::from(n);
            let public = is_public_address(IpAddr::V6(ip));
            let seg0 = ip.segments()[0];
            // IPv4-mapped and NAT64 forms are decided by the IPv4 address they embed.
            let embeds_ipv4 = ip.to_ipv4_mapped().is_some() || ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
            let outside_global_unicast = seg0 & 0xe000 != 0x2000 && !embeds_ipv4;
            if ip.is_unique_local() || ip.is_unicast_link_local() || ip.is_multicast() || ip.is_loopback()
                || ip.is_unspecified() || outside_global_unicast
            {
                prop_assert!(!public, "{}", ip);
            }
            // Random global unicast addresses outside the special blocks are public.
            if seg0 & 0xe000 == 0x2000 && seg0 != 0x2001 && seg0 != 0x2002 && seg0 & 0xfff0 != 0x3ff0 {
                prop_assert!(public, "{}", ip);
            }
        }

        #[test]
        fn never_panics_on_any_url(s in ".{0,200}") {
            static FETCHER: LazyLock<WebFetcher> =
                LazyLock::new(|| WebFetcher::builder().blocked_domains(["blocked.example"]).build().unwrap());
            let f = &*FETCHER;
            let _ = f.check_url(&s);
            let _ = f.check_url(&format!("http://{s}"));
        }
    }

    #[test]
    fn domains_match_themselves_and_subdomains() {
        let f = fetcher(
            WebFetcher::builder()
                .allowed_domains(["Example.COM.", "*.docs.rs", "127.0.0.1", "[::1]"])
                .allow_private_addresses(true),
        );
        for ok in [
            "https://example.com/",
            "https://EXAMPLE.com./x",
            "https://a.b.example.com/",
            "https://docs.rs/",
            "https://x.docs.rs/",
            "http://127.0.0.1:8080/",
            "http://[::1]/",
        ] {
            assert!(f.check_url(ok).is_ok(), "{ok}: {:?}", f.check_url(ok));
        }
        for refused in ["https://badexample.com/", "https://example.com.evil.net/", "https://rs/", "http://127.0.0.2/"]
        {
            assert!(
                matches!(f.check_url(refused), Err(FetchError::DomainNotAllowed { blocked_by: None, .. })),
                "{refused}"
            );
        }
        let f = fetcher(WebFetcher::builder().blocked_domains(["evil.net"]).allowed_domains(["evil.net", "good.org"]));
        match f.check_url("https://a.EVIL.net/").unwrap_err() {
            FetchError::DomainNotAllowed { domain, blocked_by, .. } => {
                assert_eq!(domain, "a.evil.net");
                assert_eq!(blocked_by.as_deref(), Some("evil.net"));
            }
            other => panic!("{other}"),
        }
        assert!(f.check_url("https://good.org/").is_ok());
        // Internationalised domains are compared in their ASCII form.
        let f = fetcher(WebFetcher::builder().allowed_domains(["bücher.de"]));
        assert!(f.check_url("https://www.xn--bcher-kva.de/").is_ok());
        assert!(f.check_url("https://www.bücher.de/").is_ok());
    }

    #[test]
    fn bad_settings_are_user_errors() {
        for b in [
            WebFetcher::builder().timeout(Duration::ZERO),
            WebFetcher::builder().max_bytes(0),
            WebFetcher::builder().allowed_domains(["https://example.com/"]),
            WebFetcher::builder().blocked_domains([""]),
            WebFetcher::builder().user_agent("bad\nagent"),
        ] {
            let e = b.build().unwrap_err();
            assert!(e.message.contains("WebFetcher::builder()"), "{}", e.message);
        }
    }

    #[test]
    fn ip_literals_are_checked_before_connecting() {
        let f = fetcher(WebFetcher::builder());
        for (url, address) in [
            ("http://127.0.0.1/", "127.0.0.1"),
            ("http://2130706433/", "127.0.0.1"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
            ("http://[::1]/", "::1"),
            ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1"),
            ("http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe"),
            ("http://0.0.0.0:8080/", "0.0.0.0"),
            ("https://10.0.0.1/", "10.0.0.1"),
        ] {
            match f.check_url(url) {
                Err(FetchError::Forbidden { address: a, .. }) => assert_eq!(a.to_string(), address, "{url}"),
                other => panic!("{url}: {other:?}"),
            }
        }
        let e = f.check_url("http://169.254.169.254/").unwrap_err().to_string();
        assert!(e.contains("allow_private_addresses(true)") && e.contains("link-local"), "{e}");
        for (url, scheme) in
            [("file:///etc/passwd", "file"), ("ftp://example.com/", "ftp"), ("data:text/plain,hi", "data")]
        {
            assert!(
                matches!(f.check_url(url), Err(FetchError::UnsupportedScheme { scheme: s, .. }) if s == scheme),
                "{url}"
            );
        }
        for url in ["", "example.com", "http://", "http://exa mple.com/", "https://[::1/"] {
            assert!(matches!(f.check_url(url), Err(FetchError::InvalidUrl { .. })), "{url}: {:?}", f.check_url(url));
        }
        assert!(matches!(
            f.check_url(&format!("https://a.com/{}", "x".repeat(40_000))),
            Err(FetchError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn allowed_addresses_are_exact() {
        let f = fetcher(WebFetcher::builder().allow_address("127.0.0.1:8080".parse().unwrap()));
        assert!(f.check_url("http://127.0.0.1:8080/").is_ok());
        assert!(f.check_url("http://[::ffff:127.0.0.1]:8080/").is_ok());
        assert!(matches!(f.check_url("http://127.0.0.1:8081/"), Err(FetchError::Forbidden { .. })));
        assert!(matches!(f.check_url("http://127.0.0.1/"), Err(FetchError::Forbidden { .. })));
        assert!(matches!(f.check_url("http://127.0.0.2:8080/"), Err(FetchError::Forbidden { .. })));
        let open = fetcher(WebFetcher::builder().allow_private_addresses(true));
        assert!(open.check_url("http://169.254.169.254/").is_ok());
    }

    #[test]
    fn content_types_and_charsets() {
        assert_eq!(
            parse_content_type("Text/HTML; Charset=\"ISO-8859-1\""),
            ("text/html".into(), Some("ISO-8859-1".into()))
        );
        assert_eq!(parse_content_type(""), (String::new(), None));
        assert_eq!(kind_of("application/ld+json"), Kind::Text);
        assert_eq!(kind_of("image/svg+xml"), Kind::Text);
        assert_eq!(kind_of("application/pdf"), Kind::Binary);
        assert_eq!(kind_of("application/xhtml+xml"), Kind::Html);
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x"), "text/html");
        assert_eq!(sniff(b"%PDF-1.7\n"), "application/pdf");
        assert_eq!(sniff(b"plain words"), "text/plain");
        assert_eq!(sniff(b"\x00\x01\x02"), "application/octet-stream");
        assert_eq!(sniff("caf\u{e9}".as_bytes()), "text/plain");
        assert_eq!(decode(b"caf\xe9", Some("iso-8859-1"), false), "café");
        assert_eq!(decode(b"caf\xe9", None, false), "caf\u{fffd}");
        assert_eq!(decode(b"\xef\xbb\xbfhi", Some("iso-8859-1"), false), "hi");
        assert_eq!(
            decode(b"<meta charset=\"windows-1252\"><p>\x93q\x94", None, true),
            "<meta charset=\"windows-1252\"><p>\u{201c}q\u{201d}"
        );
        assert_eq!(decode(b"<meta charset=utf-16><p>x", None, true), "<meta charset=utf-16><p>x");
        assert_eq!(decode(b"bogus \xff", Some("no-such-charset"), false), "bogus \u{fffd}");
    }

    #[test]
    fn urls_in_errors_hide_passwords_and_are_cut() {
        let url = Url::parse("https://user:secret@example.com/x").unwrap();
        assert_eq!(shown(&url), "https://user@example.com/x");
        let long = "é".repeat(5_000);
        assert_eq!(shown_str(&long).chars().count(), SHOWN_URL_CHARS + 3);
    }
}
