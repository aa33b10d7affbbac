//! [`BackgroundTools`]: selected tools answer at once and run as background tasks, their results
//! delivered into the conversation when ready, as the harness's capability of that name does.

mod spec;
mod tasks;
mod text;
mod toolset;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

pub use tasks::BackgroundTask;
pub use text::{INSTRUCTIONS, RESULT_ORIGIN, RUN_IN_BACKGROUND};

use super::{BoxedCapability, Capability, CapabilityOrdering, Delivery, DeliveryPoint, HookStage, ToolCallInfo};
use crate::context::RunContext;
use crate::error::{AgentRunError, UserError};
use crate::messages::{ModelRequest, ModelRequestPart, UserPromptContent, UserPromptPart};
use crate::tool::{ModelRetry, ToolDefinition, ToolError};
use crate::toolset::{BoxedToolset, ToolSelector};
use tasks::{Settled, Shared};

/// How a tool runs in this step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Always in the background (chosen by the selector).
    Always,
    /// In the background when the model sets `run_in_background` (metadata
    /// `{"background": "optional"}`).
    Optional,
}

/// Runs selected tools in the background while the agent goes on.
///
/// A selected tool answers at once, in the harness's words: `Tool 'NAME' is running in
/// background (task ID). This call is pending. ...`, and runs as a Tokio task. When it finishes,
/// its result is delivered before the next model request of the run, as a request of its own
/// holding a user prompt framed `<tool_result tool_name="NAME" tool_call_id="ID">...</tool_result>`
/// (a failure `outcome="failed"`), its text marked with the metadata
/// `{"origin": "pydantic-ai-harness.background_tools.result.v1", "tool_call_id": ID}`. A run
/// whose model ends it while tasks are still running waits for the next result and asks the
/// model again, as the harness does.
///
/// - **Selection.** [`tools`](Self::tools) (by default the tools with metadata
///   `{"background": true}`); a tool with `{"background": "optional"}` gets a
///   `run_in_background` argument and runs in the background when the model sets it.
///   Sequential tools run in the foreground.
/// - **Failures.** A retry, a validation error, an approval or a deferral asked from the
///   background go back to the model as the failed result (a retry counts toward the tool's
///   retries when it is delivered, and a result resets the count). A tool that fails with an
///   error or panics ends the run with [`AgentRunError::ToolFailed`] or
///   [`AgentRunError::ToolPanicked`] when its outcome is delivered, as it would in the foreground.
/// - **Later runs.** Results are kept per conversation in this capability (its clones share
///   them): a result not delivered when a run ends (the run paused for deferred calls, or failed)
///   is delivered at the first request of a later run of the same conversation (a run given the
///   history). Unlike the harness, which cancels them, tasks are not stopped when a run pauses.
/// - **Cancellation and limits.** [`cancel`](Self::cancel) and [`cancel_all`](Self::cancel_all)
///   stop tasks (the model is told each was cancelled); [`max_concurrent`](Self::max_concurrent)
///   bounds how many run at once (the others wait for a place); [`running`](Self::running)
///   lists them, [`undelivered`](Self::undelivered) the results waiting for a later run, and
///   [`discard`](Self::discard) drops a conversation that will not go on. A pending call counts
///   as a tool call in the run's usage. Synchronous tools run on Tokio's blocking pool, and
///   cannot be stopped once started (their result is then dropped).
///
/// ```
/// use serde_json::json;
/// use toolsmith::capability::BackgroundTools;
/// use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
/// use toolsmith::prelude::*;
///
/// /// Research a topic thoroughly.
/// #[tool(metadata = r#"{"background": true}"#)]
/// async fn slow_research(query: String) -> String {
///     format!("findings for {query}")
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = FunctionModel::sync(|messages, _| match messages.len() {
///     1 => ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
///         "slow_research",
///         json!({"query": "tides"}),
///         "task1",
///     ))]),
///     _ => ModelResponse::text("noted"),
/// });
/// let agent = Agent::builder(model).tool(slow_research).capability(BackgroundTools::new()).build().unwrap();
/// let result = agent.run("research tides").await.unwrap();
/// // The call answered at once; its result came in a request of its own.
/// let delivered = result.all_messages().iter().any(|m| match m {
///     ModelMessage::Request(r) => r.parts.iter().any(|p| matches!(p, ModelRequestPart::UserPrompt(u)
///         if u.content.text().contains("findings for tides"))),
///     _ => false,
/// });
/// assert!(delivered);
/// # });
/// ```
pub struct BackgroundTools<D = ()> {
    tools: Arc<ToolSelector<D>>,
    shared: Arc<Shared>,
    /// Per run: each tool's mode as prepared for the step.
    modes: Arc<Mutex<HashMap<String, Mode>>>,
    /// Per run: the `run_in_background` flag of each call of an optional tool, by call id.
    flags: Arc<Mutex<HashMap<String, bool>>>,
}

impl<D> Clone for BackgroundTools<D> {
    fn clone(&self) -> Self {
        BackgroundTools {
            tools: self.tools.clone(),
            shared: self.shared.clone(),
            modes: self.modes.clone(),
            flags: self.flags.clone(),
        }
    }
}

impl<D> std::fmt::Debug for BackgroundTools<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundTools").field("tools", &self.tools).finish_non_exhaustive()
    }
}

