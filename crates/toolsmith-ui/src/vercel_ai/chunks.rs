//! The parts of the Vercel AI SDK's UI message stream (SDK v5 and v6), as Pydantic AI writes them:
//! a `type` in kebab case, fields in camelCase, absent fields left out, `[DONE]` last.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One chunk of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum Chunk {
    /// The message starts.
    Start {
        /// The message's id, when the server gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// A step (one model response and the calls it makes) starts.
    StartStep {},
    /// A step ends.
    FinishStep {},
    /// A text part starts.
    TextStart {
        /// The part.
        id: String,
    },
    /// More text.
    TextDelta {
        /// The part.
        id: String,
        /// The new text.
        delta: String,
    },
    /// A text part ends.
    TextEnd {
        /// The part.
        id: String,
    },
    /// A reasoning part starts.
    ReasoningStart {
        /// The part.
        id: String,
    },
    /// More reasoning.
    ReasoningDelta {
        /// The part.
        id: String,
        /// The new text.
        delta: String,
    },
    /// A reasoning part ends.
    ReasoningEnd {
        /// The part.
        id: String,
    },
    /// A tool call starts.
    ToolInputStart {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
    },
    /// More of its arguments (JSON text).
    ToolInputDelta {
        /// The call.
        tool_call_id: String,
        /// The fragment.
        input_text_delta: String,
    },
    /// The call's arguments, complete.
    ToolInputAvailable {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments.
        input: Value,
    },
    /// The call's arguments were invalid (SDK v6).
    ToolInputError {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments.
        input: Value,
        /// What was wrong.
        error_text: String,
    },
    /// The call waits for approval (SDK v6).
    ToolApprovalRequest {
        /// The approval (the call's id).
        approval_id: String,
        /// The call.
        tool_call_id: String,
    },
    /// The call's result.
    ToolOutputAvailable {
        /// The call.
        tool_call_id: String,
        /// The result.
        output: Value,
    },
    /// The call failed or was retried.
    ToolOutputError {
        /// The call.
        tool_call_id: String,
        /// The error.
        error_text: String,
    },
    /// The call was denied (SDK v6).
    ToolOutputDenied {
        /// The call.
        tool_call_id: String,
    },
    /// The run failed.
    Error {
        /// What went wrong.
        error_text: String,
    },
    /// Metadata of the message.
    MessageMetadata {
        /// The metadata.
        message_metadata: Value,
    },
    /// The message ends.
    Finish {
        /// Why (`stop`, `length`, `tool-calls`, `error`...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
    },
    /// The run was cut short.
    Abort {
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The stream's end (`data: [DONE]`).
    #[serde(skip)]
    Done,
}

impl Chunk {
    /// The chunk as JSON (`[DONE]` as that string).
    pub fn to_json(&self) -> Value {
        match self {
            Chunk::Done => Value::String("[DONE]".into()),
            other => serde_json::to_value(other).unwrap_or(Value::Null),
        }
    }

    /// The chunk as one server-sent event.
    pub fn to_sse(&self) -> String {
        match self {
            Chunk::Done => "data: [DONE]\n\n".into(),
            other => format!("data: {}\n\n", serde_json::to_string(other).unwrap_or_default()),
        }
    }
}
