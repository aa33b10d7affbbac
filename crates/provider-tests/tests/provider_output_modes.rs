//! Output modes on the wire: native output as each provider's JSON-schema response format
//! (OpenAI Chat `response_format`, Responses `text.format`, Gemini `responseJsonSchema`,
//! Anthropic `output_config.format`), prompted output as instructions, and the JSON text answer
//! parsed as the output.

mod provider_support;

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::prelude::*;
use toolsmith::providers::{AnthropicModel, GeminiModel, OpenAIChatModel, OpenAIResponsesModel, RetryConfig};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use provider_support::*;

/// The output's schema, as given to `output_schema` (its description becomes the output's).
fn given_schema() -> Value {
    json!({
        "title": "City",
        "description": "A city.",
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
    })
}

const ANSWER: &str = r#"{"city": "Paris", "country": "France"}"#;

/// A server answering with the fixture, its text replaced by the output's JSON.
async fn mock(provider: &str, name: &str) -> MockServer {
    let mut body = fixture_json(provider, name);
    replace_text(&mut body);
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(200).set_body_json(body)).mount(&server).await;
    server
}

fn replace_text(v: &mut Value) {
    match v {
        Value::String(s) if s == "It's sunny in Paris." => *s = ANSWER.to_string(),
        Value::Array(items) => items.iter_mut().for_each(replace_text),
        Value::Object(m) => m.values_mut().for_each(replace_text),
        _ => {}
    }
}

fn retry() -> RetryConfig {
    RetryConfig::default().initial_backoff(Duration::from_millis(1))
}

/// Runs a `City` agent in `mode`; the output and the body of the one request.
async fn run<M: Model>(model: M, server: &MockServer, mode: OutputMode, strict: Option<bool>) -> (Value, Value) {
    let mut builder = Agent::builder(model).output_schema(given_schema()).output_mode(mode);
    if let Some(s) = strict {
        builder = builder.output_strict(s);
    }
    let output = builder.build().unwrap().run("Where is the Eiffel tower?").await.unwrap().into_output();
    (output, bodies(server).await.pop().unwrap())
}

fn paris() -> Value {
    json!({"city": "Paris", "country": "France"})
}

fn city_schema() -> Value {
    json!({
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
        "title": "City",
        "type": "object",
    })
}

#[tokio::test]
async fn openai_chat_sends_a_json_schema_response_format() {
    let server = mock("openai", "chat_text.json").await;
    let model = OpenAIChatModel::builder("gpt-4o-mini")
        .base_url(format!("{}/v1", server.uri()))
        .api_key("sk-test")
        .retry(retry())
        .build()
        .unwrap();
    let (out, body) = run(model, &server, OutputMode::Native, None).await;
    assert_eq!(out, paris());
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "City", "schema": city_schema(), "description": "A city."}})
    );
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");

    // Strict: the schema made strict-compatible, and the flag.
    let server = mock("openai", "chat_text.json").await;
    let model = OpenAIChatModel::builder("gpt-4o-mini")
        .base_url(format!("{}/v1", server.uri()))
        .api_key("sk-test")
        .retry(retry())
        .build()
        .unwrap();
    let (_, body) = run(model, &server, OutputMode::Native, Some(true)).await;
    let format = &body["response_format"]["json_schema"];
    assert_eq!(format["strict"], true);
    assert_eq!(format["schema"]["additionalProperties"], false);
}

#[tokio::test]
async fn openai_chat_prompted_output_sends_instructions_and_no_tool_choice() {
    let server = mock("openai", "chat_text.json").await;
    let model = OpenAIChatModel::builder("gpt-4o-mini")
        .base_url(format!("{}/v1", server.uri()))
        .api_key("sk-test")
        .retry(retry())
        .build()
        .unwrap();
    let (out, body) = run(model, &server, OutputMode::Prompted, None).await;
    assert_eq!(out, paris());
    assert!(body.get("response_format").is_none() && body.get("tool_choice").is_none(), "{body}");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("Always respond with a JSON object that's compatible with this schema:"), "{system}");
}

