//! The phases of a step between its calls' arrival and its record: a plan for every call,
//! the tool call limit, the end strategy that runs them, and the calls that wait.

use super::step::{Plan, Refusal, Step, duplicate_ids};
use super::*;

/// Phase: a call to a tool of a known kind (`search_tools`) carries that kind in the history
/// from the start, whatever happens to the step: when its arguments are valid, or still a JSON
/// string (as Pydantic AI types a call: a string is left to validation, an object has to fit).
pub(super) fn mark_kinds<D: Clone + Send + Sync + 'static>(
    tools: &ToolIndex<D>,
    ctx: &RunContext<D>,
    state: &mut RunState,
    calls: &[Call<'_>],
) -> FxHashMap<String, &'static str> {
    let mut kinded: FxHashMap<String, &'static str> = FxHashMap::default();
    for call in calls {
        if let Some(kind) = tools.tool_kind(&call.tool_name)
            && let Some(tool) = tools.get(&call.tool_name)
        {
            let valid = validate_args(tool, ctx, &call.args).is_ok();
            if valid || call.args.is_string() {
                state.mark_call_kind(&call.tool_call_id, kind);
            }
            // The answer of a valid call carries the kind once the call is validated again in
            // its step (a call the step skips is answered without it); a string that fails
            // validation gets its retry with the kind.
            if !valid && call.args.is_string() {
                kinded.insert(call.tool_call_id.clone(), kind);
            }
        }
    }
    kinded
}

