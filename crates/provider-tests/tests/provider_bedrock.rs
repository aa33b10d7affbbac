//! AWS Bedrock's Converse API on the wire: request bodies asserted field by field, every request's
//! SigV4 signature recomputed here independently, answers and event streams in the documented
//! formats (the stream's frames encoded here, CRC32s included) through local servers.

mod provider_support;

use std::time::Duration;

use futures::StreamExt;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith::messages::ModelResponsePart;
use toolsmith::model::{
    Model, ModelErrorKind, ModelRequestParameters, ModelSettings, ModelStreamEvent, StreamingModel, ToolChoice,
};
use toolsmith::providers::{AwsCredentials, BedrockModel, RetryConfig, infer_model};
use toolsmith::tool::ToolDefinition;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use provider_support::*;

const MODEL_ID: &str = "anthropic.claude-3-5-sonnet-20240620-v1:0";
const ENCODED_ID: &str = "anthropic.claude-3-5-sonnet-20240620-v1%3A0";
const ACCESS_KEY: &str = "AKIDEXAMPLE0123";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const SESSION_TOKEN: &str = "IQoJb3JpZ2luX2VjEXAMPLE-session-token-0123456789";
const REGION: &str = "eu-west-3";

fn credentials() -> AwsCredentials {
    AwsCredentials::new(ACCESS_KEY, SECRET_KEY).session_token(SESSION_TOKEN)
}

fn model_at(base_url: &str) -> BedrockModel {
    BedrockModel::builder(MODEL_ID)
        .region(REGION)
        .credentials(credentials())
        .base_url(base_url)
        .retry(RetryConfig::default().initial_backoff(Duration::from_millis(1)))
        .build()
        .unwrap()
}

fn params() -> ModelRequestParameters {
    let mut p = ModelRequestParameters::default();
    p.function_tools = vec![
        ToolDefinition::new("get_weather", weather_schema()).with_description("Get the weather.").into(),
        ToolDefinition::new("get_time", weather_schema()).into(),
    ];
    p.allow_text_output = true;
    p
}

fn converse_response(content: Value, stop: &str) -> Value {
    json!({
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 412, "outputTokens": 58, "totalTokens": 590, "cacheReadInputTokens": 100, "cacheWriteInputTokens": 20},
        "metrics": {"latencyMs": 1123}
    })
}

fn json_answer(body: Value, request_id: &str) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("x-amzn-requestid", request_id)
        .set_body_raw(body.to_string(), "application/json")
}

