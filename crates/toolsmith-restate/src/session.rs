//! A durable conversation: one turn at a time per key, the history in Restate's state, calls
//! that wait for approval (or for an outside result) on awakeables.

use std::sync::Arc;

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
use toolsmith::usage::RunUsage;

use crate::capability::Journaled;
use crate::journal::{Journal, drive};
use crate::source::ReplaySource;

/// State key of the conversation's message history (Pydantic AI's JSON).
pub const HISTORY_KEY: &str = "history";
/// State key of the calls waiting for a decision.
pub const PENDING_KEY: &str = "pending";

/// The input of a turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TurnRequest {
    /// What the user says.
    pub prompt: String,
}

impl TurnRequest {
    /// A turn with this prompt.
    pub fn new(prompt: impl Into<String>) -> Self {
        TurnRequest { prompt: prompt.into() }
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
    /// The turn's usage (model requests and tool calls of every resumed run, added up).
    pub usage: RunUsage,
}

/// Why a call waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PendingKind {
    /// It needs an approval (`approved: true` or `false`).
    Approval,
    /// It is executed outside the agent (`result` or `retry`).
    External,
}

/// A call the current turn waits on, as the `pending` handler lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingCall {
    /// The call's id: name it in the [`Decision`].
    pub tool_call_id: String,
    /// The tool called.
    pub tool_name: String,
    /// The arguments, as the model wrote them.
    pub args: Value,
    /// What decides it.
    pub kind: PendingKind,
    /// What the tool attached to the request, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// The Restate awakeable the turn waits on.
    pub awakeable_id: String,
}

/// A decision on a waiting call: an approval (`approved`, with an optional `message` for a
/// denial and `override_args` for an approval), or an outside call's `result` (or `retry`, a
/// message that asks the model to try again).
///
/// ```
/// # use toolsmith_restate::Decision;
/// let approve: Decision = serde_json::from_str(r#"{"tool_call_id": "c1", "approved": true}"#).unwrap();
/// let deny: Decision = serde_json::from_str(r#"{"tool_call_id": "c1", "approved": false, "message": "not today"}"#).unwrap();
/// let result: Decision = serde_json::from_str(r#"{"tool_call_id": "c2", "result": {"rate": 1.1}}"#).unwrap();
/// assert!(serde_json::from_str::<Decision>(r#"{"tool_call_id": "c1", "aproved": true}"#).is_err());
/// # let _ = (approve, deny, result);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Decision {
    /// The call decided.
    pub tool_call_id: String,
    /// For an approval: whether the call may run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// For a denial: what the model is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// For an approval: the arguments to run the call with instead of the model's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_args: Option<Value>,
    /// For an outside call: its result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// For an outside call: ask the model to try again with this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<String>,
}

impl Decision {
    /// Approve the call.
    pub fn approve(tool_call_id: impl Into<String>) -> Self {
        Decision { approved: Some(true), ..Decision::empty(tool_call_id) }
    }

    /// Deny the call; the model is told `message`.
    pub fn deny(tool_call_id: impl Into<String>, message: impl Into<String>) -> Self {
        Decision { approved: Some(false), message: Some(message.into()), ..Decision::empty(tool_call_id) }
    }

    /// The result of a call executed outside the agent.
    pub fn result(tool_call_id: impl Into<String>, result: Value) -> Self {
        Decision { result: Some(result), ..Decision::empty(tool_call_id) }
    }

    fn empty(tool_call_id: impl Into<String>) -> Self {
        Decision {
            tool_call_id: tool_call_id.into(),
            approved: None,
            message: None,
            override_args: None,
            result: None,
            retry: None,
        }
    }

    /// The reason this decision cannot settle a call of `kind`, if any.
    fn check(&self, kind: PendingKind) -> Result<(), String> {
        let id = &self.tool_call_id;
        match kind {
            PendingKind::Approval => {
                if self.approved.is_none() {
                    return Err(format!("call `{id}` waits for an approval: send `approved` (true or false)"));
                }
                if self.result.is_some() || self.retry.is_some() {
                    return Err(format!(
                        "call `{id}` waits for an approval, not a result: send `approved` without `result` or `retry`"
                    ));
                }
                if self.approved == Some(true) && self.message.is_some() {
                    return Err(format!("call `{id}`: `message` goes with a denial (`approved: false`)"));
                }
                if self.approved == Some(false) && self.override_args.is_some() {
                    return Err(format!("call `{id}`: `override_args` goes with an approval (`approved: true`)"));
                }
            }
            PendingKind::External => {
                if self.approved.is_some() || self.message.is_some() || self.override_args.is_some() {
                    return Err(format!(
                        "call `{id}` is executed outside the agent and waits for its `result` (or `retry`), not an approval"
                    ));
                }
                if self.result.is_some() == self.retry.is_some() {
                    return Err(format!("call `{id}` waits for exactly one of `result` and `retry`"));
                }
            }
        }
        Ok(())
    }
}

