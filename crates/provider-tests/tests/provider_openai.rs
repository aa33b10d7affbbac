//! OpenAI Chat Completions and Responses on the wire: requests asserted field by field,
//! responses and streams replayed from fixtures of the API reference, through a local server.

mod provider_support;

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use toolsmith::Agent;
use toolsmith::agent::AgentEvent;
use toolsmith::messages::{
    BinaryContent, FileUrl, MediaContent, ModelMessage, ModelRequest, ModelRequestPart, ModelResponse,
    ModelResponsePart, RetryCause, RetryFeedbackPart, RetryInfo, ToolCallPart, ToolReturnPart, UserContent,
    UserPromptPart,
};
use toolsmith::model::{
    Model, ModelErrorKind, ModelRequestParameters, ModelSettings, ModelStreamEvent, ProviderRetry, StreamingModel,
    ToolChoice,
};
use toolsmith::providers::{OpenAIChatModel, OpenAIResponsesModel, RetryConfig};
use toolsmith::tool::ToolDefinition;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use provider_support::*;

const KEY: &str = "sk-test-0123456789-secret";

fn chat(server: &MockServer) -> OpenAIChatModel {
    OpenAIChatModel::builder("gpt-4o-mini")
        .base_url(format!("{}/v1", server.uri()))
        .api_key(KEY)
        .retry(RetryConfig::default().initial_backoff(Duration::from_millis(1)))
        .build()
        .unwrap()
}

fn responses(server: &MockServer) -> OpenAIResponsesModel {
    OpenAIResponsesModel::builder("gpt-5.2")
        .base_url(format!("{}/v1", server.uri()))
        .api_key(KEY)
        .retry(RetryConfig::default().initial_backoff(Duration::from_millis(1)))
        .build()
        .unwrap()
}

fn weather_params() -> ModelRequestParameters {
    let mut p = ModelRequestParameters::default();
    let mut a = ToolDefinition::new("get_weather", weather_schema()).with_description("Get the weather.");
    a.strict = None;
    let b = ToolDefinition::new("get_time", weather_schema()).with_description("Get the time.");
    let c = ToolDefinition::new("get_news", weather_schema()).with_description("Get the news.");
    p.function_tools = vec![a.into(), b.into(), c.into()];
    p.allow_text_output = true;
    p
}

#[tokio::test]
async fn chat_agent_run_maps_requests_and_responses() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(Seq::new([
            json_response("openai", "chat_tool_call.json"),
            json_response("openai", "chat_text.json"),
        ]))
        .expect(2)
        .mount(&server)
        .await;

    let result = weather_agent(chat(&server)).run("What's the weather in Paris?").await.unwrap();
    assert_eq!(result.output(), "It's sunny in Paris.");
    assert_eq!(result.usage().input_tokens, 82 + 120);
    assert_eq!(result.usage().output_tokens, 17 + 8);

    let bodies = bodies(&server).await;
    let first = &bodies[0];
    assert_eq!(first["model"], "gpt-4o-mini");
    assert_eq!(
        first["messages"],
        json!([
            {"role": "system", "content": "You are a weather assistant."},
            {"role": "user", "content": "What's the weather in Paris?"},
        ])
    );
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(first["tools"][0]["function"]["description"], "Get the current weather in a city.");
    assert_eq!(first["tools"][0]["function"]["parameters"]["required"], json!(["city"]));
    assert!(first["tools"][0]["function"].get("strict").is_none());
    assert!(first.get("tool_choice").is_none());
    assert!(first.get("stream").is_none());
    assert_eq!(first["max_completion_tokens"], Value::Null);

    let second = &bodies[1];
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[2],
        json!({
            "role": "assistant",
            "content": "",
            "tool_calls": [{
                "id": "call_abc123",
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{\n\"city\": \"Paris\"\n}"},
            }],
        })
    );
    assert_eq!(messages[3], json!({"role": "tool", "tool_call_id": "call_abc123", "content": "Sunny in Paris"}));

    // The response as recorded in the history.
    let response = result.all_messages()[1].as_response().unwrap();
    assert_eq!(response.model_name.as_deref(), Some("gpt-4o-mini-2024-07-18"));
    assert_eq!(response.provider_name.as_deref(), Some("openai"));
    assert_eq!(response.provider_response_id.as_deref(), Some("chatcmpl-abc123"));
    assert_eq!(response.finish_reason.as_deref(), Some("tool_call"));
    let last = result.all_messages()[3].as_response().unwrap();
    assert_eq!(last.usage.cache_read_tokens, 64);
    assert_eq!(last.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn chat_stream_assembles_parallel_tool_calls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse_response("openai", "chat_stream_tool_calls.sse"))
        .mount(&server)
        .await;
    let model = chat(&server);
    let stream = model.request_stream(&user("Weather in Paris and London?"), None, &weather_params()).await.unwrap();
    let events = events(stream).await;

    let body = &bodies(&server).await[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));

    assert_eq!(
        events[0],
        ModelStreamEvent::ToolCallStart {
            index: 0,
            tool_call_id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".into(),
            tool_name: "get_weather".into()
        }
    );
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            ModelStreamEvent::ToolCallArgsDelta { index: 0, delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "{\"city\":\"Paris\"}");
    let ends: Vec<(usize, Value)> = events
        .iter()
        .filter_map(|e| match e {
            ModelStreamEvent::ToolCallEnd { index, call } => Some((*index, call.args.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        vec![(0, json!("{\"city\":\"Paris\"}")), (1, json!("{\"city\": \"London\"}"))],
        "both calls end with their assembled arguments"
    );
    let ModelStreamEvent::Final(response) = events.last().unwrap() else { panic!("no final event") };
    let calls: Vec<&ToolCallPart> = response.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].tool_call_id, "call_8KjVxL2pQr5tYu9wZa3bCd4e");
    assert_eq!(calls[1].args_as_object().unwrap()["city"], "London");
    assert_eq!(response.usage.input_tokens, 82);
    assert_eq!(response.usage.output_tokens, 34);
    assert_eq!(response.finish_reason.as_deref(), Some("tool_call"));
    assert_eq!(response.provider_response_id.as_deref(), Some("chatcmpl-123"));
}

