//! Native tools through an `Agent`: the request of each provider carries the provider's own
//! tool for every `NativeTool` capability (with the beta header Anthropic needs), and a model
//! whose provider does not run one is refused when the agent is built.

mod provider_support;

use serde_json::{Value, json};
use toolsmith::capability::{CapabilityRegistry, CapabilitySpec};
use toolsmith::native::{CodeExecution, FileSearch, McpServer, NativeTool, UserLocation, WebFetch, WebSearch};
use toolsmith::prelude::*;
use toolsmith::providers::{AnthropicModel, GeminiModel, OpenAIChatModel, OpenAIResponsesModel};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

use provider_support::*;

const KEY: &str = "test-key-0123456789";

async fn server(provider: &str, fixture: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(json_response(provider, fixture)).mount(&server).await;
    server
}

fn search() -> NativeTool {
    let mut place = UserLocation::default();
    place.city = Some("Paris".into());
    place.country = Some("FR".into());
    NativeTool::WebSearch(WebSearch::new().max_uses(3).allowed_domains(["meteofrance.com"]).user_location(place))
}

async fn first_body<M: Model>(server: &MockServer, model: M, tools: Vec<NativeTool>) -> Value {
    let mut builder = Agent::builder(model);
    for t in tools {
        builder = builder.capability(t);
    }
    builder.build().unwrap().run("Weather in Paris?").await.unwrap();
    bodies(server).await.remove(0)
}

#[tokio::test]
async fn anthropic_gets_its_server_tools_and_their_beta_headers() {
    let s = server("anthropic", "messages_text.json").await;
    let model = AnthropicModel::builder("claude-sonnet-4-5").base_url(s.uri()).api_key(KEY).build().unwrap();
    let fetch = NativeTool::WebFetch(WebFetch::new().max_uses(2));
    let body = first_body(&s, model, vec![search(), fetch, NativeTool::CodeExecution(CodeExecution::default())]).await;
    assert_eq!(
        body["tools"],
        json!([
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3, "allowed_domains": ["meteofrance.com"],
             "user_location": {"type": "approximate", "city": "Paris", "country": "FR"}},
            {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 2},
            {"type": "code_execution_20250825", "name": "code_execution"}
        ])
    );
    let beta = requests(&s).await[0].headers.get("anthropic-beta").unwrap().to_str().unwrap().to_string();
    assert_eq!(beta, "web-fetch-2025-09-10,code-execution-2025-08-25");
}

#[tokio::test]
async fn openai_responses_gets_its_hosted_tools() {
    let s = server("openai", "responses_text.json").await;
    let model =
        OpenAIResponsesModel::builder("gpt-5").base_url(format!("{}/v1", s.uri())).api_key(KEY).build().unwrap();
    let mut mcp = McpServer::new("deepwiki", "https://mcp.deepwiki.com/mcp");
    mcp.allowed_tools = Some(vec!["ask_question".into()]);
    // Responses cannot limit the number of searches: `max_uses` is left unset here (see
    // `a_limit_the_provider_cannot_apply_is_refused`).
    let mut search = search();
    if let NativeTool::WebSearch(w) = &mut search {
        w.max_uses = None;
    }
    let body = first_body(&s, model, vec![search, NativeTool::McpServer(mcp)]).await;
    assert_eq!(
        body["tools"],
        json!([
            {"type": "web_search", "search_context_size": "medium", "filters": {"allowed_domains": ["meteofrance.com"]},
             "user_location": {"type": "approximate", "city": "Paris", "country": "FR"}},
            {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp",
             "allowed_tools": ["ask_question"], "require_approval": "never"}
        ])
    );
}

#[tokio::test]
async fn gemini_gets_its_grounding_tools() {
    let s = server("gemini", "generate_content_text.json").await;
    let model = GeminiModel::builder("gemini-2.5-flash").base_url(s.uri()).api_key(KEY).build().unwrap();
    let body = first_body(
        &s,
        model,
        vec![
            NativeTool::WebSearch(WebSearch::new()),
            NativeTool::WebFetch(WebFetch::new()),
            NativeTool::CodeExecution(CodeExecution::default()),
        ],
    )
    .await;
    assert_eq!(body["tools"], json!([{"google_search": {}}, {"url_context": {}}, {"code_execution": {}}]));
}

