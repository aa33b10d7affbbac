//! The provider adapters against misbehaving servers on 127.0.0.1: servers that echo the API key
//! in every encoding on every error path, absurd `Retry-After` values, bodies that trickle or
//! stall forever, endless SSE lines, streams cut before their end, and answers of the wrong shape.

mod provider_support;

use std::time::{Duration, Instant};

use base64::Engine;
use futures::StreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolsmith::model::{AnyModel, Model, ModelError, ModelRequestParameters, ModelSettings, StreamingModel};
use toolsmith::providers::{AnthropicModel, GeminiModel, OpenAIChatModel, OpenAIResponsesModel, RetryConfig};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use provider_support::*;

/// The API key: with a `/` (escaped as `\/` in JSON) and a `+` (percent-encoded as `%2B`).
const KEY: &str = "sk-test/0123456789+secret_KEY";
/// A credential sent in a custom header.
const ORG_TOKEN: &str = "org-token-9876543210-abcdef";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Provider {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

const PROVIDERS: [Provider; 4] = [Provider::Chat, Provider::Responses, Provider::Anthropic, Provider::Gemini];

struct Opts {
    retry: RetryConfig,
    timeout: Option<Duration>,
    idle: Option<Duration>,
    max_event_size: Option<usize>,
}

impl Default for Opts {
    fn default() -> Self {
        Opts { retry: RetryConfig::none(), timeout: None, idle: None, max_event_size: None }
    }
}

macro_rules! configure {
    ($builder:expr, $opts:expr) => {{
        let mut b = $builder.api_key(KEY).header("X-Org-Token", ORG_TOKEN).retry($opts.retry.clone());
        if let Some(t) = $opts.timeout {
            b = b.timeout(t);
        }
        if let Some(t) = $opts.idle {
            b = b.idle_timeout(t);
        }
        if let Some(n) = $opts.max_event_size {
            b = b.max_event_size(n);
        }
        AnyModel::new(b.build().unwrap())
    }};
}

fn model(provider: Provider, base: &str, opts: &Opts) -> AnyModel {
    match provider {
        Provider::Chat => configure!(OpenAIChatModel::builder("gpt-4o-mini").base_url(format!("{base}/v1")), opts),
        Provider::Responses => {
            configure!(OpenAIResponsesModel::builder("gpt-5.2").base_url(format!("{base}/v1")), opts)
        }
        Provider::Anthropic => configure!(AnthropicModel::builder("claude-sonnet-4-5").base_url(base), opts),
        Provider::Gemini => configure!(GeminiModel::builder("gemini-2.5-flash").base_url(base), opts),
    }
}

/// The error of a request (streamed: the first error of the stream).
async fn error_of(model: &AnyModel, stream: bool) -> ModelError {
    error_with(model, stream, None).await
}

async fn error_with(model: &AnyModel, stream: bool, settings: Option<&ModelSettings>) -> ModelError {
    let params = ModelRequestParameters::default();
    if !stream {
        return model.request(&user("hi"), settings, &params).await.expect_err("the request should fail");
    }
    let mut events = match model.request_stream(&user("hi"), settings, &params).await {
        Ok(events) => events,
        Err(e) => return e,
    };
    while let Some(event) = events.next().await {
        if let Err(e) = event {
            return e;
        }
    }
    panic!("the stream should fail");
}

// ---------------------------------------------------------------------------------------------
// 1. The key never appears in an error
// ---------------------------------------------------------------------------------------------

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A secret as a server may echo it, each form as it appears in the raw body.
fn encodings(secret: &str) -> Vec<String> {
    let all_u: String = secret.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
    let all_pct: String = secret.bytes().map(|b| format!("%{b:02X}")).collect();
    vec![
        secret.to_string(),
        secret.replace('/', "\\/"),
        format!("\\u{:04x}{}", secret.as_bytes()[0], &secret[1..]),
        all_u.clone(),
        all_u.replace("\\u", "\\\\u"),
        all_pct.clone(),
        all_pct.to_lowercase(),
        secret.replace('/', "%2F").replace('+', "%2B"),
        secret.replace('s', "&#115;").replace('/', "&#x2f;").replace('+', "&#43;"),
        format!("\\\\u{:04x}{}", secret.as_bytes()[0], &secret[1..].replace('/', "\\\\/")),
        b64(secret),
        b64(&format!("Bearer {secret}")),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret),
        secret.bytes().map(|b| format!("{b:02x}")).collect(),
    ]
}