#[tokio::test]
async fn chat_stream_text_deltas() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(sse_response("openai", "chat_stream_text.sse")).mount(&server).await;
    let model = chat(&server);
    let events =
        events(model.request_stream(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap()).await;
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ModelStreamEvent::TextDelta { index: 0, delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["It's", " sunny", " in Paris."]);
    let ModelStreamEvent::Final(response) = events.last().unwrap() else { panic!() };
    assert_eq!(response.text_content().as_deref(), Some("It's sunny in Paris."));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(response.usage.output_tokens, 8);
}

#[tokio::test]
async fn chat_tool_choice_follows_the_provider_table() {
    let server = MockServer::start().await;
    let model = chat(&server);
    let params = weather_params();
    let body = |choice: ToolChoice| {
        let settings = ModelSettings::new().tool_choice(choice);
        model.request_body(&user("x"), Some(&settings), &params, false).unwrap()
    };
    let names = |b: &Value| -> Vec<String> {
        b["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect()
    };

    let b = body(ToolChoice::None);
    assert_eq!(b["tool_choice"], "none");
    assert_eq!(names(&b).len(), 3);

    let b = body(ToolChoice::Required);
    assert_eq!(b["tool_choice"], "required");

    // One required tool: forced by name, full list kept (cache-friendly).
    let b = body(ToolChoice::Tools(vec!["get_time".into()]));
    assert_eq!(b["tool_choice"], json!({"type": "function", "function": {"name": "get_time"}}));
    assert_eq!(names(&b), ["get_weather", "get_time", "get_news"]);

    // Several required tools: filtered client-side, `required`.
    let b = body(ToolChoice::Tools(vec!["get_news".into(), "get_weather".into()]));
    assert_eq!(b["tool_choice"], "required");
    assert_eq!(names(&b), ["get_weather", "get_news"]);

    // A restriction that still allows text: filtered, `auto`.
    let b = body(ToolChoice::ToolOrOutput(vec!["get_time".into()]));
    assert_eq!(b["tool_choice"], "auto");
    assert_eq!(names(&b), ["get_time"]);

    // Unknown names are a user error.
    let settings = ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["nope".into()]));
    let err = model.request_body(&user("x"), Some(&settings), &params, false).unwrap_err();
    assert_eq!(err.kind, "UserError");
    assert!(err.message.contains("nope"), "{}", err.message);

    // Settings map to their fields.
    let mut settings = ModelSettings::new().max_tokens(100).temperature(0.2);
    settings.top_p = Some(0.9);
    settings.seed = Some(7);
    settings.parallel_tool_calls = Some(false);
    settings.extra = Some(Box::new(json!({"logprobs": true})));
    let b = model.request_body(&user("x"), Some(&settings), &params, false).unwrap();
    assert_eq!(b["max_completion_tokens"], 100, "OpenAI's field, whatever the base URL");
    assert_eq!(b["temperature"], 0.2);
    assert_eq!(b["top_p"], 0.9);
    assert_eq!(b["seed"], 7);
    assert_eq!(b["parallel_tool_calls"], false);
    assert_eq!(b["logprobs"], true);
}

#[tokio::test]
async fn compatible_servers_that_read_max_tokens_get_it_and_no_auth_header() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(json_response("openai", "chat_text.json")).mount(&server).await;
    let model = OpenAIChatModel::builder("smollm2")
        .base_url(format!("{}/v1/", server.uri()))
        .max_tokens_field(toolsmith::providers::MaxTokensField::MaxTokens)
        .build()
        .unwrap();
    let settings = ModelSettings::new().max_tokens(64);
    model.request(&user("hi"), Some(&settings), &ModelRequestParameters::default()).await.unwrap();
    let req = &requests(&server).await[0];
    assert_eq!(req.url.path(), "/v1/chat/completions");
    assert!(req.headers.get("authorization").is_none());
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["max_tokens"], 64);
    assert!(body.get("max_completion_tokens").is_none());
}

#[tokio::test]
async fn strict_tools_get_the_strict_schema() {
    let server = MockServer::start().await;
    let model = chat(&server);
    let mut params = ModelRequestParameters::default();
    let mut def = ToolDefinition::new(
        "search",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 3},
                "limit": {"type": "integer", "default": 10},
                "when": {"type": "string", "format": "date-time"},
            },
            "required": ["query"],
        }),
    );
    def.strict = Some(true);
    def.return_schema = Some(std::sync::Arc::new(json!({"type": "array", "items": {"type": "string"}})));
    params.function_tools = vec![def.into()];
    params.allow_text_output = true;
    let b = model.request_body(&user("x"), None, &params, false).unwrap();
    let f = &b["tools"][0]["function"];
    assert_eq!(f["strict"], true);
    assert_eq!(
        f["parameters"],
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "minLength=3"},
                "limit": {"type": "integer"},
                "when": {"type": "string", "format": "date-time"},
            },
            "required": ["query", "limit", "when"],
            "additionalProperties": false,
        })
    );
    // The adapter sends the definition the agent prepared: a return schema reaches the
    // description only through `prepare_return_schemas`, for the tools that ask for it.
    assert!(f.get("description").is_none());
}

