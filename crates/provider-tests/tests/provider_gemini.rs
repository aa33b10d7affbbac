//! Gemini generateContent on the wire: requests asserted field by field, responses and streams
//! replayed from fixtures of the API reference, through a local server.

mod provider_support;

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, RetryCause, RetryInfo,
    ToolCallPart, ToolReturnPart,
};
use toolsmith::model::{Model, ModelRequestParameters, ModelSettings, ModelStreamEvent, StreamingModel, ToolChoice};
use toolsmith::providers::{GeminiModel, RetryConfig, gemini_schema};
use toolsmith::tool::ToolDefinition;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use provider_support::*;

const KEY: &str = "AIza-test-0123456789-secret";

fn model(server: &MockServer, name: &str) -> GeminiModel {
    GeminiModel::builder(name)
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
    ];
    p.allow_text_output = true;
    p
}

#[tokio::test]
async fn agent_run_maps_requests_and_echoes_thought_signatures() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-flash:generateContent"))
        .and(header("x-goog-api-key", KEY))
        .respond_with(Seq::new([
            json_response("gemini", "generate_content_function_call.json"),
            json_response("gemini", "generate_content_text.json"),
        ]))
        .expect(2)
        .mount(&server)
        .await;
    let result = weather_agent(model(&server, "gemini-2.5-flash")).run("What's the weather in Paris?").await.unwrap();
    assert_eq!(result.output(), "It's sunny in Paris.");
    assert_eq!(result.usage().input_tokens, 58 + 80);
    assert_eq!(result.usage().output_tokens, 5 + 48 + 7, "thought tokens count as output");

    let reqs = requests(&server).await;
    assert!(reqs[0].url.query().is_none(), "the key travels in a header, never in the URL");
    let bodies = bodies(&server).await;
    let first = &bodies[0];
    assert_eq!(first["systemInstruction"], json!({"parts": [{"text": "You are a weather assistant."}]}));
    assert_eq!(first["contents"], json!([{"role": "user", "parts": [{"text": "What's the weather in Paris?"}]}]));
    assert_eq!(
        first["tools"],
        json!([{"functionDeclarations": [{
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city."}},
                "required": ["city"],
            },
        }]}])
    );
    assert!(first.get("toolConfig").is_none());

    let contents = bodies[1]["contents"].as_array().unwrap();
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [{
            "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": "CiQB0e2Kb3dRh+BYdbZvmulSN2Pwwc75DfQOCYSRE71dXkI=",
        }]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "Sunny in Paris"}}}]})
    );
    let last = result.all_messages()[3].as_response().unwrap();
    assert_eq!(last.usage.cache_read_tokens, 16);
    assert_eq!(last.model_name.as_deref(), Some("gemini-2.5-flash"));
    assert_eq!(last.provider_response_id.as_deref(), Some("nUDHaJ2fFfeanvgPg9jR0QQ"));
    assert_eq!(last.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn stream_assembles_thoughts_text_and_calls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-flash:streamGenerateContent"))
        .and(query_param("alt", "sse"))
        .respond_with(sse_response("gemini", "stream_generate_content.sse"))
        .mount(&server)
        .await;
    let m = model(&server, "gemini-2.5-flash");
    let events = events(m.request_stream(&user("Paris and London?"), None, &params()).await.unwrap()).await;
    assert_eq!(events[0], ModelStreamEvent::ThinkingDelta { index: 0, delta: "Let me look that up.".into() });
    assert_eq!(events[1], ModelStreamEvent::TextDelta { index: 1, delta: "Checking".into() });
    assert_eq!(events[2], ModelStreamEvent::TextDelta { index: 1, delta: " the weather.".into() });
    let ends: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            ModelStreamEvent::ToolCallEnd { call, .. } => Some(call.args.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [json!({"city": "Paris"}), json!({"city": "London"})]);
    let ModelStreamEvent::Final(response) = events.last().unwrap() else { panic!() };
    assert_eq!(response.parts.len(), 4);
    match &response.parts[0] {
        ModelResponsePart::Thinking(t) => assert_eq!(t.signature.as_deref(), Some("Q2lRQjBlMktiM2RS")),
        other => panic!("expected thinking, got {other:?}"),
    }
    let ids: Vec<&str> = response.tool_calls().map(|c| c.tool_call_id.as_str()).collect();
    assert!(ids.iter().all(|id| id.starts_with("pyd_ai_")) && ids[0] != ids[1], "generated, distinct ids");
    assert_eq!(response.usage.output_tokens, 14 + 12);
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn tool_choice_uses_allowed_function_names() {
    let server = MockServer::start().await;
    let m = model(&server, "gemini-2.5-flash");
    let p = params();
    let config = |choice: ToolChoice| {
        let s = ModelSettings::new().tool_choice(choice);
        let b = m.request_body(&user("x"), Some(&s), &p, false).unwrap();
        assert_eq!(b["tools"][0]["functionDeclarations"].as_array().unwrap().len(), 2, "never filtered");
        b["toolConfig"]["functionCallingConfig"].clone()
    };
    assert_eq!(config(ToolChoice::None), json!({"mode": "NONE"}));
    assert_eq!(config(ToolChoice::Required), json!({"mode": "ANY"}));
    assert_eq!(
        config(ToolChoice::Tools(vec!["get_time".into()])),
        json!({"mode": "ANY", "allowedFunctionNames": ["get_time"]})
    );
    assert_eq!(
        config(ToolChoice::ToolOrOutput(vec!["get_time".into()])),
        json!({"mode": "VALIDATED", "allowedFunctionNames": ["get_time"]})
    );
    let mut s = ModelSettings::new().max_tokens(256).temperature(0.1);
    s.seed = Some(3);
    s.extra = Some(Box::new(json!({"generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}})));
    let b = m.request_body(&user("x"), Some(&s), &p, false).unwrap();
    assert_eq!(
        b["generationConfig"],
        json!({"maxOutputTokens": 256, "temperature": 0.1, "seed": 3, "thinkingConfig": {"thinkingBudget": 0}})
    );
}

#[test]
fn schemas_are_converted_to_the_gemini_subset() {
    let schema = json!({
        "type": "object",
        "title": "Args",
        "additionalProperties": false,
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"], "title": "Unit"}},
        "properties": {
            "unit": {"$ref": "#/$defs/Unit"},
            "days": {"type": ["integer", "null"], "exclusiveMinimum": 0, "default": 1},
            "mode": {"const": "fast"},
            "level": {"enum": [1, 2, 3]},
            "tags": {"type": "array", "items": {"type": "string", "format": "uri"}, "uniqueItems": true},
        },
        "required": ["unit"],
    });
    assert_eq!(
        gemini_schema(&schema),
        json!({
            "type": "object",
            "properties": {
                "unit": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": "integer", "nullable": true, "description": "(exclusiveMinimum: 0)"},
                "mode": {"enum": ["fast"]},
                "level": {"enum": ["1", "2", "3"], "type": "string"},
                "tags": {"type": "array", "items": {"type": "string", "description": "(format: uri)"}},
            },
            "required": ["unit"],
        })
    );
}

#[tokio::test]
async fn tool_returns_use_output_and_error_keys() {
    let server = MockServer::start().await;
    let messages: Vec<ModelMessage> = vec![
        ModelRequest::user_prompt("Weather?").into(),
        ModelResponse::new(vec![
            ModelResponsePart::ToolCall(ToolCallPart::new("get_weather", json!({"city": "Pariss"}), "pyd_ai_1")),
            ModelResponsePart::ToolCall(ToolCallPart::new("get_time", json!({"city": "Paris"}), "pyd_ai_2")),
        ])
        .into(),
        ModelRequest::new(vec![
            ModelRequestPart::ToolReturn(ToolReturnPart::retried(
                "get_weather",
                json!("Unknown city."),
                "pyd_ai_1",
                RetryInfo::new(RetryCause::ModelRetry, 1, 1),
            )),
            ModelRequestPart::ToolReturn(ToolReturnPart::success("get_time", json!({"time": "12:00"}), "pyd_ai_2")),
        ])
        .into(),
    ];
    let b = model(&server, "gemini-3-pro-preview").request_body(&messages, None, &params(), false).unwrap();
    let contents = b["contents"].as_array().unwrap();
    // A call from another provider's history gets the documented placeholder signature on Gemini 3.
    assert_eq!(contents[1]["parts"][0]["thoughtSignature"], "skip_thought_signature_validator");
    assert!(contents[1]["parts"][1].get("thoughtSignature").is_none());
    assert_eq!(
        contents[2]["parts"],
        json!([
            {"functionResponse": {"name": "get_weather", "response": {"error": "Unknown city.\n\nFix the errors and try again."}}},
            {"functionResponse": {"name": "get_time", "response": {"time": "12:00"}}},
        ])
    );
}

#[tokio::test]
async fn errors_and_base_urls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Seq::new([
            ResponseTemplate::new(429).set_body_raw(fixture("gemini", "error_429.json"), "application/json"),
            ResponseTemplate::new(400).set_body_raw(fixture("gemini", "error_400.json"), "application/json"),
        ]))
        .mount(&server)
        .await;
    let err = model(&server, "gemini-2.5-flash").request(&user("hi"), None, &params()).await.unwrap_err();
    assert_eq!(err.kind, "ModelHttpError");
    assert!(err.message.contains("HTTP 400"), "{}", err.message);
    assert!(err.message.contains("API key not valid"), "{}", err.message);
    assert!(!err.message.contains(KEY));
    assert_eq!(requests(&server).await.len(), 2, "the 429 was retried");

    // A base URL that already names the API version is used as it is.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/custom/v1beta/models/gemini-2.5-flash:generateContent"))
        .respond_with(json_response("gemini", "generate_content_text.json"))
        .expect(1)
        .mount(&server)
        .await;
    let m = GeminiModel::builder("models/gemini-2.5-flash")
        .base_url(format!("{}/custom/v1beta/", server.uri()))
        .api_key(KEY)
        .build()
        .unwrap();
    m.request(&user("hi"), None, &params()).await.unwrap();
}

/// Vertex AI's path for a publisher model, under which `stream_function_call_arguments` works.
const VERTEX: &str = "/v1/projects/demo/locations/global/publishers/google";

#[tokio::test]
async fn streamed_function_call_arguments_are_assembled_from_partial_args() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("{VERTEX}/models/gemini-3-pro-preview:streamGenerateContent")))
        .and(query_param("alt", "sse"))
        .respond_with(sse_response("gemini", "stream_partial_args.sse"))
        .expect(1)
        .mount(&server)
        .await;
    let m = GeminiModel::builder("gemini-3-pro-preview")
        .base_url(format!("{}{VERTEX}", server.uri()))
        .api_key(KEY)
        .stream_function_call_arguments(true)
        .build()
        .unwrap();
    let mut p = ModelRequestParameters::default();
    p.function_tools = vec![
        ToolDefinition::new(
            "save_article",
            json!({"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}}}),
        )
        .into(),
    ];
    p.allow_text_output = true;

    // Only the streaming request asks for it (Vertex's generateContent refuses the field).
    let plain = m.request_body(&user("x"), None, &p, false).unwrap();
    assert!(plain.get("toolConfig").is_none(), "{plain}");

    let events = events(m.request_stream(&user("Save an article"), None, &p).await.unwrap()).await;
    let sent = bodies(&server).await;
    assert_eq!(sent[0]["toolConfig"], json!({"functionCallingConfig": {"streamFunctionCallArguments": true}}));

    let expected = json!({
        "title": "Rust in 2025",
        "body": "Line one.\nLine \"two\".",
        "words": 4,
        "draft": false,
        "tags": ["rust"],
        "summary": null,
    });
    assert_eq!(events[0], ModelStreamEvent::TextDelta { index: 0, delta: "I'll save the article.".into() });
    let ModelStreamEvent::ToolCallStart { index: 1, tool_name, tool_call_id } = &events[1] else {
        panic!("expected the call's start, got {:?}", events[1])
    };
    assert_eq!(tool_name, "save_article");
    assert!(tool_call_id.starts_with("pyd_ai_"));
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ModelStreamEvent::ToolCallArgsDelta { index: 1, delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.len(), 4, "one fragment per chunk with entries, and the closing one: {deltas:?}");
    assert_eq!(deltas[0], "{\"title\":\"Rust");
    assert_eq!(serde_json::from_str::<Value>(&deltas.concat()).unwrap(), expected);
    let ends: Vec<&ToolCallPart> = events
        .iter()
        .filter_map(|e| match e {
            ModelStreamEvent::ToolCallEnd { call, .. } => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].args, expected);

    let ModelStreamEvent::Final(response) = events.last().unwrap() else { panic!("no final response") };
    assert_eq!(response.parts.len(), 2);
    let call = response.tool_calls().next().unwrap();
    assert_eq!(call.args, expected);
    assert_eq!(call.provider_details.as_deref(), Some(&json!({"thought_signature": "CiQBjz1rX2sigPartialArgs"})));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(response.usage.output_tokens, 27);

    // The signature goes back with the call in the next request.
    let history = vec![ModelRequest::user_prompt("Save an article").into(), ModelMessage::Response(response.clone())];
    let b = m.request_body(&history, None, &p, true).unwrap();
    assert_eq!(b["contents"][1]["parts"][1]["thoughtSignature"], "CiQBjz1rX2sigPartialArgs");
    assert_eq!(b["contents"][1]["parts"][1]["functionCall"]["args"], expected);
}