// ---------------------------------------------------------------------------------------------
// SigV4, recomputed from the received request (AWS's documented algorithm).

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap();
    mac.update(data.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// RFC 3986 encoding of everything but the unreserved characters.
fn uri_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// What the `Authorization` header of a request said.
#[derive(Debug)]
struct Authorization {
    access_key: String,
    date: String,
    region: String,
    service: String,
    terminator: String,
    signed_headers: Vec<String>,
    signature: String,
}

fn authorization(req: &Request) -> Authorization {
    let header = req.headers.get("authorization").expect("an Authorization header").to_str().unwrap().to_string();
    let rest = header.strip_prefix("AWS4-HMAC-SHA256 ").unwrap_or_else(|| panic!("not SigV4: {header}"));
    let field = |name: &str| {
        rest.split(", ")
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in {header}"))
            .to_string()
    };
    let credential = field("Credential");
    let scope: Vec<&str> = credential.split('/').collect();
    assert_eq!(scope.len(), 5, "{credential}");
    Authorization {
        access_key: scope[0].into(),
        date: scope[1].into(),
        region: scope[2].into(),
        service: scope[3].into(),
        terminator: scope[4].into(),
        signed_headers: field("SignedHeaders").split(';').map(str::to_string).collect(),
        signature: field("Signature"),
    }
}

/// The signature of `req` (with `body` in place of its own) under `secret`, computed from
/// scratch: canonical request, string to sign, derived key.
fn expected_signature(req: &Request, body: &[u8], secret: &str) -> String {
    let auth = authorization(req);
    let header = |name: &str| {
        req.headers.get_all(name).iter().map(|v| v.to_str().unwrap().trim().to_string()).collect::<Vec<_>>().join(",")
    };
    // Every service but S3 encodes the (already encoded) path segments once more.
    let canonical_uri: String = req.url.path().split('/').map(uri_encode).collect::<Vec<_>>().join("/");
    let mut query: Vec<(String, String)> =
        req.url.query_pairs().map(|(k, v)| (uri_encode(&k), uri_encode(&v))).collect();
    query.sort();
    let canonical_query = query.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&");
    let canonical_headers: String =
        auth.signed_headers.iter().map(|name| format!("{name}:{}\n", header(name))).collect();
    let canonical_request = format!(
        "{}\n{canonical_uri}\n{canonical_query}\n{canonical_headers}\n{}\n{}",
        req.method.as_str(),
        auth.signed_headers.join(";"),
        hex(&Sha256::digest(body))
    );
    let amz_date = header("x-amz-date");
    let scope = format!("{}/{}/{}/{}", auth.date, auth.region, auth.service, auth.terminator);
    let string_to_sign =
        format!("AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}", hex(&Sha256::digest(canonical_request.as_bytes())));
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), &auth.date);
    let k_region = hmac(&k_date, &auth.region);
    let k_service = hmac(&k_region, &auth.service);
    let k_signing = hmac(&k_service, &auth.terminator);
    hex(&hmac(&k_signing, &string_to_sign))
}

/// Asserts that `req` is signed for Bedrock in `REGION` with the test credentials, and that the
/// signature verifies over the received request.
fn assert_signed(req: &Request) {
    let auth = authorization(req);
    assert_eq!(auth.access_key, ACCESS_KEY);
    assert_eq!(
        (auth.region.as_str(), auth.service.as_str(), auth.terminator.as_str()),
        (REGION, "bedrock", "aws4_request")
    );
    let amz_date = req.headers.get("x-amz-date").expect("x-amz-date").to_str().unwrap();
    assert_eq!(amz_date.len(), 16, "{amz_date}");
    assert!(amz_date.starts_with(&auth.date), "the scope's date is the request's: {amz_date}");
    for name in ["host", "x-amz-date", "x-amz-security-token", "content-type"] {
        assert!(auth.signed_headers.iter().any(|h| h == name), "{name} is signed: {:?}", auth.signed_headers);
    }
    assert_eq!(req.headers.get("x-amz-security-token").unwrap().to_str().unwrap(), SESSION_TOKEN);
    assert_eq!(auth.signature, expected_signature(req, &req.body, SECRET_KEY), "the signature verifies");
    // The check can fail: another body, or another key, gives another signature.
    let mut tampered = req.body.clone();
    tampered.push(b' ');
    assert_ne!(auth.signature, expected_signature(req, &tampered, SECRET_KEY));
    assert_ne!(auth.signature, expected_signature(req, &req.body, "another-secret-key"));
}

// ---------------------------------------------------------------------------------------------
// Event-stream frames, encoded here.

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// One frame: string headers, a payload, both CRC32s.
fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (name, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(7); // string
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value.as_bytes());
    }
    let total = (12 + h.len() + payload.len() + 4) as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    let message_crc = crc32(&out);
    out.extend_from_slice(&message_crc.to_be_bytes());
    out
}

fn event(kind: &str, payload: Value) -> Vec<u8> {
    frame(
        &[(":event-type", kind), (":content-type", "application/json"), (":message-type", "event")],
        payload.to_string().as_bytes(),
    )
}

fn exception(kind: &str, message: &str) -> Vec<u8> {
    frame(
        &[(":exception-type", kind), (":content-type", "application/json"), (":message-type", "exception")],
        json!({"message": message}).to_string().as_bytes(),
    )
}