fn retry_history() -> Vec<ModelMessage> {
    let call = ToolCallPart::new("get_weather", json!({"town": "Paris"}), "call_1");
    let errors = json!([{"type": "missing", "loc": ["city"], "msg": "Field required", "input": {"town": "Paris"}}]);
    vec![
        ModelRequest::user_prompt("Weather?").into(),
        ModelResponse::new(vec![ModelResponsePart::ToolCall(call)]).into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::retried(
            "get_weather",
            errors,
            "call_1",
            RetryInfo::new(RetryCause::ValidationError, 1, 1),
        ))])
        .into(),
        ModelResponse::text("not json").into(),
        ModelRequest::new(vec![ModelRequestPart::RetryFeedback(RetryFeedbackPart::new(
            json!("Please return JSON."),
            RetryInfo::new(RetryCause::ValidationError, 1, 1),
        ))])
        .into(),
    ]
}

#[tokio::test]
async fn retried_tool_returns_and_feedback_are_retry_texts() {
    let server = MockServer::start().await;
    let b = chat(&server).request_body(&retry_history(), None, &weather_params(), false).unwrap();
    let m = b["messages"].as_array().unwrap();
    assert_eq!(m[1]["tool_calls"][0]["function"]["arguments"], "{\"town\":\"Paris\"}");
    assert_eq!(m[2]["role"], "tool");
    assert_eq!(m[2]["tool_call_id"], "call_1");
    let text = m[2]["content"].as_str().unwrap();
    assert!(text.starts_with("1 validation error:\n```json\n[\n  {\n    \"type\": \"missing\""), "{text}");
    assert!(text.ends_with("\n\nFix the errors and try again."), "{text}");
    assert_eq!(m[3], json!({"role": "assistant", "content": "not json"}));
    assert_eq!(
        m[4],
        json!({"role": "user", "content": "Validation feedback:\nPlease return JSON.\n\nFix the errors and try again."})
    );

    let r = responses(&server).request_body(&retry_history(), None, &weather_params(), false).unwrap();
    let input = r["input"].as_array().unwrap();
    assert_eq!(
        input[1],
        json!({"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"town\":\"Paris\"}"})
    );
    assert_eq!(input[2]["type"], "function_call_output");
    assert!(input[2]["output"].as_str().unwrap().ends_with("Fix the errors and try again."));
}

#[tokio::test]
async fn multimodal_prompts_map_to_content_parts() {
    let server = MockServer::start().await;
    let prompt = vec![
        UserContent::text("What is this?"),
        BinaryContent::new(b"\x89PNG", "image/png").into(),
        BinaryContent::new(b"%PDF-1.4", "application/pdf").into(),
    ];
    let messages: Vec<ModelMessage> =
        vec![ModelRequest::new(vec![ModelRequestPart::UserPrompt(UserPromptPart::new(prompt))]).into()];
    let b = chat(&server).request_body(&messages, None, &ModelRequestParameters::default(), false).unwrap();
    let content = &b["messages"][0]["content"];
    assert_eq!(content[0], json!({"type": "text", "text": "What is this?"}));
    assert_eq!(content[1], json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}}));
    assert_eq!(content[2]["type"], "file");
    assert_eq!(content[2]["file"]["file_data"], "data:application/pdf;base64,JVBERi0xLjQ=");

    let r = responses(&server).request_body(&messages, None, &ModelRequestParameters::default(), false).unwrap();
    let content = &r["input"][0]["content"];
    assert_eq!(content[0], json!({"type": "input_text", "text": "What is this?"}));
    assert_eq!(
        content[1],
        json!({"type": "input_image", "image_url": "data:image/png;base64,iVBORw==", "detail": "auto"})
    );
    assert_eq!(content[2]["type"], "input_file");
}

#[tokio::test]
async fn chat_stream_cut_off_before_its_end_is_an_error() {
    // What llama-cpp-python sends when it drops a stream for another request: a clean close
    // after some chunks, without finish_reason or [DONE].
    let server = MockServer::start().await;
    let cut = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1795352778,\"model\":\"smollm2\",\"choices\":[{\"index\":0,\"finish_reason\":null,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n\
               data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1795352778,\"model\":\"smollm2\",\"choices\":[{\"index\":0,\"finish_reason\":null,\"delta\":{\"content\":\"It\"}}]}\n\n";
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(cut, "text/event-stream"))
        .mount(&server)
        .await;
    let stream = chat(&server).request_stream(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap();
    let err = toolsmith::model::collect_stream(stream).await.unwrap_err();
    assert_eq!(err.kind, "ModelConnectionError");
    assert!(err.message.contains("ended before the answer did"), "{}", err.message);
}

