//! BackgroundTools through the public API: delivery with the next request, at the end of a run
//! and in a later run, completion order, cancellation, the concurrency limit, failures and panics.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::Semaphore;
use toolsmith::agent::Deferrable;
use toolsmith::capability::background_tools::{RESULT_ORIGIN, RUN_IN_BACKGROUND};
use toolsmith::capability::{BackgroundTools, CapabilityRegistry, CapabilitySpec};
use toolsmith::deferred::ToolApproval;
use toolsmith::messages::{
    ModelMessage, ModelRequestPart, ModelResponse, ModelResponsePart, ToolCallPart, UserContent, UserPromptContent,
};
use toolsmith::prelude::*;
use toolsmith::tool::ToolOutput;

const EMPTY: fn() -> Value = || json!({"type": "object", "properties": {}});

/// A tool marked `{"background": true}` that waits for `gate` (if any), yields `yields` times, then
/// returns `value`.
fn background(name: &'static str, value: &'static str, gate: Option<Arc<Semaphore>>, yields: usize) -> Tool<()> {
    Tool::from_schema(name, "Slow.", EMPTY(), move |_ctx, _args| {
        let gate = gate.clone();
        async move {
            if let Some(gate) = gate {
                let _ = gate.acquire().await;
            }
            for _ in 0..yields {
                tokio::task::yield_now().await;
            }
            Ok(ToolOutput::Value(json!(value)))
        }
    })
    .metadata(json!({"background": true}))
}

/// A foreground tool that opens `gate`.
fn opener(name: &'static str, gate: Arc<Semaphore>) -> Tool<()> {
    Tool::from_schema(name, "Release.", EMPTY(), move |_ctx, _args| {
        gate.add_permits(1_000);
        async { Ok(ToolOutput::Value(json!("released"))) }
    })
}

fn call(tool: &str, id: &str) -> ModelResponsePart {
    ModelResponsePart::ToolCall(ToolCallPart::new(tool, json!({}), id))
}

/// The delivered frames (the text of each user prompt carrying a background result) in `messages`.
fn frames(messages: &[ModelMessage]) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages {
        let ModelMessage::Request(r) = m else { continue };
        for p in &r.parts {
            if let ModelRequestPart::UserPrompt(u) = p
                && let UserPromptContent::Parts(items) = &u.content
                && let Some(UserContent::TextContent(t)) = items.first()
                && t.metadata.as_ref().and_then(|m| m.get("origin")) == Some(&json!(RESULT_ORIGIN))
            {
                out.push(t.content.clone());
            }
        }
    }
    out
}

/// Answers request k with `script[k]` (text "done" after it); records the frames each request
/// carried.
fn scripted(script: Vec<Vec<ModelResponsePart>>) -> (FunctionModel, Arc<Mutex<Vec<Vec<String>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let model = FunctionModel::sync(move |messages, _| {
        let mut log = log.lock().unwrap();
        let k = log.len();
        log.push(frames(messages));
        match script.get(k) {
            Some(parts) => ModelResponse::new(parts.clone()),
            None => ModelResponse::text(format!("answer {k}")),
        }
    });
    (model, seen)
}

fn text(s: &str) -> ModelResponsePart {
    ModelResponsePart::Text(toolsmith::messages::TextPart::new(s))
}

#[tokio::test]
async fn a_result_is_delivered_with_the_next_request() {
    let (model, seen) = scripted(vec![vec![call("research", "c1")]]);
    let agent = Agent::builder(model)
        .tool(background("research", "tides follow the moon", None, 0))
        .capability(BackgroundTools::new())
        .build()
        .unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(result.output(), "answer 1");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[1],
        vec!["<tool_result tool_name=\"research\" tool_call_id=\"c1\">\ntides follow the moon\n</tool_result>"]
    );
    // The call itself answered at once, in the harness's words.
    let started = result.all_messages().iter().find_map(|m| match m {
        ModelMessage::Request(r) => r.parts.iter().find_map(|p| match p {
            ModelRequestPart::ToolReturn(t) => Some(t.content.clone()),
            _ => None,
        }),
        _ => None,
    });
    assert_eq!(
        started,
        Some(json!(
            "Tool 'research' is running in background (task c1). This call is pending. Do not repeat or poll it; its result will arrive automatically. Continue independent work, or end your response."
        ))
    );
    // The result is a request of its own, kept through Pydantic AI's history JSON.
    let json = toolsmith::messages::history_to_json(result.all_messages());
    assert!(json.contains("\"kind\":\"text-content\""), "{json}");
    let parsed = toolsmith::messages::parse_history(&json).unwrap();
    assert_eq!(frames(&parsed), seen[1]);
    assert_eq!(result.usage().tool_calls, 1);
}

