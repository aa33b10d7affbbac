//! A resumed step: how the results given for a response's pending calls settle them, checked
//! against what they were bound to, and the deferral they answer consumed once.

use super::*;
use crate::deferred::{Consumption, DeferralId, DynDeferralStore};

/// How a call of a resumed response is settled.
#[derive(Debug, Clone)]
pub(crate) enum Resolution {
    /// The call already has its result in the history.
    Skip,
    /// Approved: validate and execute, with other arguments if given.
    Approved { args: Option<Value>, metadata: Option<Value> },
    /// Denied: the model is told why.
    Denied(String),
    /// Executed outside the agent.
    External(ExternalResult),
}

/// The calls of a resumed response and how each is settled, plus the ids results were given for.
pub(crate) struct Resume {
    pub(crate) resolutions: HashMap<String, Resolution>,
    pub(crate) prompt: Option<UserPromptPart>,
    /// Deferred calls being handled inline: those left without a result are deferred again.
    pub(crate) pending: Option<DeferredToolRequests>,
    /// What the results were made for: the history's pending calls must be exactly those.
    pub(crate) binding: ResumeBinding,
    /// The deferral the results answer, to consume (`None` for calls settled inline, within the
    /// run that deferred them).
    pub(crate) consume: Option<Consume>,
}

/// What resumed results are checked against.
pub(crate) enum ResumeBinding {
    /// The calls they were made for (results built from `DeferredToolRequests`, or the
    /// requests a capability settles inline), and the deferral they were, if known.
    Calls(Arc<[PendingCall]>, Option<DeferralId>),
    /// Nothing: the agent's records of its runs that ended deferred must hold the history's
    /// pending calls, else the results are refused.
    Recorded(Arc<PendingRecords>),
    /// The caller's explicit choice: matched by id alone.
    Trusted,
}

/// The deferral a resume answers, consumed once through the agent's store.
pub(crate) struct Consume {
    pub(crate) store: Arc<dyn DynDeferralStore>,
    /// The deferral the history's last response and the ids the results answer make.
    pub(crate) seen: DeferralId,
    /// The resuming run.
    pub(crate) run_id: Arc<str>,
}

/// A deferral to consume before anything runs, once every other check has passed.
pub(super) struct ToConsume {
    consume: Consume,
    id: DeferralId,
    ids: Vec<String>,
}

impl ToConsume {
    /// Consumes the deferral; refused if another run did.
    pub(super) async fn consume(self) -> Result<(), AgentRunError> {
        let ToConsume { consume, id, mut ids } = self;
        let refusal = match consume.store.consume_boxed(&id, &consume.run_id).await {
            Ok(Consumption::Fresh) => return Ok(()),
            Ok(Consumption::AlreadyConsumed { by_run }) => {
                ids.sort();
                ResumeRefusal::AlreadyResumed { deferral_id: id.to_string(), tool_call_ids: ids, by_run }
            }
            Err(e) => ResumeRefusal::StoreFailed { deferral_id: id.to_string(), message: e.message },
        };
        Err(AgentRunError::User(refusal.into()))
    }
}

/// What a resume settles a step with.
pub(super) struct Settled {
    /// How each call is settled (`None`: not a resume).
    pub(super) resolutions: Option<HashMap<String, Resolution>>,
    pub(super) prompt: Option<UserPromptPart>,
    /// Results bound to nothing for calls the agent has no record of: refused after the
    /// checks whose messages say more.
    pub(super) unverified: Option<Vec<String>>,
    pub(super) consume: Option<ToConsume>,
    /// The results are matched by id alone, taken as given.
    pub(super) trusted: bool,
    /// The calls the results were bound to as waiting for an outside result (a call approved
    /// earlier whose tool then deferred it): a result answers them, whatever their tool.
    pub(super) external: HashSet<String>,
}

/// The refusal of results that do not answer exactly the calls of the response: the ids of
/// its calls (output calls aside) and those the results (and the history) answer, sorted.
pub(crate) fn results_mismatch<'c, D>(
    calls: impl Iterator<Item = &'c ToolCallPart>,
    given: impl Iterator<Item = String>,
    inner: &StepConfig<D>,
) -> AgentRunError {
    let output_tool = inner.output.output_tool().map(|t| t.name.as_str());
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids.dedup();
        ids
    };
    let expected =
        sorted(calls.filter(|c| Some(c.tool_name.as_str()) != output_tool).map(|c| c.tool_call_id.clone()).collect());
    AgentRunError::User(ResumeRefusal::ResultsMismatch { expected, given: sorted(given.collect()) }.into())
}

