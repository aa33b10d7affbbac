//! Tool search through an `Agent`: with the default strategy, a model whose provider searches
//! server-side (Anthropic 4.5+, OpenAI Responses gpt-5.4+) is sent the deferred catalogue with
//! `defer_loading` and the provider's search tool, not the agent's `search_tools`; elsewhere the
//! local search stays. A strategy named after the provider's (`NativeBm25`, `NativeRegex`) is
//! sent as asked, and refused when the agent is built for a model that cannot run it.

mod provider_support;

use serde_json::Value;
use toolsmith::prelude::*;
use toolsmith::providers::{AnthropicModel, OpenAIResponsesModel};
use toolsmith::search::{SearchStrategy, ToolSearch};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

use provider_support::*;

const KEY: &str = "test-key-0123456789";

/// Get the current time in a city.
#[tool]
fn get_time(city: String) -> String {
    format!("noon in {city}")
}

/// Get the weather forecast for a city.
#[tool(defer_loading)]
fn get_forecast(city: String) -> String {
    format!("sunny in {city}")
}

/// Get the news of a city.
#[tool(defer_loading)]
fn get_news(city: String) -> String {
    format!("nothing new in {city}")
}

async fn server(provider: &str, fixture: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(json_response(provider, fixture)).mount(&server).await;
    server
}

fn anthropic(server: &MockServer, name: &str) -> AnthropicModel {
    AnthropicModel::builder(name).base_url(server.uri()).api_key(KEY).build().unwrap()
}

fn responses(server: &MockServer, name: &str) -> OpenAIResponsesModel {
    OpenAIResponsesModel::builder(name).base_url(format!("{}/v1", server.uri())).api_key(KEY).build().unwrap()
}

/// The tools of the first request an agent with `search` sent to `model`.
async fn tools_sent<M: Model>(server: &MockServer, model: M, search: Option<ToolSearch>) -> Vec<Value> {
    let mut builder = Agent::builder(model).tool(get_time).tool(get_forecast).tool(get_news);
    if let Some(s) = search {
        builder = builder.tool_search(s);
    }
    builder.build().unwrap().run("Weather in Paris?").await.unwrap();
    let body = bodies(server).await.remove(0);
    body["tools"].as_array().cloned().unwrap_or_default()
}

fn names(tools: &[Value]) -> Vec<String> {
    tools.iter().map(|t| t["name"].as_str().or(t["type"].as_str()).unwrap_or_default().to_string()).collect()
}

fn deferred(tools: &[Value]) -> Vec<String> {
    tools.iter().filter(|t| t["defer_loading"] == true).map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn anthropic_searches_the_deferred_catalogue_itself_with_pydantic_ais_strategy() {
    let s = server("anthropic", "messages_text.json").await;
    let pydantic = ToolSearch::new().strategy(SearchStrategy::PydanticAi);
    let tools = tools_sent(&s, anthropic(&s, "claude-sonnet-4-5"), Some(pydantic)).await;
    assert_eq!(names(&tools), ["tool_search_tool_bm25", "get_time", "get_forecast", "get_news"]);
    assert_eq!(deferred(&tools), ["get_forecast", "get_news"]);

    // Asked for by name.
    let s = server("anthropic", "messages_text.json").await;
    let regex = ToolSearch::new().strategy(SearchStrategy::NativeRegex);
    let tools = tools_sent(&s, anthropic(&s, "claude-sonnet-4-5"), Some(regex)).await;
    assert_eq!(names(&tools)[0], "tool_search_tool_regex");
    assert_eq!(deferred(&tools), ["get_forecast", "get_news"]);

    // A local strategy, the default among them, keeps the agent's own search_tools.
    for local in [None, Some(ToolSearch::new().strategy(SearchStrategy::Bm25))] {
        let s = server("anthropic", "messages_text.json").await;
        let tools = tools_sent(&s, anthropic(&s, "claude-sonnet-4-5"), local).await;
        assert_eq!(names(&tools), ["get_time", "search_tools"]);
    }
}

#[tokio::test]
async fn a_model_without_server_side_search_gets_the_local_search_tools() {
    let s = server("anthropic", "messages_text.json").await;
    let tools = tools_sent(&s, anthropic(&s, "claude-3-5-haiku-latest"), None).await;
    assert_eq!(names(&tools), ["get_time", "search_tools"]);
    assert!(deferred(&tools).is_empty());

    // Asking a model that cannot run it for the provider's search is a build error.
    let s = server("anthropic", "messages_text.json").await;
    let err = Agent::builder(anthropic(&s, "claude-3-5-haiku-latest"))
        .tool(get_forecast)
        .tool_search(ToolSearch::new().strategy(SearchStrategy::NativeBm25))
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains("model 'claude-3-5-haiku-latest' cannot run a named tool search strategy"),
        "{err}"
    );
}

#[tokio::test]
async fn openai_responses_searches_the_deferred_catalogue_itself_with_pydantic_ais_strategy() {
    let pydantic = || Some(ToolSearch::new().strategy(SearchStrategy::PydanticAi));
    let s = server("openai", "responses_text.json").await;
    let tools = tools_sent(&s, responses(&s, "gpt-5.4"), pydantic()).await;
    assert_eq!(names(&tools), ["get_time", "get_forecast", "get_news", "tool_search"]);
    assert_eq!(deferred(&tools), ["get_forecast", "get_news"]);

    let s = server("openai", "responses_text.json").await;
    let tools = tools_sent(&s, responses(&s, "gpt-4.1"), pydantic()).await;
    assert_eq!(names(&tools), ["get_time", "search_tools"]);

    // The default is toolsmith's own search.
    let s = server("openai", "responses_text.json").await;
    let tools = tools_sent(&s, responses(&s, "gpt-5.4"), None).await;
    assert_eq!(names(&tools), ["get_time", "search_tools"]);

    // OpenAI has no named strategies.
    let err = Agent::builder(responses(&s, "gpt-5.4"))
        .tool(get_forecast)
        .tool_search(ToolSearch::new().strategy(SearchStrategy::NativeRegex))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("`SearchStrategy::NativeRegex` runs on the provider's side"), "{err}");
}
