//! An MCP client for the official conformance harness (`@modelcontextprotocol/conformance`),
//! built on toolsmith's `McpToolset` over streamable HTTP.
//!
//! The harness starts a test server for a scenario, runs this program with the server's URL as
//! the last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`, then checks what the
//! server saw. Scenarios:
//!
//! - `initialize`: connect (the `initialize` handshake), list the tools, close.
//! - `tools_call`: an agent whose scripted model calls the server's `add_numbers` tool with
//!   `{"a": 5, "b": 3}` through the toolset (validation, call, result mapping).
//! - `sse-retry`: call `test_reconnection`, whose SSE stream the server closes early; the answer
//!   arrives after the client reconnects with `Last-Event-ID`, after the server's `retry` delay.
//! - `auth/*`: the same session (list the tools, call each) against a server that requires OAuth:
//!   `McpAuth` discovers, registers (pre-registered credentials from `MCP_CONFORMANCE_CONTEXT`, a
//!   client ID metadata document, or dynamic registration), authorizes, steps up and refreshes.
//!   The harness's authorization servers approve at once, so the example's authorizer is
//!   headless: it requests the authorization URL without following the redirect and reads the
//!   code from its `Location`.
//! - `elicitation-sep1034-client-defaults`: call `test_client_elicitation_defaults`, whose server
//!   asks for a form of fields with defaults; the handler accepts without filling any in, and the
//!   toolset applies the schema's defaults (SEP-1034).
//!
//! ```text
//! cargo build -p toolsmith --features mcp --example mcp_conformance_client
//! node conformance/dist/index.js client --scenario initialize \
//!     --command target/debug/examples/mcp_conformance_client
//! ```
//!
//! Exit code 0 when the scenario ran, 1 when it failed, 2 for a scenario it does not know.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;
use toolsmith::messages::{ModelRequestPart, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;
use toolsmith::toolset::{
    AuthorizationRequest, AuthorizationResponse, ElicitationMode, ElicitationResponse, McpAuth, McpAuthError,
    McpToolset,
};

/// The client ID metadata document the `auth/basic-cimd` scenario expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The redirect URI registered: nothing listens there, the headless authorizer reads the redirect.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

fn toolset(url: &str) -> McpToolset {
    McpToolset::http(url)
        .name("conformance")
        .connect_timeout(Duration::from_secs(10))
        .request_timeout(Duration::from_secs(20))
}

async fn initialize(url: &str) -> Result<(), String> {
    let mcp = toolset(url);
    let info = mcp.server_info().await.map_err(|e| e.to_string())?;
    println!(
        "connected to {} {} (protocol {})",
        info.name.unwrap_or_default(),
        info.version.unwrap_or_default(),
        info.protocol_version
    );
    let tools = mcp.list_tools().await.map_err(|e| e.to_string())?;
    println!("{} tool(s)", tools.len());
    mcp.close().await;
    Ok(())
}

async fn tools_call(url: &str) -> Result<(), String> {
    let mcp = toolset(url);
    // A scripted model: call add_numbers, then answer with what the tool returned.
    let model = FunctionModel::sync(|messages, info| {
        let returned = messages.last().and_then(|m| m.as_request()).and_then(|r| {
            r.parts.iter().find_map(|p| match p {
                ModelRequestPart::ToolReturn(ret) => Some(ret.content_text()),
                _ => None,
            })
        });
        match returned {
            Some(text) => ModelResponse::text(text),
            None if info.function_tools.iter().any(|t| t.name == "add_numbers") => {
                ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                    "add_numbers",
                    json!({"a": 5, "b": 3}),
                    "call_1",
                ))])
            }
            None => ModelResponse::text("the server has no add_numbers tool"),
        }
    });
    let agent = Agent::builder(model).toolset(mcp.clone()).build().map_err(|e| e.to_string())?;
    let result = agent.run("What is 5 + 3?").await.map_err(|e| e.to_string())?;
    println!("{}", result.output());
    mcp.close().await;
    if result.output().contains('8') { Ok(()) } else { Err(format!("unexpected answer: {}", result.output())) }
}

