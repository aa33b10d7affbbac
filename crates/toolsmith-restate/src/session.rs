//! A durable conversation: one turn at a time per key, the history in Restate's state, calls
//! that wait for approval (or for an outside result) on awakeables.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::Utc;
use restate_sdk::context::{
    ContextAwakeables, ContextReadState, ContextSideEffects, ContextWriteState, ObjectContext, RunFuture,
    SharedObjectContext,
};
use restate_sdk::errors::{HandlerError, TerminalError};
use restate_sdk::serde::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolsmith::agent::{Agent, Deferrable};
use toolsmith::deferred::{DeferredToolRequests, ExternalResult, ToolApproval};
use toolsmith::messages::ModelMessage;
use toolsmith::settings::ModelSettings;
use toolsmith::usage::RunUsage;

use crate::capability::Journaled;
use crate::decision::{Decision, PENDING_KEY, PendingCall, PendingKind, decide, pending};
use crate::journal::{Cursor, Journal, drive};
use crate::source::ReplaySource;
use crate::spills::{self, Payload, SPILLS_KEY, TurnSpills};

/// State key of the conversation's message history (Pydantic AI's JSON).
pub const HISTORY_KEY: &str = "history";

/// The input of a turn: a JSON object with the user's `prompt` and, optionally, the run's
/// `deps` (read by the function given to
/// [`DurableAgent::deps_from_turn`](crate::DurableAgent::deps_from_turn)), `model_settings`
/// and `metadata`. Anything else (an array, a misspelt field) is refused with 400 before the
/// turn starts.
///
/// ```
/// # use toolsmith_restate::TurnRequest;
/// let turn: TurnRequest = serde_json::from_str(r#"{"prompt": "refund order 42", "metadata": {"user": "ann"}}"#).unwrap();
/// assert_eq!(turn.prompt, "refund order 42");
/// assert!(serde_json::from_str::<TurnRequest>(r#"["pay"]"#).is_err());
/// assert!(serde_json::from_str::<TurnRequest>(r#"{"promt": "hi"}"#).is_err());
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "Value")]
#[non_exhaustive]
pub struct TurnRequest {
    /// What the user says.
    pub prompt: String,
    /// The run's dependencies, as JSON (see [`DurableAgent::deps_from_turn`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deps: Option<Value>,
    /// Model settings for this turn's requests (over the agent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_settings: Option<ModelSettings>,
    /// The run's metadata (`RunContext::metadata`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// [`TurnRequest`]'s fields as they are read, once the body is known to be an object.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnFields {
    prompt: String,
    #[serde(default)]
    deps: Option<Value>,
    #[serde(default)]
    model_settings: Option<ModelSettings>,
    #[serde(default)]
    metadata: Option<Value>,
}

impl TryFrom<Value> for TurnRequest {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, String> {
        let TurnFields { prompt, deps, model_settings, metadata } = crate::object_only("a turn", value)?;
        Ok(TurnRequest { prompt, deps, model_settings, metadata })
    }
}

impl TurnRequest {
    /// A turn with this prompt.
    pub fn new(prompt: impl Into<String>) -> Self {
        TurnRequest { prompt: prompt.into(), deps: None, model_settings: None, metadata: None }
    }

    /// The run's dependencies, as JSON.
    pub fn deps(mut self, deps: Value) -> Self {
        self.deps = Some(deps);
        self
    }

    /// Model settings for this turn.
    pub fn model_settings(mut self, settings: ModelSettings) -> Self {
        self.model_settings = Some(settings);
        self
    }

    /// The run's metadata.
    pub fn metadata(mut self, metadata: Value) -> Self {
        self.metadata = Some(metadata);
        self
    }
}

/// The answer of a turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TurnReply<O> {
    /// The run's output.
    pub output: O,
    /// The messages this turn added to the conversation (Pydantic AI's JSON).
    pub new_messages: Vec<ModelMessage>,
    /// The turn's usage: model requests and tool calls of every run of the turn (a turn that
    /// waited for decisions resumes its run), the same whether or not the service was restarted
    /// meanwhile.
    pub usage: RunUsage,
}

/// An [`Agent`] whose turns run durably on Restate.
///
/// Build the agent as usual, with
/// [`allow_deferred`](toolsmith::AgentBuilder::allow_deferred) (calls that need approval
/// then wait for a [`Decision`] instead of ending the turn), and serve its turns from a
/// Restate virtual object keyed by conversation: the ready-made
/// [`AgentSession`](crate::AgentSession), or an object of your own whose handlers call
/// [`turn`](DurableAgent::turn), [`decide`](DurableAgent::decide) (with an exclusive `settle`
/// handler calling [`settle`](crate::settle)), [`pending`](DurableAgent::pending) and
/// [`history`](DurableAgent::history).
pub struct DurableAgent<D, O> {
    agent: Agent<D, Deferrable<O>>,
    deps: Option<D>,
    deps_from_turn: Option<DepsReader<D>>,
    pub(crate) object: String,
}

