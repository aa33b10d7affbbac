//! Decisions on the calls a turn waits for: what a decision says, which call it settles, and
//! the ledger that lets exactly one decision settle a call.
//!
//! A waiting turn holds its conversation's exclusive lock, so decisions arrive through a shared
//! handler (`decide`), which cannot write state. Two decisions for one call sent at once would
//! both find the call waiting; so `decide` hands each decision to the call's **ledger**: the
//! exclusive handler `settle` of the same virtual object under a key of its own (the call's
//! awakeable id), which Restate runs one at a time per key. The first decision is recorded and
//! resolves the awakeable; any later one gets 409 naming the decision that won.

use restate_sdk::context::{
    ContextAwakeables, ContextClient, ContextReadState, ContextWriteState, ObjectContext, RequestTarget,
    SharedObjectContext,
};
use restate_sdk::errors::{HandlerError, TerminalError};
use restate_sdk::serde::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// State key of the calls waiting for a decision.
pub const PENDING_KEY: &str = "pending";
/// State key, under a ledger's key, of the decision that settled its call.
const SETTLED_KEY: &str = "settled";
/// The key prefix of the ledgers within the object (the rest is the call's awakeable id).
const LEDGER_PREFIX: &str = "decision:";

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
/// The call is named by its `tool_call_id` (as `pending` lists it), or by its `tool_name` when
/// exactly one waiting call has that name (or exactly one has that name and these `args`): a
/// client that knows what it approves need not list the calls first.
///
/// A decision is a JSON object; anything else (an array, a string, a misspelt field) is refused
/// with 400 before it is looked at.
///
/// ```
/// # use toolsmith_restate::Decision;
/// let approve: Decision = serde_json::from_str(r#"{"tool_call_id": "c1", "approved": true}"#).unwrap();
/// let deny: Decision = serde_json::from_str(r#"{"tool_call_id": "c1", "approved": false, "message": "not today"}"#).unwrap();
/// let result: Decision = serde_json::from_str(r#"{"tool_call_id": "c2", "result": {"rate": 1.1}}"#).unwrap();
/// let by_name: Decision = serde_json::from_str(r#"{"tool_name": "refund", "approved": true}"#).unwrap();
/// assert!(serde_json::from_str::<Decision>(r#"{"tool_call_id": "c1", "aproved": true}"#).is_err());
/// assert!(serde_json::from_str::<Decision>(r#"["c1", true]"#).is_err());
/// # let _ = (approve, deny, result, by_name);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value")]
#[non_exhaustive]
pub struct Decision {
    /// The call decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The tool of the call decided (with `tool_call_id`, it must match; without it, it names
    /// the call when no other waiting call has this name, or these `args`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// With `tool_name` alone: the arguments of the call decided, exactly as `pending` lists them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
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

/// [`Decision`]'s fields as they are read, once the body is known to be an object.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionFields {
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    approved: Option<bool>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    override_args: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    retry: Option<String>,
}

impl TryFrom<Value> for Decision {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, String> {
        let fields: DecisionFields = crate::object_only("a decision", value)?;
        let DecisionFields { tool_call_id, tool_name, args, approved, message, override_args, result, retry } = fields;
        Ok(Decision { tool_call_id, tool_name, args, approved, message, override_args, result, retry })
    }
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

    /// Ask the model to try the call executed outside the agent again, with `message`.
    pub fn retry(tool_call_id: impl Into<String>, message: impl Into<String>) -> Self {
        Decision { retry: Some(message.into()), ..Decision::empty(tool_call_id) }
    }

    /// Names the call by its tool (and, with [`Decision::with_args`], its arguments) instead
    /// of its id.
    ///
    /// ```
    /// # use toolsmith_restate::Decision;
    /// let d = Decision::approve_tool("refund").with_args(serde_json::json!({"order": 42}));
    /// assert_eq!(d.tool_call_id, None);
    /// ```
    pub fn approve_tool(tool_name: impl Into<String>) -> Self {
        Decision { tool_call_id: None, tool_name: Some(tool_name.into()), ..Decision::approve("") }
    }

