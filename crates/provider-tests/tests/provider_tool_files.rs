//! Files a tool returned as its value reach the model as media: inside the tool result where
//! the API takes them there (Anthropic, OpenAI Responses, Gemini 3 for inline images, PDFs and
//! text), else named `See file <id>.` in the result and sent, framed, in a user message after
//! it (OpenAI Chat Completions, older Gemini models, other files). The agent end to end: a tool
//! returning an image, through a local server speaking Anthropic's format.

mod provider_support;

use serde_json::{Value, json};
use toolsmith::messages::{
    BinaryContent, MediaContent, ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart,
    ToolCallPart, ToolReturnPart,
};
use toolsmith::model::ModelRequestParameters;
use toolsmith::prelude::*;
use toolsmith::providers::{AnthropicModel, GeminiModel, OpenAIChatModel, OpenAIResponsesModel};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

use provider_support::*;

const KEY: &str = "test-key-0123456789";
const BASE: &str = "http://127.0.0.1:9";

fn image() -> MediaContent {
    MediaContent::Binary(BinaryContent::new(b"\x89PNG fake", "image/png"))
}

fn data() -> String {
    let MediaContent::Binary(b) = image() else { unreachable!() };
    b.data
}

/// A call of `snapshot` answered with `content`.
fn history(content: Value) -> Vec<ModelMessage> {
    vec![
        ModelRequest::user_prompt("Show me the chart.").into(),
        ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new("snapshot", json!({}), "call_1"))])
            .into(),
        ModelRequest::new(vec![ModelRequestPart::ToolReturn(ToolReturnPart::success("snapshot", content, "call_1"))])
            .into(),
    ]
}

fn params() -> ModelRequestParameters {
    let mut p = ModelRequestParameters::default();
    p.allow_text_output = true;
    p
}

fn framed(id: &str) -> (String, String) {
    (
        format!("<pyai:tool_result tool_name=\"snapshot\" tool_call_id=\"call_1\" file_id=\"{id}\">"),
        "</pyai:tool_result>".to_string(),
    )
}

#[test]
fn anthropic_sends_the_file_inside_the_tool_result() {
    let model = AnthropicModel::builder("claude-sonnet-4-5").base_url(BASE).api_key(KEY).build().unwrap();
    let content = json!(["The chart:", serde_json::to_value(image()).unwrap()]);
    let body = model.request_body(&history(content), None, &params(), false).unwrap();
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "The chart:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data()}}
        ])
    );
}

#[test]
fn openai_responses_sends_the_file_inside_the_function_call_output() {
    let model = OpenAIResponsesModel::builder("gpt-5").base_url(BASE).api_key(KEY).build().unwrap();
    let body = model.request_body(&history(serde_json::to_value(image()).unwrap()), None, &params(), false).unwrap();
    let output =
        body["input"].as_array().unwrap().iter().find(|i| i["type"] == "function_call_output").unwrap()["output"]
            .clone();
    assert_eq!(
        output,
        json!([{"type": "input_image", "image_url": format!("data:image/png;base64,{}", data()), "detail": "auto"}])
    );
}

#[test]
fn openai_chat_names_the_file_in_the_tool_message_and_sends_it_in_a_user_message() {
    let model = OpenAIChatModel::builder("gpt-4o").base_url(BASE).api_key(KEY).build().unwrap();
    let body = model.request_body(&history(serde_json::to_value(image()).unwrap()), None, &params(), false).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let id = image().identifier();
    assert_eq!(messages[2], json!({"role": "tool", "tool_call_id": "call_1", "content": format!("See file {id}.")}));
    let (open, close) = framed(&id);
    assert_eq!(messages[3]["role"], "user");
    let parts = messages[3]["content"].as_array().unwrap();
    assert_eq!(parts[0], json!({"type": "text", "text": open}));
    assert_eq!(parts[1]["type"], "image_url");
    assert_eq!(parts[1]["image_url"]["url"], format!("data:image/png;base64,{}", data()));
    assert_eq!(parts[2], json!({"type": "text", "text": close}));
}