/// A one-request HTTP/1.1 server that answers with `chunks`, each written (and flushed) on its
/// own after a pause, as chunked transfer encoding. Returns its URL and the raw request.
async fn stream_server(chunks: Vec<Vec<u8>>) -> (String, tokio::task::JoinHandle<Vec<u8>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            let n = socket.read(&mut buf).await.unwrap();
            assert!(n > 0, "the client closed before sending its request");
            request.extend_from_slice(&buf[..n]);
            if let Some(i) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&request[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap_or(0);
        while request.len() < head_end + length {
            let n = socket.read(&mut buf).await.unwrap();
            request.extend_from_slice(&buf[..n]);
        }
        socket
            .write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\nx-amzn-requestid: 6c1f2e3a-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
            )
            .await
            .unwrap();
        for chunk in chunks {
            let mut piece = format!("{:x}\r\n", chunk.len()).into_bytes();
            piece.extend_from_slice(&chunk);
            piece.extend_from_slice(b"\r\n");
            socket.write_all(&piece).await.unwrap();
            socket.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        socket.write_all(b"0\r\n\r\n").await.unwrap();
        socket.flush().await.unwrap();
        request
    });
    (url, handle)
}

/// The frames of a streamed answer: reasoning with its signature, text, then a tool call whose
/// input arrives in two pieces, the stop reason and the usage.
fn streamed_answer() -> Vec<Vec<u8>> {
    vec![
        event("messageStart", json!({"role": "assistant", "p": "abcd"})),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "The user wants "}}}),
        ),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "the weather."}}}),
        ),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQBCgIYAhIM"}}}),
        ),
        event("contentBlockStop", json!({"contentBlockIndex": 0})),
        event("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "Let me "}})),
        event("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "check."}})),
        event("contentBlockStop", json!({"contentBlockIndex": 1})),
        event(
            "contentBlockStart",
            json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_Qh2xbL", "name": "get_weather"}}}),
        ),
        event("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"city\": "}}})),
        event("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "\"Paris\"}"}}})),
        event("contentBlockStop", json!({"contentBlockIndex": 2})),
        event("messageStop", json!({"stopReason": "tool_use"})),
        event(
            "metadata",
            json!({"usage": {"inputTokens": 30, "outputTokens": 12, "totalTokens": 47, "cacheReadInputTokens": 5}, "metrics": {"latencyMs": 300}}),
        ),
    ]
}

/// The frames' bytes cut at the given offsets (so that frames are split across chunks).
fn cut(bytes: &[u8], at: &[usize]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut start = 0;
    for &end in at {
        out.push(bytes[start..end].to_vec());
        start = end;
    }
    out.push(bytes[start..].to_vec());
    out
}

async fn stream_items(model: &BedrockModel) -> Vec<Result<ModelStreamEvent, toolsmith::model::ModelError>> {
    let mut stream = model.request_stream(&user("Weather in Paris?"), None, &params()).await.unwrap();
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item);
    }
    items
}

// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_agent_run_calls_the_tool_with_signed_converse_requests() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("/model/{ENCODED_ID}/converse")))
        .respond_with(Seq::new([
            json_answer(
                converse_response(
                    json!([
                        {"text": "Let me check."},
                        {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather", "input": {"city": "Paris"}}}
                    ]),
                    "tool_use",
                ),
                "req-1",
            ),
            json_answer(converse_response(json!([{"text": "It's sunny in Paris."}]), "end_turn"), "req-2"),
        ]))
        .expect(2)
        .mount(&server)
        .await;
    let result = weather_agent(model_at(&server.uri())).run("What's the weather in Paris?").await.unwrap();
    assert_eq!(result.output(), "It's sunny in Paris.");
    // Input tokens include the cache reads and writes, for each of the two requests.
    assert_eq!(result.usage().input_tokens, 2 * (412 + 100 + 20));
    assert_eq!(result.usage().output_tokens, 2 * 58);
    assert_eq!(result.usage().cache_read_tokens, 200);
    assert_eq!(result.usage().cache_write_tokens, 40);
    let first = result.all_messages()[1].as_response().unwrap();
    assert_eq!(first.provider_response_id.as_deref(), Some("req-1"));
    assert_eq!(first.provider_name.as_deref(), Some("bedrock"));
    assert_eq!(first.finish_reason.as_deref(), Some("tool_call"));
    assert_eq!(first.model_name.as_deref(), Some(MODEL_ID));

    let requests = requests(&server).await;
    assert_eq!(requests.len(), 2);
    for req in &requests {
        assert_signed(req);
        assert_eq!(req.headers.get("content-type").unwrap(), "application/json");
    }
    let bodies = bodies(&server).await;
    let first = &bodies[0];
    assert_eq!(first["system"], json!([{"text": "You are a weather assistant."}]));
    assert_eq!(first["messages"], json!([{"role": "user", "content": [{"text": "What's the weather in Paris?"}]}]));
    let spec = &first["toolConfig"]["tools"][0]["toolSpec"];
    assert_eq!(spec["name"], "get_weather");
    assert_eq!(spec["description"], "Get the current weather in a city.");
    assert_eq!(spec["inputSchema"]["json"]["required"], json!(["city"]));
    assert_eq!(first["toolConfig"]["toolChoice"], json!({"auto": {}}));
    assert!(first.get("inferenceConfig").is_none());
    assert!(first.get("modelId").is_none(), "the model id is in the path only");

    assert_eq!(
        bodies[1]["messages"],
        json!([
            {"role": "user", "content": [{"text": "What's the weather in Paris?"}]},
            {"role": "assistant", "content": [
                {"text": "Let me check."},
                {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather", "input": {"city": "Paris"}}}
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "content": [{"text": "Sunny in Paris"}], "status": "success"}}
            ]}
        ])
    );
}

#[tokio::test]
async fn settings_and_tool_choice_map_to_inference_and_tool_config() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_answer(converse_response(json!([{"text": "ok"}]), "max_tokens"), "r"))
        .mount(&server)
        .await;
    let m = model_at(&server.uri());
    let mut settings = ModelSettings::new().max_tokens(256).temperature(0.2);
    settings.top_p = Some(0.9);
    settings.extra = Some(Box::new(json!({"stop_sequences": ["END"], "additionalModelRequestFields": {"top_k": 40}})));
    let response = m.request(&user("hi"), Some(&settings), &params()).await.unwrap();
    assert_eq!(response.finish_reason.as_deref(), Some("length"));
    let choices = [
        (ToolChoice::Required, Some(json!({"any": {}})), 2),
        // One required tool is Converse's `tool` choice, with every tool declared.
        (ToolChoice::Tools(vec!["get_time".into()]), Some(json!({"tool": {"name": "get_time"}})), 2),
        // A tool or a text answer: the tool alone, the model free to answer.
        (ToolChoice::ToolOrOutput(vec!["get_time".into()]), Some(json!({"auto": {}})), 1),
        (ToolChoice::None, None, 0),
    ];
    for (choice, _, _) in &choices {
        let s = ModelSettings::new().tool_choice(choice.clone());
        m.request(&user("hi"), Some(&s), &params()).await.unwrap();
    }
    let bodies = bodies(&server).await;
    assert_eq!(
        bodies[0]["inferenceConfig"],
        json!({"maxTokens": 256, "temperature": 0.2, "topP": 0.9, "stopSequences": ["END"]})
    );
    assert_eq!(bodies[0]["additionalModelRequestFields"], json!({"top_k": 40}));
    assert!(bodies[0].get("stop_sequences").is_none());
    for (n, (_, expected, tools)) in choices.iter().enumerate() {
        let body = &bodies[n + 1];
        assert_eq!(body["toolConfig"].get("toolChoice"), expected.as_ref(), "{body}");
        assert_eq!(body["toolConfig"]["tools"].as_array().map_or(0, Vec::len), *tools, "{body}");
    }
}