/// Checks resumed results against the response's calls and what they were bound to; calls a
/// capability leaves unanswered inline wait again in `deferred`.
pub(super) fn settle<D>(
    resume: Option<Resume>,
    calls: &[Call<'_>],
    inner: &StepConfig<D>,
    deferred: &mut DeferredToolRequests,
) -> Result<Settled, AgentRunError> {
    let Some(mut r) = resume else {
        return Ok(Settled {
            resolutions: None,
            prompt: None,
            unverified: None,
            consume: None,
            trusted: false,
            external: HashSet::new(),
        });
    };
    let pending_now: Vec<&ToolCallPart> = calls
        .iter()
        .map(|c| &**c)
        .filter(|c| !matches!(r.resolutions.get(&c.tool_call_id), Some(Resolution::Skip)))
        .collect();
    let expected: Vec<String> = pending_now.iter().map(|c| c.tool_call_id.clone()).collect();
    // Results must answer every call of the response but the output calls, and nothing
    // else (unless a capability settles some of the run's own deferred calls inline: the
    // rest wait again).
    let output_tool = inner.output.output_tool().map(|t| t.name.as_str());
    let unanswered = || {
        pending_now
            .iter()
            .any(|c| Some(c.tool_name.as_str()) != output_tool && !r.resolutions.contains_key(&c.tool_call_id))
    };
    let stray = || r.resolutions.keys().any(|id| !calls.iter().any(|c| c.tool_call_id == *id));
    if r.pending.is_none() && (unanswered() || stray()) {
        return Err(results_mismatch(calls.iter().map(|c| &**c), r.resolutions.keys().cloned(), inner));
    }
    // An approval approves the call it was made for: the history's pending calls must be
    // exactly the calls the results were bound to (or that this agent recorded). The deferral
    // consumed is the one the results were bound to, else the one recorded, else the one the
    // history makes.
    let seen = r.consume.as_ref().map(|c| c.seen.clone());
    let (bound, deferral) = match &r.binding {
        ResumeBinding::Calls(calls, id) => (Some(calls.clone()), id.clone().or(seen)),
        ResumeBinding::Recorded(records) => match seen.as_ref().and_then(|s| records.find(&pending_now, s)) {
            Some((calls, id)) => (Some(calls), Some(id)),
            None => (None, seen),
        },
        ResumeBinding::Trusted => (None, seen),
    };
    let unverified = (bound.is_none() && matches!(r.binding, ResumeBinding::Recorded(_))).then(|| expected.clone());
    let external: HashSet<String> = bound
        .iter()
        .flat_map(|b| b.iter())
        .filter(|p| p.kind == Some(DeferredKind::External))
        .map(|p| p.id.clone())
        .collect();
    if let Some(bound) = bound {
        let mut given: Vec<(String, DeferredKind)> = r
            .resolutions
            .iter()
            .filter_map(|(id, res)| match res {
                Resolution::Approved { .. } | Resolution::Denied(_) => Some((id.clone(), DeferredKind::Approval)),
                Resolution::External(_) => Some((id.clone(), DeferredKind::External)),
                Resolution::Skip => None,
            })
            .collect();
        given.sort_by(|a, b| a.0.cmp(&b.0));
        check_bound(&bound, &pending_now, &given).map_err(|e| AgentRunError::User(e.into()))?;
    }
    if let Some(pending) = r.pending.take() {
        // Handled inline: what is left waits again, in the same lists.
        let left = |c: &&ToolCallPart| !r.resolutions.contains_key(&c.tool_call_id);
        deferred.approvals.extend(pending.approvals.iter().filter(left).cloned());
        deferred.calls.extend(pending.calls.iter().filter(left).cloned());
        for c in deferred.approvals.iter().chain(&deferred.calls) {
            if let Some(m) = pending.metadata.get(&c.tool_call_id) {
                deferred.metadata.insert(c.tool_call_id.clone(), m.clone());
            }
            r.resolutions.insert(c.tool_call_id.clone(), Resolution::Skip);
        }
    }
    let consume = r.consume.zip(deferral).map(|(consume, id)| {
        let ids = r.resolutions.iter().filter(|(_, res)| !matches!(res, Resolution::Skip)).map(|(id, _)| id.clone());
        ToConsume { consume, id, ids: ids.collect() }
    });
    let trusted = matches!(r.binding, ResumeBinding::Trusted);
    Ok(Settled { resolutions: Some(r.resolutions), prompt: r.prompt, unverified, consume, trusted, external })
}