#[tokio::test]
async fn the_run_waits_for_a_task_still_running_when_the_model_ends() {
    let (model, seen) = scripted(vec![vec![call("crunch", "c1")], vec![text("waiting")]]);
    let agent = Agent::builder(model)
        .tool(background("crunch", "42", None, 200))
        .capability(BackgroundTools::new())
        .build()
        .unwrap();
    let result = agent.run("go").await.unwrap();
    // The model's "waiting" did not end the run: it was asked again with the result.
    assert_eq!(result.output(), "answer 2");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert!(seen[1].is_empty());
    assert_eq!(seen[2].len(), 1);
    assert!(seen[2][0].contains("\n42\n"));
}

#[tokio::test]
async fn results_are_delivered_in_the_order_the_tasks_finish() {
    let gates: Vec<Arc<Semaphore>> = (0..3).map(|_| Arc::new(Semaphore::new(0))).collect();
    let (model, seen) = scripted(vec![
        vec![call("a", "ca"), call("b", "cb"), call("c", "cc")],
        vec![call("open_c", "o1")],
        vec![call("open_a", "o2"), call("open_b", "o3")],
    ]);
    let agent = Agent::builder(model)
        .tool(background("a", "A", Some(gates[0].clone()), 0))
        .tool(background("b", "B", Some(gates[1].clone()), 5))
        .tool(background("c", "C", Some(gates[2].clone()), 0))
        .tool(opener("open_a", gates[0].clone()))
        .tool(opener("open_b", gates[1].clone()))
        .tool(opener("open_c", gates[2].clone()))
        .capability(BackgroundTools::new())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let delivered: Vec<Vec<String>> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|frames| frames.iter().map(|f| f.lines().nth(1).unwrap_or_default().to_string()).collect())
        .collect();
    // c first (released first), then a (no work left), then b (still yielding when a finished).
    assert_eq!(delivered[2], vec!["C"]);
    assert_eq!(delivered.last().unwrap(), &vec!["C", "A", "B"]);
}

/// A tool that needs approval, to end a run deferred while a task runs.
fn needs_approval() -> Tool<()> {
    Tool::from_schema("delete", "Delete.", EMPTY(), |_ctx, _args| async { Ok(ToolOutput::Value(json!("deleted"))) })
        .requires_approval(true)
}

/// Yields until `tools` has no task running (a bounded number of times).
async fn settle(tools: &BackgroundTools) {
    for _ in 0..10_000 {
        if tools.running().is_empty() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("the background tasks did not finish");
}

#[tokio::test]
async fn a_result_not_delivered_when_a_run_pauses_is_delivered_in_the_next_run() {
    let gate = Arc::new(Semaphore::new(0));
    let (model, seen) = scripted(vec![vec![call("report", "c1"), call("delete", "c2")]]);
    let tools = BackgroundTools::new();
    let agent = Agent::builder(model)
        .tool(background("report", "quarterly numbers", Some(gate.clone()), 0))
        .tool(needs_approval())
        .capability(tools.clone())
        .allow_deferred()
        .build()
        .unwrap();
    let first = agent.run("go").await.unwrap();
    let Deferrable::Deferred(requests) = first.output() else { panic!("expected a deferred output") };
    assert_eq!(tools.running().len(), 1);
    assert_eq!(tools.running()[0].task_id, "c1");
    assert!(tools.undelivered().is_empty());
    gate.add_permits(1);
    settle(&tools).await;
    // Finished, waiting for the conversation's next request.
    let waiting = tools.undelivered();
    assert_eq!((waiting[0].task_id.as_str(), waiting[0].tool_name.as_str()), ("c1", "report"));
    let results = requests.results().approve("c2", ToolApproval::approved());
    let second =
        agent.resume().message_history(first.all_messages().to_vec()).deferred_tool_results(results).await.unwrap();
    assert!(matches!(second.output(), Deferrable::Output(_)));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[1],
        vec!["<tool_result tool_name=\"report\" tool_call_id=\"c1\">\nquarterly numbers\n</tool_result>"]
    );
    assert!(tools.undelivered().is_empty());
}