/// The text a server echoes: padding (to put the forms at every cut of a snippet), then every
/// form of the key and of the custom header's token.
fn echo(pad: usize) -> String {
    let mut text = "x".repeat(pad);
    for form in encodings(KEY).into_iter().chain(encodings(ORG_TOKEN)) {
        text.push(' ');
        text.push_str(&form);
    }
    text
}

fn assert_no_leak(err: &ModelError, what: &str) {
    let shown = [err.to_string(), format!("{err:?}"), err.message.clone()];
    for text in &shown {
        assert!(!text.is_empty(), "{what}: an empty error");
        for secret in [KEY, ORG_TOKEN] {
            for form in encodings(secret) {
                assert!(!text.contains(&form), "{what}: the form {form:?} leaked: {text}");
            }
            // No ten characters of the secret in a row (a snippet never cuts a secret in half).
            let chars: Vec<char> = secret.chars().collect();
            for window in chars.windows(10) {
                let piece: String = window.iter().collect();
                assert!(!text.contains(&piece), "{what}: {piece:?} leaked: {text}");
            }
            for form in [secret.replace('/', "\\/"), secret.bytes().map(|b| format!("%{b:02X}")).collect()] {
                let chars: Vec<char> = form.chars().collect();
                for window in chars.windows(16) {
                    let piece: String = window.iter().collect();
                    assert!(!text.contains(&piece), "{what}: {piece:?} leaked: {text}");
                }
            }
        }
    }
}

/// One way a server turns an echo into an error: whether it is streamed, the status, the
/// headers and the body (`@` is replaced by the echo, inside JSON strings where there is JSON).
struct ErrorPath {
    name: &'static str,
    stream: bool,
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    content_type: &'static str,
    body: &'static str,
}

const fn path(name: &'static str, stream: bool, status: u16, body: &'static str) -> ErrorPath {
    let content_type = if stream && status == 200 { "text/event-stream" } else { "application/json" };
    ErrorPath { name, stream, status, headers: &[], content_type, body }
}