#[test]
fn a_model_that_cannot_run_a_native_tool_is_refused_when_the_agent_is_built() {
    let model = OpenAIChatModel::builder("gpt-4o").base_url("http://127.0.0.1:9/v1").api_key(KEY).build().unwrap();
    let err = Agent::builder(model).capability(search()).build().unwrap_err();
    assert!(err.to_string().contains("model 'gpt-4o' cannot run the native tool `web_search`"), "{err}");
    let model =
        AnthropicModel::builder("claude-sonnet-4-5").base_url("http://127.0.0.1:9").api_key(KEY).build().unwrap();
    let files = NativeTool::FileSearch(FileSearch::new(["vs_1"]));
    let err = Agent::builder(model).capability(files).build().unwrap_err();
    assert!(err.to_string().contains("cannot run the native tool `file_search`"), "{err}");
}

#[test]
fn a_limit_the_provider_cannot_apply_is_refused() {
    let responses =
        OpenAIResponsesModel::builder("gpt-5").base_url("http://127.0.0.1:9/v1").api_key(KEY).build().unwrap();
    let err = Agent::builder(responses).capability(search()).build().unwrap_err();
    assert!(err.to_string().contains("cannot apply `max_uses` of the native tool `web_search`"), "{err}");
    let gemini = GeminiModel::builder("gemini-2.5-flash").base_url("http://127.0.0.1:9").api_key(KEY).build().unwrap();
    let err = Agent::builder(gemini).capability(search()).build().unwrap_err();
    assert!(err.to_string().contains("cannot apply `allowed_domains`"), "{err}");
}

#[test]
fn specs_write_native_tools_as_pydantic_ais_json() {
    let spec = CapabilitySpec::from_json(r#"[{"NativeTool": {"kind": "web_search", "max_uses": 3}}]"#).unwrap();
    let loaded = CapabilityRegistry::<()>::new().load(&spec).unwrap();
    assert_eq!(loaded.capabilities[0].native_tools(), [NativeTool::WebSearch(WebSearch::new().max_uses(3))]);
    let typo = CapabilitySpec::from_json(r#"[{"NativeTool": {"kind": "web_search", "max_use": 3}}]"#).unwrap();
    let err = CapabilityRegistry::<()>::new().load(&typo).unwrap_err();
    assert!(
        err.message.contains("unknown field `max_use`") && err.message.contains("did you mean 'max_uses'?"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn an_anthropic_answer_with_a_server_search_is_read_and_replayed() {
    let answer = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "weather paris"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "url": "https://meteofrance.com/paris", "title": "Paris", "encrypted_content": "abc", "page_age": null}
            ]},
            {"type": "text", "text": "Sunny in Paris.", "citations": [
                {"type": "web_search_result_location", "url": "https://meteofrance.com/paris", "title": "Paris", "encrypted_index": "e", "cited_text": "sunny"}
            ]}
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5, "server_tool_use": {"web_search_requests": 1}}
    });
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(answer))
        .mount(&s)
        .await;
    let model = AnthropicModel::builder("claude-sonnet-4-5").base_url(s.uri()).api_key(KEY).build().unwrap();
    let agent = Agent::builder(model).capability(search()).build().unwrap();
    let first = agent.run("Weather in Paris?").await.unwrap();
    assert_eq!(first.output(), "Sunny in Paris.");
    // The next turn sends the server's blocks back as they came, before the text.
    agent.run("And tomorrow?").message_history(first.all_messages().to_vec()).await.unwrap();
    let second = bodies(&s).await.remove(1);
    let replayed: Vec<&str> =
        second["messages"][1]["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(replayed, ["server_tool_use", "web_search_tool_result", "text"]);
}