#[tokio::test]
async fn a_streamed_answer_is_assembled_from_event_stream_frames_split_across_chunks() {
    let bytes: Vec<u8> = streamed_answer().concat();
    let first_len = streamed_answer()[0].len();
    // A cut inside the second frame's prelude, one inside a payload, one byte alone.
    let chunks = cut(&bytes, &[first_len + 5, first_len + 60, first_len + 61, bytes.len() - 40]);
    let (url, server) = stream_server(chunks).await;
    let items = stream_items(&model_at(&url)).await;
    let request = String::from_utf8(server.await.unwrap()).unwrap();
    assert!(request.starts_with(&format!("POST /model/{ENCODED_ID}/converse-stream HTTP/1.1\r\n")), "{request}");
    assert!(request.to_ascii_lowercase().contains("x-amz-security-token: "), "{request}");

    let events: Vec<ModelStreamEvent> = items.into_iter().map(|i| i.expect("no stream error")).collect();
    assert_eq!(events[0], ModelStreamEvent::ThinkingDelta { index: 0, delta: "The user wants ".into() });
    assert!(events.contains(&ModelStreamEvent::TextDelta { index: 1, delta: "check.".into() }));
    assert!(events.contains(&ModelStreamEvent::ToolCallStart {
        index: 2,
        tool_call_id: "tooluse_Qh2xbL".into(),
        tool_name: "get_weather".into()
    }));
    assert!(events.contains(&ModelStreamEvent::ToolCallArgsDelta { index: 2, delta: "\"Paris\"}".into() }));
    let end = events.iter().find_map(|e| match e {
        ModelStreamEvent::ToolCallEnd { call, .. } => Some(call.clone()),
        _ => None,
    });
    assert_eq!(end.unwrap().args, json!({"city": "Paris"}));
    let ModelStreamEvent::Final(response) = events.last().unwrap() else { panic!("the last event is the response") };
    match &response.parts[0] {
        ModelResponsePart::Thinking(t) => {
            assert_eq!(t.content, "The user wants the weather.");
            assert_eq!(t.signature.as_deref(), Some("EqQBCgIYAhIM"));
            assert_eq!(t.provider_name.as_deref(), Some("bedrock"));
        }
        other => panic!("expected thinking, got {other:?}"),
    }
    assert_eq!(response.text_content().as_deref(), Some("Let me check."));
    assert_eq!(response.usage.input_tokens, 35);
    assert_eq!(response.usage.output_tokens, 12);
    assert_eq!(response.usage.cache_read_tokens, 5);
    assert_eq!(response.finish_reason.as_deref(), Some("tool_call"));
    assert_eq!(response.provider_response_id.as_deref(), Some("6c1f2e3a-stream"));
}

#[tokio::test]
async fn a_corrupted_frame_ends_the_stream_with_a_clear_error() {
    let mut frames = streamed_answer();
    // A flipped payload byte: the message CRC no longer matches.
    let last = frames[5].len() - 10;
    frames[5][last] ^= 0x20;
    let (url, server) = stream_server(vec![frames.concat()]).await;
    let items = stream_items(&model_at(&url)).await;
    server.await.unwrap();
    let err = items.last().unwrap().as_ref().unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Protocol);
    assert!(
        err.message.contains("bedrock stream sent an event-stream frame that could not be read"),
        "{}",
        err.message
    );
    assert!(err.message.contains("corrupted"), "{}", err.message);
    // The frames before the corrupted one were delivered.
    assert!(items.iter().any(|i| matches!(i, Ok(ModelStreamEvent::ThinkingDelta { .. }))));

    // A prelude whose CRC does not match.
    let mut frames = streamed_answer();
    frames[0][9] ^= 0xFF;
    let (url, server) = stream_server(vec![frames.concat()]).await;
    let items = stream_items(&model_at(&url)).await;
    server.await.unwrap();
    let err = items.last().unwrap().as_ref().unwrap_err();
    assert!(err.message.contains("could not be read"), "{}", err.message);
}

