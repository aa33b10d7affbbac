//! Tool search histories moving between providers: a conversation whose tools were found by
//! Anthropic's or OpenAI's server-side search, or by the local `search_tools`, sent to another
//! provider keeps its discovered tools, in a shape that provider's wire takes. The first
//! response comes from a recorded fixture through the real adapter; the next request's body is
//! asserted as the other adapter sends it.

mod provider_support;

use serde_json::{Value, json};
use toolsmith::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, ToolReturnPart,
};
use toolsmith::model::{Model, ModelRequestParameters};
use toolsmith::providers::{AnthropicModel, GeminiModel, NativeToolSearch, OpenAIChatModel, OpenAIResponsesModel};
use toolsmith::search::{SearchStrategy, ToolSearch, discovered_in};
use toolsmith::tool::ToolDefinition;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

use provider_support::*;

const KEY: &str = "test-key-0123456789";

/// `get_weather` and `get_news` deferred, `get_time` not, and the local `search_tools`.
fn params() -> ModelRequestParameters {
    let mut p = ModelRequestParameters::default();
    let mut weather = ToolDefinition::new("get_weather", weather_schema()).with_description("Get the weather.");
    weather.defer_loading = true;
    let time = ToolDefinition::new("get_time", weather_schema()).with_description("Get the time.");
    let mut news = ToolDefinition::new("get_news", weather_schema()).with_description("Get the news.");
    news.defer_loading = true;
    p.function_tools = vec![
        time.into(),
        weather.into(),
        news.into(),
        ToolSearch::new().strategy(SearchStrategy::Bm25).definition().into(),
    ];
    p.allow_text_output = true;
    p
}

fn anthropic(server: &MockServer, name: &str) -> AnthropicModel {
    AnthropicModel::builder(name).base_url(server.uri()).api_key(KEY).build().unwrap()
}

fn responses(server: &MockServer, name: &str) -> OpenAIResponsesModel {
    OpenAIResponsesModel::builder(name).base_url(format!("{}/v1", server.uri())).api_key(KEY).build().unwrap()
}

fn chat(server: &MockServer) -> OpenAIChatModel {
    OpenAIChatModel::builder("gpt-4o-mini").base_url(format!("{}/v1", server.uri())).api_key(KEY).build().unwrap()
}

fn gemini(server: &MockServer) -> GeminiModel {
    GeminiModel::builder("gemini-2.5-flash").base_url(server.uri()).api_key(KEY).build().unwrap()
}

/// The history after the first response (from `fixture`) and the weather tool's return.
async fn history_from(provider: &str, fixture: &str, model: &impl Model, call_id: &str) -> Vec<ModelMessage> {
    let first = model.request(&[ModelRequest::user_prompt("Weather in Paris?").into()], None, &params()).await;
    let first = first.unwrap_or_else(|e| panic!("{provider} {fixture}: {e}"));
    vec![
        ModelRequest::user_prompt("Weather in Paris?").into(),
        first.into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success(
            "get_weather",
            json!("Sunny in Paris"),
            call_id,
        ))])
        .into(),
    ]
}

async fn server_with(provider: &str, fixture: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(json_response(provider, fixture)).mount(&server).await;
    server
}

fn names(tools: &Value, key: &str) -> Vec<String> {
    tools.as_array().unwrap().iter().filter_map(|t| t.pointer(key)?.as_str().map(str::to_string)).collect()
}

