//! AG-UI events, as the `ag-ui-protocol` package (1.0) writes them: a `type` in capitals, fields in
//! camelCase, absent fields left out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One AG-UI event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum AgUiEvent {
    /// The run started.
    RunStarted {
        /// The conversation.
        thread_id: String,
        /// The run.
        run_id: String,
        /// The protocol version the events follow.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol_version: Option<String>,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// The run ended; `outcome` says whether it waits for approvals (`interrupt`).
    RunFinished {
        /// The conversation.
        thread_id: String,
        /// The run.
        run_id: String,
        /// How it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<RunOutcome>,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// The run failed.
    RunError {
        /// What went wrong.
        message: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// An assistant message starts.
    TextMessageStart {
        /// The message.
        message_id: String,
        /// Always `assistant`.
        role: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// More text of a message.
    TextMessageContent {
        /// The message.
        message_id: String,
        /// The new text.
        delta: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// A message ends.
    TextMessageEnd {
        /// The message.
        message_id: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// A tool call starts.
    ToolCallStart {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_call_name: String,
        /// The assistant message it belongs to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// More of a call's arguments (JSON text).
    ToolCallArgs {
        /// The call.
        tool_call_id: String,
        /// The fragment.
        delta: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// A call's arguments are complete.
    ToolCallEnd {
        /// The call.
        tool_call_id: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// A call's result.
    ToolCallResult {
        /// The tool message carrying it.
        message_id: String,
        /// The call.
        tool_call_id: String,
        /// The result as text.
        content: String,
        /// Always `tool`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// Reasoning starts.
    ReasoningStart {
        /// The reasoning message.
        message_id: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// A reasoning message starts.
    ReasoningMessageStart {
        /// The reasoning message.
        message_id: String,
        /// Always `reasoning`.
        role: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// More reasoning text.
    ReasoningMessageContent {
        /// The reasoning message.
        message_id: String,
        /// The new text.
        delta: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// A reasoning message ends.
    ReasoningMessageEnd {
        /// The reasoning message.
        message_id: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// Reasoning ends.
    ReasoningEnd {
        /// The reasoning message.
        message_id: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// An opaque value the client keeps with a message or call (here: a result's outcome and
    /// retry, as Pydantic AI writes them under `pydantic_ai`).
    ReasoningEncryptedValue {
        /// `message` or `tool-call`.
        subtype: String,
        /// The message or call it belongs to.
        entity_id: String,
        /// The value.
        encrypted_value: String,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// The application's state, whole.
    StateSnapshot {
        /// The state.
        snapshot: Value,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
    /// A change of the application's state (a JSON Patch).
    StateDelta {
        /// The patch operations.
        delta: Vec<Value>,
        /// Milliseconds since the epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timestamp: Option<i64>,
    },
}

/// How a run finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum RunOutcome {
    /// The run has its answer, or waits for calls to execute outside (listed for a client that
    /// declared AG-UI 1.0).
    Success {
        /// The calls to execute outside.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pending_tool_call_ids: Option<Vec<String>>,
    },
    /// The run waits for answers to these interrupts (tool calls to approve).
    Interrupt {
        /// One per call waiting for approval.
        interrupts: Vec<Interrupt>,
    },
}

/// A call waiting for approval, as an AG-UI interrupt; answered by a `resume` entry whose
/// `interruptId` is this `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Interrupt {
    /// `int-` and the call's id.
    pub id: String,
    /// Always `tool_call`.
    pub reason: String,
    /// The call.
    pub tool_call_id: String,
    /// `Approve tool({args})?`
    pub message: String,
    /// The schema of the answer: `approved`, optional `editedArgs` and `reason`.
    pub response_schema: Value,
    /// The tool's metadata for the call, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl AgUiEvent {
    /// The event's timestamp, if set.
    pub fn timestamp_mut(&mut self) -> Option<&mut Option<i64>> {
        use AgUiEvent::*;
        match self {
            RunStarted { timestamp, .. }
            | RunFinished { timestamp, .. }
            | RunError { timestamp, .. }
            | TextMessageStart { timestamp, .. }
            | TextMessageContent { timestamp, .. }
            | TextMessageEnd { timestamp, .. }
            | ToolCallStart { timestamp, .. }
            | ToolCallArgs { timestamp, .. }
            | ToolCallEnd { timestamp, .. }
            | ToolCallResult { timestamp, .. }
            | ReasoningStart { timestamp, .. }
            | ReasoningMessageStart { timestamp, .. }
            | ReasoningMessageContent { timestamp, .. }
            | ReasoningMessageEnd { timestamp, .. }
            | ReasoningEnd { timestamp, .. }
            | ReasoningEncryptedValue { timestamp, .. }
            | StateSnapshot { timestamp, .. }
            | StateDelta { timestamp, .. } => Some(timestamp),
        }
    }

    /// The event as one server-sent event (`data: {json}` and a blank line).
    pub fn to_sse(&self) -> String {
        format!("data: {}\n\n", serde_json::to_string(self).unwrap_or_default())
    }
}