async fn sse_retry(url: &str) -> Result<(), String> {
    let mcp = toolset(url);
    let tools = mcp.list_tools().await.map_err(|e| e.to_string())?;
    let name = tools
        .iter()
        .map(|t| t.name.clone())
        .find(|n| n == "test_reconnection")
        .ok_or("the server has no test_reconnection tool")?;
    let result = mcp.call_tool(&name, json!({})).await.map_err(|e| e.to_string())?;
    println!("{}", result.text());
    mcp.close().await;
    if result.is_error { Err(result.error_message()) } else { Ok(()) }
}

/// Pre-registered client credentials the harness gives some scenarios.
#[derive(Default, serde::Deserialize)]
struct Context {
    client_id: Option<String>,
    client_secret: Option<String>,
}

/// Approves without a user: requests the authorization URL without following its redirect and
/// reads the code and state from the `Location` header.
async fn headless_authorize(request: AuthorizationRequest) -> Result<AuthorizationResponse, McpAuthError> {
    let failed = |message: String| McpAuthError::Authorizer { message };
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| failed(e.to_string()))?;
    let response = http.get(&request.url).send().await.map_err(|e| failed(e.to_string()))?;
    let location =
        response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).ok_or_else(|| {
            failed(format!("the authorization endpoint answered {} without a redirect", response.status()))
        })?;
    AuthorizationResponse::from_redirect(location)
}

/// Every `auth/*` scenario: connect with OAuth, list the tools and call each of them.
async fn auth(url: &str) -> Result<(), String> {
    let context: Context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let mut auth = McpAuth::oauth()
        .client_name("toolsmith-conformance")
        .client_metadata_url(CLIENT_METADATA_URL)
        .authorize_with(REDIRECT_URI, headless_authorize);
    if let Some(id) = context.client_id {
        auth = auth.client_id(id);
    }
    if let Some(secret) = context.client_secret {
        auth = auth.client_secret(secret);
    }
    let mcp = toolset(url).auth(auth);
    let tools = mcp.list_tools().await.map_err(|e| e.to_string())?;
    for tool in &tools {
        let result = mcp.call_tool(&tool.name, json!({})).await.map_err(|e| e.to_string())?;
        println!("{}: {}", tool.name, result.text());
    }
    mcp.close().await;
    Ok(())
}

async fn elicitation_defaults(url: &str) -> Result<(), String> {
    // Accept every form as it comes: the toolset fills in the requested schema's defaults.
    let mcp = toolset(url).elicitation_handler(|request| async move {
        match request.mode {
            ElicitationMode::Form { .. } => ElicitationResponse::accept_defaults(),
            _ => ElicitationResponse::Decline,
        }
    });
    let result = mcp.call_tool("test_client_elicitation_defaults", json!({})).await.map_err(|e| e.to_string())?;
    println!("{}", result.text());
    mcp.close().await;
    if result.is_error { Err(result.error_message()) } else { Ok(()) }
}

fn main() -> ExitCode {
    // The harness appends the server's URL to the command line.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(url) = args.last().cloned() else {
        eprintln!("usage: mcp_conformance_client SERVER_URL (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    // The headless authorizer's own HTTP client needs a TLS crypto provider installed (the
    // library's clients bring theirs).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("could not start a runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        match scenario.as_str() {
            "initialize" => Some(initialize(&url).await),
            "tools_call" => Some(tools_call(&url).await),
            "sse-retry" => Some(sse_retry(&url).await),
            name if name.starts_with("auth/") => Some(auth(&url).await),
            "elicitation-sep1034-client-defaults" => Some(elicitation_defaults(&url).await),
            _ => None,
        }
    });
    match outcome {
        Some(Ok(())) => ExitCode::SUCCESS,
        Some(Err(e)) => {
            eprintln!("scenario '{scenario}' failed: {e}");
            ExitCode::FAILURE
        }
        None => {
            eprintln!(
                "unknown scenario '{scenario}': this client knows initialize, tools_call, sse-retry, elicitation-sep1034-client-defaults and auth/*"
            );
            ExitCode::from(2)
        }
    }
}
