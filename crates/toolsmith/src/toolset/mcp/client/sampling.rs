//! Sampling (`sampling/createMessage`): a server asks the client's model for a completion. The
//! request goes to a [`Model`] the application names
//! ([`McpToolset::sampling_model`](crate::toolset::McpToolset::sampling_model)), or to a handler
//! of MCP JSON ([`McpToolset::sampling_handler`](crate::toolset::McpToolset::sampling_handler)).

use std::sync::Arc;

use base64::Engine;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::messages::{
    BinaryContent, ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, SystemPromptPart,
    UserContent, UserPromptPart,
};
use crate::model::{DynModel, Model, ModelRequestParameters, ModelSettings};

/// Answers a server's sampling request (`sampling/createMessage`): receives the request's params
/// and returns the result, both as MCP JSON; an `Err` is sent back to the server as an error.
pub type SamplingHandler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// A handler that asks `model`.
pub(crate) fn model_handler<M: Model>(model: M) -> SamplingHandler {
    let model: Arc<dyn DynModel> = Arc::new(model);
    Arc::new(move |params| {
        let model = model.clone();
        Box::pin(async move { sample(&*model, &params).await })
    })
}

/// One block of a sampling message's content (`text`, `image`, `audio`).
fn user_content(block: &Value) -> Result<UserContent, String> {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => Ok(UserContent::text(block.get("text").and_then(Value::as_str).unwrap_or_default())),
        Some(kind @ ("image" | "audio")) => {
            let data = block.get("data").and_then(Value::as_str).unwrap_or_default();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| format!("the {kind} block of a sampling message is not valid base64: {e}"))?;
            let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("application/octet-stream");
            Ok(BinaryContent::new(bytes, mime).into())
        }
        other => Err(format!(
            "this client samples text, image and audio content only, not {}",
            other.map_or("a block without a type".to_string(), |k| format!("`{k}`"))
        )),
    }
}

/// A message's content: one block or a list of blocks.
fn blocks(message: &Value) -> Vec<&Value> {
    match message.get("content") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(block) => vec![block],
        None => Vec::new(),
    }
}

/// The conversation to send: the system prompt and the user messages as requests, the assistant
/// messages as responses (their text).
pub(crate) fn messages(params: &Value) -> Result<Vec<ModelMessage>, String> {
    let mut out: Vec<ModelMessage> = Vec::new();
    let mut system = params.get("systemPrompt").and_then(Value::as_str).map(SystemPromptPart::new);
    for message in params.get("messages").and_then(Value::as_array).into_iter().flatten() {
        match message.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                let text: String = blocks(message)
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push(ModelResponse::text(text).into());
            }
            _ => {
                let content = blocks(message).into_iter().map(user_content).collect::<Result<Vec<_>, _>>()?;
                let mut parts = Vec::new();
                if let Some(system) = system.take() {
                    parts.push(ModelRequestPart::SystemPrompt(system));
                }
                parts.push(ModelRequestPart::UserPrompt(UserPromptPart::new(content)));
                out.push(ModelRequest::new(parts).into());
            }
        }
    }
    if !matches!(out.last(), Some(ModelMessage::Request(_))) {
        return Err("a sampling request must end with a user message".to_string());
    }
    Ok(out)
}

/// The model's settings for the request: `maxTokens`, `temperature`, `stopSequences`.
fn settings(params: &Value) -> ModelSettings {
    let mut settings = ModelSettings::new();
    if let Some(n) = params.get("maxTokens").and_then(Value::as_u64) {
        settings = settings.max_tokens(u32::try_from(n).unwrap_or(u32::MAX));
    }
    if let Some(t) = params.get("temperature").and_then(Value::as_f64) {
        settings = settings.temperature(t);
    }
    settings
}

/// The sampling result (MCP JSON) of a model's response: its text.
pub(crate) fn result(model: &str, response: &ModelResponse) -> Result<Value, String> {
    let Some(text) = response.text_content() else {
        let calls = response.parts.iter().filter(|p| matches!(p, ModelResponsePart::ToolCall(_))).count();
        return Err(if calls > 0 {
            format!("the model answered with {calls} tool call(s) and no text; sampling without tools takes text")
        } else {
            "the model answered without text".to_string()
        });
    };
    let stop = match response.finish_reason.as_deref() {
        Some("length") => "maxTokens",
        _ => "endTurn",
    };
    Ok(json!({
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": response.model_name.as_deref().unwrap_or(model),
        "stopReason": stop,
    }))
}

async fn sample(model: &dyn DynModel, params: &Value) -> Result<Value, String> {
    let messages = messages(params)?;
    let settings = settings(params);
    let request_params = ModelRequestParameters { allow_text_output: true, ..Default::default() };
    let response = model
        .request_boxed(&messages, Some(&settings), &request_params)
        .await
        .map_err(|e| format!("the client's model failed: {e}"))?;
    result(&model.info().name, &response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_map_roles_and_the_system_prompt() {
        let params = json!({
            "systemPrompt": "Be brief.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": {"type": "text", "text": "hello"}},
                {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}]}
            ],
            "maxTokens": 20
        });
        let mapped = messages(&params).unwrap();
        assert_eq!(mapped.len(), 3);
        let first = mapped[0].as_request().unwrap();
        assert!(matches!(&first.parts[0], ModelRequestPart::SystemPrompt(s) if s.content == "Be brief."));
        assert_eq!(mapped[1].as_response().unwrap().text_content().as_deref(), Some("hello"));
        assert_eq!(settings(&params).max_tokens, Some(20));
        let bad = json!({"messages": [{"role": "user", "content": {"type": "tool_result"}}]});
        assert!(messages(&bad).unwrap_err().contains("`tool_result`"));
        let ends_with_assistant =
            json!({"messages": [{"role": "assistant", "content": {"type": "text", "text": "x"}}]});
        assert!(messages(&ends_with_assistant).is_err());
    }

    #[test]
    fn the_result_is_the_text() {
        let answer = result("m", &ModelResponse::text("sure")).unwrap();
        assert_eq!(answer["content"]["text"], "sure");
        assert_eq!(answer["model"], "m");
        assert!(result("m", &ModelResponse::new(vec![])).is_err());
    }
}