fn error_paths(provider: Provider) -> Vec<ErrorPath> {
    let mut paths = vec![
        path(
            "401 body",
            false,
            401,
            r#"{"error": {"message": "Incorrect API key provided: @", "type": "invalid_request_error"}}"#,
        ),
        path("400 plain body", false, 400, "bad request @"),
        path("500 body", false, 500, r#"{"message": "@"}"#),
        path("401 on a stream", true, 401, r#"{"error": {"message": "@"}}"#),
        ErrorPath {
            name: "429 with a Retry-After past the bound",
            stream: false,
            status: 429,
            headers: &[("retry-after", "3600")],
            content_type: "application/json",
            body: r#"{"error": {"message": "slow down @"}}"#,
        },
        path("200 body that is not JSON", false, 200, "<html>@</html>"),
        path("SSE event that is not JSON", true, 200, "data: {not json @\n\n"),
        path("SSE event that is not JSON, no line end", true, 200, "data: @"),
    ];
    let specific: Vec<ErrorPath> = match provider {
        Provider::Chat => vec![
            path("200 error object", false, 200, r#"{"error": {"message": "@"}}"#),
            path("200 error string", false, 200, r#"{"error": "@"}"#),
            path("200 error object without message", false, 200, r#"{"error": {"code": "@"}}"#),
            path("200 without choices", false, 200, r#"{"object": "chat.completion", "id": "@"}"#),
            path("200 choices of the wrong type", false, 200, r#"{"choices": "@"}"#),
            path(
                "200 tool call without a name",
                false,
                200,
                r#"{"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"arguments": "@"}}]}}]}"#,
            ),
            path("SSE error event", true, 200, "data: {\"error\": {\"message\": \"@\"}}\n\n"),
            path("SSE error string", true, 200, "data: {\"error\": \"@\"}\n\n"),
            path(
                "SSE chunk of the wrong shape",
                true,
                200,
                "data: {\"choices\": [{\"delta\": {\"content\": 5, \"x\": \"@\"}}]}\n\n",
            ),
        ],
        Provider::Responses => vec![
            path("200 error object", false, 200, r#"{"error": {"message": "@"}}"#),
            path("200 error without message", false, 200, r#"{"error": {"code": "@"}}"#),
            path("200 without output", false, 200, r#"{"id": "@"}"#),
            path(
                "200 function call without a name",
                false,
                200,
                r#"{"output": [{"type": "function_call", "call_id": "c", "arguments": "@"}]}"#,
            ),
            path("SSE error event", true, 200, "event: error\ndata: {\"type\": \"error\", \"message\": \"@\"}\n\n"),
            path(
                "SSE response.failed",
                true,
                200,
                "data: {\"type\": \"response.failed\", \"response\": {\"error\": {\"message\": \"@\"}}}\n\n",
            ),
            path(
                "SSE event of the wrong shape",
                true,
                200,
                "data: {\"type\": \"response.output_text.delta\", \"delta\": 5, \"item_id\": \"@\"}\n\n",
            ),
        ],
        Provider::Anthropic => vec![
            path("200 error object", false, 200, r#"{"type": "error", "error": {"type": "@", "message": "@"}}"#),
            path("200 error without message", false, 200, r#"{"type": "error", "error": {"type": "@"}}"#),
            path("200 without content", false, 200, r#"{"id": "@", "type": "message"}"#),
            path(
                "200 tool use without a name",
                false,
                200,
                r#"{"content": [{"type": "tool_use", "id": "@", "input": {}}]}"#,
            ),
            path(
                "SSE error event",
                true,
                200,
                "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"@\", \"message\": \"@\"}}\n\n",
            ),
            path(
                "SSE event of the wrong shape",
                true,
                200,
                "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\"type\": \"text_delta\", \"text\": 5, \"x\": \"@\"}}\n\n",
            ),
        ],
        Provider::Gemini => vec![
            path("200 error object", false, 200, r#"{"error": {"message": "@", "status": "INVALID_ARGUMENT"}}"#),
            path("200 blocked prompt", false, 200, r#"{"promptFeedback": {"blockReason": "@"}}"#),
            path(
                "200 part of the wrong shape",
                false,
                200,
                r#"{"candidates": [{"content": {"parts": [{"functionCall": {"args": {"a": "@"}}}]}}]}"#,
            ),
            path("SSE error chunk", true, 200, "data: {\"error\": {\"code\": 500, \"message\": \"@\"}}\n\n"),
            path(
                "SSE chunk of the wrong shape",
                true,
                200,
                "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": 5, \"x\": \"@\"}]}}]}\n\n",
            ),
        ],
    };
    paths.extend(specific);
    paths
}

#[tokio::test]
async fn the_key_never_appears_in_an_error_whatever_the_server_echoes() {
    let server = MockServer::start().await;
    let mut checked = 0;
    for provider in PROVIDERS {
        let model = model(provider, &server.uri(), &Opts::default());
        for path in error_paths(provider) {
            for pad in [0, 41, 260, 290, 299, 1990, 3990] {
                server.reset().await;
                let mut response = ResponseTemplate::new(path.status)
                    .set_body_raw(path.body.replace('@', &echo(pad)), path.content_type);
                for (name, value) in path.headers {
                    response = response.insert_header(*name, *value);
                }
                Mock::given(method("POST")).respond_with(response).mount(&server).await;
                let err = error_of(&model, path.stream).await;
                assert_no_leak(&err, &format!("{provider:?}, {}, pad {pad}", path.name));
                checked += 1;
            }
        }
    }
    assert!(checked > 150, "{checked}");
}

#[tokio::test]
async fn redacted_errors_still_say_what_happened() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            format!(r#"{{"error": {{"message": "Invalid key \u0073{}"}}}}"#, &KEY[1..]),
            "application/json",
        ))
        .mount(&server)
        .await;
    let err = error_of(&model(Provider::Chat, &server.uri(), &Opts::default()), false).await;
    assert_eq!(err.kind, "ModelApiError");
    assert_eq!(err.message, "openai answered with an error: Invalid key [REDACTED]");
}

// ---------------------------------------------------------------------------------------------
// 3. Retry-After and retry configurations that would overflow
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn absurd_retry_after_values_never_panic() {
    let server = MockServer::start().await;
    let retry = RetryConfig::default().max_retries(1).initial_backoff(Duration::from_millis(1));
    let opts = Opts { retry, ..Opts::default() };
    let nines = "9".repeat(400);
    let too_long = [
        ("retry-after", "99999999999999999999"),
        ("retry-after", "  99999999999999999999  "),
        ("retry-after", nines.as_str()),
        ("retry-after-ms", nines.as_str()),
        ("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"),
    ];
    for (name, value) in too_long {
        server.reset().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429).insert_header(name, value).set_body_string("busy"))
            .mount(&server)
            .await;
        let started = Instant::now();
        let err = error_of(&model(Provider::Chat, &server.uri(), &opts), false).await;
        assert!(started.elapsed() < Duration::from_secs(2), "{name}: {value}");
        assert_eq!(err.kind, "ModelHttpError", "{name}: {value}");
        assert!(
            err.message.contains("longer than `RetryConfig::max_retry_after` (60.0 s)"),
            "{name}: {value}: {}",
            err.message
        );
        assert_eq!(requests(&server).await.len(), 1, "{name}: {value}: not retried");
    }
    // Not a wait: ignored, the backoff applies and the retry succeeds.
    for (name, value) in [
        ("retry-after", "-5"),
        ("retry-after", "NaN"),
        ("retry-after", "inf"),
        ("retry-after", "1e20"),
        ("retry-after", "1e300"),
        ("retry-after-ms", "-inf"),
        ("retry-after-ms", "inf"),
        ("retry-after-ms", "1e300"),
        ("retry-after", "soon"),
    ] {
        server.reset().await;
        Mock::given(method("POST"))
            .respond_with(Seq::new([
                ResponseTemplate::new(503).insert_header(name, value),
                json_response("openai", "chat_text.json"),
            ]))
            .mount(&server)
            .await;
        let response =
            model(Provider::Chat, &server.uri(), &opts).request(&user("hi"), None, &Default::default()).await;
        assert!(response.is_ok(), "{name}: {value}: {response:?}");
    }
}

/// A padded `Retry-After` (RFC 9110 lets field values carry spaces and tabs) is the wait asked
/// for: within the bound it is waited for, beyond it the error says so at once.
#[tokio::test]
async fn padded_retry_after_values_are_the_wait_asked_for() {
    let server = MockServer::start().await;
    let bound = RetryConfig::default().max_retries(1).max_retry_after(Duration::from_secs(1));
    for value in ["  2  ", "\t2", "2\t ", "  2.0"] {
        server.reset().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429).insert_header("retry-after", value).set_body_string("busy"))
            .mount(&server)
            .await;
        let opts = Opts { retry: bound.clone(), ..Opts::default() };
        let err = error_of(&model(Provider::Chat, &server.uri(), &opts), false).await;
        assert_eq!(err.retry_after(), Some(Duration::from_secs(2)), "{value:?}: {}", err.message);
        assert!(err.message.contains("asked to wait 2.0 s"), "{value:?}: {}", err.message);
        assert_eq!(requests(&server).await.len(), 1, "{value:?}");
    }
    for value in ["  0  ", "\t0\t", " 0.000 "] {
        server.reset().await;
        Mock::given(method("POST"))
            .respond_with(Seq::new([
                ResponseTemplate::new(429).insert_header("retry-after", value),
                json_response("openai", "chat_text.json"),
            ]))
            .mount(&server)
            .await;
        // A backoff far beyond the total timeout: only the zero wait asked for lets the retry happen.
        let retry = RetryConfig::default().max_retries(1).initial_backoff(Duration::from_secs(3600));
        let opts = Opts { retry, timeout: Some(Duration::from_secs(60)), ..Opts::default() };
        let response =
            model(Provider::Chat, &server.uri(), &opts).request(&user("hi"), None, &Default::default()).await;
        assert!(response.is_ok(), "{value:?}: {response:?}");
        assert_eq!(requests(&server).await.len(), 2, "{value:?}");
    }
}

#[tokio::test]
async fn extreme_retry_configurations_never_panic_and_keep_to_the_timeout() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(500)).mount(&server).await;
    for retry in [
        RetryConfig::default().initial_backoff(Duration::MAX).max_backoff(Duration::MAX).max_retries(u32::MAX),
        RetryConfig::default().initial_backoff(Duration::from_secs(u64::MAX)).max_backoff(Duration::MAX),
        RetryConfig::default().max_retry_after(Duration::MAX).max_backoff(Duration::ZERO).max_retries(3),
    ] {
        let opts = Opts { retry, timeout: Some(Duration::from_secs(2)), ..Opts::default() };
        let started = Instant::now();
        let err = error_of(&model(Provider::Chat, &server.uri(), &opts), false).await;
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(err.kind, "ModelHttpError", "{}", err.message);
    }
    // The longest timeouts are no deadline, not a panic.
    let mut settings = ModelSettings::new();
    for t in [Duration::MAX, Duration::from_secs(u64::MAX / 2), Duration::from_secs(1 << 40)] {
        settings.timeout = Some(t);
        let err = error_with(&model(Provider::Chat, &server.uri(), &Opts::default()), false, Some(&settings)).await;
        assert_eq!(err.kind, "ModelHttpError");
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Total and idle deadlines, streamed or not
// ---------------------------------------------------------------------------------------------

/// A server on 127.0.0.1 whose every connection is handled by `handle` with raw bytes.
async fn raw_server<F, Fut>(handle: F) -> String
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(handle(socket));
        }
    });
    format!("http://{addr}")
}

/// Reads one request (its head and its body, by `content-length`).
async fn read_request(socket: &mut TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Ok(n) = socket.read(&mut chunk).await else { return };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let Ok(n) = socket.read(&mut chunk).await else { return };
                if n == 0 {
                    return;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return;
        }
    }
}

/// Answers 200 with a chunked body that sends `piece` every 100 ms, for at most a minute.
async fn trickle(mut socket: TcpStream, content_type: &'static str, piece: &'static [u8]) {
    read_request(&mut socket).await;
    let head = format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for _ in 0..600 {
        let chunk = [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
        if socket.write_all(&chunk).await.is_err() || socket.flush().await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Reads the request, optionally sends the response's head, then says nothing for a minute.
async fn stall(mut socket: TcpStream, head: Option<&'static str>) {
    read_request(&mut socket).await;
    if let Some(head) = head
        && socket.write_all(head.as_bytes()).await.is_err()
    {
        return;
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_ends_hits_the_total_timeout() {
    let json = raw_server(|s| trickle(s, "application/json", b" ")).await;
    let sse = raw_server(|s| trickle(s, "text/event-stream", b": keep-alive\n\n")).await;
    let endless_line = raw_server(|s| trickle(s, "text/event-stream", b"xxxxxxxxxx")).await;
    let opts = Opts { timeout: Some(Duration::from_millis(800)), ..Opts::default() };
    for provider in PROVIDERS {
        for (base, stream) in [(&json, false), (&sse, true), (&endless_line, true)] {
            let started = Instant::now();
            let err = error_of(&model(provider, base, &opts), stream).await;
            let took = started.elapsed();
            assert!(took >= Duration::from_millis(700) && took < Duration::from_millis(2500), "{provider:?}: {took:?}");
            assert_eq!(err.kind, "ModelTimeoutError", "{provider:?}: {}", err.message);
            assert!(err.message.contains("did not end within the request's total timeout of 0.8 s"), "{}", err.message);
        }
    }
    // ModelSettings::timeout is the total timeout of that request.
    let mut settings = ModelSettings::new();
    settings.timeout = Some(Duration::from_millis(500));
    let started = Instant::now();
    let err = error_with(&model(Provider::Chat, &sse, &Opts::default()), true, Some(&settings)).await;
    assert!(started.elapsed() < Duration::from_millis(2000));
    assert!(err.message.contains("total timeout of 0.5 s"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stalls_hits_the_idle_timeout() {
    let silent = raw_server(|s| stall(s, None)).await;
    const JSON_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    let json_head = raw_server(|s| stall(s, Some(JSON_HEAD))).await;
    let sse_head = raw_server(|s| stall(s, Some(SSE_HEAD))).await;
    let opts =
        Opts { timeout: Some(Duration::from_secs(20)), idle: Some(Duration::from_millis(300)), ..Opts::default() };
    for provider in PROVIDERS {
        for (base, stream, says) in [
            (&silent, false, "did not answer within 0.3 s, the idle timeout"),
            (&silent, true, "did not answer within 0.3 s, the idle timeout"),
            (&json_head, false, "answer stalled: nothing arrived for 0.3 s"),
            (&sse_head, true, "stream stalled: nothing arrived for 0.3 s"),
        ] {
            let started = Instant::now();
            let err = error_of(&model(provider, base, &opts), stream).await;
            assert!(started.elapsed() < Duration::from_millis(2000), "{provider:?}");
            assert_eq!(err.kind, "ModelTimeoutError");
            assert!(err.message.contains(says), "{provider:?}: {}", err.message);
        }
    }
    // A head that does not come within the idle timeout is retried, within the total timeout.
    let retry = RetryConfig::default().max_retries(50).initial_backoff(Duration::from_millis(1));
    let opts = Opts {
        retry,
        timeout: Some(Duration::from_millis(1000)),
        idle: Some(Duration::from_millis(300)),
        ..Opts::default()
    };
    let started = Instant::now();
    let err = error_of(&model(Provider::Anthropic, &silent, &opts), false).await;
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900) && took < Duration::from_millis(2500), "{took:?}");
    assert!(err.message.contains("did not answer within 1.0 s"), "{}", err.message);
}

// ---------------------------------------------------------------------------------------------
// 8. SSE in linear time, with a bound on an event's size
// ---------------------------------------------------------------------------------------------

/// Sends `data: ` and then `total` bytes of `x` without a line end, in chunks of `chunk` bytes.
async fn long_line(mut socket: TcpStream, total: usize, chunk: usize) {
    read_request(&mut socket).await;
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n6\r\ndata: \r\n";
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let piece = vec![b'x'; chunk];
    let mut sent = 0;
    while sent < total {
        let framed = [format!("{chunk:x}\r\n").as_bytes(), &piece, b"\r\n"].concat();
        if socket.write_all(&framed).await.is_err() {
            return;
        }
        sent += chunk;
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_4_mib_line_without_an_end_is_parsed_in_linear_time() {
    let mib4 = 4 * 1024 * 1024;
    for chunk in [1024, 16 * 1024] {
        let base = raw_server(move |s| long_line(s, mib4, chunk)).await;
        for provider in PROVIDERS {
            let started = Instant::now();
            let err = error_of(&model(provider, &base, &Opts::default()), true).await;
            let took = started.elapsed();
            assert!(took < Duration::from_secs(10), "{provider:?}, {chunk}-byte chunks: {took:?}");
            // The stream ended in the middle of an event: nothing was dispatched, and the answer
            // has no end.
            assert!(err.message.contains("ended before the answer did"), "{provider:?}: {}", err.message);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_past_the_size_limit_fails_clearly() {
    let base = raw_server(|s| long_line(s, 2 * 1024 * 1024, 8 * 1024)).await;
    let opts = Opts { max_event_size: Some(1024 * 1024), ..Opts::default() };
    for provider in PROVIDERS {
        let err = error_of(&model(provider, &base, &opts), true).await;
        assert_eq!(err.kind, "ModelProtocolError");
        assert!(err.message.contains("an event larger than 1048576 bytes, the limit"), "{}", err.message);
    }
}

// ---------------------------------------------------------------------------------------------
// 9. Streams cut before their end
// ---------------------------------------------------------------------------------------------

/// The fixture's events up to (without) the first one whose text contains `stop_at`.
fn cut(provider: &str, name: &str, stop_at: &str) -> String {
    let text = fixture(provider, name).replace("\r\n", "\n");
    let mut out = String::new();
    for event in text.split("\n\n") {
        if event.contains(stop_at) {
            break;
        }
        out.push_str(event);
        out.push_str("\n\n");
    }
    out
}

#[tokio::test]
async fn streams_cut_before_their_terminal_event_are_errors() {
    let server = MockServer::start().await;
    let cases = [
        (Provider::Anthropic, cut("anthropic", "messages_stream_tool_use.sse", "message_stop"), "message_stop"),
        (Provider::Anthropic, cut("anthropic", "messages_stream_tool_use.sse", "message_delta"), "message_stop"),
        (Provider::Responses, cut("openai", "responses_stream.sse", "response.completed"), "response.completed"),
        (
            Provider::Responses,
            cut("openai", "responses_stream.sse", "response.completed") + "data: [DONE]\n\n",
            "response.completed",
        ),
        (Provider::Gemini, cut("gemini", "stream_generate_content.sse", "finishReason"), "finishReason"),
        (Provider::Gemini, cut("gemini", "stream_partial_args.sse", "finishReason"), "finishReason"),
        (Provider::Chat, cut("openai", "chat_stream_text.sse", "finish_reason\":\"stop"), "finish_reason"),
    ];
    for (provider, body, says) in cases {
        assert!(!body.is_empty());
        server.reset().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
            .mount(&server)
            .await;
        let err = error_of(&model(provider, &server.uri(), &Opts::default()), true).await;
        assert!(err.message.contains("ended before the answer did"), "{provider:?}: {}", err.message);
        assert!(err.message.contains(says), "{provider:?}: {}", err.message);
        if provider != Provider::Chat {
            // Retryable: a FallbackModel (or the caller) may try again elsewhere.
            assert_eq!(err.kind, "ModelConnectionError", "{provider:?}");
        }
    }
}

#[tokio::test]
async fn a_stream_cut_mid_answer_yields_the_deltas_then_the_error() {
    let server = MockServer::start().await;
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"claude\",\"usage\":{\"input_tokens\":1}}}\n\n\
                event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
                event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Transfer approved: do NOT\"}}\n\n";
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let model = model(Provider::Anthropic, &server.uri(), &Opts::default());
    let mut stream = model.request_stream(&user("hi"), None, &Default::default()).await.unwrap();
    let mut deltas = 0;
    let err = loop {
        match stream.next().await {
            Some(Ok(toolsmith::model::ModelStreamEvent::Final(_))) => panic!("a cut stream is not an answer"),
            Some(Ok(_)) => deltas += 1,
            Some(Err(e)) => break e,
            None => panic!("the stream should fail"),
        }
    };
    assert!(deltas > 0, "the deltas that arrived are still shown");
    assert_eq!(err.kind, "ModelConnectionError");
    assert!(err.message.contains("no message_stop event"), "{}", err.message);
}

// ---------------------------------------------------------------------------------------------
// 15. Answers of the wrong shape say which field is wrong
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn malformed_answers_name_the_field() {
    let server = MockServer::start().await;
    let cases: Vec<(Provider, bool, serde_json::Value, &str)> = vec![
        (Provider::Chat, false, json!({"id": "x"}), "`choices` is missing"),
        (Provider::Chat, false, json!({"choices": {}}), "`choices` is an object, expected an array"),
        (Provider::Chat, false, json!({"choices": []}), "`choices` is empty"),
        (Provider::Chat, false, json!({"choices": [{}]}), "`choices[0].message` is missing"),
        (
            Provider::Chat,
            false,
            json!({"choices": [{"message": {"content": 5}}]}),
            "`choices[0].message.content` is a number",
        ),
        (
            Provider::Chat,
            false,
            json!({"choices": [{"message": {"tool_calls": [{"id": "a", "function": {"name": 3}}]}}]}),
            "`choices[0].message.tool_calls[0].function.name` is a number, expected a string",
        ),
        (Provider::Chat, false, json!([1, 2]), "the answer is an array, expected an object"),
        (Provider::Responses, false, json!({"id": "x"}), "`output` is missing"),
        (Provider::Responses, false, json!({"output": [5]}), "`output[0]` is a number, expected an object"),
        (
            Provider::Responses,
            false,
            json!({"output": [{"type": "message", "content": [{"type": "output_text", "text": {}}]}]}),
            "`output[0].content[0].text` is an object, expected a string",
        ),
        (Provider::Anthropic, false, json!({"id": "x"}), "`content` is missing"),
        (
            Provider::Anthropic,
            false,
            json!({"content": [{"type": "tool_use", "id": "t", "name": "f", "input": "x"}]}),
            "`content[0].input` is a string, expected an object",
        ),
        (Provider::Gemini, false, json!({"usageMetadata": {}}), "`candidates` is missing"),
        (Provider::Gemini, false, json!({"candidates": []}), "`candidates` is empty"),
        (
            Provider::Gemini,
            false,
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]}),
            "`candidates[0].content.parts[0].functionCall.name` is missing",
        ),
    ];
    for (provider, stream, body, says) in cases {
        server.reset().await;
        Mock::given(method("POST")).respond_with(ResponseTemplate::new(200).set_body_json(&body)).mount(&server).await;
        let err = error_of(&model(provider, &server.uri(), &Opts::default()), stream).await;
        assert_eq!(err.kind, "UnexpectedModelBehavior", "{provider:?}: {}", err.message);
        assert!(err.message.contains(says), "{provider:?}: {}", err.message);
        assert!(err.message.contains("malformed answer"), "{provider:?}: {}", err.message);
        // A snippet of the answer.
        let snippet: String = body.to_string().chars().take(8).collect();
        assert!(err.message.contains(&snippet), "{provider:?}: {}", err.message);
    }
}
