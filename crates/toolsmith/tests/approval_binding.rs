//! An approval approves exactly one call: the one it was given for (id, tool, arguments). A
//! resumed history whose pending calls are not exactly those the run ended with is refused
//! before anything runs, whether the results were built from the run's `DeferredToolRequests`
//! or by hand; a model that repeats a tool call id gets a retry, never two executions.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::deferred::{DeferredToolRequests, DeferredToolResults, ExternalResult, ResumeRefusal, ToolApproval};
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, parse_history,
};
use toolsmith::prelude::*;

type Log = Arc<Mutex<Vec<String>>>;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PathArgs {
    path: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct QuestionArgs {
    question: String,
}

/// The tools, each logging what it did: `delete_file` and `wipe_disk` require approval,
/// `update_file` raises `ApprovalRequired` for `.env` files, `compute` defers its calls.
fn tools(log: &Log) -> Vec<Tool<()>> {
    let l = log.clone();
    let delete = Tool::new("delete_file", move |_ctx: RunContext<()>, a: PathArgs| {
        let l = l.clone();
        async move {
            l.lock().unwrap().push(format!("deleted {}", a.path));
            Ok::<_, ToolError>(format!("deleted {}", a.path))
        }
    })
    .requires_approval(true);
    let l = log.clone();
    let wipe = Tool::new("wipe_disk", move |_ctx: RunContext<()>, a: PathArgs| {
        let l = l.clone();
        async move {
            l.lock().unwrap().push(format!("wiped {}", a.path));
            Ok::<_, ToolError>(format!("wiped {}", a.path))
        }
    })
    .requires_approval(true);
    let l = log.clone();
    let update = Tool::new("update_file", move |ctx: RunContext<()>, a: PathArgs| {
        let l = l.clone();
        async move {
            if a.path.ends_with(".env") && !ctx.tool_call_approved {
                return Err(ToolError::from(ApprovalRequired::with_metadata(json!({"reason": "protected"}))));
            }
            l.lock().unwrap().push(format!("updated {}", a.path));
            Ok(format!("updated {}", a.path))
        }
    });
    let compute = Tool::new("compute", |_ctx: RunContext<()>, a: QuestionArgs| async move {
        Err::<String, _>(ToolError::from(CallDeferred::with_metadata(json!({"question": a.question}))))
    });
    vec![delete, wipe, update, compute]
}

fn call(name: &str, args: Value, id: &str) -> ModelResponsePart {
    ModelResponsePart::ToolCall(ToolCallPart::new(name, args, id))
}

/// A model that makes `first` calls, then answers with the tool returns it was sent.
fn model(first: Vec<ModelResponsePart>) -> FunctionModel {
    FunctionModel::sync(move |messages, _| {
        let responses = messages.iter().filter(|m| matches!(m, ModelMessage::Response(_))).count();
        if responses == 0 {
            return ModelResponse::new(first.clone());
        }
        ModelResponse::text(returns(messages).join("; "))
    })
}

fn returns(messages: &[ModelMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Request(r) => Some(r.parts.iter().filter_map(|p| match p {
                ModelRequestPart::ToolReturn(t) => Some(format!("{}={}", t.tool_name, t.content_text())),
                _ => None,
            })),
            _ => None,
        })
        .flatten()
        .collect()
}

fn agent(log: &Log, first: Vec<ModelResponsePart>) -> Agent<(), Deferrable<String>> {
    Agent::builder(model(first)).tools(tools(log)).allow_deferred().build().unwrap()
}

/// Runs until the calls are deferred: the history and the requests.
async fn deferred(agent: &Agent<(), Deferrable<String>>) -> (Vec<ModelMessage>, DeferredToolRequests) {
    let first = agent.run("go").await.unwrap();
    let requests = first.output().deferred().expect("the run waits").clone();
    (first.all_messages().to_vec(), requests)
}

