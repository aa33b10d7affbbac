//! AG-UI's `RunAgentInput`, and the run input made from it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::encoder::INTERRUPT_ID_PREFIX;
use crate::error::UiError;
use crate::history::HistoryBuilder;
use crate::input::{ApprovalDecision, UiRunInput};

/// The body of an AG-UI run request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunAgentInput {
    /// The conversation.
    pub thread_id: String,
    /// This run.
    pub run_id: String,
    /// The protocol version the client speaks (from AG-UI 1.0): with `1.0` or later, a run that
    /// ends with calls to execute outside lists them in its outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The application's state.
    #[serde(default)]
    pub state: Option<Value>,
    /// The conversation's messages, the new one last.
    pub messages: Vec<Message>,
    /// Tools the client runs itself.
    #[serde(default)]
    pub tools: Vec<Value>,
    /// Context the client adds.
    #[serde(default)]
    pub context: Vec<Value>,
    /// Anything else the client forwards.
    #[serde(default)]
    pub forwarded_props: Option<Value>,
    /// Answers to the interrupts the previous run ended with.
    #[serde(default)]
    pub resume: Option<Vec<ResumeEntry>>,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum Message {
    /// What the user wrote.
    User {
        /// The message.
        id: String,
        /// Text, or a list of content parts (their text is read).
        content: Value,
    },
    /// What the assistant answered.
    Assistant {
        /// The message.
        id: String,
        /// Its text.
        #[serde(default)]
        content: Option<String>,
        /// The tool calls it made.
        #[serde(default)]
        tool_calls: Option<Vec<ToolCall>>,
    },
    /// The result of a tool call.
    Tool {
        /// The message.
        id: String,
        /// The call it answers.
        tool_call_id: String,
        /// The result.
        content: String,
    },
    /// Instructions.
    System {
        /// The message.
        id: String,
        /// The text.
        content: String,
    },
    /// Instructions from the developer.
    Developer {
        /// The message.
        id: String,
        /// The text.
        content: String,
    },
}

/// A tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call's id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// The tool and its arguments.
    pub function: FunctionCall,
}

/// A tool and the JSON text of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FunctionCall {
    /// The tool.
    pub name: String,
    /// The arguments, as JSON text.
    pub arguments: String,
}

/// The answer to one interrupt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResumeEntry {
    /// The interrupt (`int-` and the call's id).
    pub interrupt_id: String,
    /// `resolved` or `cancelled` (a cancelled interrupt denies the call).
    pub status: String,
    /// `{"approved": bool, "editedArgs"?: {...}, "reason"?: "..."}`.
    #[serde(default)]
    pub payload: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ResumePayload {
    approved: bool,
    #[serde(default)]
    edited_args: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    reason: Option<String>,
}

fn malformed(message: impl std::fmt::Display) -> UiError {
    UiError::Malformed { protocol: "AG-UI", message: message.to_string() }
}

impl RunAgentInput {
    /// Whether the client declares AG-UI 1.0 or later (a version it does not write as
    /// `MAJOR.MINOR` is taken as newer, as Pydantic AI takes it).
    pub fn declares_1_0(&self) -> bool {
        let Some(v) = &self.protocol_version else { return false };
        let parsed = v.split_once('.').and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)));
        parsed.is_none_or(|version| version >= (1, 0))
    }

    /// Reads a request body.
    pub fn from_json(body: &[u8]) -> Result<Self, UiError> {
        serde_json::from_slice(body).map_err(malformed)
    }

    /// The run input: the last user message as the prompt (when the conversation ends with
    /// one), the messages before it as history, the resume entries as decisions (each with the
    /// arguments of the call as the assistant message shows it).
    pub fn to_run_input(&self) -> Result<UiRunInput, UiError> {
        let mut builder = HistoryBuilder::default();
        let (before, prompt) = match self.messages.split_last() {
            Some((Message::User { content, .. }, before)) if self.resume.as_ref().is_none_or(Vec::is_empty) => {
                (before, Some(user_text(content)?))
            }
            _ => (self.messages.as_slice(), None),
        };
        let mut shown = std::collections::HashMap::new();
        let mut tool_results = Vec::new();
        for message in before {
            match message {
                Message::User { content, .. } => builder.user(&user_text(content)?),
                Message::System { content, .. } | Message::Developer { content, .. } => builder.system(content),
                Message::Assistant { content, tool_calls, .. } => {
                    if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                        builder.assistant_text(text);
                    }
                    for call in tool_calls.iter().flatten() {
                        let args = serde_json::from_str(&call.function.arguments)
                            .unwrap_or_else(|_| Value::String(call.function.arguments.clone()));
                        shown.insert(call.id.clone(), args.clone());
                        builder.tool_call(&call.function.name, &call.id, args);
                    }
                }
                Message::Tool { tool_call_id, content, .. } => {
                    let name = builder.tool_name(tool_call_id).unwrap_or_default();
                    builder.tool_return(&name, tool_call_id, Value::String(content.clone()));
                    tool_results.push((tool_call_id.clone(), Value::String(content.clone())));
                }
            }
        }
        let mut decisions = Vec::new();
        for entry in self.resume.iter().flatten() {
            let Some(id) = entry.interrupt_id.strip_prefix(INTERRUPT_ID_PREFIX) else {
                return Err(malformed(format!(
                    "resume entry '{}' does not name an interrupt (they start with '{INTERRUPT_ID_PREFIX}')",
                    entry.interrupt_id
                )));
            };
            let mut decision = if entry.status == "cancelled" {
                ApprovalDecision::new(id, false).with_reason("Cancelled by user.")
            } else if entry.status == "resolved" {
                let payload: ResumePayload = serde_json::from_value(entry.payload.clone().unwrap_or(Value::Null))
                    .map_err(|e| malformed(format!("resume entry '{}': {e}", entry.interrupt_id)))?;
                let mut d = ApprovalDecision::new(id, payload.approved);
                d.edited_args = payload.edited_args.filter(|_| payload.approved).map(Value::Object);
                d.reason = payload.reason.filter(|r| !r.is_empty() && !payload.approved);
                d
            } else {
                return Err(malformed(format!("resume entry status '{}'", entry.status)));
            };
            decision.shown_args = shown.get(id).cloned();
            decisions.push(decision);
        }
        Ok(UiRunInput {
            conversation_id: self.thread_id.clone(),
            prompt,
            history: builder.finish(),
            decisions,
            tool_results,
            state: self.state.clone(),
            forwarded_props: self.forwarded_props.clone(),
        })
    }
}

fn user_text(content: &Value) -> Result<String, UiError> {
    match content {
        Value::String(s) => Ok(s.clone()),
        Value::Array(parts) => {
            Ok(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"))
        }
        _ => Err(malformed("a user message's content is neither text nor a list of parts")),
    }
}