/// Makes a run's dependencies from a turn's `deps`.
type DepsReader<D> = Arc<dyn Fn(Value) -> Result<D, String> + Send + Sync>;

impl<D: Clone + Send + Sync + 'static, O: Serialize + Send + Sync + 'static> DurableAgent<D, O> {
    /// Serves `agent`'s turns durably.
    pub fn new(agent: Agent<D, Deferrable<O>>) -> Self {
        DurableAgent { agent, deps: None, deps_from_turn: None, object: "AgentSession".into() }
    }

    /// The dependencies every turn's run receives (unless the turn brings its own, see
    /// [`deps_from_turn`](DurableAgent::deps_from_turn)).
    pub fn deps(mut self, deps: D) -> Self {
        self.deps = Some(deps);
        self
    }

    /// Reads a turn's `deps` (JSON) into the run's dependencies; an `Err` refuses the turn
    /// with 400 and its message. Without it, a turn that brings `deps` is refused.
    ///
    /// ```
    /// # use toolsmith::prelude::*;
    /// # use toolsmith_restate::DurableAgent;
    /// # fn make() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = Agent::builder(TestModel::default()).deps::<String>().allow_deferred().build()?;
    /// let durable = DurableAgent::new(agent).deps_from_turn(|deps| {
    ///     serde_json::from_value::<String>(deps).map_err(|e| format!("the user's name: {e}"))
    /// });
    /// # let _ = durable; Ok(()) }
    /// ```
    pub fn deps_from_turn(mut self, read: impl Fn(Value) -> Result<D, String> + Send + Sync + 'static) -> Self {
        self.deps_from_turn = Some(Arc::new(read));
        self
    }

    /// The name of the virtual object that serves this agent (`AgentSession` unless you serve
    /// it from an object of your own): [`decide`](DurableAgent::decide) sends each decision
    /// to that object's `settle` handler.
    pub fn object_name(mut self, name: impl Into<String>) -> Self {
        self.object = name.into();
        self
    }

    /// Runs one turn of the conversation `ctx.key()`: the prompt, with the stored history,
    /// every model request and tool call a journaled step; calls that need a decision wait on
    /// awakeables (listed by [`pending`](DurableAgent::pending)) and the run resumes once all
    /// are decided. The history is stored when the turn ends with an output; a turn that fails
    /// leaves it as it was and answers with a terminal error (a replay would fail the same way).
    pub async fn turn(&self, ctx: &ObjectContext<'_>, request: TurnRequest) -> Result<TurnReply<O>, HandlerError> {
        let TurnRequest { prompt, deps, model_settings, metadata } = request;
        let deps = match (deps, &self.deps_from_turn) {
            (Some(value), Some(read)) => {
                Some(read(value).map_err(|m| TerminalError::new_with_code(400, format!("the turn's `deps`: {m}")))?)
            }
            (Some(_), None) => {
                return Err(TerminalError::new_with_code(
                    400,
                    "this agent takes no `deps` from a turn (the service sets them with `DurableAgent::deps_from_turn`)",
                )
                .into());
            }
            (None, _) => self.deps.clone(),
        };
        let mut history: Vec<ModelMessage> =
            ctx.get::<Json<Vec<ModelMessage>>>(HISTORY_KEY).await?.map(|Json(h)| h).unwrap_or_default();
        let start = history.len();
        let stored: BTreeMap<String, Payload> =
            ctx.get::<Json<BTreeMap<String, Payload>>>(SPILLS_KEY).await?.map(|Json(s)| s).unwrap_or_default();
        let spilled = Arc::new(TurnSpills::new(stored));
        // When Restate runs this closure, the journal ends here: the whole turn is new.
        let fresh = Arc::new(AtomicBool::new(false));
        let ran = fresh.clone();
        let Json(started) = ctx
            .run(move || async move {
                ran.store(true, Ordering::Release);
                Ok(Json(Utc::now()))
            })
            .name("turn started")
            .await?;
        let mut cursor = Cursor::new(fresh.load(Ordering::Acquire));
        let source = Arc::new(ReplaySource::new(ctx.random_seed(), started));
        let mut prompt = Some(prompt);
        let mut decided = None;
        let mut usage = RunUsage::default();
        loop {
            let (journal, steps) = Journal::new(source.clone());
            let mut run = match prompt.take() {
                Some(p) => self.agent.run(p),
                None => self.agent.resume(),
            };
            run = run.message_history(history).capability(Journaled { journal });
            if let Some(results) = decided.take() {
                run = run.deferred_tool_results(results);
            }
            if let Some(deps) = &deps {
                run = run.deps(deps.clone());
            }
            if let Some(settings) = &model_settings {
                run = run.model_settings(settings.clone());
            }
            if let Some(metadata) = &metadata {
                run = run.metadata(metadata.clone());
            }
            let run = spills::TURN.scope(spilled.clone(), toolsmith::durable::scope(source.clone(), run));
            let result = drive(ctx, &mut cursor, steps, run)
                .await
                .map_err(|e| TerminalError::new(format!("the agent run failed: {e}")))?;
            usage += result.usage();
            history = result.all_messages().to_vec();
            match result.into_output() {
                Deferrable::Output(output) => {
                    ctx.set(HISTORY_KEY, Json(history.clone()));
                    if spilled.added() {
                        ctx.set(SPILLS_KEY, Json(spilled.snapshot()));
                    }
                    ctx.clear(PENDING_KEY);
                    return Ok(TurnReply { output, new_messages: history.split_off(start.min(history.len())), usage });
                }
                Deferrable::Deferred(requests) => {
                    decided = Some(wait_for_decisions(ctx, &requests).await?);
                }
                _ => return Err(TerminalError::new("the agent run ended with an output of an unknown kind").into()),
            }
        }
    }