/// The calls of the history's last response, to edit.
fn last_calls(history: &mut [ModelMessage]) -> Vec<&mut ToolCallPart> {
    let Some(ModelMessage::Response(r)) = history.iter_mut().rev().find(|m| matches!(m, ModelMessage::Response(_)))
    else {
        panic!("no response")
    };
    r.parts
        .iter_mut()
        .filter_map(|p| match p {
            ModelResponsePart::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn last_response(history: &mut [ModelMessage]) -> &mut ModelResponse {
    match history.iter_mut().rev().find(|m| matches!(m, ModelMessage::Response(_))) {
        Some(ModelMessage::Response(r)) => r,
        _ => panic!("no response"),
    }
}

/// Resumes `history` with `results` and returns the refusal.
async fn refused(
    agent: &Agent<(), Deferrable<String>>,
    history: Vec<ModelMessage>,
    results: DeferredToolResults,
) -> ResumeRefusal {
    match agent.resume().message_history(history).deferred_tool_results(results).await {
        Err(AgentRunError::User(e)) => {
            *e.refusal.clone().unwrap_or_else(|| panic!("a user error without a refusal: {e}"))
        }
        Err(other) => panic!("expected a refusal, got {other:?}"),
        Ok(r) => panic!("expected a refusal, the run went on: {:?}", r.output()),
    }
}

#[tokio::test]
async fn an_approval_does_not_run_a_call_whose_arguments_were_edited() {
    let log = Log::default();
    let agent = agent(&log, vec![call("delete_file", json!({"path": "a.txt"}), "d1")]);
    let (mut history, requests) = deferred(&agent).await;
    last_calls(&mut history)[0].args = json!({"path": "/etc/passwd"});

    // Bound to the requests: the call changed.
    let results = requests.results().approve("d1", true);
    let refusal = refused(&agent, history.clone(), results).await;
    assert_eq!(
        refusal,
        ResumeRefusal::CallChanged {
            tool_call_id: "d1".into(),
            pending_tool: "delete_file".into(),
            pending_args: json!({"path": "a.txt"}),
            found_tool: "delete_file".into(),
            found_args: json!({"path": "/etc/passwd"}),
        }
    );
    // Built with `build_results`: the same.
    let results = requests.build_results([("d1".to_string(), ToolApproval::approved())], [], [], false).unwrap();
    assert!(matches!(refused(&agent, history.clone(), results).await, ResumeRefusal::CallChanged { .. }));
    // By hand, on the agent that ran it: it has no record of this history.
    let refusal = refused(&agent, history.clone(), DeferredToolResults::new().approve("d1", true)).await;
    assert_eq!(refusal, ResumeRefusal::Unverified { tool_call_ids: vec!["d1".into()] });
    // By hand, on another agent: the same.
    let other = self::agent(&log, vec![]);
    let refusal = refused(&other, history.clone(), DeferredToolResults::new().approve("d1", true)).await;
    assert!(matches!(refusal, ResumeRefusal::Unverified { .. }));
    assert!(log.lock().unwrap().is_empty(), "nothing was deleted: {:?}", log.lock().unwrap());

    // The history as it was: the approval runs the call it was given for.
    let (history, requests) = deferred(&agent).await;
    let done = agent
        .resume()
        .message_history(history)
        .deferred_tool_results(requests.results().approve("d1", true))
        .await
        .unwrap();
    assert_eq!(done.output().output().unwrap(), "delete_file=deleted a.txt");
    assert_eq!(*log.lock().unwrap(), ["deleted a.txt"]);
}

#[tokio::test]
async fn an_approval_does_not_run_another_tool_under_the_same_id() {
    let log = Log::default();
    let agent = agent(&log, vec![call("delete_file", json!({"path": "a.txt"}), "d1")]);
    let (mut history, requests) = deferred(&agent).await;
    last_calls(&mut history)[0].tool_name = "wipe_disk".into();
    let refusal = refused(&agent, history.clone(), requests.results().approve("d1", true)).await;
    assert!(
        matches!(&refusal, ResumeRefusal::CallChanged { pending_tool, found_tool, .. } if pending_tool == "delete_file" && found_tool == "wipe_disk"),
        "{refusal:?}"
    );
    let refusal = refused(&agent, history, DeferredToolResults::new().approve("d1", true)).await;
    assert!(matches!(refusal, ResumeRefusal::Unverified { .. }));

    // Another conversation's history, with a pending call under the same id.
    let other = self::agent(&log, vec![call("wipe_disk", json!({"path": "/"}), "d1")]);
    let (other_history, _) = deferred(&other).await;
    let refusal = refused(&other, other_history, requests.results().approve("d1", true)).await;
    assert!(matches!(refusal, ResumeRefusal::CallChanged { .. }), "{refusal:?}");
    assert!(log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_pending_call_duplicated_in_the_history_is_refused() {
    let log = Log::default();
    let agent = agent(&log, vec![call("delete_file", json!({"path": "a.txt"}), "d1")]);
    let (mut history, requests) = deferred(&agent).await;
    let response = last_response(&mut history);
    let copy = response.parts[0].clone();
    response.parts.push(copy);
    for results in [
        requests.results().approve("d1", true),
        DeferredToolResults::new().approve("d1", true),
        DeferredToolResults::new().approve("d1", true).trust_history(),
    ] {
        let refusal = refused(&agent, history.clone(), results).await;
        assert_eq!(refusal, ResumeRefusal::DuplicateCallId { tool_call_id: "d1".into(), count: 2 });
    }
    assert!(log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_call_that_was_never_pending_or_no_longer_is_is_refused() {
    let log = Log::default();
    let agent = agent(
        &log,
        vec![call("delete_file", json!({"path": "a.txt"}), "d1"), call("delete_file", json!({"path": "b.txt"}), "d2")],
    );
    let (history, requests) = deferred(&agent).await;

    // A call added to the history, under a new id.
    let mut added = history.clone();
    last_response(&mut added).parts.push(call("wipe_disk", json!({"path": "/"}), "w1"));
    let results = requests.results().approve("d1", true).approve("d2", true).approve("w1", true);
    let refusal = refused(&agent, added.clone(), results).await;
    assert_eq!(refusal, ResumeRefusal::NotPending { tool_call_id: "w1".into(), tool_name: "wipe_disk".into() });
    let results = DeferredToolResults::new().approve("d1", true).approve("d2", true).approve("w1", true);
    assert!(matches!(refused(&agent, added, results).await, ResumeRefusal::Unverified { .. }));

    // A pending call removed from the history.
    let mut removed = history.clone();
    last_response(&mut removed).parts.remove(1);
    let refusal = refused(&agent, removed, requests.results().approve("d1", true)).await;
    assert_eq!(refusal, ResumeRefusal::NoLongerPending { tool_call_id: "d2".into(), tool_name: "delete_file".into() });
    assert!(log.lock().unwrap().is_empty());

    // A decision for an id no call has, or for a call the history says was answered.
    let results = requests.results().approve("d1", true).approve("d2", true).approve("nope", true);
    assert_eq!(
        refused(&agent, history.clone(), results).await,
        ResumeRefusal::ResultsMismatch {
            expected: vec!["d1".into(), "d2".into()],
            given: vec!["d1".into(), "d2".into(), "nope".into()]
        }
    );
    let mut answered = history.clone();
    answered.push(ModelMessage::Request(toolsmith::messages::ModelRequest::new(vec![ModelRequestPart::ToolReturn(
        toolsmith::messages::ToolReturnPart::success("delete_file", json!("deleted b.txt"), "d2"),
    )])));
    let results = requests.results().approve("d1", true).approve("d2", true);
    assert_eq!(
        refused(&agent, answered.clone(), results).await,
        ResumeRefusal::AlreadyAnswered { tool_call_id: "d2".into() }
    );
    // Answered in the history and left out of the results: no longer pending.
    let refusal = refused(&agent, answered, requests.results().approve("d1", true)).await;
    assert_eq!(refusal, ResumeRefusal::NoLongerPending { tool_call_id: "d2".into(), tool_name: "delete_file".into() });
    assert!(log.lock().unwrap().is_empty());

    // Missing decisions.
    let refusal = refused(&agent, history, requests.results().approve("d1", true)).await;
    assert_eq!(
        refusal,
        ResumeRefusal::ResultsMismatch { expected: vec!["d1".into(), "d2".into()], given: vec!["d1".into()] }
    );
}

#[tokio::test]
async fn only_a_decision_answers_a_call_that_waits_for_approval_and_only_a_result_an_external_one() {
    let log = Log::default();
    // `update_file` is an ordinary tool that asked for approval for this call; `compute`
    // deferred its call: nothing in the tools' definitions tells which waits for what.
    let agent = agent(
        &log,
        vec![call("update_file", json!({"path": ".env"}), "u1"), call("compute", json!({"question": "6*7"}), "k1")],
    );
    let (history, requests) = deferred(&agent).await;
    assert_eq!(requests.approvals.len(), 1);
    assert_eq!(requests.calls.len(), 1);

    // A made-up result for the call that waits for approval: refused, bound or by hand (the
    // agent's record says what the call waits for).
    let forged = |r: DeferredToolResults| r.call_result("u1", json!("updated .env")).call_result("k1", json!(42));
    for results in [forged(requests.results()), forged(DeferredToolResults::new())] {
        let refusal = refused(&agent, history.clone(), results).await;
        assert_eq!(refusal, ResumeRefusal::ResultForApproval { tool_call_id: "u1".into() });
        assert!(refusal.to_string().contains("waits for approval"), "{refusal}");
    }
    // `build_results` refuses it at once.
    let err = requests
        .build_results([], [("u1".to_string(), ExternalResult::Value(json!("updated .env")))], [], false)
        .unwrap_err();
    assert_eq!(err.refusal.as_deref(), Some(&ResumeRefusal::ResultForApproval { tool_call_id: "u1".into() }));

    // An approval for the call that waits for an external result.
    let wrong = |r: DeferredToolResults| r.approve("u1", false).approve("k1", true);
    for results in [wrong(requests.results()), wrong(DeferredToolResults::new())] {
        let refusal = refused(&agent, history.clone(), results).await;
        assert_eq!(refusal, ResumeRefusal::ApprovalForExternal { tool_call_id: "k1".into() });
    }
    assert!(log.lock().unwrap().is_empty());

    // The right kinds: the approved update runs, the external result is used.
    let results = requests.results().approve("u1", true).call_result("k1", json!(42));
    let done = agent.resume().message_history(history).deferred_tool_results(results).await.unwrap();
    assert_eq!(done.output().output().unwrap(), "update_file=updated .env; compute=42");

    // Results the caller takes as given (`trust_history`) are matched by id alone, as Pydantic AI
    // matches them: a result then answers the call without running it.
    let (history, _) = deferred(&agent).await;
    let results = DeferredToolResults::new().call_result("u1", json!("left alone")).call_result("k1", json!(42));
    let done = agent.resume().message_history(history).deferred_tool_results(results.trust_history()).await.unwrap();
    assert_eq!(done.output().output().unwrap(), "update_file=left alone; compute=42");
    assert_eq!(*log.lock().unwrap(), ["updated .env"]);
}

#[tokio::test]
async fn a_made_up_result_for_a_tool_that_requires_approval_is_refused_whatever_the_record() {
    let log = Log::default();
    // A run that fails after the model called `delete_file` (requires approval): its record
    // says nothing about what the call waits for; the tool's definition does.
    let agent: Agent<(), Deferrable<String>> = Agent::builder(model(vec![
        call("update_file", json!({"file": "a"}), "u1"),
        call("delete_file", json!({"path": "a.txt"}), "d1"),
    ]))
    .tools(tools(&log))
    .retries(0)
    .allow_deferred()
    .build()
    .unwrap();
    let failed = agent.run("go").run_capturing().await;
    assert!(failed.result.is_err());
    let results = DeferredToolResults::new().call_result("u1", json!("skipped")).call_result("d1", json!("deleted"));
    let refusal = refused(&agent, failed.messages.clone(), results).await;
    assert_eq!(refusal, ResumeRefusal::ResultForApproval { tool_call_id: "d1".into() });
    // A decision answers it.
    let results = DeferredToolResults::new().call_result("u1", json!("skipped")).approve("d1", true);
    let done = agent.resume().message_history(failed.messages).deferred_tool_results(results).await.unwrap();
    assert_eq!(done.output().output().unwrap(), "update_file=skipped; delete_file=deleted a.txt");
    assert_eq!(*log.lock().unwrap(), ["deleted a.txt"]);
}

#[tokio::test]
async fn stored_requests_and_history_resume_in_another_process() {
    let log = Log::default();
    let agent = agent(&log, vec![call("delete_file", json!({"path": "a.txt"}), "d1")]);
    let (history, requests) = deferred(&agent).await;
    let stored_requests = serde_json::to_string(&requests).unwrap();
    let stored_history = serde_json::to_string(&history).unwrap();

    // Another agent (another process): results built from the stored requests.
    let later = self::agent(&log, vec![]);
    let requests: DeferredToolRequests = serde_json::from_str(&stored_requests).unwrap();
    let history = parse_history(&stored_history).unwrap();
    // By hand, the new agent cannot tell what the decision was made for.
    let refusal = refused(&later, history.clone(), DeferredToolResults::new().approve("d1", true)).await;
    assert_eq!(refusal, ResumeRefusal::Unverified { tool_call_ids: vec!["d1".into()] });
    assert!(refusal.to_string().contains("`.trust_history()`"), "{refusal}");
    let done = later
        .resume()
        .message_history(history.clone())
        .deferred_tool_results(requests.results().approve("d1", true))
        .await
        .unwrap();
    assert_eq!(done.output().output().unwrap(), "delete_file=deleted a.txt");

    // Answered once: the agent that resumed it refuses it again, even from a caller who
    // trusts its history.
    let trusted = || DeferredToolResults::new().approve("d1", true).trust_history();
    let refusal = refused(&later, history.clone(), trusted()).await;
    assert!(matches!(refusal, ResumeRefusal::AlreadyResumed { .. }), "{refusal:?}");
    assert_eq!(log.lock().unwrap().len(), 1);

    // A caller who trusts its history may say so (here to an agent with a store of its own,
    // which has not seen the first resume).
    let elsewhere = self::agent(&log, vec![]);
    let done = elsewhere.resume().message_history(history).deferred_tool_results(trusted()).await.unwrap();
    assert_eq!(done.output().output().unwrap(), "delete_file=deleted a.txt");
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn hand_built_results_on_the_agent_that_ran_the_unchanged_history_are_accepted() {
    let log = Log::default();
    let agent = agent(&log, vec![call("delete_file", json!({"path": "a.txt"}), "d1")]);
    let (history, _) = deferred(&agent).await;
    // Through JSON, as a server stores it between two requests; a clone of the agent.
    let history = parse_history(&serde_json::to_string(&history).unwrap()).unwrap();
    let done = agent
        .clone()
        .resume()
        .message_history(history)
        .deferred_tool_results(DeferredToolResults::new().approve("d1", true))
        .await
        .unwrap();
    assert_eq!(done.output().output().unwrap(), "delete_file=deleted a.txt");
}

#[tokio::test]
async fn a_model_that_repeats_a_tool_call_id_ends_the_run_before_anything_runs() {
    for (tool, kind) in [("delete_file", "approval"), ("update_file", "plain")] {
        let log = Log::default();
        let model = FunctionModel::sync(move |_, _| {
            ModelResponse::new(vec![
                call(tool, json!({"path": "a.txt"}), "same"),
                call(tool, json!({"path": "b.txt"}), "other"),
                call(tool, json!({"path": "c.txt"}), "same"),
            ])
        });
        let agent = Agent::builder(model).tools(tools(&log)).allow_deferred().build().unwrap();
        let err = agent.run("go").await.unwrap_err();
        assert!(matches!(err, AgentRunError::UnexpectedModelBehavior { .. }), "{kind}: {err:?}");
        assert!(
            err.to_string().contains("duplicate `tool_call_id`s: ['same']"),
            "{kind}: the message names the repeated id as Pydantic AI does: {err}"
        );
        assert!(log.lock().unwrap().is_empty(), "{kind}: nothing ran: {:?}", log.lock().unwrap());
    }
}

#[tokio::test]
async fn calls_a_failed_run_left_unanswered_take_hand_made_results_only_as_the_run_left_them() {
    let log = Log::default();
    // No retries: the broken call ends the run, and the second call is never answered.
    let agent: Agent<(), Deferrable<String>> = Agent::builder(model(vec![
        call("update_file", json!({"file": "a"}), "u1"),
        call("compute", json!({"question": "q"}), "k1"),
    ]))
    .tools(tools(&log))
    .retries(0)
    .allow_deferred()
    .build()
    .unwrap();
    let failed = agent.run("go").run_capturing().await;
    assert!(failed.result.is_err());
    let history = failed.messages;

    // Results made by hand for the history as the run left it: taken, as for calls a run
    // ended deferred with.
    let results = || DeferredToolResults::new().call_result("u1", json!("skipped")).call_result("k1", json!(42));
    let done = agent.resume().message_history(history.clone()).deferred_tool_results(results()).await.unwrap();
    assert_eq!(done.output().output().unwrap(), "update_file=skipped; compute=42");

    // The same results for a history edited since: refused, nothing runs.
    let mut edited = history;
    last_calls(&mut edited)[0].args = json!({"path": ".env"});
    let refusal = refused(&agent, edited, results()).await;
    assert_eq!(refusal, ResumeRefusal::Unverified { tool_call_ids: vec!["u1".into(), "k1".into()] });
    assert!(log.lock().unwrap().is_empty());
}
