//! The default local tools of [`WebSearch`](super::WebSearch) and [`WebFetch`](super::WebFetch)
//! (feature `web`): `web_search` over a [`SearchBackend`] and `web_fetch` over a [`WebFetcher`],
//! each applying the capability's narrowing settings itself and counting its uses per run.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};

use super::LocalTool;
use crate::error::UserError;
use crate::messages::{BinaryContent, MediaContent};
use crate::native;
use crate::tool::{Tool, ToolError};
use crate::toolset::{BoxedToolset, FunctionToolset};
use crate::web::{FetchedContent, SearchBackend, WebFetcher, WebFetcherBuilder};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// What to search the web for.
    query: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct FetchArgs {
    /// The URL of the page (http or https).
    url: String,
}

/// One more use of a tool limited to `max` a run, or the answer that the limit is reached.
fn take_use(uses: &AtomicU32, max: Option<u32>, what: &str) -> Result<(), Value> {
    match max {
        Some(max) if uses.fetch_add(1, Ordering::SeqCst) >= max => {
            Err(json!(format!("The limit of {max} {what} for this run is reached: answer with what you have.")))
        }
        _ => Ok(()),
    }
}

/// The local `web_search` tool: `max_results` results of `backend`, outside the blocked and
/// inside the allowed domains, at most `max_uses` searches a run.
pub(super) fn search_tool<D: Clone + Send + Sync + 'static>(
    backend: Arc<dyn SearchBackend>,
    settings: &native::WebSearch,
    max_results: usize,
) -> LocalTool<D> {
    let filtered =
        settings.allowed_domains.is_some() || settings.blocked_domains.as_ref().is_some_and(|b| !b.is_empty());
    let lists = Arc::new(crate::web::fetch::DomainLists::new(
        settings.allowed_domains.as_deref(),
        settings.blocked_domains.as_deref().unwrap_or_default(),
    ));
    let max_uses = settings.max_uses;
    LocalTool::per_run(move || {
        let uses = Arc::new(AtomicU32::new(0));
        let (backend, lists) = (backend.clone(), lists.clone());
        let tool = Tool::<D>::new("web_search", move |_ctx, args: SearchArgs| {
            let (backend, lists, uses) = (backend.clone(), lists.clone(), uses.clone());
            async move {
                if let Err(answer) = take_use(&uses, max_uses, "web searches") {
                    return Ok::<Value, ToolError>(answer);
                }
                // Filtered results are replaced from a longer list.
                let ask = if filtered { max_results * 3 } else { max_results };
                let results = match backend.search(&args.query, ask).await {
                    Ok(r) => r,
                    Err(e) => return Ok(json!(format!("The web search failed: {e}"))),
                };
                let kept: Vec<_> = results.into_iter().filter(|r| lists.admits(&r.url)).take(max_results).collect();
                Ok(serde_json::to_value(kept).unwrap_or_default())
            }
        })
        .description("Search the web for the query and return the results (title, url and snippet of each page).");
        BoxedToolset::new(FunctionToolset::new().with_tool(tool))
    })
}

/// The local `web_fetch` tool: pages fetched by a fetcher built from `fetcher` with the
/// capability's domain lists, at most `max_uses` fetches a run.
pub(super) fn fetch_tool<D: Clone + Send + Sync + 'static>(
    fetcher: Option<WebFetcherBuilder>,
    settings: &native::WebFetch,
) -> Result<LocalTool<D>, UserError> {
    let mut builder = fetcher.unwrap_or_else(WebFetcher::builder);
    if let Some(domains) = &settings.allowed_domains {
        builder = builder.allowed_domains(domains.clone());
    }
    if let Some(domains) = &settings.blocked_domains {
        builder = builder.blocked_domains(domains.clone());
    }
    let fetcher = builder.build()?;
    let max_uses = settings.max_uses;
    Ok(LocalTool::per_run(move || {
        let uses = Arc::new(AtomicU32::new(0));
        let fetcher = fetcher.clone();
        let tool = Tool::<D>::new("web_fetch", move |_ctx, args: FetchArgs| {
            let (fetcher, uses) = (fetcher.clone(), uses.clone());
            async move {
                if let Err(answer) = take_use(&uses, max_uses, "page fetches") {
                    return Ok::<Value, ToolError>(answer);
                }
                let page = match fetcher.fetch(&args.url).await {
                    Ok(page) => page,
                    // The model is told why, and may try another page.
                    Err(e) => return Ok(json!(format!("Could not fetch {}: {e}", args.url))),
                };
                Ok(match page.content {
                    FetchedContent::Markdown(text) | FetchedContent::Text(text) => json!(text),
                    FetchedContent::Binary { data, media_type }
                        if media_type == "application/pdf" || media_type.starts_with("image/") =>
                    {
                        // A document or image goes to the model as a file.
                        serde_json::to_value(MediaContent::Binary(BinaryContent::new(data, media_type)))
                            .unwrap_or_default()
                    }
                    FetchedContent::Binary { data, media_type } => json!(format!(
                        "{} is {media_type} ({} bytes), which cannot be shown as text.",
                        page.url,
                        data.len()
                    )),
                })
            }
        })
        .description("Fetch the web page at the URL and return its content (Markdown for HTML pages).");
        BoxedToolset::new(FunctionToolset::new().with_tool(tool))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_match_themselves_and_their_subdomains_only() {
        let lists = crate::web::fetch::DomainLists::new(
            Some(&["docs.rs".into(), "*.crates.io".into()]),
            &["evil.docs.rs".into()],
        );
        for (url, admitted) in [
            ("https://docs.rs/serde", true),
            ("https://www.docs.rs/x", true),
            ("https://WWW.Docs.RS./x", true),
            ("https://crates.io/", true),
            ("https://evildocs.rs/", false),
            ("https://docs.rs.evil.com/", false),
            ("https://evil.docs.rs/", false),
            ("https://a.evil.docs.rs/", false),
            ("not a url", false),
        ] {
            assert_eq!(lists.admits(url), admitted, "{url}");
        }
        let open = crate::web::fetch::DomainLists::new(None, &["https://not-a-domain/".into()]);
        assert!(open.admits("https://example.com/"));
    }

    #[test]
    fn uses_are_counted_to_the_limit() {
        let uses = AtomicU32::new(0);
        assert!(take_use(&uses, Some(2), "x").is_ok());
        assert!(take_use(&uses, Some(2), "x").is_ok());
        assert!(take_use(&uses, Some(2), "x").is_err());
        assert!(take_use(&uses, None, "x").is_ok());
    }
}