/// Phase: calls that share an id cannot be told apart by what answers them (a return, an
/// approval): the run ends before any of them runs, with Pydantic AI's error (a resumed history
/// with them is refused earlier).
pub(super) fn refuse_duplicate_ids(calls: &[Call<'_>], output_tool: Option<&str>) -> Result<(), AgentRunError> {
    let duplicates = duplicate_ids(calls.iter().map(|c| &**c).filter(|c| Some(c.tool_name.as_str()) != output_tool));
    if duplicates.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = duplicates.iter().map(|id| format!("'{id}'")).collect();
    Err(AgentRunError::unexpected(format!(
        "Function tool calls must have unique `tool_call_id` values; duplicate `tool_call_id`s: [{}]",
        listed.join(", ")
    )))
}

/// Phase: a plan for every call of the response (what a resume settled, the output call,
/// hidden and unknown tools, function calls ready to validate, calls that wait).
#[allow(clippy::too_many_arguments)]
pub(super) fn plan_calls<'h, D: Clone + Send + Sync + 'static>(
    inner: &StepConfig<D>,
    tools: &'h ToolIndex<D>,
    ctx: &'h RunContext<D>,
    state: &mut RunState,
    counts: &HashMap<String, u32>,
    calls: Vec<Call<'h>>,
    resolutions: Option<&HashMap<String, Resolution>>,
    trusted: bool,
    external: &HashSet<String>,
    output_tool: Option<&str>,
) -> Result<Vec<Plan<'h, D>>, AgentRunError> {
    let mut plans: Vec<Plan<'h, D>> = Vec::with_capacity(calls.len());
    for (index, call) in calls.into_iter().enumerate() {
        let mut approved = false;
        let mut call_metadata = None;
        let mut args_override = None;
        if let Some(res) = resolutions {
            match res.get(&call.tool_call_id) {
                None | Some(Resolution::Skip) => continue,
                // A result given for an output call does not answer it (only a function call
                // takes a result): the call is processed again from its own arguments, as
                // Pydantic AI does.
                Some(_) if output_tool == Some(call.tool_name.as_str()) => {
                    plans.push(Plan::Output(index, call));
                    continue;
                }
                Some(Resolution::Denied(message)) => {
                    let mut p =
                        ToolReturnPart::success(&call.tool_name, Value::String(message.clone()), &call.tool_call_id);
                    p.outcome = ToolOutcome::Denied;
                    plans.push(Plan::Settled(Box::new((index, ModelRequestPart::ToolReturn(p), None))));
                    continue;
                }
                // Only a decision answers a call to a tool that requires approval, unless the
                // caller takes the results as given (`trust_history`).
                Some(Resolution::External(_))
                    if !trusted
                        && !external.contains(&call.tool_call_id)
                        && tools.get(&call.tool_name).is_some_and(|t| t.def.kind == ToolKind::Unapproved) =>
                {
                    let refusal = ResumeRefusal::ResultForApproval { tool_call_id: call.tool_call_id.clone() };
                    return Err(AgentRunError::User(refusal.into()));
                }
                Some(Resolution::External(result)) => {
                    let (part, content) = match result {
                        ExternalResult::Value(v) => {
                            (ToolReturnPart::success(&call.tool_name, v.clone(), &call.tool_call_id), None)
                        }
                        ExternalResult::Return(ret) => return_part(&call, ret.clone()),
                        ExternalResult::Retry(r) => (
                            ToolReturnPart::retried(
                                &call.tool_name,
                                r.content.clone(),
                                &call.tool_call_id,
                                RetryInfo::uncounted(RetryCause::ModelRetry),
                            ),
                            None,
                        ),
                    };
                    plans.push(Plan::Settled(Box::new((index, ModelRequestPart::ToolReturn(part), content))));
                    continue;
                }
                Some(Resolution::Approved { args, metadata }) => {
                    approved = true;
                    call_metadata = metadata.clone();
                    args_override = args.clone();
                }
            }
        }
        if output_tool == Some(call.tool_name.as_str()) {
            plans.push(Plan::Output(index, call));
            continue;
        }
        if let Some((kind, own_retries)) = tools.hidden(&call.tool_name) {
            let message = format!(
                "Tool '{}' is not available yet: search for it first, then call it again once you've seen its schema.",
                call.tool_name
            );
            // The first refusal of a tool is free; later ones use the tool's own retries.
            let charged = !state.refused.get_or_insert_default().insert(call.tool_name.clone());
            let max = own_retries.unwrap_or(inner.retries);
            let cause = RetryCause::UnavailableTool;
            // A call to an external tool (or one needing approval) is answered with the step's
            // deferred calls, after the other parts.
            let refusal = Refusal { index, call, message, cause, charged, max };
            plans.push(if matches!(kind, ToolKind::External | ToolKind::Unapproved) {
                Plan::Withheld(refusal)
            } else {
                Plan::Refused(refusal)
            });
            continue;
        }
        let Some(tool) = tools.get(&call.tool_name) else {
            let available = tools.available_names(output_tool);
            let message = if available.is_empty() {
                format!("Unknown tool name: '{}'. No tools available.", call.tool_name)
            } else {
                format!("Unknown tool name: '{}'. Available tools: {available}", call.tool_name)
            };
            let max = inner.retries;
            let cause = RetryCause::UnknownTool;
            plans.push(Plan::Refused(Refusal { index, call, message, cause, charged: true, max }));
            continue;
        };
        if approved && tool.def.kind == ToolKind::External {
            let refusal = ResumeRefusal::ApprovalForExternal { tool_call_id: call.tool_call_id.clone() };
            return Err(AgentRunError::User(refusal.into()));
        }
        let max_retries = tool.max_retries.unwrap_or(inner.retries);
        let retry = counts.get(&call.tool_name).copied().unwrap_or(0);
        let r = Ready {
            index,
            call,
            tool,
            raw: args_override.map(Box::new),
            args: None,
            max_retries,
            timeout: tool.def.timeout.or(tool.toolset_timeout),
            base: ctx,
            retry,
            approved,
            metadata: call_metadata.map(Box::new),
        };
        plans.push(if tool.def.kind == ToolKind::External {
            Plan::External(r)
        } else if tool.def.kind == ToolKind::Unapproved && !approved {
            Plan::Unapproved(r)
        } else {
            Plan::Function(r)
        });
    }

    Ok(plans)
}