/// An [`Agent`] whose turns run durably on Restate.
///
/// Build the agent as usual, with
/// [`allow_deferred`](toolsmith::AgentBuilder::allow_deferred) (calls that need approval
/// then wait for a [`Decision`] instead of ending the turn), and serve its turns from a
/// Restate virtual object keyed by conversation: the ready-made
/// [`AgentSession`](crate::AgentSession), or an object of your own whose handlers call
/// [`turn`](DurableAgent::turn), [`decide`](DurableAgent::decide),
/// [`pending`](DurableAgent::pending) and [`history`](DurableAgent::history).
pub struct DurableAgent<D, O> {
    agent: Agent<D, Deferrable<O>>,
    deps: Option<D>,
}

impl<D: Clone + Send + Sync + 'static, O: Serialize + Send + Sync + 'static> DurableAgent<D, O> {
    /// Serves `agent`'s turns durably.
    pub fn new(agent: Agent<D, Deferrable<O>>) -> Self {
        DurableAgent { agent, deps: None }
    }

    /// The dependencies every turn's run receives.
    pub fn deps(mut self, deps: D) -> Self {
        self.deps = Some(deps);
        self
    }

    /// Runs one turn of the conversation `ctx.key()`: the prompt, with the stored history,
    /// every model request and tool call a journaled step; calls that need a decision wait on
    /// awakeables (listed by [`pending`](DurableAgent::pending)) and the run resumes once all
    /// are decided. The history is stored when the turn ends with an output; a turn that fails
    /// leaves it as it was and answers with a terminal error (a replay would fail the same way).
    pub async fn turn(&self, ctx: &ObjectContext<'_>, request: TurnRequest) -> Result<TurnReply<O>, HandlerError> {
        let mut history: Vec<ModelMessage> =
            ctx.get::<Json<Vec<ModelMessage>>>(HISTORY_KEY).await?.map(|Json(h)| h).unwrap_or_default();
        let start = history.len();
        let Json(started) = ctx.run(|| async { Ok(Json(Utc::now())) }).name("turn started").await?;
        let source = Arc::new(ReplaySource::new(ctx.random_seed(), started));
        let mut prompt = Some(request.prompt);
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
            if let Some(deps) = &self.deps {
                run = run.deps(deps.clone());
            }
            let result = drive(ctx, steps, toolsmith::durable::scope(source.clone(), run))
                .await
                .map_err(|e| TerminalError::new(format!("the agent run failed: {e}")))?;
            usage = add_usage(usage, result.usage());
            history = result.all_messages().to_vec();
            match result.into_output() {
                Deferrable::Output(output) => {
                    ctx.set(HISTORY_KEY, Json(history.clone()));
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
    /// (status 404 or 400) that names the calls waiting; nothing runs. The first decision on a
    /// call counts; later ones for the same call are ignored by the waiting turn.
    pub async fn decide(&self, ctx: &SharedObjectContext<'_>, decision: Decision) -> Result<(), HandlerError> {
        decide(ctx, decision).await
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

fn add_usage(mut total: RunUsage, more: &RunUsage) -> RunUsage {
    total.requests += more.requests;
    total.tool_calls += more.tool_calls;
    total.input_tokens += more.input_tokens;
    total.output_tokens += more.output_tokens;
    total.cache_read_tokens += more.cache_read_tokens;
    total.cache_write_tokens += more.cache_write_tokens;
    total
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

/// See [`DurableAgent::decide`].
pub async fn decide(ctx: &SharedObjectContext<'_>, decision: Decision) -> Result<(), HandlerError> {
    let waiting = pending(ctx).await?;
    let Some(call) = waiting.iter().find(|c| c.tool_call_id == decision.tool_call_id) else {
        let ids: Vec<&str> = waiting.iter().map(|c| c.tool_call_id.as_str()).collect();
        let listed = if ids.is_empty() { "none".to_string() } else { ids.join(", ") };
        return Err(TerminalError::new_with_code(
            404,
            format!(
                "no call `{}` waits for a decision in conversation `{}` (waiting: {listed})",
                decision.tool_call_id,
                ctx.key()
            ),
        )
        .into());
    };
    decision.check(call.kind).map_err(|m| TerminalError::new_with_code(400, m))?;
    ctx.resolve_awakeable(&call.awakeable_id, Json(decision));
    Ok(())
}

/// See [`DurableAgent::pending`].
pub async fn pending(ctx: &SharedObjectContext<'_>) -> Result<Vec<PendingCall>, HandlerError> {
    Ok(ctx.get::<Json<Vec<PendingCall>>>(PENDING_KEY).await?.map(|Json(p)| p).unwrap_or_default())
}

/// See [`DurableAgent::history`].
pub async fn history(ctx: &SharedObjectContext<'_>) -> Result<Vec<ModelMessage>, HandlerError> {
    Ok(ctx.get::<Json<Vec<ModelMessage>>>(HISTORY_KEY).await?.map(|Json(h)| h).unwrap_or_default())
}
