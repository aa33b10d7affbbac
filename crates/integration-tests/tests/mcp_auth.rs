//! OAuth authorization of MCP servers (`McpAuth`): every `auth/*` scenario of the official
//! conformance harness driving the `mcp_conformance_client` example, and the public API against
//! small hostile servers written here (metadata missing, metadata for another resource, a token
//! endpoint that refuses, tokens that expire, a token store holding a token).
//!
//! ```text
//! eval "$(scripts/install-mcp-servers.sh)"
//! cargo build -p toolsmith --features mcp --example mcp_conformance_client
//! cargo test -p integration-tests --features mcp-servers --test mcp_auth
//! ```

#[path = "mcp_auth/hostile.rs"]
mod hostile;
#[allow(dead_code)]
#[path = "mcp/support.rs"]
mod support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::json;
use toolsmith::toolset::{
    AuthorizationResponse, InMemoryTokenStore, McpAuth, McpAuthError, McpError, McpToolset, StoredAuth,
};

use hostile::{Hostile, json_answer, route};
use support::{assert_harness_passed, conformance_js, localhost_preload, node, temp_dir};

// ---------------------------------------------------------------------------------------------
// The conformance harness
// ---------------------------------------------------------------------------------------------

/// The example binary, built by `cargo build -p toolsmith --features mcp --example
/// mcp_conformance_client` into the same target folder.
fn conformance_client() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let client = profile_dir.join("examples").join("mcp_conformance_client");
    assert!(
        client.exists(),
        "{} is missing: build it first with `cargo build -p toolsmith --features mcp --example mcp_conformance_client`",
        client.display()
    );
    client
}

/// Runs one scenario; every check must pass (no failure, no warning).
fn run_conformance(scenario: &str) {
    let client = conformance_client();
    let work = temp_dir(&format!("conformance-{}", scenario.replace('/', "-")));
    let output = Command::new(node())
        .arg("--require")
        .arg(localhost_preload())
        .arg(conformance_js())
        .args(["client", "--scenario", scenario, "--timeout", "30000", "--output-dir", "results", "--command"])
        .arg(&client)
        .current_dir(&work)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert_harness_passed(scenario, &output, &work, false);
}

macro_rules! conformance {
    ($($test:ident => $scenario:literal,)*) => {
        $(
            #[test]
            fn $test() {
                run_conformance($scenario);
            }
        )*
    };
}

conformance! {
    conformance_auth_metadata_default => "auth/metadata-default",
    conformance_auth_metadata_var1 => "auth/metadata-var1",
    conformance_auth_metadata_var2 => "auth/metadata-var2",
    conformance_auth_metadata_var3 => "auth/metadata-var3",
    conformance_auth_basic_cimd => "auth/basic-cimd",
    conformance_auth_scope_from_www_authenticate => "auth/scope-from-www-authenticate",
    conformance_auth_scope_from_scopes_supported => "auth/scope-from-scopes-supported",
    conformance_auth_scope_omitted_when_undefined => "auth/scope-omitted-when-undefined",
    conformance_auth_scope_step_up => "auth/scope-step-up",
    conformance_auth_scope_retry_limit => "auth/scope-retry-limit",
    conformance_auth_token_endpoint_auth_basic => "auth/token-endpoint-auth-basic",
    conformance_auth_token_endpoint_auth_post => "auth/token-endpoint-auth-post",
    conformance_auth_token_endpoint_auth_none => "auth/token-endpoint-auth-none",
    conformance_auth_pre_registration => "auth/pre-registration",
    conformance_auth_2025_03_26_oauth_metadata_backcompat => "auth/2025-03-26-oauth-metadata-backcompat",
    conformance_auth_2025_03_26_oauth_endpoint_fallback => "auth/2025-03-26-oauth-endpoint-fallback",
}

// ---------------------------------------------------------------------------------------------
// Hostile servers, through the public API
// ---------------------------------------------------------------------------------------------

/// The authorization code the test authorizer hands back (never to be seen in an error).
const CODE: &str = "code-4f1d-secret";

/// Auth whose authorizer approves at once, counting its calls.
fn counting_auth(calls: &Arc<AtomicU32>) -> McpAuth {
    let calls = calls.clone();
    McpAuth::oauth().authorize_with("http://127.0.0.1:9/callback", move |request| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move { Ok(AuthorizationResponse::new(CODE, Some(request.state))) }
    })
}