#[tokio::test]
async fn chat_downloads_audio_and_document_urls_and_sends_them_inline() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/files/report.pdf"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(b"%PDF-1.4".to_vec(), "application/pdf"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/files/clip"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(b"RIFF".to_vec(), "audio/wav; codecs=1"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/files/missing.pdf"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(json_response("openai", "chat_text.json"))
        .mount(&server)
        .await;
    let prompt = |items: Vec<UserContent>| -> Vec<ModelMessage> {
        vec![ModelRequest::new(vec![ModelRequestPart::UserPrompt(UserPromptPart::new(items))]).into()]
    };
    let mut doc = FileUrl::new(format!("{}/files/report.pdf?sig=secret", server.uri()));
    doc.identifier = Some("report".into());
    let messages = prompt(vec![
        UserContent::text("Summarise both."),
        UserContent::Media(MediaContent::DocumentUrl(doc)),
        UserContent::Media(MediaContent::AudioUrl(FileUrl::new(format!("{}/files/clip", server.uri())))),
    ]);
    let model = chat(&server);
    let params = ModelRequestParameters::default();

    // The body alone cannot download: the error says what does.
    let err = model.request_body(&messages, None, &params, false).unwrap_err();
    assert_eq!(err.kind, "UserError");
    assert!(err.message.contains("`request` and `request_stream` download them"), "{}", err.message);
    assert!(!err.message.contains("secret"), "the query string is not shown: {}", err.message);

    model.request(&messages, None, &params).await.unwrap();
    let posted: Vec<Value> = requests(&server)
        .await
        .iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let content = &posted[0]["messages"][0]["content"];
    assert_eq!(
        content[1],
        json!({"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERi0xLjQ=", "filename": "report.pdf"}})
    );
    assert_eq!(content[2], json!({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}));
    let downloads = requests(&server).await.into_iter().filter(|r| r.method.as_str() == "GET").collect::<Vec<_>>();
    assert_eq!(downloads.len(), 2);
    assert!(downloads.iter().all(|r| r.headers.get("authorization").is_none()), "no credentials to other hosts");

    // A failed download names the URL and what to do.
    let messages = prompt(vec![UserContent::Media(MediaContent::DocumentUrl(FileUrl::new(format!(
        "{}/files/missing.pdf",
        server.uri()
    ))))]);
    let err = model.request(&messages, None, &params).await.unwrap_err();
    assert_eq!(err.kind, "UserError");
    assert!(err.message.contains("/files/missing.pdf"), "{}", err.message);
    assert!(err.message.contains("HTTP 404"), "{}", err.message);
    assert!(err.message.contains("pass it as BinaryContent"), "{}", err.message);
}

#[tokio::test]
async fn rate_limits_are_retried_honouring_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Seq::new([
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_raw(fixture("openai", "error_429.json"), "application/json"),
            ResponseTemplate::new(503).insert_header("retry-after-ms", "5"),
            json_response("openai", "chat_text.json"),
        ]))
        .mount(&server)
        .await;
    let response = chat(&server).request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap();
    assert_eq!(response.text_content().as_deref(), Some("It's sunny in Paris."));
    assert_eq!(requests(&server).await.len(), 3);
}

/// A Chat Completions answer whose tool call `arguments` is a JSON value rather than its text.
fn chat_call_with_arguments(arguments: Value) -> ResponseTemplate {
    let mut answer = fixture_json("openai", "chat_tool_call.json");
    answer["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = arguments;
    ResponseTemplate::new(200).set_body_json(answer)
}

/// Tool-call arguments sent as an object are the arguments; sent as another JSON value (a
/// number, an array, `true`) they go to validation, whose error the model gets as a retry,
/// instead of ending the run. The history keeps them as JSON text, as Pydantic AI reads it.
#[tokio::test]
async fn chat_arguments_that_are_not_text_are_validated_and_retried() {
    for (arguments, expected_return) in [
        (json!({"city": "Paris"}), "Sunny in Paris"),
        (json!(5), "Fix the errors and try again."),
        (json!([1, 2]), "Fix the errors and try again."),
        (json!(true), "Fix the errors and try again."),
        (json!("{\"city\": \"Paris\"}"), "Sunny in Paris"),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(Seq::new([
                chat_call_with_arguments(arguments.clone()),
                json_response("openai", "chat_text.json"),
            ]))
            .mount(&server)
            .await;
        let result = weather_agent(chat(&server)).run("What's the weather in Paris?").await;
        let result = result.unwrap_or_else(|e| panic!("{arguments}: {e}"));
        assert_eq!(result.output(), "It's sunny in Paris.", "{arguments}");
        let sent = bodies(&server).await;
        let tool_message = sent[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap_or_else(|| panic!("{arguments}: {}", sent[1]));
        let content = tool_message["content"].as_str().unwrap();
        assert!(content.contains(expected_return), "{arguments}: {content}");
        // The call went back as it came, as text.
        let sent_args = &sent[1]["messages"][2]["tool_calls"][0]["function"]["arguments"];
        let expected_text = match &arguments {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert_eq!(sent_args.as_str(), Some(expected_text.as_str()), "{arguments}");
        // The history holds what Pydantic AI's ToolCallPart takes: an object, or JSON text.
        let call = result.all_messages()[1].as_response().unwrap().tool_calls().next().unwrap().clone();
        match &arguments {
            Value::Object(_) => assert_eq!(call.args, arguments),
            Value::String(_) => assert_eq!(call.args, arguments),
            other => assert_eq!(call.args, json!(other.to_string())),
        }
    }
}

/// The same arguments streamed, and in the Responses API (answered and streamed): never a
/// malformed answer.
#[tokio::test]
async fn streamed_and_responses_arguments_that_are_not_text_reach_validation() {
    for arguments in [json!(5), json!([1]), json!({"city": "Paris"})] {
        let text = arguments.to_string();
        // Chat Completions, streamed.
        let server = MockServer::start().await;
        let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{
            "index": 0, "finish_reason": "tool_calls",
            "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": arguments}}]}}]});
        let sse = format!("data: {chunk}\n\ndata: [DONE]\n\n");
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream"))
            .mount(&server)
            .await;
        let stream = chat(&server).request_stream(&user("hi"), None, &weather_params()).await.unwrap();
        let response = toolsmith::model::collect_stream(stream).await.unwrap_or_else(|e| panic!("{arguments}: {e}"));
        let call = response.tool_calls().next().unwrap();
        assert_eq!(call.args, json!(text), "{arguments}");

        // Responses, answered.
        let server = MockServer::start().await;
        let item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
            "arguments": arguments, "status": "completed"});
        let answer = json!({"id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
            "model": "gpt-5.2", "output": [item]});
        Mock::given(method("POST")).respond_with(ResponseTemplate::new(200).set_body_json(answer)).mount(&server).await;
        let response = responses(&server).request(&user("hi"), None, &weather_params()).await;
        let response = response.unwrap_or_else(|e| panic!("{arguments}: {e}"));
        let call = response.tool_calls().next().unwrap();
        let expected = if arguments.is_object() { arguments.clone() } else { json!(text) };
        assert_eq!(call.args, expected, "{arguments}");

        // Responses, streamed: the call announced with its whole arguments.
        let server = MockServer::start().await;
        let completed = json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
            "model": "gpt-5.2", "output": [item]}});
        let sse = format!(
            "data: {}\n\ndata: {}\n\ndata: {completed}\n\n",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        );
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream"))
            .mount(&server)
            .await;
        let stream = responses(&server).request_stream(&user("hi"), None, &weather_params()).await.unwrap();
        let response = toolsmith::model::collect_stream(stream).await.unwrap_or_else(|e| panic!("{arguments}: {e}"));
        let call = response.tool_calls().next().unwrap();
        assert_eq!(call.args, json!(text), "{arguments}");
    }
}

