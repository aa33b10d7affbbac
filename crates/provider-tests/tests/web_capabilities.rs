//! `WebSearch` and `WebFetch` with their default local tools (feature `web`) in agent runs,
//! against a local site: the tools the model gets, the limits they apply themselves (domain
//! lists, uses per run), a redirect to a metadata address refused, and files handed on.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::capability::{WebFetch, WebSearch};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponsePart, ToolCallPart, ToolReturnPart};
use toolsmith::prelude::*;
use toolsmith::web::{DuckDuckGo, WebFetcher};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A model that makes the given rounds of calls, then answers; it records the tools offered.
fn scripted(rounds: Vec<Vec<(&'static str, Value)>>) -> (FunctionModel, Arc<Mutex<Vec<AgentInfo>>>) {
    let seen: Arc<Mutex<Vec<AgentInfo>>> = Arc::default();
    let s = seen.clone();
    let model = FunctionModel::sync(move |messages, info| {
        s.lock().unwrap().push(info.clone());
        let round = messages.len() / 2;
        match rounds.get(round) {
            Some(calls) => ModelResponse::new(
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| {
                        ModelResponsePart::ToolCall(ToolCallPart::new(*name, args.clone(), format!("c{round}_{i}")))
                    })
                    .collect(),
            ),
            None => ModelResponse::text("done"),
        }
    });
    (model, seen)
}

fn returns(history: &[ModelMessage]) -> Vec<ToolReturnPart> {
    history
        .iter()
        .filter_map(ModelMessage::as_request)
        .flat_map(|r| r.parts.iter())
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

fn result_link(url: &str, title: &str) -> String {
    let encoded: String = url
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    format!(
        r#"<div class="result results_links results_links_deep web-result"><div class="links_main links_deep result__body">
<h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg={encoded}&amp;rut=1">{title}</a></h2>
<a class="result__snippet" href="//duckduckgo.com/l/?uddg={encoded}">About {title}.</a></div></div>"#
    )
}

#[tokio::test]
async fn the_local_search_drops_blocked_domains_and_counts_its_uses() {
    let site = MockServer::start().await;
    let page = format!(
        r#"<html><body><div id="links" class="results">{}{}{}</div></body></html>"#,
        result_link("https://www.rust-lang.org/", "Rust"),
        result_link("https://www.pinterest.com/rust/", "Rust pins"),
        result_link("https://doc.rust-lang.org/book/", "The Book"),
    );
    Mock::given(method("POST"))
        .and(path("/html/"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(page, "text/html; charset=utf-8"))
        .mount(&site)
        .await;
    let search = WebSearch::new()
        .backend(DuckDuckGo::with_base_url(format!("{}/html/", site.uri())).unwrap())
        .blocked_domains(["pinterest.com"])
        .max_uses(1)
        .build()
        .unwrap();
    let (model, seen) =
        scripted(vec![vec![("web_search", json!({"query": "rust"}))], vec![("web_search", json!({"query": "more"}))]]);
    let result = Agent::builder(model).capability(search).build().unwrap().run("rust?").await.unwrap();
    assert_eq!(seen.lock().unwrap()[0].function_tools[0].name, "web_search");
    let returns = returns(result.all_messages());
    let urls: Vec<&str> = returns[0].content.as_array().unwrap().iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert_eq!(urls, ["https://www.rust-lang.org/", "https://doc.rust-lang.org/book/"]);
    assert!(returns[1].content_text().contains("limit of 1 web searches for this run is reached"), "{returns:?}");
    assert_eq!(site.received_requests().await.unwrap().len(), 1, "the second search never left");
}

#[tokio::test]
async fn the_local_fetch_reads_pages_refuses_a_metadata_redirect_and_hands_on_pdfs() {
    let site = MockServer::start().await;
    let addr = *site.address();
    Mock::given(path("/rust"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            "<html><head><script>track()</script></head><body><h1>Rust</h1><p>Fast and <b>safe</b>.</p></body></html>",
            "text/html",
        ))
        .mount(&site)
        .await;
    Mock::given(path("/moved"))
        .respond_with(ResponseTemplate::new(302).insert_header("Location", "http://169.254.169.254/latest/meta-data/"))
        .mount(&site)
        .await;
    Mock::given(path("/paper.pdf"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(b"%PDF-1.7\n%%EOF".to_vec(), "application/pdf"))
        .mount(&site)
        .await;
    let fetch = WebFetch::new().fetcher(WebFetcher::builder().allow_address(addr)).build().unwrap();
    let base = site.uri();
    let (model, _) = scripted(vec![vec![
        ("web_fetch", json!({"url": format!("{base}/rust")})),
        ("web_fetch", json!({"url": format!("{base}/moved")})),
        ("web_fetch", json!({"url": format!("{base}/paper.pdf")})),
        ("web_fetch", json!({"url": "http://localhost:1/"})),
    ]]);
    let result = Agent::builder(model).capability(fetch).build().unwrap().run("read").await.unwrap();
    let returns = returns(result.all_messages());
    assert!(returns[0].content_text().contains("# Rust"), "{}", returns[0].content_text());
    assert!(!returns[0].content_text().contains("track()"));
    assert!(returns[1].content_text().starts_with("Could not fetch"), "{}", returns[1].content_text());
    assert!(returns[1].content_text().contains("169.254.169.254"), "{}", returns[1].content_text());
    let files = returns[2].files();
    assert!(
        matches!(&files[..], [toolsmith::messages::MediaContent::Binary(b)] if b.media_type == "application/pdf"),
        "{files:?}"
    );
    assert!(returns[3].content_text().starts_with("Could not fetch"), "localhost is refused: {returns:?}");
}

#[tokio::test]
async fn the_local_fetch_applies_the_domain_list_and_the_limit() {
    let site = MockServer::start().await;
    let fetch = WebFetch::new()
        .fetcher(WebFetcher::builder().allow_address(*site.address()))
        .allowed_domains(["docs.rs"])
        .max_uses(1)
        .build()
        .unwrap();
    let url = format!("{}/page", site.uri());
    let (model, _) = scripted(vec![
        vec![("web_fetch", json!({"url": url}))],
        vec![("web_fetch", json!({"url": "https://docs.rs/"}))],
    ]);
    let result = Agent::builder(model).capability(fetch).build().unwrap().run("read").await.unwrap();
    let returns = returns(result.all_messages());
    assert!(returns[0].content_text().contains("Could not fetch"), "{returns:?}");
    assert!(returns[1].content_text().contains("limit of 1 page fetches"), "{returns:?}");
    assert!(site.received_requests().await.unwrap().is_empty(), "nothing outside the list was fetched");
}
