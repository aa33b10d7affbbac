//! An approval is used once: the calls a run ended with are answered by one resume. Resuming
//! the same history again — with the same decision or another, bound to the requests or built
//! by hand, on the agent, a clone of it or an agent sharing its store — is refused before
//! anything runs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith::deferred::{
    Consumption, DeferralId, DeferralStore, DeferralStoreError, DeferredToolRequests, DeferredToolResults,
    MemoryDeferralStore, ResumeRefusal,
};
use toolsmith::messages::{ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart};
use toolsmith::prelude::*;

type Log = Arc<Mutex<Vec<String>>>;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RefundArgs {
    order: String,
}

/// `refund_order` requires approval and logs each refund.
fn refund(log: &Log) -> Tool<()> {
    let l = log.clone();
    Tool::new("refund_order", move |_ctx: RunContext<()>, a: RefundArgs| {
        let l = l.clone();
        async move {
            l.lock().unwrap().push(a.order.clone());
            Ok::<_, ToolError>(format!("refunded {}", a.order))
        }
    })
    .requires_approval(true)
}

/// Calls `refund_order` (always with the same id and arguments), then answers with what the
/// tool returned.
fn model() -> FunctionModel {
    FunctionModel::sync(|messages, _| {
        let last_is_prompt = matches!(messages.last(), Some(ModelMessage::Request(r))
            if r.parts.iter().any(|p| matches!(p, ModelRequestPart::UserPrompt(_))));
        if last_is_prompt {
            return ModelResponse::new(vec![ModelResponsePart::ToolCall(ToolCallPart::new(
                "refund_order",
                json!({"order": "A-1"}),
                "r1",
            ))]);
        }
        ModelResponse::text("done")
    })
}

fn builder(log: &Log) -> toolsmith::AgentBuilder<(), String> {
    Agent::builder(model()).tool(refund(log))
}

fn agent(log: &Log) -> Agent<(), Deferrable<String>> {
    builder(log).allow_deferred().build().unwrap()
}

async fn deferred(agent: &Agent<(), Deferrable<String>>) -> (Vec<ModelMessage>, DeferredToolRequests) {
    let first = agent.run("refund my order").await.unwrap();
    (first.all_messages().to_vec(), first.output().deferred().expect("waiting for approval").clone())
}

async fn resume(
    agent: &Agent<(), Deferrable<String>>,
    history: &[ModelMessage],
    results: DeferredToolResults,
) -> Result<RunResult<Deferrable<String>>, AgentRunError> {
    agent.resume().message_history(history.to_vec()).deferred_tool_results(results).await
}

fn refusal(outcome: Result<RunResult<Deferrable<String>>, AgentRunError>) -> ResumeRefusal {
    match outcome {
        Err(AgentRunError::User(e)) => *e.refusal.unwrap_or_else(|| panic!("a user error without a refusal")),
        Err(other) => panic!("expected a refusal, got {other:?}"),
        Ok(r) => panic!("expected a refusal, the run went on: {:?}", r.output()),
    }
}

#[tokio::test]
async fn the_same_approval_resumed_twice_runs_the_call_once() {
    let log = Log::default();
    let agent = agent(&log);
    let (history, requests) = deferred(&agent).await;
    let id = requests.id().expect("a run's requests have an identity").clone();

    let done = resume(&agent, &history, requests.results().approve("r1", true)).await.unwrap();
    assert_eq!(done.output().output().unwrap(), "done");
    assert_eq!(*log.lock().unwrap(), ["A-1"]);

    // Again with the same decision: refused, whoever built the results and however.
    let again = refusal(resume(&agent, &history, requests.results().approve("r1", true)).await);
    let ResumeRefusal::AlreadyResumed { deferral_id, tool_call_ids, by_run } = &again else { panic!("{again:?}") };
    assert_eq!(deferral_id, id.as_str());
    assert_eq!(tool_call_ids, &["r1"]);
    assert!(by_run.is_some());
    assert!(again.to_string().contains("already answered"), "{again}");
    for results in [
        DeferredToolResults::new().approve("r1", true),
        DeferredToolResults::new().approve("r1", true).trust_history(),
        requests.results().approve("r1", ToolApproval::denied()),
        requests.build_results([], [], [], true).unwrap(),
    ] {
        let refused = refusal(resume(&agent.clone(), &history, results).await);
        assert!(matches!(refused, ResumeRefusal::AlreadyResumed { .. }), "{refused:?}");
    }
    // Through JSON, as a server keeps them between two requests.
    let stored: DeferredToolRequests = serde_json::from_str(&serde_json::to_string(&requests).unwrap()).unwrap();
    assert_eq!(stored.id(), Some(&id));
    let history_back = toolsmith::messages::parse_history(&serde_json::to_string(&history).unwrap()).unwrap();
    let refused = refusal(resume(&agent, &history_back, stored.results().approve("r1", true)).await);
    assert!(matches!(refused, ResumeRefusal::AlreadyResumed { .. }), "{refused:?}");
    assert_eq!(*log.lock().unwrap(), ["A-1"], "refunded once");

    // The conversation goes on from the history the resume returned: a new deferral.
    let mut next = done.all_messages().to_vec();
    let later = agent.run("and the other one").message_history(next.clone()).await.unwrap();
    let requests = later.output().deferred().unwrap().clone();
    assert_ne!(requests.id(), Some(&id));
    next = later.all_messages().to_vec();
    resume(&agent, &next, requests.results().approve("r1", true)).await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["A-1", "A-1"]);
}