/// Each retry is reported before its wait: to the model's observer, and as an event of the run
/// the request belongs to.
#[tokio::test]
async fn retries_are_reported_to_the_observer_and_the_run() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Seq::new([
            ResponseTemplate::new(429).insert_header("retry-after", "0").set_body_json(json!({"error": {
                "message": format!("Rate limit reached for the key {KEY}"), "type": "rate_limit_error"}})),
            ResponseTemplate::new(503).insert_header("retry-after-ms", "5"),
            ResponseTemplate::new(500),
            json_response("openai", "chat_text.json"),
        ]))
        .mount(&server)
        .await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<ProviderRetry>::new()));
    let model = {
        let seen = seen.clone();
        OpenAIChatModel::builder("gpt-4o-mini")
            .base_url(format!("{}/v1", server.uri()))
            .api_key(KEY)
            .retry(
                RetryConfig::default().initial_backoff(Duration::from_millis(4)).max_backoff(Duration::from_millis(4)),
            )
            .on_retry(move |r| seen.lock().unwrap().push(r.clone()))
            .build()
            .unwrap()
    };
    let agent = Agent::builder(model).build().unwrap();
    let (events, run) = agent.run("hi").stream();
    let (result, events) = tokio::join!(run, events.collect::<Vec<_>>());
    assert_eq!(result.unwrap().output(), "It's sunny in Paris.");

    let seen = seen.lock().unwrap().clone();
    let summary: Vec<_> =
        seen.iter().map(|r| (r.retry, r.kind.clone(), r.status, r.asked_by_provider, r.provider.as_str())).collect();
    assert_eq!(
        summary,
        [
            (1, ModelErrorKind::Http, Some(429), true, "openai"),
            (2, ModelErrorKind::Http, Some(503), true, "openai"),
            (3, ModelErrorKind::Http, Some(500), false, "openai"),
        ]
    );
    assert_eq!(seen[0].wait, Duration::ZERO);
    assert_eq!(seen[1].wait, Duration::from_millis(5));
    // The backoff of 4 ms, with its jitter of ±25 %.
    assert!((Duration::from_millis(3)..=Duration::from_millis(5)).contains(&seen[2].wait), "{:?}", seen[2].wait);
    // What the provider said, its echo of the key redacted.
    assert_eq!(seen[0].message, "HTTP 429: Rate limit reached for the key [REDACTED]");
    assert!(!seen.iter().any(|r| r.message.contains(KEY)));
    assert_eq!(seen[0].model_name, "gpt-4o-mini");

    // The run saw the same retries, between its request and the response.
    let in_run: Vec<ProviderRetry> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ProviderRetry(r) => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(in_run, seen);
    let position = |f: &dyn Fn(&AgentEvent) -> bool| events.iter().position(f).unwrap();
    let request = position(&|e| matches!(e, AgentEvent::ModelRequest { .. }));
    let first_retry = position(&|e| matches!(e, AgentEvent::ProviderRetry(_)));
    let response = position(&|e| matches!(e, AgentEvent::ModelResponse { .. }));
    assert!(request < first_retry && first_retry < response, "{events:?}");
}