impl<D> Default for BackgroundTools<D> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D> BackgroundTools<D> {
    /// The tools with metadata `{"background": true}` in the background (the harness's default).
    pub fn new() -> Self {
        BackgroundTools {
            tools: Arc::new(ToolSelector::metadata([("background", true)])),
            shared: Arc::new(Shared::new(None)),
            modes: Arc::default(),
            flags: Arc::default(),
        }
    }

    /// The tools that always run in the background.
    pub fn tools(mut self, tools: impl Into<ToolSelector<D>>) -> Self {
        self.tools = Arc::new(tools.into());
        self
    }

    /// At most `n` tasks run at once; the others wait for a place (their calls have answered).
    /// Set it before the capability is used: it starts a new set of tasks.
    pub fn max_concurrent(mut self, n: usize) -> Result<Self, UserError> {
        if n == 0 {
            return Err(UserError::new("BackgroundTools::max_concurrent must be at least 1"));
        }
        self.shared = Arc::new(Shared::new(Some(n)));
        Ok(self)
    }

    /// The tasks still running (of every run and conversation), by task id.
    pub fn running(&self) -> Vec<BackgroundTask> {
        self.shared.running()
    }

    /// Stops the task `task_id` (the id of the call that started it); the model is told, in its
    /// conversation's next request, that it was cancelled. `false` when no such task runs. A
    /// synchronous tool already running cannot be stopped: its result is dropped.
    pub fn cancel(&self, task_id: &str) -> bool {
        self.shared.cancel(task_id)
    }

    /// The finished tasks whose results wait for the next request of their conversation (a run
    /// that paused or failed before it could deliver them): what a later run of the conversation
    /// will be given, in the order they finished.
    pub fn undelivered(&self) -> Vec<BackgroundTask> {
        self.shared.undelivered()
    }

    /// Drops what is kept for the conversation `conversation_id` (a conversation that will not
    /// go on): its running tasks are stopped without a word to the model, its undelivered
    /// results dropped. How many tasks and results there were.
    pub fn discard(&self, conversation_id: &str) -> usize {
        self.shared.discard(conversation_id)
    }

    /// Stops every running task; how many were.
    pub fn cancel_all(&self) -> usize {
        self.running().iter().filter(|t| self.shared.cancel(&t.task_id)).count()
    }

    fn mode(&self, tool: &str) -> Option<Mode> {
        self.modes.lock().unwrap_or_else(|p| p.into_inner()).get(tool).copied()
    }
}

/// `def` with the optional `run_in_background` argument.
fn with_flag(mut def: ToolDefinition) -> Result<ToolDefinition, AgentRunError> {
    let flag = text::flag_schema();
    let schema = std::sync::Arc::make_mut(&mut def.parameters_json_schema);
    let Some(object) = schema.as_object_mut() else { return Ok(def) };
    let properties = object.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    let Some(properties) = properties.as_object_mut() else { return Ok(def) };
    match properties.get(RUN_IN_BACKGROUND) {
        Some(existing) if *existing == flag => {}
        Some(_) => {
            return Err(AgentRunError::User(UserError::new(format!(
                "Tool '{}' already has a '{RUN_IN_BACKGROUND}' parameter, so it cannot be an optional background tool.",
                def.name
            ))));
        }
        None => {
            properties.insert(RUN_IN_BACKGROUND.into(), flag);
        }
    }
    Ok(def)
}

