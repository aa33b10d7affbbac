//! Return schemas on the wire: sent only for the tools that ask for them (the
//! `IncludeToolReturnSchemas` capability, or the tool's own flag, whose `false` wins), in
//! Gemini's `responseJsonSchema` field and appended to the description elsewhere.

mod provider_support;

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::capability::IncludeToolReturnSchemas;
use toolsmith::prelude::*;
use toolsmith::providers::{GeminiModel, OpenAIChatModel, RetryConfig};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

use provider_support::*;

async fn mock(provider: &str, fixture: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(json_response(provider, fixture)).mount(&server).await;
    server
}

fn openai(server: &MockServer) -> OpenAIChatModel {
    OpenAIChatModel::builder("gpt-4o-mini")
        .base_url(format!("{}/v1", server.uri()))
        .api_key("sk-test")
        .retry(RetryConfig::default().initial_backoff(Duration::from_millis(1)))
        .build()
        .unwrap()
}

fn gemini(server: &MockServer) -> GeminiModel {
    GeminiModel::builder("gemini-2.5-flash")
        .base_url(server.uri())
        .api_key("AIza-test")
        .retry(RetryConfig::default().initial_backoff(Duration::from_millis(1)))
        .build()
        .unwrap()
}

/// The weather tool, with its return schema (`{"type": "string"}`) and maybe its own flag.
fn tool(include: Option<bool>) -> Tool<()> {
    let tool: Tool<()> = get_weather.into();
    match include {
        Some(include) => tool.include_return_schema(include),
        None => tool,
    }
}

/// The tool declarations of the one request an agent sends.
async fn sent<M: Model>(model: M, server: &MockServer, include: Option<bool>, capability: bool) -> Value {
    let mut builder = Agent::builder(model).tool(tool(include));
    if capability {
        builder = builder.capability(IncludeToolReturnSchemas::all());
    }
    builder.build().unwrap().run("Weather in Paris?").await.unwrap();
    bodies(server).await.pop().unwrap()["tools"].clone()
}

#[tokio::test]
async fn openai_gets_the_schema_in_the_description_only_when_the_tool_asks() {
    let description = |tools: &Value| tools[0]["function"]["description"].as_str().unwrap().to_string();
    let own = "Get the current weather in a city.";
    for (include, capability, shown) in
        [(None, false, false), (None, true, true), (Some(true), false, true), (Some(false), true, false)]
    {
        let server = mock("openai", "chat_text.json").await;
        let tools = sent(openai(&server), &server, include, capability).await;
        let expected =
            if shown { format!("{own}\n\nReturn schema:\n\n{{\n  \"type\": \"string\"\n}}") } else { own.to_string() };
        assert_eq!(description(&tools), expected, "include {include:?}, capability {capability}");
    }
}

#[tokio::test]
async fn gemini_gets_the_schema_in_its_own_field() {
    let server = mock("gemini", "generate_content_text.json").await;
    let tools = sent(gemini(&server), &server, None, true).await;
    let declaration = &tools[0]["functionDeclarations"][0];
    assert_eq!(declaration["description"], "Get the current weather in a city.");
    assert_eq!(declaration["responseJsonSchema"], json!({"type": "string"}));

    let other = mock("gemini", "generate_content_text.json").await;
    let tools = sent(gemini(&other), &other, None, false).await;
    assert!(tools[0]["functionDeclarations"][0].get("responseJsonSchema").is_none());
}