/// A refused connection and a request that gets no answer in time are retried, reported and
/// returned as kinds of their own.
#[tokio::test]
async fn connection_failures_and_timeouts_are_reported_by_kind() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<ProviderRetry>::new()));
    let observed = |seen: &std::sync::Arc<std::sync::Mutex<Vec<ProviderRetry>>>| {
        let seen = seen.clone();
        move |r: &ProviderRetry| seen.lock().unwrap().push(r.clone())
    };
    let retry = RetryConfig::default().max_retries(1).initial_backoff(Duration::from_millis(1));
    let model = OpenAIChatModel::builder("m")
        .base_url("http://127.0.0.1:9/v1")
        .retry(retry.clone())
        .on_retry(observed(&seen))
        .build()
        .unwrap();
    let err = model.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Connection, "{}", err.message);
    assert_eq!(err.kind, "ModelConnectionError");
    let seen_now = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(seen_now.len(), 1);
    assert_eq!((seen_now[0].kind.clone(), seen_now[0].status), (ModelErrorKind::Connection, None));

    // A server that never answers: the idle timeout passes on each attempt.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&server)
        .await;
    let model = OpenAIChatModel::builder("m")
        .base_url(format!("{}/v1", server.uri()))
        .retry(retry)
        .idle_timeout(Duration::from_millis(100))
        .on_retry(observed(&seen))
        .build()
        .unwrap();
    let err = model.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Timeout, "{}", err.message);
    let seen_now = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(seen_now.len(), 1);
    assert_eq!(seen_now[0].kind, ModelErrorKind::Timeout);
    assert!(seen_now[0].message.contains("idle timeout"), "{}", seen_now[0].message);
}

#[tokio::test]
async fn a_retry_after_beyond_the_bound_is_not_waited_for() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "3600")
                .insert_header("x-request-id", "req_7f3a")
                .set_body_raw(fixture("openai", "error_429.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let err = chat(&server).request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, "ModelHttpError");
    assert!(err.message.contains("HTTP 429"), "{}", err.message);
    assert!(err.message.contains("Rate limit reached"), "{}", err.message);
    assert_eq!(requests(&server).await.len(), 1);
    // The answer's facts, typed.
    assert_eq!(err.status(), Some(429));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(err.request_id(), Some("req_7f3a"));
    let http = err.http.as_deref().unwrap();
    assert_eq!(http.error_type.as_deref(), Some("requests"));
    assert_eq!(http.max_retry_after, Some(RetryConfig::default().max_retry_after));
    assert!(http.provider_message().starts_with("Rate limit reached"), "{}", http.provider_message());
    let source = std::error::Error::source(&err).expect("the HTTP error is the source");
    assert_eq!(source.to_string(), err.message);
}

#[tokio::test]
async fn server_errors_exhaust_the_retries() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_raw(r#"{"error": {"message": "The server had an error"}}"#, "application/json"),
        )
        .mount(&server)
        .await;
    let model = OpenAIChatModel::builder("gpt-4o-mini")
        .base_url(format!("{}/v1", server.uri()))
        .api_key(KEY)
        .retry(RetryConfig::default().max_retries(2).initial_backoff(Duration::from_millis(1)))
        .build()
        .unwrap();
    let err = model.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, "ModelHttpError");
    assert!(err.message.contains("HTTP 500"), "{}", err.message);
    assert!(err.message.contains("after 2 retries"), "{}", err.message);
    assert_eq!(requests(&server).await.len(), 3);
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_never_shows_the_key() {
    let server = MockServer::start().await;
    let body = fixture("openai", "error_401.json").replace("sk-test-****************************cret", KEY);
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_raw(body, "application/json"))
        .mount(&server)
        .await;
    let err = chat(&server).request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, "ModelHttpError");
    assert!(err.message.contains("HTTP 401"), "{}", err.message);
    assert!(err.message.contains("Incorrect API key provided"), "{}", err.message);
    assert!(err.message.contains("check the API key"), "{}", err.message);
    assert!(!err.message.contains(KEY), "the key leaked: {}", err.message);
    assert!(!format!("{:?}", chat(&server)).contains(KEY), "the key leaked into Debug");
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test]
async fn timeouts_and_unreachable_servers_are_distinct_kinds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(json_response("openai", "chat_text.json").set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let model = OpenAIChatModel::builder("m")
        .base_url(format!("{}/v1", server.uri()))
        .retry(RetryConfig::none())
        .build()
        .unwrap();
    let mut settings = ModelSettings::new();
    settings.timeout = Some(Duration::from_millis(200));
    let err = model.request(&user("hi"), Some(&settings), &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, "ModelTimeoutError");
    assert!(err.message.contains("did not answer within 0.2 s"), "{}", err.message);

    let model =
        OpenAIChatModel::builder("m").base_url("http://127.0.0.1:9/v1").retry(RetryConfig::none()).build().unwrap();
    let err = model.request(&user("hi"), None, &ModelRequestParameters::default()).await.unwrap_err();
    assert_eq!(err.kind, "ModelConnectionError");
    assert!(err.message.contains("could not reach the openai API"), "{}", err.message);
}