impl<D: Clone + Send + Sync + 'static> Capability<D> for BackgroundTools<D> {
    fn ordering(&self) -> Option<CapabilityOrdering> {
        // After `SetToolMetadata`, so that the tools it marks are seen marked.
        Some(CapabilityOrdering::new().wrapped_by(["SetToolMetadata"]))
    }

    fn for_run(&self, _ctx: &RunContext<D>) -> Option<BoxedCapability<D>> {
        Some(BoxedCapability::new(BackgroundTools {
            tools: self.tools.clone(),
            shared: self.shared.clone(),
            modes: Arc::default(),
            flags: Arc::default(),
        }))
    }

    fn hooks_stage(&self, stage: HookStage) -> bool {
        stage == HookStage::ToolValidate
    }

    async fn instructions(&self, _ctx: &RunContext<D>) -> Option<String> {
        Some(INSTRUCTIONS.into())
    }

    fn wrapper_toolset(&self, toolset: BoxedToolset<D>) -> Option<BoxedToolset<D>> {
        Some(BoxedToolset::new(toolset::BackgroundToolset {
            inner: toolset,
            shared: self.shared.clone(),
            modes: self.modes.clone(),
            flags: self.flags.clone(),
        }))
    }

    async fn prepare_tools(
        &self,
        ctx: &RunContext<D>,
        tools: Vec<ToolDefinition>,
    ) -> Result<Vec<ToolDefinition>, AgentRunError> {
        let mut modes = HashMap::new();
        let mut out = Vec::with_capacity(tools.len());
        for def in tools {
            let mode = if def.sequential {
                None
            } else if self.tools.matches(ctx, &def) {
                Some(Mode::Always)
            } else if def.metadata.as_ref().and_then(|m| m.get("background")) == Some(&Value::from("optional")) {
                Some(Mode::Optional)
            } else {
                None
            };
            if let Some(mode) = mode {
                modes.insert(def.name.clone(), mode);
            }
            out.push(if mode == Some(Mode::Optional) { with_flag(def)? } else { def });
        }
        *self.modes.lock().unwrap_or_else(|p| p.into_inner()) = modes;
        Ok(out)
    }

    async fn before_tool_validate(
        &self,
        _ctx: &RunContext<D>,
        call: ToolCallInfo<'_>,
        args: Value,
    ) -> Result<Value, ToolError> {
        if self.mode(&call.call.tool_name) != Some(Mode::Optional) {
            return Ok(args);
        }
        let parsed = match &args {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v) => v,
                // Malformed JSON is left to validation, which asks the model again.
                Err(_) => return Ok(args),
            },
            other => other.clone(),
        };
        let Value::Object(mut map) = parsed else { return Ok(args) };
        let flag = match map.remove(RUN_IN_BACKGROUND) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(_) => {
                return Err(ToolError::Retry(ModelRetry::new(format!("`{RUN_IN_BACKGROUND}` must be true or false."))));
            }
        };
        self.flags.lock().unwrap_or_else(|p| p.into_inner()).insert(call.call.tool_call_id.clone(), flag);
        Ok(Value::Object(map))
    }

    async fn pending_messages(&self, ctx: &RunContext<D>, at: DeliveryPoint) -> Result<Delivery, AgentRunError> {
        let outcomes = self.shared.take(&ctx.conversation_id, at == DeliveryPoint::RunEnd).await;
        let mut delivery = Delivery::default();
        let mut outcomes = outcomes.into_iter();
        while let Some(outcome) = outcomes.next() {
            let error = match (self.shared.charge(&outcome), &outcome.settled) {
                (Err(e), _) => Some(e),
                (Ok(_), Settled::Fatal(_)) => None,
                (Ok(count), Settled::Returned(_) | Settled::Failed { .. }) => {
                    let tool = outcome.tool_name.clone();
                    let (Settled::Returned(content) | Settled::Failed { content, .. }) = outcome.settled else {
                        continue;
                    };
                    let part = UserPromptPart::new(UserPromptContent::Parts(content));
                    delivery.requests.push(ModelRequest::new(vec![ModelRequestPart::UserPrompt(part)]));
                    if let Some(count) = count {
                        delivery = delivery.with_retry_count(tool, count);
                    }
                    continue;
                }
            };
            // An outcome that ends the run: the results before it are delivered first, and it
            // ends the run at the next delivery; what came after it waits meanwhile.
            if !delivery.requests.is_empty() {
                self.shared.put_back(std::iter::once(outcome).chain(outcomes).collect());
                return Ok(delivery);
            }
            self.shared.put_back(outcomes.collect());
            return Err(match (error, outcome.settled) {
                (Some(e), _) | (None, Settled::Fatal(e)) => e,
                (None, _) => AgentRunError::unexpected("a background outcome that ends the run had no error"),
            });
        }
        Ok(delivery)
    }
}