#[test]
fn gemini_3_takes_the_file_in_the_function_response_and_older_models_after_it() {
    let content = serde_json::to_value(image()).unwrap();
    let id = image().identifier();
    let model = GeminiModel::builder("gemini-3-pro-preview").base_url(BASE).api_key(KEY).build().unwrap();
    let body = model.request_body(&history(content.clone()), None, &params(), false).unwrap();
    let response = &body["contents"][2]["parts"][0]["functionResponse"];
    assert_eq!(response["response"], json!({"output": format!("See file {id}.")}));
    assert_eq!(response["parts"], json!([{"inlineData": {"mimeType": "image/png", "data": data()}}]));

    let model = GeminiModel::builder("gemini-2.5-flash").base_url(BASE).api_key(KEY).build().unwrap();
    let body = model.request_body(&history(content), None, &params(), false).unwrap();
    let parts = body["contents"][2]["parts"].as_array().unwrap();
    assert_eq!(parts[0]["functionResponse"]["response"], json!({"output": format!("See file {id}.")}));
    assert!(parts[0]["functionResponse"].get("parts").is_none());
    let (open, close) = framed(&id);
    assert_eq!(
        parts[1..],
        [
            json!({"text": open}),
            json!({"inlineData": {"mimeType": "image/png", "data": data()}}),
            json!({"text": close})
        ]
    );
}

#[tokio::test]
async fn a_tool_returning_an_image_gets_it_to_the_model_as_an_image() {
    // The recorded response calls `get_weather`: here a tool that answers with a weather map.
    let server = MockServer::start().await;
    let script = Seq::new([
        json_response("anthropic", "messages_tool_use.json"),
        json_response("anthropic", "messages_text.json"),
    ]);
    Mock::given(method("POST")).respond_with(script).mount(&server).await;
    let model = AnthropicModel::builder("claude-sonnet-4-5").base_url(server.uri()).api_key(KEY).build().unwrap();
    let weather_map =
        Tool::new("get_weather", |_ctx: RunContext<()>, _args: Value| async move { Ok::<_, ToolError>(image()) });
    let agent = Agent::builder(model).tool(weather_map).build().unwrap();
    let result = agent.run("Weather in Paris?").await.unwrap();
    // The history keeps the value as Pydantic AI writes media.
    let returned =
        result.all_messages().iter().filter_map(ModelMessage::as_request).flat_map(|r| r.parts.iter()).find_map(|p| {
            match p {
                ModelRequestPart::ToolReturn(t) => Some(t.clone()),
                _ => None,
            }
        });
    assert_eq!(returned.unwrap().files(), [image()]);
    let second = bodies(&server).await.remove(1);
    let result = second["messages"][2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "tool_result")
        .unwrap()
        .clone();
    assert_eq!(
        result["content"],
        json!([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data()}}])
    );
}

#[tokio::test]
async fn openai_chat_does_not_download_a_url_a_tool_returned() {
    // A document URL needs a download for Chat Completions: from a tool (an MCP server, a page
    // it read), the address could be anything, internal ones included. Refused before any request.
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(json_response("openai", "chat_text.json")).mount(&server).await;
    let model =
        OpenAIChatModel::builder("gpt-4o").base_url(format!("{}/v1", server.uri())).api_key(KEY).build().unwrap();
    let file = json!({"kind": "document-url", "url": "http://169.254.169.254/latest/meta-data/"});
    let err = Model::request(&model, &history(file), None, &params()).await.unwrap_err();
    assert_eq!(err.kind, "UserError");
    assert!(
        err.message.contains("tool 'snapshot' returned the URL http://169.254.169.254/latest/meta-data/"),
        "{}",
        err.message
    );
    assert!(requests(&server).await.is_empty());
}