#[tokio::test]
async fn a_conversation_that_will_not_go_on_is_discarded() {
    let gate = Arc::new(Semaphore::new(0));
    let done = Arc::new(Semaphore::new(0));
    let (model, _) = scripted(vec![vec![call("slow", "c1"), call("quick", "c2"), call("delete", "c3")]]);
    let tools = BackgroundTools::new();
    let agent = Agent::builder(model)
        .tool(background("slow", "never", Some(gate), 0))
        .tool(background("quick", "fast", Some(done.clone()), 0))
        .tool(needs_approval())
        .capability(tools.clone())
        .allow_deferred()
        .build()
        .unwrap();
    let first = agent.run("go").await.unwrap();
    done.add_permits(1);
    for _ in 0..10_000 {
        if tools.running().len() == 1 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(tools.undelivered().len(), 1);
    let conversation = tools.running()[0].conversation_id.clone();
    assert!(first.all_messages().iter().all(|m| match m {
        ModelMessage::Request(r) => r.conversation_id.as_deref().is_none_or(|c| c == conversation),
        ModelMessage::Response(r) => r.conversation_id.as_deref().is_none_or(|c| c == conversation),
    }));
    assert_eq!(tools.discard("another conversation"), 0);
    assert_eq!(tools.discard(&conversation), 2);
    assert!(tools.running().is_empty() && tools.undelivered().is_empty());
}

#[tokio::test]
async fn a_cancelled_task_is_reported_to_the_model() {
    let gate = Arc::new(Semaphore::new(0));
    let (model, seen) = scripted(vec![vec![call("report", "c1"), call("delete", "c2")]]);
    let tools = BackgroundTools::new();
    let agent = Agent::builder(model)
        .tool(background("report", "never", Some(gate), 0))
        .tool(needs_approval())
        .capability(tools.clone())
        .allow_deferred()
        .build()
        .unwrap();
    let first = agent.run("go").await.unwrap();
    let Deferrable::Deferred(requests) = first.output() else { panic!("expected a deferred output") };
    assert!(!tools.cancel("no-such-task"));
    assert!(tools.cancel("c1"));
    assert!(tools.running().is_empty());
    assert_eq!(tools.cancel_all(), 0);
    let results = requests.results().approve("c2", ToolApproval::approved());
    agent.resume().message_history(first.all_messages().to_vec()).deferred_tool_results(results).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[1],
        vec![
            "<tool_result tool_name=\"report\" tool_call_id=\"c1\" outcome=\"failed\">\nThe task was cancelled.\n</tool_result>"
        ]
    );
}

#[tokio::test]
async fn at_most_max_concurrent_tasks_run_at_once() {
    let active = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let counted = |name: &'static str| {
        let (active, peak) = (active.clone(), peak.clone());
        Tool::from_schema(name, "Work.", EMPTY(), move |_ctx, _args| {
            let (active, peak) = (active.clone(), peak.clone());
            async move {
                let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                for _ in 0..20 {
                    tokio::task::yield_now().await;
                }
                active.fetch_sub(1, Ordering::SeqCst);
                Ok(ToolOutput::Value(json!(name)))
            }
        })
        .metadata(json!({"background": true}))
    };
    let run = |limit: Option<usize>| {
        let (model, _) =
            scripted(vec![vec![call("w1", "c1"), call("w2", "c2"), call("w3", "c3")], vec![text("waiting")]]);
        let mut tools = BackgroundTools::new();
        if let Some(n) = limit {
            tools = tools.max_concurrent(n).unwrap();
        }
        let agent =
            Agent::builder(model).tool(counted("w1")).tool(counted("w2")).tool(counted("w3")).capability(tools).build();
        agent.unwrap()
    };
    let agent = run(Some(1));
    let result = agent.run("go").await.unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 1);
    // Every result was delivered: the run waited for the queued tasks too.
    assert_eq!(frames(result.all_messages()).len(), 3);
    // Without the limit the same calls overlap.
    peak.store(0, Ordering::SeqCst);
    let agent = run(None);
    agent.run("go").await.unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 3);
    assert!(BackgroundTools::<()>::new().max_concurrent(0).is_err());
}