#[tokio::test]
async fn responses_agent_run_replays_reasoning_and_calls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(Seq::new([
            json_response("openai", "responses_function_call.json"),
            json_response("openai", "responses_text.json"),
        ]))
        .mount(&server)
        .await;
    let agent = toolsmith::Agent::builder(responses(&server))
        .instructions("Be brief.")
        .system_prompt("You are a weather assistant.")
        .tool(get_weather)
        .build()
        .unwrap();
    let result = agent.run("What's the weather in Paris?").await.unwrap();
    assert_eq!(result.output(), "It's sunny in Paris.");

    let bodies = bodies(&server).await;
    let first = &bodies[0];
    assert_eq!(first["model"], "gpt-5.2");
    assert_eq!(first["instructions"], "Be brief.");
    assert_eq!(
        first["input"],
        json!([
            {"role": "system", "content": "You are a weather assistant."},
            {"role": "user", "content": "What's the weather in Paris?"},
        ])
    );
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["tools"][0]["name"], "get_weather");
    assert_eq!(first["tools"][0]["strict"], false);

    let input = bodies[1]["input"].as_array().unwrap();
    assert_eq!(
        input[2],
        json!({
            "type": "reasoning",
            "id": "rs_67ca09c6a2f08190bbe4b5e0b6a4d3e2096610f474011cc0",
            "summary": [{"type": "summary_text", "text": "The user wants the weather in Paris."}],
            "encrypted_content": "gAAAAABoXYZencryptedreasoning==",
        })
    );
    assert_eq!(
        input[3],
        json!({
            "type": "function_call",
            "id": "fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0",
            "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k",
            "name": "get_weather",
            "arguments": "{\"city\":\"Paris\"}",
        })
    );
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_unLAR8MvFNptuiZK6K6HCy5k", "output": "Sunny in Paris"})
    );
    let first_response = result.all_messages()[1].as_response().unwrap();
    assert_eq!(first_response.usage.details.as_deref(), Some(&json!({"reasoning_tokens": 12})));
    assert_eq!(first_response.finish_reason.as_deref(), Some("tool_call"));
}

#[tokio::test]
async fn responses_stream_assembles_text_and_call() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(sse_response("openai", "responses_stream.sse")).mount(&server).await;
    let model = responses(&server);
    let events = events(model.request_stream(&user("Paris?"), None, &weather_params()).await.unwrap()).await;
    assert_eq!(bodies(&server).await[0]["stream"], true);
    assert_eq!(events[0], ModelStreamEvent::TextDelta { index: 0, delta: "Let me check.".into() });
    assert_eq!(
        events[1],
        ModelStreamEvent::ToolCallStart {
            index: 1,
            tool_call_id: "call_stream_1".into(),
            tool_name: "get_weather".into()
        }
    );
    let ModelStreamEvent::Final(response) = events.last().unwrap() else { panic!() };
    let call = response.tool_calls().next().unwrap();
    assert_eq!(call.args, json!("{\"city\":\"Paris\"}"));
    assert_eq!(call.id.as_deref(), Some("fc_stream_1"));
    assert_eq!(response.usage.input_tokens, 37);
    assert_eq!(response.provider_response_id.as_deref(), Some("resp_stream_1"));
}

#[tokio::test]
async fn responses_tool_choice_uses_allowed_tools_and_native_search() {
    let server = MockServer::start().await;
    let model =
        OpenAIResponsesModel::builder("gpt-5.4").base_url(format!("{}/v1", server.uri())).api_key(KEY).build().unwrap();
    let mut params = weather_params();
    std::sync::Arc::make_mut(&mut params.function_tools[2]).defer_loading = true;
    let settings =
        ModelSettings::new().tool_choice(ToolChoice::ToolOrOutput(vec!["get_time".into(), "get_weather".into()]));
    let b = model.request_body(&user("x"), Some(&settings), &params, false).unwrap();
    assert_eq!(
        b["tool_choice"],
        json!({
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [{"type": "function", "name": "get_time"}, {"type": "function", "name": "get_weather"}],
        })
    );
    let tools = b["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4, "all tools kept, plus tool_search");
    assert_eq!(tools[2]["defer_loading"], true);
    assert_eq!(tools[3], json!({"type": "tool_search"}));

    // Without native search (older models), deferred tools are not sent.
    let b = responses(&server).request_body(&user("x"), None, &params, false).unwrap();
    assert_eq!(b["tools"].as_array().unwrap().len(), 2);
}

/// Against a real OpenAI-compatible server (llama-cpp-python with SmolLM2-135M, set up by
/// `scripts/local-llm.sh`) through the llama.cpp preset: a forced call (named, as the server
/// takes it) comes back as real `tool_calls`, and the tool's return gets an answer. The model is tiny: the exchange is asserted, not its wisdom.
#[tokio::test]
#[ignore = "needs a local OpenAI-compatible server: run scripts/local-llm.sh"]
async fn local_llm_forced_tool_call_exchange() {
    let base = std::env::var("TOOLSMITH_LOCAL_LLM_BASE_URL")
        .expect("set TOOLSMITH_LOCAL_LLM_BASE_URL to the server's URL with its /v1 (scripts/local-llm.sh does)");
    let model = OpenAIChatModel::builder("smollm2")
        .preset(toolsmith::providers::Preset::LlamaCpp)
        .base_url(base)
        .build()
        .unwrap();
    let mut params = ModelRequestParameters::default();
    params.function_tools = vec![
        ToolDefinition::new("get_weather", weather_schema())
            .with_description("Get the current weather in a city.")
            .into(),
    ];
    params.allow_text_output = true;
    let forced = ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["get_weather".into()])).max_tokens(128);
    let mut history = user("What's the weather in Paris?");
    let response = model.request(&history, Some(&forced), &params).await.unwrap();
    let call = response.tool_calls().next().cloned().expect("the server answers a forced call with tool_calls");
    assert_eq!(call.tool_name, "get_weather");
    assert!(call.args_as_object().is_ok(), "arguments are a JSON object: {:?}", call.args);
    assert_eq!(response.provider_name.as_deref(), Some("llamacpp"));
    history.push(response.into());
    history.push(
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success(
            "get_weather",
            json!("Sunny in Paris"),
            call.tool_call_id.clone(),
        ))])
        .into(),
    );
    let settings = ModelSettings::new().max_tokens(64);
    let answer = model.request(&history, Some(&settings), &params).await.unwrap();
    assert!(!answer.parts.is_empty(), "the server answers the tool's return");
    assert!(answer.usage.input_tokens > 0);
}

