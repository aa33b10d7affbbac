//! What the hooks are told: the tool call, the model request, the node of the run, the output.

use std::sync::Arc;

use crate::messages::{ModelMessage, ModelResponse, ToolCallPart};
use crate::model::{ModelRequestParameters, ModelSettings};
use crate::run::{AgentEvent, RunOutput};
use crate::tool::ToolDefinition;

/// The call a tool hook is about: the model's call and the tool's definition.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ToolCallInfo<'a> {
    /// The call as the model made it (name, raw arguments, id).
    pub call: &'a ToolCallPart,
    /// The definition of the called tool, as shown to the model this step.
    pub def: &'a ToolDefinition,
}

/// What is about to be sent to the model; `before_model_request` may change it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ModelRequestContext {
    /// The messages sent, history included.
    pub messages: Arc<Vec<ModelMessage>>,
    /// The model settings.
    pub settings: Option<ModelSettings>,
    /// The tools and output options.
    pub params: ModelRequestParameters,
}

/// A node of a run, as the node hooks see it: what is about to happen.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentNode {
    /// The start: the first request is built from the prompt (or the deferred results given
    /// to the run are settled).
    UserPrompt,
    /// The history is sent to the model.
    ModelRequest,
    /// The model's response is handled: its tool calls run, or its text becomes the output.
    CallTools {
        /// The response (already in the history).
        response: ModelResponse,
    },
}

impl AgentNode {
    /// The node's name, as Pydantic AI names its graph nodes.
    pub fn name(&self) -> &'static str {
        match self {
            AgentNode::UserPrompt => "UserPromptNode",
            AgentNode::ModelRequest => "ModelRequestNode",
            AgentNode::CallTools { .. } => "CallToolsNode",
        }
    }
}

/// What a node led to: the next node, or the end of the run with its output.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum NodeResult {
    /// The run goes on with this node.
    Next(AgentNode),
    /// The run ends with this output.
    End(RunOutput),
}

/// A run's events as a boxed stream, what
/// [`Capability::wrap_event_stream`](super::Capability::wrap_event_stream) takes and returns.
pub type EventBoxStream = futures::stream::BoxStream<'static, AgentEvent>;

/// How the output being validated or processed came from the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputKind {
    /// The arguments of an output tool call.
    Tool,
    /// Text parsed as the output schema (a model that answered with JSON text).
    StructuredText,
    /// Plain text output (processing hooks only: there is nothing to validate).
    Text,
}

/// What an output hook is about.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct OutputInfo<'a> {
    /// How the output came.
    pub kind: OutputKind,
    /// The output tool call, for tool output.
    pub call: Option<&'a ToolCallPart>,
    /// The output tool's definition, for structured output.
    pub def: Option<&'a ToolDefinition>,
}

/// A stage of a run whose hooks a capability may leave alone, so the engine skips the capability
/// there (see [`Capability::hooks_stage`](super::Capability::hooks_stage)): each stage is its
/// `before_*`, `after_*`, `wrap_*` and `on_*_error` hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookStage {
    /// `before_run`, `after_run`, `wrap_run`, `on_run_error`.
    Run,
    /// `before_node_run`, `after_node_run`, `wrap_node_run`, `on_node_run_error`.
    Node,
    /// `before_model_request`, `after_model_request`, `wrap_model_request`,
    /// `on_model_request_error`.
    ModelRequest,
    /// `before_tool_validate`, `after_tool_validate`, `wrap_tool_validate`,
    /// `on_tool_validate_error`.
    ToolValidate,
    /// `before_tool_execute`, `after_tool_execute`, `wrap_tool_execute`, `on_tool_execute_error`.
    ToolExecute,
    /// `before_output_validate`, `after_output_validate`, `wrap_output_validate`,
    /// `on_output_validate_error`.
    OutputValidate,
    /// `before_output_process`, `after_output_process`, `wrap_output_process`,
    /// `on_output_process_error`.
    OutputProcess,
}

impl HookStage {
    /// Every stage.
    pub const ALL: [HookStage; 7] = [
        HookStage::Run,
        HookStage::Node,
        HookStage::ModelRequest,
        HookStage::ToolValidate,
        HookStage::ToolExecute,
        HookStage::OutputValidate,
        HookStage::OutputProcess,
    ];

    /// The names of the stage's hooks.
    pub fn hooks(self) -> [&'static str; 4] {
        match self {
            HookStage::Run => ["before_run", "after_run", "wrap_run", "on_run_error"],
            HookStage::Node => ["before_node_run", "after_node_run", "wrap_node_run", "on_node_run_error"],
            HookStage::ModelRequest => {
                ["before_model_request", "after_model_request", "wrap_model_request", "on_model_request_error"]
            }
            HookStage::ToolValidate => {
                ["before_tool_validate", "after_tool_validate", "wrap_tool_validate", "on_tool_validate_error"]
            }
            HookStage::ToolExecute => {
                ["before_tool_execute", "after_tool_execute", "wrap_tool_execute", "on_tool_execute_error"]
            }
            HookStage::OutputValidate => {
                ["before_output_validate", "after_output_validate", "wrap_output_validate", "on_output_validate_error"]
            }
            HookStage::OutputProcess => {
                ["before_output_process", "after_output_process", "wrap_output_process", "on_output_process_error"]
            }
        }
    }

    /// The stage's index in [`HookStage::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Where the run asks its capabilities for messages to deliver (see
/// [`Capability::pending_messages`](super::Capability::pending_messages)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeliveryPoint {
    /// Before a model request: what is returned goes into the history, and to the model, with it.
    BeforeRequest,
    /// The run is about to end with its output: what is returned is sent in one more request
    /// (the run goes on). A capability with work in progress may wait for it here.
    RunEnd,
}

/// What a capability delivers into the conversation at a [`DeliveryPoint`] (see
/// [`Capability::pending_messages`](super::Capability::pending_messages)).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Delivery {
    /// Requests added to the history in this order, each a message of its own (the model is
    /// sent them merged with the request they follow).
    pub requests: Vec<crate::messages::ModelRequest>,
    /// Retry counts to set, per tool: calls finished elsewhere (in the background) settle their
    /// tool's count as a call in the foreground would, a failure counting toward the retries and
    /// a result resetting them. The calls of the tool that follow see it in `RunContext::retry`.
    pub retries: Vec<(String, u32)>,
}

impl Delivery {
    /// These requests, in order.
    pub fn new(requests: Vec<crate::messages::ModelRequest>) -> Self {
        Delivery { requests, retries: Vec::new() }
    }

    /// Sets `tool`'s retry count to `count` as the requests are delivered.
    pub fn with_retry_count(mut self, tool: impl Into<String>, count: u32) -> Self {
        self.retries.push((tool.into(), count));
        self
    }

    /// Whether there is nothing to deliver.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.retries.is_empty()
    }

    /// `other` after this delivery.
    pub fn extend(&mut self, other: Delivery) {
        self.requests.extend(other.requests);
        self.retries.extend(other.retries);
    }
}
