//! The `*Next` handles: the rest of a `wrap_*` chain, given to the hook that wraps it.

use std::sync::atomic::{AtomicBool, Ordering};

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
    /// Whether the tool itself returned successfully (what `RunUsage::tool_calls` counts).
    ran: Option<&'a AtomicBool>,
}

impl<'a> ToolExecuteNext<'a> {
    pub(crate) fn new(
        f: impl Fn(Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> + Send + Sync + 'a,
        ran: Option<&'a AtomicBool>,
    ) -> Self {
        ToolExecuteNext { f: Box::new(f), ran }
    }

    pub(crate) fn ran_flag(&self) -> Option<&'a AtomicBool> {
        self.ran
    }

    /// Runs the rest of the chain (it may be called more than once, e.g. to retry).
    pub fn run(&self, args: Value) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        (self.f)(args)
    }

    /// Whether the tool itself has returned successfully in this call so far: what
    /// [`RunUsage::tool_calls`](crate::usage::RunUsage) counts, whatever the hooks inside made of
    /// its result.
    pub fn tool_ran(&self) -> bool {
        self.ran.is_some_and(|r| r.load(Ordering::Relaxed))
    }

    /// Counts this call in [`RunUsage::tool_calls`](crate::usage::RunUsage) as a successful
    /// execution of the tool without running it: for a wrapper that answers from a record of an
    /// earlier execution (a durable engine replaying its journal), so that the run's usage is
    /// the same as the execution it replays.
    ///
    /// ```
    /// use serde_json::Value;
    /// use toolsmith::capability::{Capability, HookStage, ToolCallInfo, ToolExecuteNext};
    /// use toolsmith::tool::{ToolError, ToolOutput};
    /// use toolsmith::RunContext;
    ///
    /// /// Answers every call from a record instead of running the tool.
    /// struct Replay;
    ///
    /// impl Capability<()> for Replay {
    ///     fn hooks_stage(&self, stage: HookStage) -> bool {
    ///         stage == HookStage::ToolExecute
    ///     }
    ///     async fn wrap_tool_execute(
    ///         &self,
    ///         _ctx: &RunContext<()>,
    ///         _call: ToolCallInfo<'_>,
    ///         _args: Value,
    ///         next: ToolExecuteNext<'_>,
    ///     ) -> Result<ToolOutput, ToolError> {
    ///         next.count_as_ran();
    ///         Ok(ToolOutput::Value("recorded".into()))
    ///     }
    /// }
    /// ```
    pub fn count_as_ran(&self) {
        if let Some(ran) = self.ran {
            ran.store(true, Ordering::Relaxed);
        }
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