    /// The arguments of the call named by its tool.
    pub fn with_args(mut self, args: Value) -> Self {
        self.args = Some(args);
        self
    }

    fn empty(tool_call_id: impl Into<String>) -> Self {
        Decision {
            tool_call_id: Some(tool_call_id.into()),
            tool_name: None,
            args: None,
            approved: None,
            message: None,
            override_args: None,
            result: None,
            retry: None,
        }
    }

    /// The call this decision names among `waiting`: 404 when none, 409 when several fit.
    fn select<'w>(&self, waiting: &'w [PendingCall], key: &str) -> Result<&'w PendingCall, TerminalError> {
        let listed = || {
            let ids: Vec<String> = waiting.iter().map(|c| format!("{} ({})", c.tool_call_id, c.tool_name)).collect();
            if ids.is_empty() { "none".to_string() } else { ids.join(", ") }
        };
        if let Some(id) = &self.tool_call_id {
            let call = waiting.iter().find(|c| &c.tool_call_id == id).ok_or_else(|| {
                TerminalError::new_with_code(
                    404,
                    format!("no call `{id}` waits for a decision in conversation `{key}` (waiting: {})", listed()),
                )
            })?;
            if let Some(name) = self.tool_name.as_ref().filter(|n| **n != call.tool_name) {
                return Err(TerminalError::new_with_code(
                    400,
                    format!("call `{id}` is a call of `{}`, not `{name}`", call.tool_name),
                ));
            }
            if self.args.is_some() {
                return Err(TerminalError::new_with_code(
                    400,
                    format!("call `{id}` is named by its id: `args` names a call by its tool, with `tool_name`"),
                ));
            }
            return Ok(call);
        }
        let Some(name) = &self.tool_name else {
            return Err(TerminalError::new_with_code(400, "a decision names its call: `tool_call_id`, or `tool_name`"));
        };
        let fits: Vec<&PendingCall> = waiting
            .iter()
            .filter(|c| &c.tool_name == name && self.args.as_ref().is_none_or(|a| *a == c.args))
            .collect();
        match fits.as_slice() {
            [call] => Ok(call),
            [] => Err(TerminalError::new_with_code(
                404,
                format!(
                    "no call of `{name}`{} waits for a decision in conversation `{key}` (waiting: {})",
                    if self.args.is_some() { " with these arguments" } else { "" },
                    listed()
                ),
            )),
            several => Err(TerminalError::new_with_code(
                409,
                format!(
                    "{} calls of `{name}` wait for a decision ({}): name one by `tool_call_id`{}",
                    several.len(),
                    several.iter().map(|c| c.tool_call_id.as_str()).collect::<Vec<_>>().join(", "),
                    if self.args.is_some() { "" } else { " or `args`" }
                ),
            )),
        }
    }

    /// The reason this decision cannot settle the call `id` of `kind`, if any.
    pub(crate) fn check(&self, id: &str, kind: PendingKind) -> Result<(), String> {
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

/// Decides a waiting call of the conversation `ctx.key()` of the virtual object named `object`
/// (see [`DurableAgent::decide`](crate::DurableAgent::decide)); the object must have the
/// exclusive handler `settle` that calls [`settle`].
pub async fn decide(ctx: &SharedObjectContext<'_>, object: &str, decision: Decision) -> Result<(), HandlerError> {
    let waiting = pending(ctx).await?;
    let call = decision.select(&waiting, ctx.key())?;
    decision.check(&call.tool_call_id, call.kind).map_err(|m| TerminalError::new_with_code(400, m))?;
    // The decision as the turn reads it: the call named by its id.
    let settled = Decision { tool_call_id: Some(call.tool_call_id.clone()), tool_name: None, args: None, ..decision };
    let ledger = RequestTarget::object(object, format!("{LEDGER_PREFIX}{}", call.awakeable_id), "settle");
    ctx.request::<_, ()>(ledger, Json(Settle { awakeable_id: call.awakeable_id.clone(), decision: settled }))
        .call()
        .await?;
    Ok(())
}

/// What [`decide`] asks a call's ledger ([`settle`]) to record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settle {
    awakeable_id: String,
    decision: Decision,
}