fn challenge_with_metadata(base: &str) -> String {
    format!(r#"Bearer error="invalid_token", resource_metadata="{base}/prm""#)
}

/// Protected resource metadata naming `resource` and the authorization server at the base URL.
fn prm(resource: Option<&'static str>) -> (&'static str, hostile::Route) {
    (
        "/prm",
        route(move |_, base| {
            let resource = resource.map(str::to_string).unwrap_or(format!("{base}/mcp"));
            Some(json_answer(200, json!({"resource": resource, "authorization_servers": [base]})))
        }),
    )
}

/// Authorization server metadata at the base URL, with dynamic registration.
fn as_metadata() -> (&'static str, hostile::Route) {
    (
        "/.well-known/oauth-authorization-server",
        route(|_, base| {
            Some(json_answer(
                200,
                json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "registration_endpoint": format!("{base}/register"),
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                }),
            ))
        }),
    )
}

fn registration() -> (&'static str, hostile::Route) {
    ("/register", route(|_, _| Some(json_answer(201, json!({"client_id": "registered-client"})))))
}

fn auth_error(result: Result<Vec<toolsmith::ToolDefinition>, McpError>) -> McpAuthError {
    match result {
        Err(McpError::Auth { error, .. }) => error,
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_authorization_server_metadata_is_a_typed_error() {
    let server = Hostile::start(vec![prm(None)], challenge_with_metadata).await;
    let calls = Arc::new(AtomicU32::new(0));
    let mcp: McpToolset = McpToolset::http(server.url()).auth(counting_auth(&calls));
    let error = auth_error(mcp.list_tools().await);
    match &error {
        McpAuthError::MetadataMissing { issuer, tried } => {
            assert_eq!(issuer, &server.base);
            assert_eq!(tried.len(), 2, "{tried:?}");
            assert!(tried[0].ends_with("/.well-known/oauth-authorization-server"), "{tried:?}");
            assert!(tried[1].ends_with("/.well-known/openid-configuration"), "{tried:?}");
        }
        other => panic!("expected MetadataMissing, got {other:?}"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the user was sent to authorize without metadata");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_for_another_resource_is_refused() {
    let server =
        Hostile::start(vec![prm(Some("https://elsewhere.example/mcp")), as_metadata()], challenge_with_metadata).await;
    let calls = Arc::new(AtomicU32::new(0));
    let mcp: McpToolset = McpToolset::http(server.url()).auth(counting_auth(&calls));
    let error = auth_error(mcp.list_tools().await);
    assert_eq!(
        error,
        McpAuthError::ResourceMismatch { expected: server.url(), advertised: "https://elsewhere.example/mcp".into() }
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(server.requests_to("/.well-known/oauth-authorization-server").is_empty(), "went on past the mismatch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_endpoint_error_is_typed_and_keeps_the_code_out() {
    let token = (
        "/token",
        route(|_, _| {
            Some(json_answer(400, json!({"error": "invalid_grant", "error_description": "the code expired"})))
        }),
    );
    let server = Hostile::start(vec![prm(None), as_metadata(), registration(), token], challenge_with_metadata).await;
    let calls = Arc::new(AtomicU32::new(0));
    let mcp: McpToolset = McpToolset::http(server.url()).auth(counting_auth(&calls));
    let result = mcp.list_tools().await;
    let shown = format!("{result:?} {}", result.as_ref().map(|_| String::new()).unwrap_or_else(|e| e.to_string()));
    let error = auth_error(result);
    assert_eq!(
        error,
        McpAuthError::Endpoint {
            endpoint: "the token endpoint",
            status: 400,
            code: Some("invalid_grant".into()),
            description: Some("the code expired".into()),
        }
    );
    assert!(!shown.contains(CODE), "the authorization code leaked: {shown}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let exchange = &server.requests_to("/token")[0];
    assert_eq!(exchange.form("grant_type").as_deref(), Some("authorization_code"));
    assert_eq!(exchange.form("client_id").as_deref(), Some("registered-client"));
    assert!(exchange.form("code_verifier").is_some_and(|v| v.len() == 43));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiring_access_token_is_refreshed() {
    let token = (
        "/token",
        route(|request, _| {
            Some(match request.form("grant_type").as_deref() {
                // Expires within the refresh margin: renewed before it is ever sent.
                Some("authorization_code") => json_answer(
                    200,
                    json!({"access_token": "first", "token_type": "Bearer", "expires_in": 5, "refresh_token": "r1"}),
                ),
                Some("refresh_token") if request.form("refresh_token").as_deref() == Some("r1") => {
                    json_answer(200, json!({"access_token": "second", "token_type": "bearer", "expires_in": 3600}))
                }
                _ => json_answer(400, json!({"error": "invalid_grant"})),
            })
        }),
    );
    let server = Hostile::start(vec![prm(None), as_metadata(), registration(), token], challenge_with_metadata).await;
    server.accept("second");
    let calls = Arc::new(AtomicU32::new(0));
    let store = Arc::new(InMemoryTokenStore::new());
    let mcp: McpToolset = McpToolset::http(server.url()).auth(counting_auth(&calls).token_store_arc(store.clone()));
    let tools = mcp.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "echo");
    let grants: Vec<Option<String>> = server.requests_to("/token").iter().map(|r| r.form("grant_type")).collect();
    assert_eq!(grants, [Some("authorization_code".into()), Some("refresh_token".into())]);
    assert!(!server.bearers().contains(&"first".to_string()), "{:?}", server.bearers());
    assert!(server.bearers().contains(&"second".to_string()));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The refreshed token is what the store keeps (with the refresh token carried over).
    let kept = toolsmith::toolset::TokenStore::load(&*store, &server.url()).await.unwrap().unwrap();
    assert!(kept.has_refresh_token() && kept.expires_at().is_some());
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_stored_token_is_refreshed_without_the_user() {
    let token = (
        "/token",
        route(|request, _| {
            Some(if request.form("refresh_token").as_deref() == Some("stored-refresh") {
                json_answer(200, json!({"access_token": "renewed", "token_type": "Bearer"}))
            } else {
                json_answer(400, json!({"error": "invalid_grant"}))
            })
        }),
    );
    let server = Hostile::start(vec![token], challenge_with_metadata).await;
    server.accept("renewed");
    // A record as an earlier process left it: the server no longer accepts its access token.
    let stored: StoredAuth = serde_json::from_value(json!({
        "client": {"issuer": server.base, "client_id": "kept-client"},
        "token_endpoint": format!("{}/token", server.base),
        "resource": server.url(),
        "tokens": {"access_token": "revoked", "refresh_token": "stored-refresh", "scopes": []},
    }))
    .unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let auth = counting_auth(&calls).token_store(InMemoryTokenStore::with(server.url(), stored));
    let mcp: McpToolset = McpToolset::http(server.url()).auth(auth);
    mcp.list_tools().await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the user was asked although a refresh token was kept");
    assert_eq!(server.bearers().first().map(String::as_str), Some("revoked"));
    assert!(server.bearers().contains(&"renewed".to_string()));
    assert!(server.requests_to("/prm").is_empty(), "discovery ran although the store had what refreshing needs");
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_store_is_consulted_before_the_browser() {
    let server = Hostile::start(vec![prm(None), as_metadata(), registration()], challenge_with_metadata).await;
    server.accept("from-the-store");
    let calls = Arc::new(AtomicU32::new(0));
    let store = InMemoryTokenStore::with(server.url(), StoredAuth::with_access_token("from-the-store"));
    let mcp: McpToolset = McpToolset::http(server.url()).auth(counting_auth(&calls).token_store(store));
    let tools = mcp.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(server.requests_to("/prm").is_empty());
    assert!(server.bearers().iter().all(|b| b == "from-the-store"), "{:?}", server.bearers());
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_access_token_the_server_echoes_is_redacted_from_its_results() {
    const TOKEN: &str = "stored-token-0123456789";
    let server = Hostile::start(vec![prm(None), as_metadata(), registration()], challenge_with_metadata).await;
    server.accept(TOKEN);
    let calls = Arc::new(AtomicU32::new(0));
    let store = InMemoryTokenStore::with(server.url(), StoredAuth::with_access_token(TOKEN));
    let mcp: McpToolset = McpToolset::http(server.url()).auth(counting_auth(&calls).token_store(store));
    let result = mcp.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(server.bearers().last().map(String::as_str), Some(TOKEN), "the token was sent");
    assert_eq!(result.text(), "you are [REDACTED]");
    assert!(!format!("{result:?}").contains(TOKEN), "{result:?}");
    mcp.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_authorizer_the_error_says_what_to_configure() {
    let server = Hostile::start(vec![prm(None), as_metadata(), registration()], challenge_with_metadata).await;
    let mcp: McpToolset = McpToolset::http(server.url()).auth(McpAuth::oauth());
    let error = auth_error(mcp.list_tools().await);
    assert_eq!(error, McpAuthError::InteractionRequired);
    assert!(error.to_string().contains("McpAuth::authorizer"), "{error}");
}
