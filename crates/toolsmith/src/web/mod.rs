//! Local web back ends (feature `web`): what an agent uses to read the web when its model's
//! provider cannot fetch or search by itself.
//!
//! - [`WebFetcher`](crate::web::WebFetcher) fetches one URL and returns the page as Markdown
//!   (HTML), text (plain text, JSON, XML, ...) or bytes (PDF, images, other documents), as
//!   Pydantic AI's `web_fetch` tool does, but guarded: only `http`/`https`, only public
//!   addresses (checked after DNS resolution, on the connection itself, and on every redirect),
//!   optional allowed and blocked domains, and limits on redirects, size and time. See
//!   [`fetch`](crate::web::fetch) for exactly what is refused.
//! - [`SearchBackend`](crate::web::SearchBackend) is a small object-safe trait for web search;
//!   [`DuckDuckGo`](crate::web::DuckDuckGo) implements it without an API key, by reading
//!   DuckDuckGo's HTML results page, as Pydantic AI's `duckduckgo_search_tool` does. Implement
//!   the trait for any other engine (Brave, Tavily, ...).
//!
//! Refusals are checked before anything touches the network when the URL alone decides:
//!
//! ```
//! use toolsmith::web::{FetchError, WebFetcher};
//!
//! let fetcher = WebFetcher::builder().build()?;
//! // A cloud metadata endpoint: a link-local address, never fetched by default.
//! match fetcher.check_url("http://169.254.169.254/latest/meta-data/") {
//!     Err(FetchError::Forbidden { address, reason, .. }) => {
//!         assert_eq!(address.to_string(), "169.254.169.254");
//!         assert!(reason.contains("link-local"));
//!     }
//!     other => panic!("not refused: {other:?}"),
//! }
//! // The same in another spelling: URL parsing normalises it first.
//! assert!(matches!(fetcher.check_url("http://2852039166/"), Err(FetchError::Forbidden { .. })));
//!
//! // A test reaches its own server, and only that port.
//! let local = WebFetcher::builder().allow_address("127.0.0.1:8080".parse()?).build()?;
//! assert!(local.check_url("http://127.0.0.1:8080/page").is_ok());
//! assert!(matches!(local.check_url("http://127.0.0.1:6379/"), Err(FetchError::Forbidden { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Fetching and searching (these go to the network):
//!
//! ```no_run
//! use toolsmith::web::{DuckDuckGo, FetchedContent, SearchBackend, WebFetcher};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let page = WebFetcher::builder().build()?.fetch("https://www.rust-lang.org/").await?;
//! if let FetchedContent::Markdown(markdown) = &page.content {
//!     println!("{} ({}):\n{markdown}", page.url, page.content_type);
//! }
//! let search = DuckDuckGo::new();
//! for result in search.search("rust async traits", 5).await? {
//!     println!("{}: {}", result.title, result.url);
//! }
//! # Ok(())
//! # }
//! ```

pub mod fetch;
mod html;
pub mod search;

pub use fetch::{FetchError, FetchedContent, FetchedPage, WebFetcher, WebFetcherBuilder, is_public_address};
pub use search::{DuckDuckGo, DuckDuckGoBuilder, SearchBackend, SearchError, SearchResult};