/// The ledger of one call: the exclusive handler `settle` of the conversation's virtual object,
/// under the key [`decide`] gives it (the call's awakeable id). The first decision resolves the
/// awakeable the turn waits on; a later one is refused with 409, naming the decision that won.
pub async fn settle(ctx: &ObjectContext<'_>, settle: Settle) -> Result<(), HandlerError> {
    if ctx.key() != format!("{LEDGER_PREFIX}{}", settle.awakeable_id) {
        return Err(
            TerminalError::new_with_code(400, "`settle` is called by `decide`, under the call's own key").into()
        );
    }
    if let Some(Json(won)) = ctx.get::<Json<Decision>>(SETTLED_KEY).await? {
        let id = won.tool_call_id.clone().unwrap_or_default();
        let said = serde_json::to_string(&won).unwrap_or_default();
        return Err(TerminalError::new_with_code(409, format!("call `{id}` was already decided: {said}")).into());
    }
    ctx.set(SETTLED_KEY, Json(settle.decision.clone()));
    ctx.resolve_awakeable(&settle.awakeable_id, Json(settle.decision));
    Ok(())
}

/// See [`DurableAgent::pending`](crate::DurableAgent::pending).
pub async fn pending(ctx: &SharedObjectContext<'_>) -> Result<Vec<PendingCall>, HandlerError> {
    Ok(ctx.get::<Json<Vec<PendingCall>>>(PENDING_KEY).await?.map(|Json(p)| p).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, tool: &str, args: Value) -> PendingCall {
        PendingCall {
            tool_call_id: id.into(),
            tool_name: tool.into(),
            args,
            kind: PendingKind::Approval,
            metadata: None,
            awakeable_id: format!("sign_{id}"),
        }
    }

    #[test]
    fn only_an_object_with_known_fields_is_a_decision() {
        for body in [r#"["refund-9", true]"#, r#""refund-9""#, "true", "null", "7", r#"{"tool_call_id": "c", "x": 1}"#]
        {
            assert!(serde_json::from_str::<Decision>(body).is_err(), "{body} was taken as a decision");
        }
        let err = serde_json::from_str::<Decision>(r#"["refund-9", true]"#).unwrap_err().to_string();
        assert!(err.contains("a decision is a JSON object"), "{err}");
        let d: Decision = serde_json::from_str(r#"{"tool_call_id": "c", "approved": true}"#).unwrap();
        assert_eq!(d, Decision::approve("c"));
        let back: Decision = serde_json::from_value(serde_json::to_value(&d).unwrap()).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn a_call_is_named_by_id_or_by_tool_when_that_is_unambiguous() {
        let waiting = [
            call("a", "refund", json!({"order": 1})),
            call("b", "refund", json!({"order": 2})),
            call("c", "ship", json!({})),
        ];
        assert_eq!(Decision::approve("b").select(&waiting, "k").unwrap().tool_call_id, "b");
        assert_eq!(Decision::approve_tool("ship").select(&waiting, "k").unwrap().tool_call_id, "c");
        let by_args = Decision::approve_tool("refund").with_args(json!({"order": 2}));
        assert_eq!(by_args.select(&waiting, "k").unwrap().tool_call_id, "b");
        let ambiguous = Decision::approve_tool("refund").select(&waiting, "k").unwrap_err();
        assert_eq!(ambiguous.code(), 409);
        assert!(ambiguous.message().contains("a, b"), "{}", ambiguous.message());
        assert_eq!(Decision::approve("z").select(&waiting, "k").unwrap_err().code(), 404);
        assert_eq!(Decision::approve_tool("fly").select(&waiting, "k").unwrap_err().code(), 404);
        let mismatch = Decision { tool_name: Some("ship".into()), ..Decision::approve("a") };
        assert_eq!(mismatch.select(&waiting, "k").unwrap_err().code(), 400);
        let nameless = Decision { tool_call_id: None, ..Decision::approve("a") };
        assert_eq!(nameless.select(&waiting, "k").unwrap_err().code(), 400);
    }
}
