//! Anthropic Messages on the wire: requests asserted field by field, responses and streams
//! replayed from fixtures of the API reference, through a local server.

mod provider_support;

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, RetryCause, RetryInfo,
    ToolCallPart, ToolReturnPart,
};
use toolsmith::model::{Model, ModelRequestParameters, ModelSettings, ModelStreamEvent, StreamingModel, ToolChoice};
use toolsmith::providers::{AnthropicModel, NativeToolSearch, RetryConfig};
use toolsmith::tool::ToolDefinition;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use provider_support::*;

const KEY: &str = "sk-ant-test-0123456789-secret";

fn model(server: &MockServer, name: &str) -> AnthropicModel {
    AnthropicModel::builder(name)
        .base_url(server.uri())
        .api_key(KEY)
        .retry(RetryConfig::default().initial_backoff(Duration::from_millis(1)))
        .build()
        .unwrap()
}

fn params() -> ModelRequestParameters {
    let mut p = ModelRequestParameters::default();
    p.function_tools = vec![
        ToolDefinition::new("get_weather", weather_schema()).with_description("Get the weather.").into(),
        ToolDefinition::new("get_time", weather_schema()).with_description("Get the time.").into(),
        ToolDefinition::new("get_news", weather_schema()).with_description("Get the news.").into(),
    ];
    p.allow_text_output = true;
    p
}

#[tokio::test]
async fn agent_run_maps_requests_and_round_trips_thinking() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(Seq::new([
            json_response("anthropic", "messages_tool_use.json"),
            json_response("anthropic", "messages_text.json"),
        ]))
        .expect(2)
        .mount(&server)
        .await;
    let result = weather_agent(model(&server, "claude-sonnet-4-0")).run("What's the weather in Paris?").await.unwrap();
    assert_eq!(result.output(), "It's sunny in Paris.");
    // Input tokens include cache writes and reads.
    assert_eq!(result.usage().input_tokens, 472 + 10 + 20 + 580);
    assert_eq!(result.usage().cache_write_tokens, 10);
    assert_eq!(result.usage().cache_read_tokens, 20);

    let bodies = bodies(&server).await;
    let first = &bodies[0];
    assert_eq!(first["model"], "claude-sonnet-4-0");
    assert_eq!(first["max_tokens"], 4096);
    assert_eq!(first["system"], "You are a weather assistant.");
    assert_eq!(
        first["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "What's the weather in Paris?"}]}])
    );
    assert_eq!(first["tools"][0]["name"], "get_weather");
    assert_eq!(first["tools"][0]["description"], "Get the current weather in a city.");
    assert_eq!(first["tools"][0]["input_schema"]["required"], json!(["city"]));
    assert!(first.get("tool_choice").is_none());

    let messages = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "The user wants the weather in Paris; I should call get_weather.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
            {"type": "text", "text": "I'll check the weather in Paris."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"city": "Paris"}},
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "Sunny in Paris"},
        ]})
    );
    let response = result.all_messages()[1].as_response().unwrap();
    assert_eq!(response.finish_reason.as_deref(), Some("tool_call"));
    assert_eq!(response.provider_response_id.as_deref(), Some("msg_01Aq9w938a90dw8q"));
    assert!(matches!(&response.parts[0], ModelResponsePart::Thinking(t) if t.signature.is_some()));
}

#[tokio::test]
async fn stream_assembles_thinking_text_and_partial_json() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_response("anthropic", "messages_stream_tool_use.sse"))
        .mount(&server)
        .await;
    let m = model(&server, "claude-sonnet-4-0");
    let events = events(m.request_stream(&user("Paris?"), None, &params()).await.unwrap()).await;
    assert_eq!(bodies(&server).await[0]["stream"], true);
    assert_eq!(events[0], ModelStreamEvent::ThinkingDelta { index: 0, delta: "The user wants ".into() });
    assert!(events.contains(&ModelStreamEvent::TextDelta { index: 1, delta: " the weather.".into() }));
    assert!(events.contains(&ModelStreamEvent::ToolCallStart {
        index: 2,
        tool_call_id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
        tool_name: "get_weather".into()
    }));
    let end = events.iter().find_map(|e| match e {
        ModelStreamEvent::ToolCallEnd { call, .. } => Some(call.clone()),
        _ => None,
    });
    assert_eq!(end.unwrap().args, json!({"city": "Paris"}));
    let ModelStreamEvent::Final(response) = events.last().unwrap() else { panic!() };
    match &response.parts[0] {
        ModelResponsePart::Thinking(t) => {
            assert_eq!(t.content, "The user wants the weather in Paris.");
            assert_eq!(t.signature.as_deref(), Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"));
        }
        other => panic!("expected thinking, got {other:?}"),
    }
    assert_eq!(response.text_content().as_deref(), Some("Okay, let's check the weather."));
    assert_eq!(response.usage.input_tokens, 472);
    assert_eq!(response.usage.output_tokens, 89);
    assert_eq!(response.finish_reason.as_deref(), Some("tool_call"));
}