#[tokio::test]
async fn openai_responses_sends_a_json_schema_text_format() {
    let server = mock("openai", "responses_text.json").await;
    let model = OpenAIResponsesModel::builder("gpt-5.2")
        .base_url(format!("{}/v1", server.uri()))
        .api_key("sk-test")
        .retry(retry())
        .build()
        .unwrap();
    let (out, body) = run(model, &server, OutputMode::Native, None).await;
    assert_eq!(out, paris());
    assert_eq!(
        body["text"],
        json!({"format": {"type": "json_schema", "name": "City", "schema": city_schema(), "description": "A city."}})
    );
    assert!(body.get("tools").is_none(), "{body}");
}

#[tokio::test]
async fn gemini_sends_a_response_json_schema() {
    let server = mock("gemini", "generate_content_text.json").await;
    let model = GeminiModel::builder("gemini-2.5-flash")
        .base_url(server.uri())
        .api_key("AIza-test")
        .retry(retry())
        .build()
        .unwrap();
    let (out, body) = run(model, &server, OutputMode::Native, None).await;
    assert_eq!(out, paris());
    let config = &body["generationConfig"];
    assert_eq!(config["responseMimeType"], "application/json");
    let mut schema = city_schema();
    schema["description"] = json!("A city.");
    assert_eq!(config["responseJsonSchema"], schema);
    assert!(body.get("tools").is_none() && body.get("toolConfig").is_none(), "{body}");
}

fn anthropic(server: &MockServer, name: &str) -> AnthropicModel {
    AnthropicModel::builder(name).base_url(server.uri()).api_key("sk-ant-test").retry(retry()).build().unwrap()
}

#[tokio::test]
async fn anthropic_sends_a_strict_output_format_on_the_models_that_take_it() {
    let server = mock("anthropic", "messages_text.json").await;
    let (out, body) = run(anthropic(&server, "claude-sonnet-4-5"), &server, OutputMode::Native, None).await;
    assert_eq!(out, paris());
    let mut schema = city_schema();
    schema["additionalProperties"] = json!(false);
    assert_eq!(body["output_config"], json!({"format": {"type": "json_schema", "schema": schema}}));
    assert!(body.get("tools").is_none(), "{body}");

    // Not strict is refused (Anthropic's structured outputs are strict).
    let err = Agent::builder(anthropic(&server, "claude-sonnet-4-5"))
        .output_schema(given_schema())
        .output_mode(OutputMode::Native)
        .output_strict(false)
        .build()
        .unwrap()
        .run("hi")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("always strict"), "{err}");

    // A model without structured outputs: refused when the agent is built.
    let err = Agent::builder(anthropic(&server, "claude-3-5-haiku-latest"))
        .output_schema(given_schema())
        .output_mode(OutputMode::Native)
        .build()
        .err()
        .unwrap();
    assert!(err.to_string().contains("native output is not supported by the model `claude-3-5-haiku-latest`"), "{err}");
}

#[tokio::test]
async fn a_server_refusing_the_forced_output_call_gets_a_hint() {
    let server = MockServer::start().await;
    let body = json!({"error": {"code": 500, "message": "Unsupported param: tool_choice", "type": "server_error"}});
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(500).set_body_json(body)).mount(&server).await;
    let model = OpenAIChatModel::builder("qwen")
        .base_url(format!("{}/v1", server.uri()))
        .api_key("sk-test")
        .retry(RetryConfig::default().max_retries(0))
        .build()
        .unwrap();
    let err =
        Agent::builder(model).output_schema(given_schema()).build().unwrap().run("hi").await.unwrap_err().to_string();
    assert!(err.contains("HTTP 500") && err.contains("Unsupported param: tool_choice"), "{err}");
    assert!(err.contains("`OutputMode::Tool` sends `tool_choice: required`"), "{err}");
    assert!(err.contains(".output_mode(OutputMode::Prompted)"), "{err}");
    assert_eq!(bodies(&server).await[0]["tool_choice"], "required");
}