/// The same server, streaming: the forced call arrives as tool-call events and the final
/// response holds it.
#[tokio::test]
#[ignore = "needs a local OpenAI-compatible server: run scripts/local-llm.sh"]
async fn local_llm_streams_a_forced_tool_call() {
    let base = std::env::var("TOOLSMITH_LOCAL_LLM_BASE_URL")
        .expect("set TOOLSMITH_LOCAL_LLM_BASE_URL to the server's URL with its /v1 (scripts/local-llm.sh does)");
    let model = OpenAIChatModel::builder("smollm2")
        .preset(toolsmith::providers::Preset::LlamaCpp)
        .base_url(base)
        .build()
        .unwrap();
    let mut params = ModelRequestParameters::default();
    params.function_tools = vec![
        ToolDefinition::new("get_weather", weather_schema())
            .with_description("Get the current weather in a city.")
            .into(),
    ];
    params.allow_text_output = true;
    let forced = ModelSettings::new().tool_choice(ToolChoice::Tools(vec!["get_weather".into()])).max_tokens(128);
    let stream = model.request_stream(&user("What's the weather in Paris?"), Some(&forced), &params).await.unwrap();
    let events = events(stream).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ModelStreamEvent::ToolCallStart { tool_name, .. } if tool_name == "get_weather")),
        "a streamed tool call starts: {events:?}"
    );
    let Some(ModelStreamEvent::Final(response)) = events.last() else { panic!("no final response: {events:?}") };
    let call = response.tool_calls().next().expect("the final response holds the call");
    assert_eq!(call.tool_name, "get_weather");
    assert!(call.args_as_object().is_ok(), "arguments are a JSON object: {:?}", call.args);
}

#[tokio::test]
async fn thinking_on_responses_sends_reasoning_effort_the_responses_way() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(json_response("openai", "responses_text.json"))
        .mount(&server)
        .await;
    let mut settings = ModelSettings::new();
    settings.extra = Some(Box::new(json!({"store": false})));
    let agent = toolsmith::Agent::builder(responses(&server))
        .capability(toolsmith::capability::Thinking::high())
        .model_settings(settings)
        .build()
        .unwrap();
    agent.run("Think.").await.unwrap();
    let body = bodies(&server).await.pop().unwrap();
    assert_eq!(body["reasoning"], json!({"effort": "high"}));
    assert_eq!(body["store"], false, "the agent's own provider settings stay");
    assert!(body.get("reasoning_effort").is_none());
}

#[test]
fn reasoning_models_are_not_sent_sampling_parameters_while_they_reason() {
    let settings = ModelSettings::new().max_tokens(100).temperature(0.2);
    let body = |name: &str, settings: &ModelSettings| {
        let model = OpenAIChatModel::builder(name).api_key(KEY).build().unwrap();
        model.request_body(&user("x"), Some(settings), &ModelRequestParameters::default(), false).unwrap()
    };
    // gpt-5 and the o-series always reason: no temperature, and max_completion_tokens.
    for name in ["gpt-5", "gpt-5-mini", "o3", "o4-mini"] {
        let b = body(name, &settings);
        assert!(b.get("temperature").is_none(), "{name}: {b}");
        assert_eq!(b["max_completion_tokens"], 100, "{name}");
        assert!(b.get("max_tokens").is_none(), "{name}");
    }
    // gpt-4o does not reason; gpt-5.2 reasons only when asked.
    assert_eq!(body("gpt-4o", &settings)["temperature"], 0.2);
    assert_eq!(body("gpt-5.2", &settings)["temperature"], 0.2);
    let mut asked = settings.clone();
    asked.extra = Some(Box::new(serde_json::json!({"reasoning_effort": "low"})));
    assert!(body("gpt-5.2", &asked).get("temperature").is_none());
    // The Responses API reads the effort from `reasoning.effort`.
    let responses = OpenAIResponsesModel::builder("gpt-5.1").api_key(KEY).build().unwrap();
    let mut off = settings.clone();
    off.extra = Some(Box::new(serde_json::json!({"reasoning": {"effort": "none"}})));
    let b = responses.request_body(&user("x"), Some(&off), &ModelRequestParameters::default(), false).unwrap();
    assert_eq!(b["temperature"], 0.2);
    let o3 = OpenAIResponsesModel::builder("o3").api_key(KEY).build().unwrap();
    let b = o3.request_body(&user("x"), Some(&settings), &ModelRequestParameters::default(), false).unwrap();
    assert!(b.get("temperature").is_none(), "{b}");
}

#[test]
fn o1_mini_takes_its_instructions_as_a_user_message() {
    let mut params = ModelRequestParameters::default();
    params.instructions = Some("Be brief.".into());
    let roles = |name: &str| {
        let model = OpenAIChatModel::builder(name).api_key(KEY).build().unwrap();
        let body = model.request_body(&user("x"), None, &params, false).unwrap();
        body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert_eq!(roles("o1-mini"), ["user", "user"]);
    assert_eq!(roles("o1-mini-2024-09-12"), ["user", "user"]);
    assert_eq!(roles("o3-mini"), ["system", "user"]);
    assert_eq!(roles("gpt-4o"), ["system", "user"]);
}
