//! The answers of native tools: each provider's server-side calls and results (streamed and
//! not) become `builtin-tool-call` / `builtin-tool-return` parts (and `file` parts for images) in
//! Pydantic AI's history JSON, go back to the same provider as it sent them, and are left out
//! for another provider.

mod provider_support;

use serde_json::{Value, json};
use toolsmith::messages::{ModelMessage, ModelResponsePart, history_to_json, parse_history};
use toolsmith::model::{ModelRequestParameters, ModelStreamEvent, StreamingModel};
use toolsmith::native::{CodeExecution, ImageGeneration, McpServer, Memory, NativeTool, WebFetch, WebSearch};
use toolsmith::prelude::*;
use toolsmith::providers::{AnthropicModel, GeminiModel, OpenAIResponsesModel};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use provider_support::*;

const KEY: &str = "test-key-0123456789";

async fn server(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(Seq::new(responses)).mount(&server).await;
    server
}

fn anthropic(s: &MockServer) -> AnthropicModel {
    AnthropicModel::builder("claude-sonnet-4-5").base_url(s.uri()).api_key(KEY).build().unwrap()
}

fn responses(s: &MockServer) -> OpenAIResponsesModel {
    OpenAIResponsesModel::builder("gpt-5").base_url(format!("{}/v1", s.uri())).api_key(KEY).build().unwrap()
}