#[tokio::test]
async fn anthropic_native_search_history_replays_as_search_tools_elsewhere() {
    let server = server_with("anthropic", "messages_tool_search.json").await;
    let history = history_from(
        "anthropic",
        "messages_tool_search.json",
        &anthropic(&server, "claude-sonnet-4-5"),
        "toolu_01XYZ789",
    )
    .await;
    assert!(discovered_in(&history).contains("get_weather"), "a native discovery counts for the local search");
    let p = params();
    let search_return = json!({"discovered_tools": [{"name": "get_weather"}]});

    // Gemini: a functionCall / functionResponse pair where the search was; get_weather is sent.
    let b = gemini(&server).request_body(&history, None, &p, false).unwrap();
    let model_turn = &b["contents"][1]["parts"];
    assert_eq!(model_turn[0]["text"], "I'll search for tools to help with the weather information.");
    assert_eq!(
        model_turn[1]["functionCall"],
        json!({"name": "search_tools", "args": {"queries": ["weather"]}, "id": "srvtoolu_01ABC123"})
    );
    assert_eq!(model_turn[2]["text"], "I found a weather tool.");
    assert_eq!(model_turn[3]["functionCall"]["name"], "get_weather");
    let user_turn = &b["contents"][2]["parts"];
    assert_eq!(
        user_turn[0]["functionResponse"],
        json!({"name": "search_tools", "response": search_return, "id": "srvtoolu_01ABC123"})
    );
    assert_eq!(user_turn[1]["functionResponse"]["name"], "get_weather");
    assert_eq!(
        names(&b["tools"][0]["functionDeclarations"], "/name"),
        ["get_time", "get_weather", "search_tools"],
        "the discovered deferred tool is sent, the undiscovered one is not"
    );

    // OpenAI Chat: one assistant message with both calls, then the tool messages in order.
    let b = chat(&server).request_body(&history, None, &p, false).unwrap();
    let assistant = &b["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(names(&assistant["tool_calls"], "/function/name"), ["search_tools", "get_weather"]);
    assert_eq!(assistant["tool_calls"][0]["id"], "srvtoolu_01ABC123");
    assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], "{\"queries\":[\"weather\"]}");
    assert_eq!(b["messages"][2]["role"], "tool");
    assert_eq!(b["messages"][2]["tool_call_id"], "srvtoolu_01ABC123");
    assert_eq!(serde_json::from_str::<Value>(b["messages"][2]["content"].as_str().unwrap()).unwrap(), search_return);
    assert_eq!(b["messages"][3]["tool_call_id"], "toolu_01XYZ789");
    assert_eq!(names(&b["tools"], "/function/name"), ["get_time", "get_weather", "search_tools"]);

    // OpenAI Responses with its own native search: ordinary function items, and the tool found
    // by Anthropic's search sent loaded (no defer_loading), the other deferred one still deferred.
    let b = responses(&server, "gpt-5.4").request_body(&history, None, &p, false).unwrap();
    let input = b["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap_or("message")).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "function_call",
            "message",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(input[2]["name"], "search_tools");
    assert_eq!(input[2]["call_id"], "srvtoolu_01ABC123");
    assert_eq!(input[5]["call_id"], "srvtoolu_01ABC123");
    let tools = b["tools"].as_array().unwrap();
    assert_eq!(names(&b["tools"], "/name"), ["get_time", "get_weather", "get_news", "search_tools"]);
    assert!(tools[1].get("defer_loading").is_none(), "{}", tools[1]);
    assert_eq!(tools[2]["defer_loading"], true);
    assert_eq!(tools[4], json!({"type": "tool_search"}));

    // Anthropic itself, with native search: its own blocks are replayed as they came.
    let b = anthropic(&server, "claude-sonnet-4-5").request_body(&history, None, &p, false).unwrap();
    let kinds: Vec<&str> =
        b["messages"][1]["content"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "server_tool_use", "tool_search_tool_result", "text", "tool_use"]);

    // Anthropic with the other search tool declared: a server_tool_use of an undeclared tool
    // would be refused, so the search goes as a search_tools pair with tool_reference blocks.
    let regex = AnthropicModel::builder("claude-sonnet-4-5")
        .base_url(server.uri())
        .api_key(KEY)
        .native_tool_search(Some(NativeToolSearch::Regex))
        .build()
        .unwrap();
    let b = regex.request_body(&history, None, &p, false).unwrap();
    let kinds: Vec<&str> =
        b["messages"][1]["content"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "tool_use", "text", "tool_use"]);
    assert_eq!(
        b["messages"][2]["content"][0]["content"],
        json!([{"type": "tool_reference", "tool_name": "get_weather"}])
    );

    // Anthropic without native search (an older model): the same search_tools pair.
    let b = anthropic(&server, "claude-sonnet-4-0").request_body(&history, None, &p, false).unwrap();
    let assistant = b["messages"][1]["content"].as_array().unwrap();
    let kinds: Vec<&str> = assistant.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "tool_use", "text", "tool_use"]);
    assert_eq!(assistant[1]["name"], "search_tools");
    let results = b["messages"][2]["content"].as_array().unwrap();
    assert_eq!(results[0]["tool_use_id"], "srvtoolu_01ABC123");
    assert_eq!(serde_json::from_str::<Value>(results[0]["content"].as_str().unwrap()).unwrap(), search_return);
    assert_eq!(names(&b["tools"], "/name"), ["get_time", "get_weather", "search_tools"]);
}