    /// Decides a waiting call of the conversation `ctx.key()` (a shared handler: it runs while
    /// the turn waits). An unknown call, or a decision of the wrong kind, is a terminal error
    /// (status 404 or 400) that names the calls waiting; nothing runs. Exactly one decision
    /// settles a call: a second one for the same call gets 409, naming the decision that won.
    pub async fn decide(&self, ctx: &SharedObjectContext<'_>, decision: Decision) -> Result<(), HandlerError> {
        decide(ctx, &self.object, decision).await
    }

    /// The calls the conversation's current turn waits on.
    pub async fn pending(&self, ctx: &SharedObjectContext<'_>) -> Result<Vec<PendingCall>, HandlerError> {
        pending(ctx).await
    }

    /// The conversation's stored history (Pydantic AI's JSON).
    pub async fn history(&self, ctx: &SharedObjectContext<'_>) -> Result<Vec<ModelMessage>, HandlerError> {
        history(ctx).await
    }
}

/// One awakeable per waiting call, listed in state for `decide`, then awaited in call order.
async fn wait_for_decisions(
    ctx: &ObjectContext<'_>,
    requests: &DeferredToolRequests,
) -> Result<toolsmith::deferred::DeferredToolResults, HandlerError> {
    let mut waits = Vec::new();
    let mut listed = Vec::new();
    let calls = requests
        .approvals
        .iter()
        .map(|c| (PendingKind::Approval, c))
        .chain(requests.calls.iter().map(|c| (PendingKind::External, c)));
    for (kind, call) in calls {
        let (awakeable_id, decision) = ctx.awakeable::<Json<Decision>>();
        listed.push(PendingCall {
            tool_call_id: call.tool_call_id.clone(),
            tool_name: call.tool_name.clone(),
            args: call.args.clone(),
            kind,
            metadata: requests.metadata.get(&call.tool_call_id).cloned(),
            awakeable_id,
        });
        waits.push((kind, call.tool_call_id.clone(), decision));
    }
    ctx.set(PENDING_KEY, Json(listed));
    let mut results = requests.results();
    for (kind, id, decision) in waits {
        let Json(d) = decision.await?;
        // What resolved the awakeable is checked again: `decide` checks it, but an awakeable
        // can also be resolved through Restate's own API. A decision that does not fit the
        // call ends the turn; nothing runs.
        if d.tool_call_id.as_deref() != Some(id.as_str()) {
            return Err(TerminalError::new(format!("the decision for call `{id}` names another call")).into());
        }
        d.check(&id, kind).map_err(TerminalError::new)?;
        results = match kind {
            PendingKind::Approval => {
                let approval = match (d.approved, d.override_args, d.message) {
                    (Some(true), Some(args), _) => ToolApproval::approved_with(args),
                    (Some(true), None, _) => ToolApproval::approved(),
                    (_, _, Some(message)) => ToolApproval::denied_with(message),
                    _ => ToolApproval::denied(),
                };
                results.approve(id, approval)
            }
            PendingKind::External => match (d.result, d.retry) {
                (_, Some(message)) => {
                    results.call_result(id, ExternalResult::Retry(toolsmith::tool::ModelRetry::new(message)))
                }
                (result, None) => results.call_result(id, ExternalResult::Value(result.unwrap_or(Value::Null))),
            },
        };
    }
    ctx.clear(PENDING_KEY);
    Ok(results)
}

/// See [`DurableAgent::history`].
pub async fn history(ctx: &SharedObjectContext<'_>) -> Result<Vec<ModelMessage>, HandlerError> {
    Ok(ctx.get::<Json<Vec<ModelMessage>>>(HISTORY_KEY).await?.map(|Json(h)| h).unwrap_or_default())
}