#[tokio::test]
async fn a_failing_or_panicking_task_ends_the_run_with_an_error() {
    let failing = Tool::from_schema("charge", "Charge.", EMPTY(), |_ctx, _args| async {
        Err(ToolError::failed("the payment service is down"))
    })
    .metadata(json!({"background": true}));
    let panicking = Tool::from_schema("explode", "Explode.", EMPTY(), |_ctx, _args| async {
        if true {
            panic!("boom in the background");
        }
        Ok(ToolOutput::Value(json!("never")))
    })
    .metadata(json!({"background": true}));
    for (tool, name) in [(failing, "charge"), (panicking, "explode")] {
        let (model, _) = scripted(vec![vec![call(name, "c1")]]);
        let agent = Agent::builder(model).tool(tool).capability(BackgroundTools::new()).build().unwrap();
        match agent.run("go").await {
            Err(AgentRunError::ToolFailed { tool, message, .. }) => {
                assert_eq!((tool.as_str(), name), ("charge", "charge"));
                assert_eq!(message, "the payment service is down");
            }
            Err(AgentRunError::ToolPanicked { tool, message }) => {
                assert_eq!((tool.as_str(), name), ("explode", "explode"));
                assert!(message.contains("boom in the background"), "{message}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_retry_from_the_background_goes_back_to_the_model_and_counts() {
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = attempts.clone();
    let flaky = Tool::from_schema("flaky", "Flaky.", EMPTY(), move |ctx: RunContext<()>, _args| {
        counter.fetch_add(1, Ordering::SeqCst);
        let retry = ctx.retry;
        async move {
            if retry == 0 {
                Err(ModelRetry::new("busy, try again").into())
            } else {
                Ok(ToolOutput::Value(json!(format!("ok after {retry}"))))
            }
        }
    })
    .metadata(json!({"background": true}));
    let (model, seen) = scripted(vec![vec![call("flaky", "c1")], vec![call("flaky", "c2")]]);
    let agent = Agent::builder(model).tool(flaky).capability(BackgroundTools::new()).build().unwrap();
    agent.run("go").await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[1],
        vec![
            "<tool_result tool_name=\"flaky\" tool_call_id=\"c1\" outcome=\"failed\">\nbusy, try again\n</tool_result>"
        ]
    );
    assert!(seen[2][1].contains("\nok after 1\n"), "{:?}", seen[2]);
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_optional_tool_runs_in_the_background_when_the_model_asks() {
    let args_seen = Arc::new(Mutex::new(Vec::new()));
    let log = args_seen.clone();
    let fetch = Tool::from_schema(
        "fetch",
        "Fetch.",
        json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"], "additionalProperties": false}),
        move |_ctx, args: Value| {
            log.lock().unwrap().push(args.clone());
            async move { Ok(ToolOutput::Value(args["url"].clone())) }
        },
    )
    .metadata(json!({"background": "optional"}));
    let schemas = Arc::new(Mutex::new(Vec::new()));
    let schema_log = schemas.clone();
    let model = FunctionModel::sync(move |messages, info| {
        schema_log.lock().unwrap().push(info.function_tools[0].parameters_json_schema.clone());
        match messages.len() {
            1 => ModelResponse::new(vec![
                ModelResponsePart::ToolCall(ToolCallPart::new(
                    "fetch",
                    json!({"url": "a", RUN_IN_BACKGROUND: true}),
                    "c1",
                )),
                ModelResponsePart::ToolCall(ToolCallPart::new("fetch", json!({"url": "b"}), "c2")),
            ]),
            _ => ModelResponse::text("done"),
        }
    });
    let agent = Agent::builder(model).tool(fetch).capability(BackgroundTools::new()).build().unwrap();
    let result = agent.run("go").await.unwrap();
    // The model is offered the flag; the tool never sees it.
    assert_eq!(schemas.lock().unwrap()[0]["properties"][RUN_IN_BACKGROUND]["type"], "boolean");
    let mut seen = args_seen.lock().unwrap().clone();
    seen.sort_by_key(|a| a["url"].as_str().map(String::from));
    assert_eq!(seen, vec![json!({"url": "a"}), json!({"url": "b"})]);
    let returns: Vec<Value> = result
        .all_messages()
        .iter()
        .flat_map(|m| match m {
            ModelMessage::Request(r) => r
                .parts
                .iter()
                .filter_map(|p| match p {
                    ModelRequestPart::ToolReturn(t) => Some(t.content.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    assert!(returns[0].as_str().unwrap().starts_with("Tool 'fetch' is running in background (task c1)"));
    assert_eq!(returns[1], json!("b"));
    assert_eq!(frames(result.all_messages()).len(), 1);
}

#[test]
fn the_spec_entry_takes_the_harness_options() {
    let registry = CapabilityRegistry::<()>::new();
    for ok in [json!(["BackgroundTools"]), json!([{"BackgroundTools": {"tools": ["a", "b"], "max_concurrent": 2}}])] {
        let spec = CapabilitySpec::from_value(ok).unwrap();
        assert_eq!(registry.load(&spec).unwrap().capabilities.len(), 1);
    }
    for bad in [json!([{"BackgroundTools": {"max_concurrent": 0}}]), json!([{"BackgroundTools": {"unknown": 1}}])] {
        let spec = CapabilitySpec::from_value(bad).unwrap();
        assert!(registry.load(&spec).is_err());
    }
}

#[tokio::test]
async fn results_that_arrived_before_a_failure_are_delivered_first() {
    let failing = Tool::from_schema("charge", "Charge.", EMPTY(), |_ctx, _args| async {
        Err(ToolError::failed("the payment service is down"))
    })
    .metadata(json!({"background": true}));
    let (model, seen) = scripted(vec![vec![call("lookup", "c1"), call("charge", "c2")], vec![text("fine")]]);
    let agent = Agent::builder(model)
        .tool(background("lookup", "order 42", None, 0))
        .tool(failing)
        .capability(BackgroundTools::new())
        .build()
        .unwrap();
    let error = agent.run("go").await.unwrap_err();
    assert!(matches!(&error, AgentRunError::ToolFailed { tool, .. } if tool == "charge"), "{error:?}");
    // The lookup's result reached the model before the failure ended the run.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1], vec!["<tool_result tool_name=\"lookup\" tool_call_id=\"c1\">\norder 42\n</tool_result>"]);
}

#[tokio::test]
async fn a_run_waiting_for_a_discarded_conversation_ends() {
    let (model, seen) = scripted(vec![vec![call("slow", "c1")], vec![text("waiting")]]);
    let tools = BackgroundTools::new();
    let agent = Agent::builder(model)
        .tool(background("slow", "never", Some(Arc::new(Semaphore::new(0))), 0))
        .capability(tools.clone())
        .build()
        .unwrap();
    let run = tokio::spawn(async move { agent.run("go").await.map(|r| r.output().clone()) });
    // The model has ended its turn; the run waits for the task.
    for _ in 0..10_000 {
        if seen.lock().unwrap().len() == 2 && tools.running().len() == 1 {
            break;
        }
        tokio::task::yield_now().await;
    }
    let conversation = tools.running()[0].conversation_id.clone();
    assert_eq!(tools.discard(&conversation), 1);
    assert_eq!(run.await.unwrap().unwrap(), "waiting");
}