#[tokio::test]
async fn an_exception_frame_is_a_model_error_naming_it() {
    let mut frames = streamed_answer()[..3].to_vec();
    frames.push(exception("throttlingException", "Too many requests, please wait before trying again."));
    let (url, server) = stream_server(vec![frames.concat()]).await;
    let items = stream_items(&model_at(&url)).await;
    server.await.unwrap();
    let err = items.last().unwrap().as_ref().unwrap_err();
    assert_eq!(err.kind, "ModelApiError");
    assert!(err.message.contains("throttlingException"), "{}", err.message);
    assert!(err.message.contains("Too many requests, please wait"), "{}", err.message);

    // A stream cut before `messageStop` is an error too.
    let (url, server) = stream_server(vec![streamed_answer()[..6].concat()]).await;
    let items = stream_items(&model_at(&url)).await;
    server.await.unwrap();
    let err = items.last().unwrap().as_ref().unwrap_err();
    assert!(err.message.contains("no messageStop"), "{}", err.message);
    assert_eq!(err.kind, ModelErrorKind::Connection);
}

/// Answers 400 echoing the credentials it received in its message.
struct Echo;

impl Respond for Echo {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let header = |name: &str| req.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        let authorization = header("authorization");
        let signature = authorization.rsplit("Signature=").next().unwrap_or_default();
        let message = format!(
            "Malformed input request: {authorization} / signature {signature} / {} / {SECRET_KEY}",
            header("x-amz-security-token")
        );
        ResponseTemplate::new(400)
            .insert_header(
                "x-amzn-ErrorType",
                "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            )
            .insert_header("x-amzn-requestid", "req-400")
            .set_body_raw(json!({"message": message}).to_string(), "application/json")
    }
}

#[tokio::test]
async fn an_http_error_names_the_aws_error_type_and_never_the_secrets() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(Echo).expect(1).mount(&server).await;
    let err = model_at(&server.uri()).request(&user("hi"), None, &params()).await.unwrap_err();
    assert_eq!(err.kind, "ModelHttpError");
    assert!(err.message.contains("HTTP 400"), "{}", err.message);
    assert!(err.message.contains("Malformed input request"), "{}", err.message);
    assert_eq!(err.http.as_deref().and_then(|h| h.error_type.as_deref()), Some("ValidationException"));
    let signature = authorization(&requests(&server).await[0]).signature;
    for secret in [SECRET_KEY, SESSION_TOKEN, signature.as_str()] {
        assert!(!err.message.contains(secret), "{secret} leaked: {}", err.message);
    }
    assert!(err.message.contains("[REDACTED]"), "{}", err.message);
    assert!(!format!("{:?}", credentials()).contains(SECRET_KEY));
}

#[tokio::test]
async fn access_denied_points_at_the_aws_credentials() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header(
                    "x-amzn-ErrorType",
                    "AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/",
                )
                .set_body_raw(
                    r#"{"Message":"You don't have access to the model with the specified model ID."}"#,
                    "application/json",
                ),
        )
        .mount(&server)
        .await;
    let err = model_at(&server.uri()).request(&user("hi"), None, &params()).await.unwrap_err();
    assert!(err.message.contains("You don't have access to the model"), "{}", err.message);
    assert_eq!(err.http.as_deref().and_then(|h| h.error_type.as_deref()), Some("AccessDeniedException"));
    assert!(err.message.contains("check the AWS credentials and region"), "{}", err.message);
}

#[tokio::test]
async fn each_retry_is_signed_afresh() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Seq::new([
            ResponseTemplate::new(503).insert_header("retry-after", "1.1"),
            json_answer(converse_response(json!([{"text": "ok"}]), "end_turn"), "r"),
        ]))
        .expect(2)
        .mount(&server)
        .await;
    model_at(&server.uri()).request(&user("hi"), None, &params()).await.unwrap();
    let requests = requests(&server).await;
    for req in &requests {
        assert_signed(req);
    }
    // A second later, the retry carries its own date and so its own signature.
    let date = |r: &Request| r.headers.get("x-amz-date").unwrap().to_str().unwrap().to_string();
    assert_ne!(date(&requests[0]), date(&requests[1]));
    assert_ne!(authorization(&requests[0]).signature, authorization(&requests[1]).signature);
}