/// The response parts of the last response, as (part_kind, tool_name) in Pydantic AI's JSON.
fn kinds(history: &[ModelMessage]) -> Vec<(String, String)> {
    let json: Value = serde_json::from_str(&history_to_json(history)).unwrap();
    let last = json.as_array().unwrap().iter().rev().find(|m| m["kind"] == "response").unwrap().clone();
    last["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (p["part_kind"].as_str().unwrap().to_string(), p["tool_name"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[tokio::test]
async fn anthropic_server_tool_blocks_are_native_parts_and_go_back_as_they_came() {
    let answer = fixture_json("anthropic", "messages_server_tools.json");
    let s = server(vec![json_response("anthropic", "messages_server_tools.json")]).await;
    let mcp = McpServer::new("deepwiki", "https://mcp.deepwiki.com/mcp");
    let agent = Agent::builder(anthropic(&s))
        .capability(NativeTool::WebSearch(WebSearch::new()))
        .capability(NativeTool::WebFetch(WebFetch::new()))
        .capability(NativeTool::CodeExecution(CodeExecution::default()))
        .capability(NativeTool::McpServer(mcp))
        .build()
        .unwrap();
    let first = agent.run("Weather in Paris?").await.unwrap();
    assert_eq!(first.output(), "Sunny in Paris: 21C (69.8F).");
    assert_eq!(
        kinds(first.all_messages()),
        pairs(&[
            ("builtin-tool-call", "web_search"),
            ("builtin-tool-return", "web_search"),
            ("builtin-tool-call", "web_fetch"),
            ("builtin-tool-return", "web_fetch"),
            ("builtin-tool-call", "code_execution"),
            ("builtin-tool-return", "code_execution"),
            ("builtin-tool-call", "mcp_server:deepwiki"),
            ("builtin-tool-return", "mcp_server:deepwiki"),
            ("text", ""),
        ])
    );
    // The MCP call reads as Pydantic AI writes it.
    let response = first.all_messages()[1].as_response().unwrap();
    let ModelResponsePart::NativeToolCall(mcp_call) = &response.parts[6] else { panic!() };
    assert_eq!(
        mcp_call.args,
        json!({"action": "call_tool", "tool_name": "ask_question", "tool_args": {"question": "What is Paris?"}})
    );

    // The next request sends every block back, unchanged, in order.
    agent.run("And tomorrow?").message_history(first.all_messages().to_vec()).await.unwrap();
    let second = bodies(&s).await.remove(1);
    assert_eq!(second["messages"][1]["content"], answer["content"]);

    // The history goes through Pydantic AI's JSON and back without losing what is replayed.
    let reread = parse_history(&history_to_json(first.all_messages())).unwrap();
    assert_eq!(reread, first.all_messages());
}

/// The final response of a streamed request with these native tools.
async fn streamed<M: StreamingModel>(model: M, tools: Vec<NativeTool>) -> Vec<ModelMessage> {
    let mut params = ModelRequestParameters::default();
    params.native_tools = tools;
    let events = events(model.request_stream(&user("Weather in Paris?"), None, &params).await.unwrap()).await;
    let Some(ModelStreamEvent::Final(response)) = events.last() else { panic!("{events:?}") };
    let mut history = user("Weather in Paris?");
    history.push(response.clone().into());
    history
}

#[tokio::test]
async fn anthropic_streamed_server_tool_blocks_are_native_parts() {
    let s = server(vec![sse_response("anthropic", "messages_stream_server_tools.sse")]).await;
    let history = streamed(anthropic(&s), vec![NativeTool::WebSearch(WebSearch::new())]).await;
    assert_eq!(
        kinds(&history),
        pairs(&[("builtin-tool-call", "web_search"), ("builtin-tool-return", "web_search"), ("text", "")])
    );
    let response = history[1].as_response().unwrap();
    let ModelResponsePart::NativeToolCall(call) = &response.parts[0] else { panic!() };
    assert_eq!(call.args, json!({"query": "weather paris"}));
    assert_eq!(call.tool_call_id, "srvtoolu_01WS");
    assert_eq!(response.text_content().as_deref(), Some("Sunny in Paris."));
}

#[tokio::test]
async fn anthropic_mcp_servers_and_memory_go_in_the_request() {
    let s = server(vec![json_response("anthropic", "messages_text.json")]).await;
    let mut mcp = McpServer::new("deepwiki", "https://mcp.deepwiki.com/mcp");
    mcp.allowed_tools = Some(vec!["ask_question".into()]);
    mcp.authorization_token = Some("secret-token".into());

    /// Keep a memory.
    #[tool]
    fn memory(command: String) -> String {
        command
    }
    let agent = Agent::builder(anthropic(&s))
        .tool(memory)
        .capability(NativeTool::McpServer(mcp))
        .capability(NativeTool::Memory(Memory::default()))
        .build()
        .unwrap();
    agent.run("hi").await.unwrap();
    let body = bodies(&s).await.remove(0);
    assert_eq!(
        body["mcp_servers"],
        json!([{"type": "url", "name": "deepwiki", "url": "https://mcp.deepwiki.com/mcp",
                "tool_configuration": {"enabled": true, "allowed_tools": ["ask_question"]},
                "authorization_token": "secret-token"}])
    );
    assert_eq!(body["tools"], json!([{"type": "memory_20250818", "name": "memory"}]));
    let beta = requests(&s).await[0].headers.get("anthropic-beta").unwrap().to_str().unwrap().to_string();
    assert_eq!(beta, "mcp-client-2025-04-04,context-management-2025-06-27");
}

#[tokio::test]
async fn anthropic_memory_without_a_memory_tool_is_a_clear_error() {
    let s = server(vec![json_response("anthropic", "messages_text.json")]).await;
    let agent = Agent::builder(anthropic(&s)).capability(NativeTool::Memory(Memory::default())).build().unwrap();
    let err = agent.run("hi").await.unwrap_err();
    assert!(err.to_string().contains("needs a function tool named `memory`"), "{err}");
}

fn hosted_tools() -> Vec<NativeTool> {
    vec![
        NativeTool::WebSearch(WebSearch::new()),
        NativeTool::McpServer(McpServer::new("deepwiki", "https://mcp.deepwiki.com/mcp")),
        NativeTool::CodeExecution(CodeExecution::default()),
        NativeTool::ImageGeneration(ImageGeneration::new().aspect_ratio("3:2").quality("high")),
    ]
}

fn agent_with<M: Model>(model: M, tools: Vec<NativeTool>) -> Agent {
    let mut b = Agent::builder(model);
    for t in tools {
        b = b.capability(t);
    }
    b.build().unwrap()
}

#[tokio::test]
async fn responses_hosted_tool_items_are_native_parts_and_go_back_by_id() {
    let s = server(vec![json_response("openai", "responses_hosted_tools.json")]).await;
    let agent = agent_with(responses(&s), hosted_tools());
    let first = agent.run("Weather in Paris, with a picture").await.unwrap();
    let request = bodies(&s).await.remove(0);
    assert_eq!(
        request["tools"][3],
        json!({"type": "image_generation", "quality": "high", "size": "1536x1024"}),
        "an aspect ratio becomes OpenAI's size"
    );
    assert_eq!(
        kinds(first.all_messages()),
        pairs(&[
            ("builtin-tool-call", "web_search"),
            ("builtin-tool-return", "web_search"),
            ("builtin-tool-call", "mcp_server:deepwiki"),
            ("builtin-tool-return", "mcp_server:deepwiki"),
            ("builtin-tool-call", "mcp_server:deepwiki"),
            ("builtin-tool-return", "mcp_server:deepwiki"),
            ("builtin-tool-call", "code_execution"),
            ("builtin-tool-return", "code_execution"),
            ("builtin-tool-call", "image_generation"),
            ("builtin-tool-return", "image_generation"),
            ("file", ""),
            ("text", ""),
        ])
    );
    let response = first.all_messages()[1].as_response().unwrap();
    let ModelResponsePart::NativeToolReturn(search) = &response.parts[1] else { panic!() };
    assert_eq!(search.content["sources"][0]["url"], "https://meteofrance.com/paris");
    let ModelResponsePart::File(image) = &response.parts[10] else { panic!() };
    assert!(matches!(&image.content, toolsmith::messages::MediaContent::Binary(b) if b.media_type == "image/png"));

    agent.run("Thanks").message_history(first.all_messages().to_vec()).await.unwrap();
    let input = bodies(&s).await.remove(1)["input"].clone();
    let items: Vec<Value> = input.as_array().unwrap()[1..7].to_vec();
    assert_eq!(
        items,
        vec![
            json!({"type": "web_search_call", "id": "ws_01", "action": {"type": "search", "query": "weather paris"}, "status": "completed"}),
            json!({"type": "mcp_list_tools", "id": "mcpl_01", "server_label": "deepwiki", "tools": []}),
            json!({"type": "mcp_call", "id": "mcp_01", "server_label": "deepwiki", "name": "ask_question",
                   "arguments": "{\"question\":\"What is Paris?\"}", "error": null, "output": null}),
            json!({"type": "code_interpreter_call", "id": "ci_01", "code": "print(21*9/5+32)", "container_id": "cntr_01",
                   "outputs": null, "status": "completed"}),
            json!({"type": "image_generation_call", "id": "ig_01"}),
            json!({"type": "message", "role": "assistant", "id": "msg_01", "status": "completed",
                   "content": [{"type": "output_text", "text": "Sunny in Paris; here is a picture.", "annotations": []}]}),
        ]
    );
}

#[tokio::test]
async fn responses_streamed_hosted_tool_items_are_native_parts() {
    let s = server(vec![sse_response("openai", "responses_stream_hosted_tools.sse")]).await;
    let tools = vec![NativeTool::WebSearch(WebSearch::new()), NativeTool::ImageGeneration(ImageGeneration::new())];
    let history = streamed(responses(&s), tools).await;
    assert_eq!(
        kinds(&history),
        pairs(&[
            ("builtin-tool-call", "web_search"),
            ("builtin-tool-return", "web_search"),
            ("builtin-tool-call", "image_generation"),
            ("builtin-tool-return", "image_generation"),
            ("file", ""),
            ("text", ""),
        ])
    );
    let response = history[1].as_response().unwrap();
    let ModelResponsePart::NativeToolReturn(image) = &response.parts[3] else { panic!() };
    assert_eq!(image.content["status"], "completed", "an image that came is complete whatever the item said");
    assert_eq!(response.text_content().as_deref(), Some("Sunny in Paris."));
}

#[tokio::test]
async fn another_providers_native_parts_are_left_out() {
    // A conversation started on OpenAI Responses, continued on Anthropic: the hosted tools'
    // items are OpenAI's, so Anthropic gets the text only (and no file it did not make).
    let openai = server(vec![json_response("openai", "responses_hosted_tools.json")]).await;
    let first = agent_with(responses(&openai), hosted_tools()).run("Weather in Paris").await.unwrap();
    let claude = server(vec![json_response("anthropic", "messages_text.json")]).await;
    Agent::builder(anthropic(&claude))
        .build()
        .unwrap()
        .run("Thanks")
        .message_history(first.all_messages().to_vec())
        .await
        .unwrap();
    let body = bodies(&claude).await.remove(0);
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Sunny in Paris; here is a picture."}]})
    );
    // And the other way: Anthropic's server blocks are not sent to OpenAI.
    let claude = server(vec![json_response("anthropic", "messages_server_tools.json")]).await;
    let first =
        agent_with(anthropic(&claude), vec![NativeTool::WebSearch(WebSearch::new())]).run("Weather").await.unwrap();
    let openai = server(vec![json_response("openai", "responses_text.json")]).await;
    Agent::builder(responses(&openai))
        .build()
        .unwrap()
        .run("Thanks")
        .message_history(first.all_messages().to_vec())
        .await
        .unwrap();
    let input = bodies(&openai).await.remove(0)["input"].clone();
    let types: Vec<&str> = input.as_array().unwrap().iter().filter_map(|i| i["type"].as_str()).collect();
    assert!(!types.iter().any(|t| t.contains("call")), "{input}");
}

#[tokio::test]
async fn gemini_code_runs_grounding_and_images_are_native_parts() {
    let s = server(vec![json_response("gemini", "generate_content_native_tools.json")]).await;
    let model = GeminiModel::builder("gemini-2.5-flash-image").base_url(s.uri()).api_key(KEY).build().unwrap();
    let agent = agent_with(
        model,
        vec![
            NativeTool::WebSearch(WebSearch::new()),
            NativeTool::CodeExecution(CodeExecution::default()),
            NativeTool::ImageGeneration(ImageGeneration::new().aspect_ratio("16:9")),
        ],
    );
    let first = agent.run("Weather in Paris").await.unwrap();
    let request = bodies(&s).await.remove(0);
    assert_eq!(request["generationConfig"]["responseModalities"], json!(["TEXT", "IMAGE"]));
    assert_eq!(request["generationConfig"]["imageConfig"], json!({"aspectRatio": "16:9"}));
    assert_eq!(
        kinds(first.all_messages()),
        pairs(&[
            ("builtin-tool-call", "code_execution"),
            ("builtin-tool-return", "code_execution"),
            ("text", ""),
            ("file", ""),
            ("builtin-tool-call", "web_search"),
            ("builtin-tool-return", "web_search"),
        ])
    );
    agent.run("Thanks").message_history(first.all_messages().to_vec()).await.unwrap();
    let contents = bodies(&s).await.remove(1)["contents"].clone();
    let parts = contents[1]["parts"].as_array().unwrap();
    assert_eq!(parts[0], json!({"executableCode": {"language": "PYTHON", "code": "print(21*9/5+32)"}}));
    assert_eq!(parts[1], json!({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "69.8\n"}}));
    assert!(parts[3]["inlineData"]["mimeType"] == "image/png", "{parts:?}");
    assert_eq!(parts.len(), 4, "grounding is not sent back");
}