#[tokio::test]
async fn stream_errors_end_the_stream_with_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(sse_response("anthropic", "stream_error.sse")).mount(&server).await;
    let m = model(&server, "claude-sonnet-4-0");
    let mut stream = m.request_stream(&user("hi"), None, &params()).await.unwrap();
    let mut last = None;
    while let Some(item) = stream.next().await {
        last = Some(item);
    }
    let err = last.unwrap().unwrap_err();
    assert_eq!(err.kind, "ModelApiError");
    assert!(err.message.contains("overloaded_error"), "{}", err.message);
}

#[tokio::test]
async fn tool_choice_follows_the_provider_table() {
    let server = MockServer::start().await;
    let m = model(&server, "claude-sonnet-4-0");
    let p = params();
    let body = |settings: ModelSettings| m.request_body(&user("x"), Some(&settings), &p, false).unwrap();
    let names = |b: &Value| -> Vec<String> {
        b["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(body(ModelSettings::new().tool_choice(ToolChoice::None))["tool_choice"], json!({"type": "none"}));
    assert_eq!(body(ModelSettings::new().tool_choice(ToolChoice::Required))["tool_choice"], json!({"type": "any"}));
    let b = body(ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["get_news".into()])));
    assert_eq!(b["tool_choice"], json!({"type": "tool", "name": "get_news"}));
    assert_eq!(names(&b).len(), 3);
    let b = body(ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["get_news".into(), "get_time".into()])));
    assert_eq!(b["tool_choice"], json!({"type": "any"}));
    assert_eq!(names(&b), ["get_time", "get_news"]);
    let b = body(ModelSettings::new().tool_choice(ToolChoice::ToolOrOutput(vec!["get_time".into()])));
    assert_eq!(b["tool_choice"], json!({"type": "auto"}));
    assert_eq!(names(&b), ["get_time"]);

    // With extended thinking, forcing is not allowed: filtered with auto.
    let mut thinking = ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["get_news".into()]));
    thinking.extra = Some(Box::new(json!({"thinking": {"type": "enabled", "budget_tokens": 2048}})));
    let b = body(thinking);
    assert_eq!(b["tool_choice"], json!({"type": "auto"}));
    assert_eq!(names(&b), ["get_news"]);
    assert_eq!(b["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));

    // parallel_tool_calls: false.
    let mut s = ModelSettings::new().max_tokens(100).temperature(0.5);
    s.parallel_tool_calls = Some(false);
    let b = body(s);
    assert_eq!(b["tool_choice"], json!({"type": "auto", "disable_parallel_tool_use": true}));
    assert_eq!(b["max_tokens"], 100);
    assert_eq!(b["temperature"], 0.5);
}

#[tokio::test]
async fn retried_and_failed_tool_returns_carry_is_error() {
    let server = MockServer::start().await;
    let call = ToolCallPart::new("get_weather", json!("{\"town\": \"Paris\"}"), "toolu_1");
    let messages: Vec<ModelMessage> = vec![
        ModelRequest::user_prompt("Weather?").into(),
        ModelResponse::new(vec![ModelResponsePart::ToolCall(call)]).into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::retried(
            "get_weather",
            json!("City unknown, try another spelling."),
            "toolu_1",
            RetryInfo::new(RetryCause::ModelRetry, 1, 1),
        ))])
        .into(),
    ];
    let b = model(&server, "claude-sonnet-4-0").request_body(&messages, None, &params(), false).unwrap();
    let m = b["messages"].as_array().unwrap();
    assert_eq!(m[1]["content"][0]["input"], json!({"town": "Paris"}), "raw string arguments are sent as an object");
    assert_eq!(
        m[2]["content"][0],
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": "City unknown, try another spelling.\n\nFix the errors and try again.",
            "is_error": true,
        })
    );
}

