//! The client's messages as a message history: text, tool calls and their results (what both
//! protocols carry); anything else in them is left out.

use serde_json::Value;
use toolsmith::messages::{
    ModelMessage, ModelRequest, ModelRequestPart, ModelResponse, ModelResponsePart, SystemPromptPart, TextPart,
    ToolCallPart, ToolReturnPart, UserPromptPart,
};

/// Builds a history one message part at a time, merging consecutive parts of one side.
#[derive(Debug, Default)]
pub(crate) struct HistoryBuilder {
    messages: Vec<ModelMessage>,
}

impl HistoryBuilder {
    pub(crate) fn system(&mut self, text: &str) {
        self.request_part(ModelRequestPart::SystemPrompt(SystemPromptPart::new(text)));
    }

    pub(crate) fn user(&mut self, text: &str) {
        self.request_part(ModelRequestPart::UserPrompt(UserPromptPart::new(text)));
    }

    pub(crate) fn tool_return(&mut self, name: &str, id: &str, content: Value) {
        let mut part = ToolReturnPart::success(name, content, id);
        part.timestamp = None;
        self.request_part(ModelRequestPart::ToolReturn(part));
    }

    pub(crate) fn assistant_text(&mut self, text: &str) {
        self.response_part(ModelResponsePart::Text(TextPart::new(text)));
    }

    pub(crate) fn tool_call(&mut self, name: &str, id: &str, args: Value) {
        self.response_part(ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id)));
    }

    /// The name of the tool a call of the history made, for a result that names only the call.
    pub(crate) fn tool_name(&self, id: &str) -> Option<String> {
        self.messages.iter().rev().find_map(|m| match m {
            ModelMessage::Response(r) => r.parts.iter().find_map(|p| match p {
                ModelResponsePart::ToolCall(c) if c.tool_call_id == id => Some(c.tool_name.clone()),
                _ => None,
            }),
            _ => None,
        })
    }

    fn request_part(&mut self, part: ModelRequestPart) {
        if let Some(ModelMessage::Request(r)) = self.messages.last_mut() {
            r.parts.push(part);
        } else {
            self.messages.push(ModelMessage::Request(ModelRequest::new(vec![part])));
        }
    }

    fn response_part(&mut self, part: ModelResponsePart) {
        if let Some(ModelMessage::Response(r)) = self.messages.last_mut() {
            r.parts.push(part);
        } else {
            self.messages.push(ModelMessage::Response(ModelResponse::new(vec![part])));
        }
    }

    pub(crate) fn finish(self) -> Vec<ModelMessage> {
        self.messages
    }
}