/// Phase: the tool call limit, over every function and unknown call of the step and the
/// results supplied for resumed calls, before anything runs.
pub(super) fn check_call_limit<D>(
    plans: &[Plan<'_, D>],
    state: &RunState,
    limits: &UsageLimits,
) -> Result<(), AgentRunError> {
    if let Some(limit) = limits.tool_calls_limit {
        let calls_now =
            plans.iter().filter(|p| matches!(p, Plan::Function(_) | Plan::Refused(_) | Plan::Settled(_))).count()
                as u32;
        let projected = state.usage.tool_calls + calls_now;
        if calls_now > 0 && projected > limit {
            return Err(AgentRunError::UsageLimitExceeded {
                message: format!(
                    "The next tool call(s) would exceed the tool_calls_limit of {limit} (tool_calls={projected}). Consider raising the limit (`UsageLimits::tool_calls_limit`)"
                ),
            });
        }
    }

    Ok(())
}

/// Phase: the end strategy: which calls run, and in what order, around the output calls.
/// Returns the calls that wait (external, approval, withheld), the output calls whose
/// failure the output budget absorbed, and how the phase ended.
pub(super) async fn follow_strategy<'h, D: Clone + Send + Sync + 'static>(
    step: &mut Step<'_, D>,
    state: &mut RunState,
    ctx: &'h RunContext<D>,
    plans: Vec<Plan<'h, D>>,
    strategy: EndStrategy,
) -> (Vec<Plan<'h, D>>, Vec<usize>, Result<(), AgentRunError>) {
    let mut deferred_kinds: Vec<Plan<'h, D>> = Vec::new();
    let n_plans = plans.len();
    let mut absorbed: Vec<usize> = Vec::new();
    let outcome: Result<(), AgentRunError> = async {
        match strategy {
            EndStrategy::Early => {
                let mut rest = Vec::with_capacity(n_plans);
                for plan in plans {
                    match plan {
                        Plan::Output(i, call) => step.output(state, ctx, i, &call, strategy, &mut absorbed).await?,
                        Plan::External(..) | Plan::Unapproved(_) | Plan::Withheld(_) => deferred_kinds.push(plan),
                        other => rest.push(other),
                    }
                }
                if step.final_output.is_some() {
                    let mut out: Vec<(usize, ModelRequestPart)> = Vec::new();
                    let mut refused = Vec::new();
                    for plan in rest {
                        match plan {
                            // Skipped, unknown and undiscovered tools included: nothing is retried.
                            Plan::Function(r) => {
                                out.push((r.index, success_part(&r.call, Value::String(TOOL_NOT_EXECUTED.into()))))
                            }
                            Plan::Refused(Refusal { index, call, .. }) => {
                                out.push((index, success_part(&call, Value::String(TOOL_NOT_EXECUTED.into()))))
                            }
                            other => refused.push(other),
                        }
                    }
                    step.flush(state, refused).await?;
                    sort_by_index(&mut out);
                    step.parts.extend(out);
                } else {
                    step.flush(state, rest).await?;
                }
            }
            EndStrategy::Graceful => {
                let mut pending = Vec::with_capacity(n_plans);
                for plan in plans {
                    match plan {
                        Plan::Output(i, call) => {
                            step.flush(state, std::mem::take(&mut pending)).await?;
                            step.output(state, ctx, i, &call, strategy, &mut absorbed).await?;
                        }
                        Plan::External(..) | Plan::Unapproved(_) | Plan::Withheld(_) => deferred_kinds.push(plan),
                        other => pending.push(other),
                    }
                }
                step.flush(state, pending).await?;
            }
            EndStrategy::Exhaustive => {
                // The function calls are validated first, in order; then the outputs, then the
                // function calls run.
                let mut pending = Vec::with_capacity(n_plans);
                let mut outputs = Vec::new();
                for plan in plans {
                    match plan {
                        Plan::Output(i, call) => outputs.push((i, call)),
                        Plan::External(..) | Plan::Unapproved(_) | Plan::Withheld(_) => deferred_kinds.push(plan),
                        other => pending.push(other),
                    }
                }
                let validated = step.validate_batch(state, pending).await?;
                let output_indices: Vec<usize> = outputs.iter().map(|(i, _)| *i).collect();
                for (i, call) in outputs {
                    if let Err(e) = step.output(state, ctx, i, &call, strategy, &mut absorbed).await {
                        // The validation's answers stay with the step's other parts.
                        step.parts.extend(validated.out);
                        return Err(e);
                    }
                }
                if let Err(e) = step.run_batch(state, validated).await {
                    // The outputs' answers are given with the step's end, which a function call
                    // that ends the run does not reach: only the function calls' stay.
                    step.parts.retain(|(i, _)| !output_indices.contains(i));
                    return Err(e);
                }
            }
        }
        Ok(())
    }
    .await;
    (deferred_kinds, absorbed, outcome)
}

/// Phase: the calls that wait for approval or an external result: answered as not executed
/// beside a final result, else validated by kind (the external calls, then those waiting for
/// approval, each kind in call order) and listed as the step's deferred calls.
pub(super) async fn defer_calls<'h, D: Clone + Send + Sync + 'static>(
    step: &mut Step<'_, D>,
    state: &mut RunState,
    caps: &Capabilities<D>,
    deferred_kinds: Vec<Plan<'h, D>>,
) -> Result<(), AgentRunError> {
    if step.final_output.is_some() {
        let mut stubs: Vec<(usize, ModelRequestPart)> = deferred_kinds
            .iter()
            .filter_map(|p| match p {
                Plan::External(r) => Some((r.index, success_part(&r.call, Value::String(TOOL_NOT_EXECUTED.into())))),
                Plan::Withheld(w) => Some((w.index, success_part(&w.call, Value::String(TOOL_NOT_EXECUTED.into())))),
                Plan::Unapproved(r) => Some((r.index, success_part(&r.call, Value::String(TOOL_NOT_EXECUTED.into())))),
                _ => None,
            })
            .collect();
        sort_by_index(&mut stubs);
        step.parts.extend(stubs);
    } else {
        let mut out: Vec<(usize, ModelRequestPart)> = Vec::new();
        let mut failure = None;
        // Validated by kind: the external calls, then those waiting for approval (each kind in
        // call order).
        let mut deferred_kinds = deferred_kinds;
        deferred_kinds.sort_by_key(|p| !matches!(p, Plan::External(_) | Plan::Withheld(_)));
        for plan in deferred_kinds {
            match plan {
                Plan::Withheld(refusal) => {
                    let mut to_run = Vec::new();
                    if let Err(error) = step.validate_plan(state, Plan::Refused(refusal), &mut out, &mut to_run).await {
                        failure = Some(error);
                        break;
                    }
                }
                Plan::External(r) => match validate_call(caps, &r).await {
                    Ok(_) => step.deferred.calls.push(r.call.into_owned()),
                    Err(e) => {
                        if let Err(error) = step.settle(e, &r, &mut out) {
                            failure = Some(error);
                            break;
                        }
                    }
                },
                Plan::Unapproved(r) => match validate_call(caps, &r).await {
                    Ok(_) => step.deferred.approvals.push(r.call.into_owned()),
                    Err(e) => {
                        if let Err(error) = step.settle(e, &r, &mut out) {
                            failure = Some(error);
                            break;
                        }
                    }
                },
                _ => {}
            }
        }
        // The answers given before a call ended the run stay.
        sort_by_index(&mut out);
        step.parts.extend(out);
        if let Some(error) = failure {
            return Err(error);
        }
    }

    Ok(())
}