#[tokio::test]
async fn native_tool_search_sends_deferred_tools_and_replays_server_blocks() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Seq::new([
            json_response("anthropic", "messages_tool_search.json"),
            json_response("anthropic", "messages_text.json"),
        ]))
        .mount(&server)
        .await;
    let m = model(&server, "claude-sonnet-4-5");
    let mut p = params();
    std::sync::Arc::make_mut(&mut p.function_tools[0]).defer_loading = true;
    let first = m.request(&user("Weather in Paris?"), None, &p).await.unwrap();
    let calls: Vec<&ToolCallPart> = first.tool_calls().collect();
    assert_eq!(calls.len(), 1, "the server tool use is not a call for the agent");
    assert_eq!(first.usage.details.as_deref(), Some(&json!({"server_tool_use": {"tool_search_requests": 1}})));

    let mut history = user("Weather in Paris?");
    history.push(first.clone().into());
    history.push(
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success(
            "get_weather",
            json!("Sunny in Paris"),
            "toolu_01XYZ789",
        ))])
        .into(),
    );
    m.request(&history, None, &p).await.unwrap();

    let reqs = requests(&server).await;
    assert_eq!(reqs[0].headers.get("anthropic-beta").unwrap(), "advanced-tool-use-2025-11-20");
    let b0: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(b0["tools"][0], json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}));
    assert_eq!(b0["tools"][1]["name"], "get_weather");
    assert_eq!(b0["tools"][1]["defer_loading"], true);
    assert!(b0["tools"][2].get("defer_loading").is_none());

    let b1: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    let assistant = &b1["messages"][1]["content"];
    let kinds: Vec<&str> = assistant.as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "server_tool_use", "tool_search_tool_result", "text", "tool_use"]);
    assert_eq!(assistant[2]["content"]["tool_references"][0]["tool_name"], "get_weather");

    // The regex variant, and a client-side search's return as tool_reference blocks.
    let m = AnthropicModel::builder("claude-opus-4-5")
        .base_url(server.uri())
        .api_key(KEY)
        .native_tool_search(Some(NativeToolSearch::Regex))
        .build()
        .unwrap();
    let mut search = ToolReturnPart::success("search_tools", json!(["get_weather"]), "toolu_s");
    search.tool_kind = Some("tool-search".into());
    let history: Vec<ModelMessage> = vec![
        ModelRequest::user_prompt("x").into(),
        ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
            "search_tools",
            json!({"q": "weather"}),
            "toolu_s",
        ))])
        .into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(search)]).into(),
    ];
    let b = m.request_body(&history, None, &p, false).unwrap();
    assert_eq!(b["tools"][0]["type"], "tool_search_tool_regex_20251119");
    assert_eq!(
        b["messages"][2]["content"][0]["content"],
        json!([{"type": "tool_reference", "tool_name": "get_weather"}])
    );

    // Older models: no native search, deferred tools are not sent.
    let b = model(&server, "claude-sonnet-4-0").request_body(&user("x"), None, &p, false).unwrap();
    assert_eq!(b["tools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn overloaded_is_retried_and_auth_errors_are_reported() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Seq::new([
            ResponseTemplate::new(529).set_body_raw(fixture("anthropic", "error_overloaded.json"), "application/json"),
            json_response("anthropic", "messages_text.json"),
        ]))
        .mount(&server)
        .await;
    let r = model(&server, "claude-sonnet-4-0").request(&user("hi"), None, &params()).await.unwrap();
    assert_eq!(r.text_content().as_deref(), Some("It's sunny in Paris."));
    assert_eq!(requests(&server).await.len(), 2);

    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_raw(fixture("anthropic", "error_authentication.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let err = model(&server, "claude-sonnet-4-0").request(&user("hi"), None, &params()).await.unwrap_err();
    assert_eq!(err.kind, "ModelHttpError");
    assert!(err.message.contains("HTTP 401"), "{}", err.message);
    assert!(err.message.contains("invalid x-api-key"), "{}", err.message);
    assert!(!err.message.contains(KEY));
}