#[tokio::test]
async fn openai_native_search_history_keeps_its_tools_on_anthropic() {
    let server = server_with("openai", "responses_tool_search.json").await;
    let history = history_from(
        "openai",
        "responses_tool_search.json",
        &responses(&server, "gpt-5.4"),
        "call_ytqozXvUXG8NN1b0IODxzUaE",
    )
    .await;
    assert!(discovered_in(&history).contains("get_weather"));
    let p = params();

    // Its own model replays the items natively, and get_weather stays deferred (it is loaded).
    let b = responses(&server, "gpt-5.4").request_body(&history, None, &p, false).unwrap();
    let kinds: Vec<&str> =
        b["input"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap_or("message")).collect();
    assert_eq!(kinds, ["message", "tool_search_call", "tool_search_output", "function_call", "function_call_output"]);
    assert_eq!(b["tools"][1]["defer_loading"], true);

    // Anthropic with native search: a search_tools tool_use, and its tool_result lists the tool
    // as a tool_reference, so Claude has it loaded.
    let b = anthropic(&server, "claude-sonnet-4-5").request_body(&history, None, &p, false).unwrap();
    let assistant = b["messages"][1]["content"].as_array().unwrap();
    assert_eq!(
        assistant[0],
        json!({
            "type": "tool_use",
            "id": "tsc_04bd69550b37ba260069aa689605cc8190bd2d9bf1199fa630",
            "name": "search_tools",
            "input": {"queries": ["get_weather"]},
        })
    );
    assert_eq!(assistant[1]["name"], "get_weather");
    let results = &b["messages"][2]["content"];
    assert_eq!(
        results[0],
        json!({
            "type": "tool_result",
            "tool_use_id": "tsc_04bd69550b37ba260069aa689605cc8190bd2d9bf1199fa630",
            "content": [{"type": "tool_reference", "tool_name": "get_weather"}],
        })
    );
    assert_eq!(results[1]["tool_use_id"], "call_ytqozXvUXG8NN1b0IODxzUaE");
    assert_eq!(b["tools"][0]["name"], "tool_search_tool_bm25");
    assert_eq!(b["tools"][2]["name"], "get_weather");
    assert_eq!(b["tools"][2]["defer_loading"], true);

    // OpenAI Responses without native search (an older model): the search_tools pair.
    let b = responses(&server, "gpt-5.2").request_body(&history, None, &p, false).unwrap();
    let kinds: Vec<&str> =
        b["input"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap_or("message")).collect();
    assert_eq!(kinds, ["message", "function_call", "function_call", "function_call_output", "function_call_output"]);
    assert_eq!(names(&b["tools"], "/name"), ["get_time", "get_weather", "search_tools"]);
    assert!(b["tools"][1].get("defer_loading").is_none());
}

/// A history of the local search: `search_tools` found `get_weather`.
fn local_search_history() -> Vec<ModelMessage> {
    let mut call = ToolCallPart::new("search_tools", json!({"queries": ["weather"]}), "call_search");
    call.tool_kind = Some("tool-search".into());
    let mut ret = ToolReturnPart::success(
        "search_tools",
        json!({"discovered_tools": [{"name": "get_weather"}, {"name": "not_in_this_request"}]}),
        "call_search",
    );
    ret.tool_kind = Some("tool-search".into());
    vec![
        ModelRequest::user_prompt("Weather in Paris?").into(),
        ModelResponse::new(vec![ModelResponsePart::ToolCall(call)]).into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ret)]).into(),
    ]
}

#[tokio::test]
async fn local_search_history_keeps_its_discoveries_with_native_search() {
    let server = MockServer::start().await;
    let history = local_search_history();
    let p = params();

    // Anthropic: the return's tools that are deferred tools of the request become tool_reference
    // blocks (Anthropic's documented custom-search result); the search call stays a tool_use.
    let b = anthropic(&server, "claude-opus-4-5").request_body(&history, None, &p, false).unwrap();
    assert_eq!(b["messages"][1]["content"][0]["name"], "search_tools");
    assert_eq!(
        b["messages"][2]["content"][0]["content"],
        json!([{"type": "tool_reference", "tool_name": "get_weather"}])
    );

    // OpenAI Responses: function items (OpenAI loads deferred tools only through its own
    // server's items), and the found tool sent loaded.
    let b = responses(&server, "gpt-5.4").request_body(&history, None, &p, false).unwrap();
    assert_eq!(b["input"][1]["type"], "function_call");
    assert_eq!(b["input"][2]["type"], "function_call_output");
    let tools = b["tools"].as_array().unwrap();
    assert!(tools[1].get("defer_loading").is_none(), "get_weather was found: {}", tools[1]);
    assert_eq!(tools[2]["defer_loading"], true, "get_news was not");

    // Gemini and Chat: the found tool is sent, the other deferred one is not.
    let b = gemini(&server).request_body(&history, None, &p, false).unwrap();
    assert_eq!(names(&b["tools"][0]["functionDeclarations"], "/name"), ["get_time", "get_weather", "search_tools"]);
    let b = chat(&server).request_body(&history, None, &p, false).unwrap();
    assert_eq!(names(&b["tools"], "/function/name"), ["get_time", "get_weather", "search_tools"]);
}