#[tokio::test]
async fn hand_built_results_are_answered_once_too() {
    let log = Log::default();
    let agent = agent(&log);
    let (history, requests) = deferred(&agent).await;
    // First by hand (the agent's record binds them), then from the requests.
    resume(&agent, &history, DeferredToolResults::new().approve("r1", true)).await.unwrap();
    let refused = refusal(resume(&agent, &history, requests.results().approve("r1", true)).await);
    assert!(matches!(refused, ResumeRefusal::AlreadyResumed { .. }), "{refused:?}");
    let refused = refusal(resume(&agent, &history, DeferredToolResults::new().approve("r1", true)).await);
    assert!(matches!(refused, ResumeRefusal::AlreadyResumed { .. }), "{refused:?}");
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn conversations_with_the_same_calls_are_each_answered_once() {
    // The model makes the same call, under the same id, in every conversation: each deferral is
    // still its own (the response's run differs).
    let log = Log::default();
    let agent = agent(&log);
    let (first, a) = deferred(&agent).await;
    let (second, b) = deferred(&agent).await;
    assert_ne!(a.id(), b.id());
    resume(&agent, &first, a.results().approve("r1", true)).await.unwrap();
    resume(&agent, &second, b.results().approve("r1", true)).await.unwrap();
    // By hand too: the record of each conversation is found.
    let (third, _) = deferred(&agent).await;
    resume(&agent, &third, DeferredToolResults::new().approve("r1", true)).await.unwrap();
    assert_eq!(log.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn agents_sharing_a_store_answer_a_deferral_once() {
    let log = Log::default();
    let store = Arc::new(MemoryDeferralStore::new());
    let one = builder(&log).deferral_store(store.clone()).allow_deferred().build().unwrap();
    let two = builder(&log).deferral_store(store).allow_deferred().build().unwrap();
    let (history, requests) = deferred(&one).await;
    resume(&two, &history, requests.results().approve("r1", true)).await.unwrap();
    let refused = refusal(resume(&one, &history, requests.results().approve("r1", true)).await);
    assert!(matches!(refused, ResumeRefusal::AlreadyResumed { .. }), "{refused:?}");
    assert_eq!(log.lock().unwrap().len(), 1);
}

/// A store of the application's: counts what it is asked, fails when told to.
#[derive(Default)]
struct Counting {
    asked: AtomicUsize,
    failing: std::sync::atomic::AtomicBool,
    inner: MemoryDeferralStore,
}

impl DeferralStore for Counting {
    async fn consume(&self, deferral: &DeferralId, run_id: &str) -> Result<Consumption, DeferralStoreError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if self.failing.load(Ordering::SeqCst) {
            return Err(DeferralStoreError::new("the database is down"));
        }
        self.inner.consume(deferral, run_id).await
    }
}

#[tokio::test]
async fn the_application_store_is_asked_and_a_failing_store_runs_nothing() {
    let log = Log::default();
    let store = Arc::new(Counting::default());
    let agent = builder(&log).deferral_store(store.clone()).allow_deferred().build().unwrap();
    let (history, requests) = deferred(&agent).await;

    store.failing.store(true, Ordering::SeqCst);
    let refused = refusal(resume(&agent, &history, requests.results().approve("r1", true)).await);
    assert_eq!(
        refused,
        ResumeRefusal::StoreFailed {
            deferral_id: requests.id().unwrap().to_string(),
            message: "the database is down".into()
        }
    );
    assert!(log.lock().unwrap().is_empty());

    store.failing.store(false, Ordering::SeqCst);
    resume(&agent, &history, requests.results().approve("r1", true)).await.unwrap();
    assert_eq!(store.asked.load(Ordering::SeqCst), 2);
    // A refusal for another reason (an edited history) does not reach the store.
    let mut edited = history.clone();
    if let Some(ModelMessage::Response(r)) = edited.last_mut()
        && let ModelResponsePart::ToolCall(c) = &mut r.parts[0]
    {
        c.args = json!({"order": "B-2"});
    }
    let refused = refusal(resume(&agent, &edited, requests.results().approve("r1", true)).await);
    assert!(matches!(refused, ResumeRefusal::CallChanged { .. }), "{refused:?}");
    assert_eq!(store.asked.load(Ordering::SeqCst), 2);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn calls_settled_inline_are_not_a_resume() {
    let log = Log::default();
    let approve_all = toolsmith::capability::HandleDeferredToolCalls::new(|_ctx, requests: &DeferredToolRequests| {
        Some(requests.build_results([], [], [], true).unwrap())
    });
    let store = Arc::new(Counting::default());
    let agent = builder(&log).capability(approve_all).deferral_store(store.clone()).build().unwrap();
    assert_eq!(agent.run("refund").await.unwrap().output(), "done");
    assert_eq!(agent.run("refund").await.unwrap().output(), "done");
    assert_eq!(log.lock().unwrap().len(), 2);
    assert_eq!(store.asked.load(Ordering::SeqCst), 0);
}

/// `pay` requires approval, and once approved it is carried out elsewhere: it defers.
fn pay(log: &Log) -> Tool<()> {
    let l = log.clone();
    Tool::new("refund_order", move |_ctx: RunContext<()>, a: RefundArgs| {
        let l = l.clone();
        async move {
            l.lock().unwrap().push(format!("queued {}", a.order));
            Err::<String, ToolError>(ToolError::CallDeferred(toolsmith::tool::CallDeferred::default()))
        }
    })
    .requires_approval(true)
}

#[tokio::test]
async fn a_call_approved_then_deferred_by_its_tool_is_a_deferral_of_its_own() {
    let log: Log = Arc::default();
    let agent = Agent::builder(model()).tool(pay(&log)).allow_deferred().build().unwrap();
    let first = agent.run("refund A-1").await.unwrap();
    let approval = first.deferred().expect("waits for approval").clone();
    assert_eq!(approval.approvals.len(), 1);

    // Approved: the tool runs and defers the same call, now waiting for an outside result.
    let second = agent
        .resume()
        .message_history(first.all_messages().to_vec())
        .deferred_tool_results(approval.results().approve("r1", toolsmith::deferred::ToolApproval::approved()))
        .await
        .unwrap();
    let outside = second.deferred().expect("waits for the outside result").clone();
    assert_eq!((outside.approvals.len(), outside.calls.len()), (0, 1));
    assert_ne!(outside.id(), approval.id(), "a deferral of its own");
    assert_eq!(*log.lock().unwrap(), ["queued A-1"]);

    // Its result is a resume of its own, used once.
    let results = outside.results().call_result("r1", toolsmith::deferred::ExternalResult::Value(json!("paid")));
    let done = agent
        .resume()
        .message_history(second.all_messages().to_vec())
        .deferred_tool_results(results.clone())
        .await
        .unwrap();
    assert_eq!(done.final_output().map(String::as_str), Some("done"));
    let again = agent
        .resume()
        .message_history(second.all_messages().to_vec())
        .deferred_tool_results(results)
        .await
        .unwrap_err();
    assert!(
        matches!(
            again,
            AgentRunError::User(UserError { refusal: Some(ref r), .. }) if matches!(**r, ResumeRefusal::AlreadyResumed { .. })
        ),
        "{again}"
    );
}