#[tokio::test]
async fn a_bedrock_api_key_is_a_bearer_token_without_signature() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_answer(converse_response(json!([{"text": "ok"}]), "end_turn"), "r"))
        .mount(&server)
        .await;
    let m = BedrockModel::builder("us.amazon.nova-pro-v1:0")
        .region(REGION)
        .api_key("ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl")
        .base_url(server.uri())
        .build()
        .unwrap();
    let response = m.request(&user("hi"), None, &params()).await.unwrap();
    assert_eq!(response.text_content().as_deref(), Some("ok"));
    let req = &requests(&server).await[0];
    assert_eq!(req.url.path(), "/model/us.amazon.nova-pro-v1%3A0/converse");
    assert_eq!(req.headers.get("authorization").unwrap(), "Bearer ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl");
    assert!(req.headers.get("x-amz-date").is_none());
}

#[tokio::test]
async fn retried_and_failed_tool_returns_are_error_results() {
    use toolsmith::messages::{ModelRequest, ModelRequestPart, ModelResponse, ToolCallPart, ToolReturnPart};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_answer(converse_response(json!([{"text": "ok"}]), "end_turn"), "r"))
        .mount(&server)
        .await;
    let call = ToolCallPart::new("get_weather", json!({"city": "Paris"}), "tooluse_1");
    let mut failed = ToolReturnPart::success("get_weather", json!("the service is down"), "tooluse_1");
    failed.outcome = toolsmith::messages::ToolOutcome::Failed;
    let history = vec![
        ModelRequest::user_prompt("Paris?").into(),
        ModelResponse::new(vec![ModelResponsePart::ToolCall(call)]).into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(failed)]).into(),
    ];
    model_at(&server.uri()).request(&history, None, &params()).await.unwrap();
    let body = &bodies(&server).await[0];
    let result = &body["messages"][2]["content"][0]["toolResult"];
    assert_eq!(result["toolUseId"], "tooluse_1");
    assert_eq!(result["status"], "error");
    assert_eq!(result["content"][0]["text"], "the service is down");
}

#[test]
fn infer_model_reads_the_whole_model_id_after_the_provider() {
    match infer_model(&format!("bedrock:{MODEL_ID}")) {
        Ok(model) => assert_eq!(model.name(), MODEL_ID),
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("AWS_REGION") || e.contains("AWS_BEARER_TOKEN_BEDROCK"), "{e}");
        }
    }
}

#[tokio::test]
async fn images_documents_and_s3_files_are_content_blocks() {
    use toolsmith::messages::{BinaryContent, FileUrl, MediaContent, ModelRequest, UserContent};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_answer(converse_response(json!([{"text": "ok"}]), "end_turn"), "r"))
        .mount(&server)
        .await;
    let mut video = FileUrl::new("s3://bucket/clip.mp4");
    video.media_type = Some("video/mp4".into());
    let prompt: Vec<UserContent> = vec![
        "Describe these.".into(),
        BinaryContent::new(b"\x89PNG", "image/png").into(),
        BinaryContent::new(b"%PDF-1.7", "application/pdf").into(),
        UserContent::Media(MediaContent::VideoUrl(video)),
    ];
    let history = vec![ModelRequest::user_prompt(prompt).into()];
    model_at(&server.uri()).request(&history, None, &params()).await.unwrap();
    let content = &bodies(&server).await[0]["messages"][0]["content"];
    assert_eq!(
        *content,
        json!([
            {"text": "Describe these."},
            {"image": {"format": "png", "source": {"bytes": "iVBORw=="}}},
            {"document": {"name": "Document 1", "format": "pdf", "source": {"bytes": "JVBERi0xLjc="}}},
            {"video": {"format": "mp4", "source": {"s3Location": {"uri": "s3://bucket/clip.mp4"}}}}
        ])
    );
}