#[tokio::test]
async fn gemini_streamed_code_runs_and_grounding_are_native_parts() {
    let s = server(vec![sse_response("gemini", "stream_native_tools.sse")]).await;
    let model = GeminiModel::builder("gemini-2.5-flash").base_url(s.uri()).api_key(KEY).build().unwrap();
    let tools = vec![NativeTool::WebSearch(WebSearch::new()), NativeTool::CodeExecution(CodeExecution::default())];
    let history = streamed(model, tools).await;
    assert_eq!(
        kinds(&history),
        pairs(&[
            ("builtin-tool-call", "code_execution"),
            ("builtin-tool-return", "code_execution"),
            ("text", ""),
            ("builtin-tool-call", "web_search"),
            ("builtin-tool-return", "web_search"),
        ])
    );
    let response = history[1].as_response().unwrap();
    let (ModelResponsePart::NativeToolCall(call), ModelResponsePart::NativeToolReturn(result)) =
        (&response.parts[0], &response.parts[1])
    else {
        panic!()
    };
    assert_eq!(call.tool_call_id, result.tool_call_id, "the result answers the code run before it");
    assert_eq!(response.text_content().as_deref(), Some("Sunny in Paris: 69.8F."));
}

#[test]
fn gemini_models_that_make_no_images_are_refused_the_image_tool() {
    let model = GeminiModel::builder("gemini-2.5-flash").base_url("http://127.0.0.1:9").api_key(KEY).build().unwrap();
    let err =
        Agent::builder(model).capability(NativeTool::ImageGeneration(ImageGeneration::new())).build().unwrap_err();
    assert!(err.to_string().contains("cannot run the native tool `image_generation`"), "{err}");
}
