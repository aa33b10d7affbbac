//! The `*Next` handles: the rest of a `wrap_*` chain, given to the hook that wraps it.

use futures::future::BoxFuture;
use serde_json::Value;

use super::{AgentNode, ModelRequestContext, NodeResult};
use crate::error::AgentRunError;
use crate::messages::ModelResponse;
use crate::run::RunOutput;
use crate::tool::{ToolError, ToolOutput};

/// The rest of a `wrap_run` chain: call [`RunNext::run`] to run the agent to the end.
pub struct RunNext<'a> {
    f: Box<dyn Fn() -> BoxFuture<'a, Result<RunOutput, AgentRunError>> + Send + Sync + 'a>,
}

impl<'a> RunNext<'a> {
    pub(crate) fn new(f: impl Fn() -> BoxFuture<'a, Result<RunOutput, AgentRunError>> + Send + Sync + 'a) -> Self {
        RunNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain, then the run itself. A run runs once: a second call, once it
    /// has ended, is an error.
    pub fn run(&self) -> BoxFuture<'a, Result<RunOutput, AgentRunError>> {
        (self.f)()
    }
}

/// The rest of a `wrap_node_run` chain: call [`NodeNext::run`] to run the node.
pub struct NodeNext<'a> {
    f: Box<dyn Fn(AgentNode) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> + Send + Sync + 'a>,
}

impl<'a> NodeNext<'a> {
    pub(crate) fn new(
        f: impl Fn(AgentNode) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> + Send + Sync + 'a,
    ) -> Self {
        NodeNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain, then the node (it may be called more than once, e.g. to
    /// retry a model request).
    pub fn run(&self, node: AgentNode) -> BoxFuture<'a, Result<NodeResult, AgentRunError>> {
        (self.f)(node)
    }
}

/// The rest of a `wrap_model_request` chain: call [`ModelRequestNext::run`] to make the request.
pub struct ModelRequestNext<'a> {
    f: Box<dyn Fn(ModelRequestContext) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> + Send + Sync + 'a>,
}

impl<'a> ModelRequestNext<'a> {
    pub(crate) fn new(
        f: impl Fn(ModelRequestContext) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> + Send + Sync + 'a,
    ) -> Self {
        ModelRequestNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain (it may be called more than once, e.g. to retry).
    pub fn run(&self, request: ModelRequestContext) -> BoxFuture<'a, Result<ModelResponse, AgentRunError>> {
        (self.f)(request)
    }
}

/// The rest of a `wrap_tool_validate` chain: call [`ToolValidateNext::run`] to validate.
pub struct ToolValidateNext<'a> {
    f: Box<dyn Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a>,
}

impl<'a> ToolValidateNext<'a> {
    pub(crate) fn new(f: impl Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a) -> Self {
        ToolValidateNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain (it may be called more than once, e.g. to retry).
    pub fn run(&self, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        (self.f)(args)
    }
}

/// The rest of a `wrap_tool_execute` chain: call [`ToolExecuteNext::run`] to execute.
pub struct ToolExecuteNext<'a> {
    f: Box<dyn Fn(Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> + Send + Sync + 'a>,
}

impl<'a> ToolExecuteNext<'a> {
    pub(crate) fn new(f: impl Fn(Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> + Send + Sync + 'a) -> Self {
        ToolExecuteNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain (it may be called more than once, e.g. to retry).
    pub fn run(&self, args: Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        (self.f)(args)
    }
}

/// The rest of a `wrap_output_validate` or `wrap_output_process` chain: call
/// [`OutputNext::run`] to go on.
pub struct OutputNext<'a> {
    f: Box<dyn Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a>,
}

impl<'a> OutputNext<'a> {
    pub(crate) fn new(f: impl Fn(Value) -> BoxFuture<'a, Result<Value, ToolError>> + Send + Sync + 'a) -> Self {
        OutputNext { f: Box::new(f) }
    }

    /// Runs the rest of the chain (it may be called more than once).
    pub fn run(&self, value: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        (self.f)(value)
    }
}
