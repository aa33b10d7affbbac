//! `WebSearch` and `WebFetch` with their local tools, offline: a small site served on localhost
//! stands in for the web (a DuckDuckGo-shaped results page, an article, and a page that
//! redirects to a cloud metadata address), and a scripted model searches, reads the first
//! result and tries the redirect.
//!
//! ```sh
//! cargo run --example web_fallbacks --features web
//! ```

use std::net::SocketAddr;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolsmith::capability::{WebFetch, WebSearch};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith::web::{DuckDuckGo, WebFetcher};

/// The site: `/html/` answers searches, `/rust` is an article, `/moved` redirects to the
/// metadata address that a fetch must never reach.
async fn serve(listener: TcpListener) {
    let addr = listener.local_addr().expect("bound");
    loop {
        let Ok((mut socket, _)) = listener.accept().await else { continue };
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]);
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (status, headers, body) = match path.as_str() {
                "/html/" => ("200 OK", "Content-Type: text/html; charset=utf-8\r\n".to_string(), results(addr)),
                "/rust" => ("200 OK", "Content-Type: text/html; charset=utf-8\r\n".to_string(), ARTICLE.to_string()),
                "/moved" => (
                    "302 Found",
                    "Location: http://169.254.169.254/latest/meta-data/iam/security-credentials/\r\n".to_string(),
                    String::new(),
                ),
                _ => ("404 Not Found", String::new(), String::new()),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        });
    }
}

/// A results page in DuckDuckGo's HTML markup (an ad, then two results behind its redirect links).
fn results(addr: SocketAddr) -> String {
    let article = format!("http://{addr}/rust");
    let encoded: String = article
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    format!(
        r#"<html><body><div id="links" class="results">
<div class="result results_links result--ad"><h2 class="result__title"><a class="result__a" href="https://ads.example.com/">Buy now</a></h2><a class="result__snippet">An ad.</a></div>
<div class="result results_links results_links_deep web-result"><div class="links_main links_deep result__body">
<h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg={encoded}&amp;rut=1">The Rust Programming Language</a></h2>
<a class="result__snippet" href="//duckduckgo.com/l/?uddg={encoded}">A language empowering everyone to build reliable and efficient software.</a></div></div>
<div class="result results_links results_links_deep web-result"><div class="links_main links_deep result__body">
<h2 class="result__title"><a rel="nofollow" class="result__a" href="https://www.pinterest.com/rust">Rust pins</a></h2>
<a class="result__snippet">Pictures of rust.</a></div></div>
</div></body></html>"#
    )
}

const ARTICLE: &str = r#"<!doctype html><html><head><title>Rust</title><script>track()</script></head>
<body><nav>Home | Learn</nav><article><h1>Rust</h1><p>Rust is <strong>fast</strong>, <em>memory-safe</em> and
productive. See <a href="/learn">the book</a>.</p><ul><li>Performance</li><li>Reliability</li><li>Productivity</li></ul>
</article></body></html>"#;

/// The last tool results of the history, as text.
fn last_returns(messages: &[ModelMessage]) -> Vec<String> {
    let Some(ModelMessage::Request(r)) = messages.last() else { return Vec::new() };
    r.parts
        .iter()
        .filter_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(t.content_text()),
            _ => None,
        })
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(serve(listener));

    // The model searches, then reads the first result and the page that redirects.
    let model = FunctionModel::sync(move |messages, _info| {
        let call = |name: &str, args: serde_json::Value, id: &str| {
            ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))
        };
        match messages.len() {
            1 => ModelResponse::new(vec![call("web_search", json!({"query": "rust language"}), "s1")]),
            3 => {
                let found: serde_json::Value = serde_json::from_str(&last_returns(messages)[0]).unwrap_or_default();
                let first = found[0]["url"].as_str().unwrap_or_default().to_string();
                ModelResponse::new(vec![
                    call("web_fetch", json!({"url": first}), "f1"),
                    call("web_fetch", json!({"url": format!("http://{addr}/moved")}), "f2"),
                ])
            }
            _ => ModelResponse::text("Rust is fast, memory-safe and productive."),
        }
    });

    let agent = Agent::builder(model)
        .capability(
            WebSearch::new()
                .backend(DuckDuckGo::with_base_url(format!("http://{addr}/html/"))?)
                .blocked_domains(["pinterest.com"])
                .build()?,
        )
        .capability(
            // The site is on localhost: allowed by address, as a test would; everything else
            // private (the metadata address included) stays refused.
            WebFetch::new().fetcher(WebFetcher::builder().allow_address(addr)).max_uses(5).build()?,
        )
        .build()?;

    let result = agent.run("What is Rust?").await?;
    for message in result.all_messages() {
        if let ModelMessage::Request(r) = message {
            for part in &r.parts {
                if let ModelRequestPart::ToolReturn(t) = part {
                    println!("--- {} ({})\n{}\n", t.tool_name, t.tool_call_id, t.content_text());
                }
            }
        }
    }
    println!("answer: {}", result.output());
    Ok(())
}
