//! The Vercel AI SDK's chat request (`useChat`'s body), and the run input made from it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::UiError;
use crate::history::HistoryBuilder;
use crate::input::{ApprovalDecision, UiRunInput};

/// The body of a chat request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct VercelRequest {
    /// `submit-message` or `regenerate-message`.
    #[serde(default)]
    pub trigger: Option<String>,
    /// The chat.
    pub id: String,
    /// The chat's messages, the new one last.
    pub messages: Vec<UiMessage>,
}

/// A message of the chat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UiMessage {
    /// The message.
    pub id: String,
    /// `user`, `assistant` or `system`.
    pub role: String,
    /// Its parts: `text`, `reasoning`, `step-start`, `tool-<name>` / `dynamic-tool`...
    pub parts: Vec<Value>,
}

fn malformed(message: impl std::fmt::Display) -> UiError {
    UiError::Malformed { protocol: "Vercel AI", message: message.to_string() }
}

impl VercelRequest {
    /// Reads a request body.
    pub fn from_json(body: &[u8]) -> Result<Self, UiError> {
        let request: VercelRequest = serde_json::from_slice(body).map_err(malformed)?;
        for m in &request.messages {
            if !matches!(m.role.as_str(), "user" | "assistant" | "system") {
                return Err(malformed(format!("message '{}' has role '{}'", m.id, m.role)));
            }
            if let Some(p) = m.parts.iter().find(|p| p.get("type").and_then(Value::as_str).is_none()) {
                return Err(malformed(format!("a part of message '{}' has no type: {p}", m.id)));
            }
        }
        Ok(request)
    }

    /// The run input: the last user message as the prompt (when the chat ends with one), the
    /// messages before it as history, and the tool parts whose approval was answered (SDK v6,
    /// state `approval-responded`) as decisions, each with the `input` the page showed.
    pub fn to_run_input(&self) -> Result<UiRunInput, UiError> {
        let (before, prompt) = match self.messages.split_last() {
            Some((last, before)) if last.role == "user" => (before, Some(text_of(last))),
            _ => (self.messages.as_slice(), None),
        };
        let mut builder = HistoryBuilder::default();
        let mut decisions = Vec::new();
        let mut tool_results = Vec::new();
        for message in before {
            match message.role.as_str() {
                "user" => builder.user(&text_of(message)),
                "system" => builder.system(&text_of(message)),
                _ => {
                    for part in &message.parts {
                        let kind = part["type"].as_str().unwrap_or_default();
                        if kind == "text" {
                            builder.assistant_text(part["text"].as_str().unwrap_or_default());
                        } else if let Some(name) = tool_name(kind, part) {
                            let id = part["toolCallId"]
                                .as_str()
                                .ok_or_else(|| malformed(format!("tool part '{kind}' without a toolCallId")))?;
                            let input = part.get("input").cloned().unwrap_or(Value::Null);
                            builder.tool_call(&name, id, input.clone());
                            match part["state"].as_str() {
                                Some("output-available") => {
                                    let output = part.get("output").cloned().unwrap_or(Value::Null);
                                    builder.tool_return(&name, id, output.clone());
                                    tool_results.push((id.to_string(), output));
                                }
                                Some("approval-responded") => decisions.push(decision(id, part, input)?),
                                _ => {}
                            }
                        }
                    }
                }
            }
        }
        Ok(UiRunInput {
            conversation_id: self.id.clone(),
            prompt,
            history: builder.finish(),
            decisions,
            tool_results,
            state: None,
            forwarded_props: None,
        })
    }
}

fn decision(id: &str, part: &Value, input: Value) -> Result<ApprovalDecision, UiError> {
    let approval = &part["approval"];
    let approved = approval["approved"]
        .as_bool()
        .ok_or_else(|| malformed(format!("tool call '{id}': an answered approval without `approved`")))?;
    if approval["id"].as_str().is_some_and(|a| a != id) {
        return Err(malformed(format!("tool call '{id}': the approval answers '{}'", approval["id"])));
    }
    let mut d = ApprovalDecision::new(id, approved).with_shown_args(input);
    d.reason = approval["reason"].as_str().filter(|r| !r.is_empty() && !approved).map(String::from);
    Ok(d)
}

fn tool_name(kind: &str, part: &Value) -> Option<String> {
    if kind == "dynamic-tool" {
        return part["toolName"].as_str().map(String::from);
    }
    kind.strip_prefix("tool-").map(String::from)
}

fn text_of(message: &UiMessage) -> String {
    message
        .parts
        .iter()
        .filter(|p| p["type"] == "text")
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
